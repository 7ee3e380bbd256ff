"""Open a finished run outside the notebooks: its episodes, scores and tables as pandas frames
(README "Open a run outside the notebooks"), read through :class:`~psit_lib.runs.folder.RunFolder`."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psit_lib.runs.folder import RunFolder, notebook_folders
from psit_lib.runs.paths import results_root

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Run", "RunNotFoundError", "load_run"]

_EPISODE_FIXED = ("notebook", "part", "episode_id", "status", "error")
_SCORE_FIXED = ("notebook", "episode_id", "part")


class RunNotFoundError(FileNotFoundError):
    """No run folder at the path or under the results root by that id."""


def resolve_run(path_or_id: str | Path = "latest") -> Path:
    """The folder ``path_or_id`` names: an existing path, else a run id (or ``latest``) under the
    results root; RunNotFoundError with one sentence otherwise."""
    path = Path(path_or_id).expanduser()
    if path.is_dir():
        return path.resolve()
    under = results_root() / str(path_or_id)
    if under.is_dir():
        return under.resolve()
    raise RunNotFoundError(f"no run {str(path_or_id)!r}: it is neither a folder nor a run id under {results_root()} "
                           "(PSIT_RESULTS_DIR); `psit run` makes one")


def load_run(path_or_id: str | Path = "latest") -> Run:
    """The run at ``path_or_id`` (a path, a run id under ``PSIT_RESULTS_DIR``, or ``latest``)."""
    path = resolve_run(path_or_id)
    folders = {f.dir.name: f for f in notebook_folders(path)}
    if not folders:
        raise RunNotFoundError(f"{path} holds no episode records (no notebook of it ran)")
    return Run(path, folders)


def _scalars(prefix: str, data: Any) -> dict[str, Any]:
    """The scalar values of a mapping as ``prefix.key`` columns (nested mappings left out)."""
    if not isinstance(data, dict):
        return {}
    return {f"{prefix}.{k}": v for k, v in data.items() if v is None or isinstance(v, (str, int, float, bool))}


def _frame(rows: list[dict[str, Any]], fixed: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd

    columns = list(dict.fromkeys([*fixed, *(c for row in rows for c in row)]))
    return pd.DataFrame(rows, columns=columns)


@dataclass
class Run:
    """A run read back: see the module docstring for what each frame holds."""

    path: Path
    folders: dict[str, RunFolder] = field(repr=False)

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def notebooks(self) -> list[str]:
        return list(self.folders)

    def __repr__(self) -> str:
        return f"Run({self.run_id!r}: {', '.join(self.folders)})"

    def folder(self, notebook: str) -> RunFolder:
        """A notebook's folder by its name, stem or number (``2`` or ``02``)."""
        stem = notebook.zfill(2) if notebook.isdigit() else notebook
        found = [f for name, f in self.folders.items() if name == stem or name.split("_", 1)[0] == stem
                 or name.startswith(stem + "_")]
        if len(found) != 1:
            raise KeyError(f"no single notebook {notebook!r} in run {self.run_id}; it has {', '.join(self.folders)}")
        return found[0]

    # -- what each notebook recorded -----------------------------------------------------------
    @cached_property
    def params(self) -> dict[str, dict[str, Any]]:
        return {name: f.params().stored() for name, f in self.folders.items()}

    @cached_property
    def metadata(self) -> dict[str, dict[str, Any]]:
        return {name: f.metadata().stored() for name, f in self.folders.items()}

    @cached_property
    def identity(self) -> dict[str, dict[str, Any]]:
        return {name: f.identity() for name, f in self.folders.items()}

    @cached_property
    def fingerprint(self) -> dict[str, str]:
        from psit_lib.runs.identity import fingerprint

        return {name: fingerprint(self.params[name], self.identity[name], self.metadata[name].get("scorer_versions"))
                for name in self.folders}

    @cached_property
    def _score_lines(self) -> dict[str, dict[tuple[str, str], dict[str, Any]]]:
        return {name: f.score_lines() for name, f in self.folders.items()}

    def _parts(self, notebook: str) -> tuple[dict[str, str], str | None]:
        """Each scored episode's part (its score lines say it), and the part of the others: the
        notebook's one part when it ran one, else unknown (None)."""
        scored = {eid: str(line.get("part")) for (eid, _), line in self._score_lines[notebook].items()}
        recorded = list(self.metadata[notebook].get("parts") or {})
        return scored, (recorded[0] if len(recorded) == 1 else None)

    # -- frames --------------------------------------------------------------------------------
    @cached_property
    def episodes(self) -> pd.DataFrame:
        """One row per episode of every notebook (the latest record of each)."""
        rows: list[dict[str, Any]] = []
        for name, folder in self.folders.items():
            scored, other = self._parts(name)
            for eid, record in folder.records().items():
                rows.append({"notebook": name, "part": scored.get(eid, other), "episode_id": eid,
                             "status": record.get("status"), "error": record.get("error"),
                             **dict(record.get("spec") or {}), **_scalars("usage", record.get("usage")),
                             "wall_seconds": record.get("wall_seconds")})
        return _frame(rows, _EPISODE_FIXED)

    @cached_property
    def scores(self) -> pd.DataFrame:
        """One row per scored episode per notebook: the spec's parameters, then ``<scorer>`` and
        ``<scorer>.<key>`` columns (the inspect_ai ``samples_df`` shape)."""
        rows: list[dict[str, Any]] = []
        for name, folder in self.folders.items():
            lines = self._score_lines[name]
            if not lines:
                continue
            records = folder.records()
            by_episode: dict[str, dict[str, Any]] = {}
            for (eid, scorer), line in lines.items():
                row = by_episode.setdefault(eid, {"notebook": name, "episode_id": eid, "part": line.get("part"),
                                                  **dict((records.get(eid) or {}).get("spec") or {})})
                row[scorer] = line.get("value")
                row.update({f"{scorer}.{k}": v for k, v in (line.get("metadata") or {}).items()})
            rows += by_episode.values()
        return _frame(rows, _SCORE_FIXED)

    @cached_property
    def tables(self) -> dict[str, dict[str, pd.DataFrame]]:
        """Notebook -> table name -> the table it saved (parquet where there is one, else CSV)."""
        import pandas as pd

        out: dict[str, dict[str, pd.DataFrame]] = {}
        for name, folder in self.folders.items():
            tables: dict[str, pd.DataFrame] = {}
            for csv in folder.table_names():
                stem = csv.removesuffix(".csv")
                parquet = folder.tables_dir / f"{stem}.parquet"
                tables[stem] = pd.read_parquet(parquet) if parquet.is_file() else pd.read_csv(folder.tables_dir / csv)
            out[name] = tables
        return out
