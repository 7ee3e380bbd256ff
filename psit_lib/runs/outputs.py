"""What a notebook saves besides its episode records: result tables, figures, its headline.

:class:`~psit_lib.runs.experiment.Experiment` delegates to these; the folders come from the run
folder (:class:`~psit_lib.runs.folder.RunFolder`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

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


def save_figure(fig: Any, stem: str, folders: Iterable[Path]) -> None:
    """Save ``fig`` as ``<stem>.png`` and ``<stem>.svg`` into each folder."""
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        fig.savefig(folder / f"{stem}.png", dpi=120, bbox_inches="tight")
        fig.savefig(folder / f"{stem}.svg", bbox_inches="tight")


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


def headline_text(text: str) -> str:
    """A headline as recorded: each non-empty line with its whitespace collapsed."""
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
