"""Differences from the studies: one typed entry per departure, recorded once in its study's registry; each
notebook ends with the table of those that concern it (a test checks every notebook shows it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable

import pandas as pd

DIFFERENCE_COLUMNS = ["point", "study", "here", "why", "effect"]


@dataclass(frozen=True)
class Difference:
    """One departure: what the study does, what this workbench does, why, and what it changes
    in the results (``effect`` says "none expected" only when that has been checked)."""

    point: str
    study: str
    here: str
    why: str
    effect: str
    notebooks: tuple[str, ...]

    def __post_init__(self) -> None:
        for name in DIFFERENCE_COLUMNS:
            if not getattr(self, name).strip():
                raise ValueError(f"Difference {self.point!r}: {name} is empty")
        if not self.notebooks:
            raise ValueError(f"Difference {self.point!r}: name the notebooks it concerns")


def differences_table(entries: Iterable[Difference], notebook: str) -> pd.DataFrame:
    """The entries that concern ``notebook`` (its number ``"02"`` or full name), one row each."""
    number = notebook[:2]
    rows = [{k: v for k, v in asdict(e).items() if k in DIFFERENCE_COLUMNS}
            for e in entries if number in e.notebooks]
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)
