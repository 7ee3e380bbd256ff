"""Result tables as a notebook and ``psit rescore`` save them, and the copy of a complete run's figures."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd


def save_table(table: pd.DataFrame, folder: Path, name: str) -> Path:
    """Write ``table`` to ``<folder>/<name>.csv`` and ``.parquet`` (the index becomes columns,
    column tuples are joined with `` · ``); returns the CSV's path."""
    folder.mkdir(parents=True, exist_ok=True)
    flat = table.reset_index() if not isinstance(table.index, pd.RangeIndex) else table
    flat = flat.copy()
    flat.columns = [" · ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in flat.columns]
    flat.to_csv(folder / f"{name}.csv", index=False)
    flat.astype({c: str for c in flat.columns if flat[c].dtype == object}).to_parquet(folder / f"{name}.parquet", index=False)
    return folder / f"{name}.csv"


def publish_figures(notebook_folders: Iterable[Path], target: Path) -> int:
    """Make ``target`` (the repository's ``figures/``) a copy of the figures of a complete run:
    every PNG and SVG of each notebook folder's ``figures/``, replacing the figures there before
    (other files, such as a README, are kept). Returns the number of files copied."""
    import shutil

    target.mkdir(parents=True, exist_ok=True)
    for old in [*target.glob("*.png"), *target.glob("*.svg")]:
        old.unlink()
    copied = 0
    for folder in notebook_folders:
        for path in sorted((folder / "figures").glob("*")):
            if path.suffix in (".png", ".svg"):
                shutil.copy2(path, target / path.name)
                copied += 1
    return copied
