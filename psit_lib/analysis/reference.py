"""The source studies' reported numbers (``data/reference/``: CSVs copied unchanged, so a reference row always
traces to its file); never results, defaults or calibration targets."""

from __future__ import annotations

from functools import lru_cache
import pandas as pd

from psit_lib.data_files import data_dir

REFERENCE_SOURCE = "reference study (reported)"
"""The ``source`` of every reference row in a table."""


@lru_cache(maxsize=8)
def _read(path: str) -> pd.DataFrame:
    return pd.read_csv(path)


def reference_table(name: str) -> pd.DataFrame:
    """The reference table ``data/reference/<name>.csv`` (a copy; FileNotFoundError naming it)."""
    path = data_dir("reference", f"{name}.csv")
    if not path.exists():
        raise FileNotFoundError(f"reference table {path} is missing (see data/reference/README.md)")
    return _read(str(path)).copy()
