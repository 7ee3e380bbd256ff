"""Open a finished run outside the notebooks: its episodes, scores and tables as pandas frames, and any
episode by id with its conversation and fork branches (README "Open a run outside the notebooks"),
read through :class:`~psit_lib.runs.folder.RunFolder`, never written."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psit_lib.runs.folder import RunFolder, notebook_folders
from psit_lib.runs.paths import results_root

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Branch", "Episode", "Run", "RunNotFoundError", "load_run"]

_EPISODE_FIXED = ("notebook", "part", "episode_id", "status", "error")
_SCORE_FIXED = ("notebook", "episode_id", "part")
_TRANSCRIPT_COLUMNS = ("notebook", "episode_id", "branch", "index", "role", "content")
MAIN_BRANCH = "main"
"""The ``branch`` of an episode's own conversation in :attr:`Run.transcripts`."""


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


def _is_message(item: Any) -> bool:
    return isinstance(item, dict) and "role" in item and "content" in item


def _is_exchange(item: Any) -> bool:
    return isinstance(item, dict) and "question" in item and "answer" in item


@dataclass(frozen=True)
class Branch:
    """A question put to the agent apart from its conversation, and its answer: a fork test's
    reveal and each yes/no branch (``detail``: the rest the record keeps of it, e.g. the candidate)."""

    name: str
    question: str
    answer: str
    detail: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Episode:
    """One episode of a run as its record keeps it (:meth:`Run.episode`): the envelope, the study's
    result, its conversation (:attr:`messages`), its branches and its scores. ``print`` shows it."""

    notebook: str
    episode_id: str
    record: dict[str, Any] = field(repr=False)
    scores: dict[str, Any] = field(default_factory=dict, repr=False)
    """Each scorer's value for this episode."""

    @property
    def status(self) -> str:
        return str(self.record.get("status"))

    @property
    def spec(self) -> dict[str, Any]:
        return dict(self.record.get("spec") or {})

    @property
    def result(self) -> dict[str, Any]:
        """The study's result as stored (empty for a failed episode)."""
        result = self.record.get("result")
        return result if isinstance(result, dict) else {}

    @property
    def system_prompts(self) -> dict[str, str]:
        """Per role, the system prompt its first call sent (records made before it: empty)."""
        return dict(self.record.get("system_prompts") or {})

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation: the result's list of ``role``/``content`` messages (a fork test's
        ``transcript``; the first such list of another study's result); empty when it has none."""
        result = self.result
        found = result.get("transcript")
        if not (isinstance(found, list) and all(_is_message(m) for m in found)):
            found = next((v for v in result.values() if isinstance(v, list) and v and all(_is_message(m) for m in v)),
                         [])
        return [dict(m) for m in found]

    @property
    def branches(self) -> list[Branch]:
        """Every question put apart from the conversation, with its answer: the result's fields that
        hold one (a fork test's ``reveal``), then its lists of them (its ``candidates``, each named by
        the secret it asks about)."""
        single = [(key, value) for key, value in self.result.items() if _is_exchange(value)]
        listed = [(f"{key}:{item.get('secret', i)}", item) for key, value in self.result.items()
                  if isinstance(value, list) for i, item in enumerate(x for x in value if _is_exchange(x))]
        return [Branch(name, str(item["question"]), str(item["answer"]),
                       {k: v for k, v in item.items() if k not in ("question", "answer")})
                for name, item in [*single, *listed]]

    def transcript(self) -> pd.DataFrame:
        """One row per message (branch ``main``), then per branch its question and answer."""
        return _frame(self._rows(), _TRANSCRIPT_COLUMNS)

    def _rows(self) -> list[dict[str, Any]]:
        rows = [{"branch": MAIN_BRANCH, "index": i, "role": m.get("role"), "content": m.get("content")}
                for i, m in enumerate(self.messages)]
        for branch in self.branches:
            rows += [{"branch": branch.name, "index": 0, "role": "user", "content": branch.question},
                     {"branch": branch.name, "index": 1, "role": "assistant", "content": branch.answer}]
        return [{"notebook": self.notebook, "episode_id": self.episode_id, **row} for row in rows]

    def __str__(self) -> str:
        spec = ", ".join(f"{k}={v}" for k, v in self.spec.items() if not isinstance(v, (dict, list)))
        scores = ", ".join(f"{k}={v}" for k, v in self.scores.items() if not isinstance(v, (dict, list)))
        lines = [f"== {self.notebook} · {self.episode_id} ({self.status}) · {spec}" + (f" · {scores}" if scores else "")]
        lines += [f"{m.get('role')}: {m.get('content')}" for m in self.messages]
        for branch in self.branches:
            lines += [f"-- {branch.name}", f"  user: {branch.question}", f"  assistant: {branch.answer}"]
        if self.record.get("error"):
            lines.append(f"error: {self.record['error']}")
        return "\n".join(lines)


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

    def name(self, notebook: str | int) -> str:
        """A notebook's full name from its name, stem or number (``2``, ``"2"`` or ``"02"``)."""
        given = str(notebook)
        stem = given.zfill(2) if given.isdigit() else given
        found = [name for name in self.folders if name == stem or name.split("_", 1)[0] == stem
                 or name.startswith(stem + "_")]
        if len(found) != 1:
            raise KeyError(f"no single notebook {notebook!r} in run {self.run_id}; it has {', '.join(self.folders)}")
        return found[0]

    def folder(self, notebook: str | int) -> RunFolder:
        """A notebook's folder by its name, stem or number (``2``, ``"2"`` or ``"02"``)."""
        return self.folders[self.name(notebook)]

    def episode(self, notebook: str | int, episode_id: str) -> Episode:
        """One episode of a notebook by its id, with its conversation, branches and scores."""
        name = self.name(notebook)
        record = self.folders[name].records().get(episode_id)
        if record is None:
            raise KeyError(f"no episode {episode_id!r} in {self.run_id}/{name}")
        return self._episode(name, episode_id, record)

    def _episode(self, name: str, episode_id: str, record: dict[str, Any]) -> Episode:
        scores = {scorer: line.get("value") for (eid, scorer), line in self._score_lines[name].items()
                  if eid == episode_id}
        return Episode(name, episode_id, record, scores)

    def scores_of(self, notebook: str | int) -> pd.DataFrame:
        """:attr:`scores` of one notebook (``2`` or ``"02"``), its index reset."""
        frame = self.scores
        return frame[frame["notebook"] == self.name(notebook)].reset_index(drop=True)

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
    def transcripts(self) -> pd.DataFrame:
        """One row per message of every episode of every notebook: ``notebook``, ``episode_id``,
        ``branch`` (``main`` for the conversation, else the fork branch), ``index``, ``role``,
        ``content`` (:meth:`Episode.transcript`)."""
        rows = [row for name, folder in self.folders.items() for eid, record in folder.records().items()
                for row in self._episode(name, eid, record)._rows()]
        return _frame(rows, _TRANSCRIPT_COLUMNS)

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
