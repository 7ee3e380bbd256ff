"""The run folder of one notebook, and the one module that knows its files.

Records are appended with one ``write`` + ``fsync`` under a lock, so a run killed at any moment
leaves at worst one partial last line: readers skip it, the writer cuts it. The latest record per
episode wins and failed episodes are retried on resume. :class:`RunFolder` only reads (a notebook
may be writing; a missing file reads as empty); :class:`RunStore` writes.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from psit_lib.runs.records import (ENVELOPE_FIELDS, FORMAT_KEY, RECORD_FORMAT, RESULT_KEY, EpisodeRecord, R,
                                   flat_record, nested_record, read_records)

_RECORDS = "episodes.jsonl"
_PARAMS = "params.json"
_IDENTITY = "identity.json"
_METADATA = "metadata.json"
_PROGRESS = "progress.json"
_LENT = "lent_processes"
_SCORES = "scores.jsonl"
_TABLES = "tables"
_FIGURES = "figures"
RUN_FILE = "run.json"


class ParameterMismatchError(ValueError):
    """A run folder is being resumed with parameters other than the ones it was made with."""

    def _render_traceback_(self) -> list[str]:  # IPython: the sentence only, no traceback
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


# -- typed files ---------------------------------------------------------------------------------

class HealthRecord(BaseModel):
    """The run health recorded in the metadata (:meth:`psit_lib.runs.health.HealthVerdict.as_dict`)."""

    model_config = ConfigDict(extra="allow")
    status: str | None = None
    threshold: float | None = None
    reasons: list[str] = []


class Execution(BaseModel):
    """One execution of the notebook: its times, model-call statistics and episode counts
    (:meth:`Experiment.finish <psit_lib.runs.experiment.Experiment.finish>`)."""

    model_config = ConfigDict(extra="allow")
    started: str | None = None
    ended: str | None = None
    git_commit: str | None = None  # the code this execution ran (a resume may run other code)
    model_calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    model_call_failures: int = 0
    faults_by_kind: dict[str, int] = {}
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls_by_role: dict[str, int] = {}
    episodes_recorded: int = 0
    episodes_failed: int = 0
    episodes_planned: int = 0
    episodes_resumed: int = 0
    episodes_run: int = 0
    health: str | None = None
    settings: dict[str, Any] = {}  # how it ran: the execution parameters (concurrency, suspect_threshold), not its identity


class RunMetadata(BaseModel):
    """A notebook folder's run metadata. Every field is optional, so the metadata of an older or
    unfinished run reads; keys this code does not know are kept (forward compatibility)."""

    model_config = ConfigDict(extra="allow")
    notebook: str | None = None
    backend: str | None = None
    simulated: bool | None = None
    model: str | None = None
    profile: str | None = None
    seed: int | None = None
    settings: dict[str, Any] = {}
    packages: dict[str, str] = {}
    python: str | None = None
    git_commit: str | None = None
    started: str | None = None
    ended: str | None = None
    prompts: dict[str, str] = {}
    prompt_versions: dict[str, int] = {}  # each catalogued template's version in its study's prompts file
    plugins: dict[str, dict[str, Any]] = {}  # each plug-in module loaded: path or distribution, content hash
    executions: list[Execution] = []
    last_execution: Execution | None = None
    health: HealthRecord | None = None
    headline: str | None = None
    models_run: list[str] = []
    simulator: dict[str, Any] | None = None
    parts: dict[str, dict[str, Any]] = {}  # each part of the run (main, each sweep value...): its own metadata
    scorer_versions: dict[str, int] = {}  # scorer -> the version its stored scores were computed by
    scoring_sampling: dict[str, float] = {}  # temperature, max_tokens of model-graded scorers' sessions
    rescored: list[dict[str, Any]] = []  # each rescore: when, which scorers, versions changed

    def stored(self) -> dict[str, Any]:
        """What the metadata file holds: the fields that were set, and the unknown keys."""
        return self.model_dump(exclude_unset=True)


class RunParams(BaseModel):
    """A notebook folder's parameters: the notebook's own that shape episodes (typed where a reader
    of finished runs needs them; :func:`psit_lib.runs.identity.episode_params`) with ``_backend``,
    ``_models`` and ``_profile``. Older folders also hold execution settings (``suspect_threshold``)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    run_backend: str | None = Field(None, alias="_backend")
    run_models: list[str] = Field([], alias="_models")
    run_profile: str | None = Field(None, alias="_profile")
    temperature: float | None = None
    suspect_threshold: float | None = None

    def stored(self) -> dict[str, Any]:
        """The parameters as the file holds them."""
        return self.model_dump(by_alias=True, exclude_unset=True)


M = TypeVar("M", bound=BaseModel)


def _tolerant(model: type[M], data: Any) -> M:
    """``data`` as ``model``; a top-level key whose value does not fit is left out (a finished
    run's file is read, never refused)."""
    if not isinstance(data, dict):
        return model()
    while True:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            bad = {e["loc"][0] for e in exc.errors() if e["loc"]} & set(data)
            if not bad:
                return model()
            data = {k: v for k, v in data.items() if k not in bad}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _json_lines(path: Path, *keys: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file that hold ``keys``, in order; a partial line (a killed
    writer) is skipped."""
    out = []
    for line in path.read_bytes().split(b"\n") if path.exists() else []:
        try:
            data = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and all(k in data for k in keys):
            out.append(data)
    return out


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


# -- reading -------------------------------------------------------------------------------------

class RunFolder:
    """A notebook's run folder, read only: it is never created, repaired or changed (except by ``psit run``:
    :meth:`clear_progress` before it executes the notebook, :meth:`lend_processes` while it runs)."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.dir)!r})"

    # -- where things are ----------------------------------------------------------------------
    @property
    def records_source(self) -> Path:
        """The records file, for messages naming where a bad record is."""
        return self.dir / _RECORDS

    @property
    def tables_dir(self) -> Path:
        return self.dir / _TABLES

    @property
    def figures_dir(self) -> Path:
        return self.dir / _FIGURES

    @property
    def progress_path(self) -> Path:
        """The progress file the command line follows (:class:`psit_lib.cli.progress.ProgressBoard`)."""
        return self.dir / _PROGRESS

    def reader_files(self) -> list[tuple[str, str]]:
        """The folder's own files a reader may open, those present: (file name, what it holds)."""
        files = ((_RECORDS, "episode records (JSONL)"), (_SCORES, "scores per episode (JSONL)"), (_METADATA, "run metadata"), (_PARAMS, "parameters (JSON)"))
        return [(name, label) for name, label in files if (self.dir / name).is_file()]

    def has_records(self) -> bool:
        return (self.dir / _RECORDS).is_file()

    def has_params(self) -> bool:
        return (self.dir / _PARAMS).is_file()

    def table_names(self) -> list[str]:
        """The saved result tables (``<name>.csv``), sorted."""
        return sorted(p.name for p in self.tables_dir.glob("*.csv"))

    # -- parameters, metadata, progress ----------------------------------------------------------
    def params(self) -> RunParams:
        """The recorded parameters; empty when the file is missing or unreadable."""
        return _tolerant(RunParams, _read_json(self.dir / _PARAMS))

    def metadata(self) -> RunMetadata:
        """The run metadata; empty when the file is missing or unreadable."""
        return _tolerant(RunMetadata, _read_json(self.dir / _METADATA))

    def identity(self) -> dict[str, Any]:
        """What the folder's episodes were made with (:mod:`psit_lib.runs.identity`); empty when
        the folder predates it or the file is unreadable."""
        data = _read_json(self.dir / _IDENTITY)
        return data if isinstance(data, dict) else {}

    def progress(self) -> dict[str, Any]:
        """The counts of the execution under way or last finished; empty when there are none."""
        data = _read_json(self.progress_path)
        return data if isinstance(data, dict) else {}

    def clear_progress(self) -> None:
        self.progress_path.unlink(missing_ok=True)
        (self.dir / _LENT).unlink(missing_ok=True)

    def lent_processes(self) -> int:
        """Processes ``psit run`` lends the notebook's episodes now (its own and the idle cores'); 1 when
        it lends none (:mod:`psit_lib.runs.processes`)."""
        try:
            return max(1, int((self.dir / _LENT).read_text()))
        except (OSError, ValueError):
            return 1

    def lend_processes(self, processes: int) -> None:
        """What ``psit run`` writes when it has idle cores and no notebook to start."""
        _atomic_write(self.dir / _LENT, str(processes))

    # -- episode records -------------------------------------------------------------------------
    def _lines(self) -> list[dict[str, Any]]:
        """Every whole record in the file, in order (a partial line was never finished: redone)."""
        return _json_lines(self.dir / _RECORDS, "episode_id")

    def records(self) -> dict[str, dict[str, Any]]:
        """The latest stored record per episode id (first-recorded order), each with the study
        result nested under ``result`` whatever format it was stored in. Empty when there are
        none. Counting from the records, not from a notebook's own counters, keeps a notebook
        that crashed before it could count honest: its failed episodes still show."""
        latest: dict[str, dict[str, Any]] = {}
        for record in self._lines():
            try:
                latest[record["episode_id"]] = nested_record(record)
            except ValueError:  # a newer format: kept as stored; a typed read names it
                latest[record["episode_id"]] = record
        return latest

    def flat_records(self, ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """The latest record per episode id in the flat view (:func:`~psit_lib.runs.records.flat_record`:
        the result's fields beside the envelope's), for readers that index records by field
        name. ``ids`` keeps those episodes, in that order."""
        records = self.records()
        chosen = records if ids is None else {i: records[i] for i in ids if i in records}
        return {eid: flat_record(r) for eid, r in chosen.items()}

    def typed_records(self, result_type: type[R], ids: Sequence[str] | None = None) -> list[EpisodeRecord[R]]:
        """The latest records validated as :class:`EpisodeRecord` of ``result_type`` (all, or
        ``ids`` in that order); a record that does not match raises
        :class:`~psit_lib.runs.records.RecordError` naming the file and the episode."""
        records = self.records()
        chosen = list(records.values()) if ids is None else [records[i] for i in ids if i in records]
        return read_records(chosen, result_type, source=self.records_source)

    # -- scores --------------------------------------------------------------------------------
    def score_lines(self) -> dict[tuple[str, str], dict[str, Any]]:
        """The latest stored score per (episode id, scorer), in first-stored order; empty for a
        run made before scores were stored."""
        return {(str(d["episode_id"]), str(d["scorer"])): d
                for d in _json_lines(self.dir / _SCORES, "episode_id", "scorer")}

    def finished_ids(self) -> set[str]:
        return {eid for eid, rec in self.records().items() if rec.get("status") == "ok"}

    def attempts(self, episode_id: str) -> int:
        return sum(1 for r in self._lines() if r.get("episode_id") == episode_id)


def notebook_folders(path: str | Path) -> list[RunFolder]:
    """``path`` itself when it holds episode records, else its sub-folders that do (sorted)."""
    root = RunFolder(path)
    if root.has_records():
        return [root]
    return [RunFolder(p) for p in sorted(Path(path).iterdir()) if p.is_dir() and RunFolder(p).has_records()]


def notebooks_with_metadata(run_dir: str | Path) -> set[str]:
    """Names of the notebook folders of a run folder that hold run metadata."""
    return {p.name for p in Path(run_dir).iterdir() if (p / _METADATA).is_file()}


def read_run_file(run_dir: str | Path) -> dict[str, Any]:
    """The run's ``run.json`` (what ``psit run`` recorded of each notebook); empty when absent or unreadable."""
    data = _read_json(Path(run_dir) / RUN_FILE)
    return data if isinstance(data, dict) else {}


# -- writing -------------------------------------------------------------------------------------

class RunStore(RunFolder):
    """The writer of a notebook's run folder: it creates the folder, cuts a partial last record
    left by a killed writer, binds the parameters, writes metadata and progress, and appends
    episode records."""

    def __init__(self, directory: str | Path) -> None:
        super().__init__(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._repair_tail()

    def write_params(self, params: dict[str, Any]) -> None:
        """Record the episode parameters of a new folder (:func:`psit_lib.runs.identity.bind` checks
        them against an existing one first)."""
        _atomic_write(self.dir / _PARAMS, json.dumps(params, indent=2, sort_keys=True, default=str))

    def write_identity(self, identity: dict[str, Any]) -> None:
        """Record what the folder's episodes are made with (:func:`psit_lib.runs.identity.bind`
        decides when)."""
        _atomic_write(self.dir / _IDENTITY, json.dumps(identity, indent=2, sort_keys=True, default=str))

    def write_metadata(self, metadata: RunMetadata) -> None:
        _atomic_write(self.dir / _METADATA, json.dumps(metadata.stored(), indent=2, sort_keys=True, default=str))

    def write_progress(self, counts: dict[str, Any]) -> None:
        _atomic_write(self.progress_path, json.dumps(counts))

    def append(self, record: dict[str, Any]) -> None:
        """Append one episode record: the envelope's fields and, for a finished episode, the
        study result under ``result``. It is stored in the current format."""
        if "episode_id" not in record or "status" not in record:
            raise ValueError("an episode record needs 'episode_id' and 'status'")
        unknown = set(record) - set(ENVELOPE_FIELDS) - {RESULT_KEY, FORMAT_KEY}
        if unknown:
            raise ValueError(f"not fields of an episode record: {sorted(unknown)} (a study result goes under "
                             f"{RESULT_KEY!r})")
        line = (json.dumps({**record, FORMAT_KEY: RECORD_FORMAT}, sort_keys=True, default=str) + "\n").encode()
        with self._lock:
            fd = os.open(self.dir / _RECORDS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)

    def append_scores(self, lines: Sequence[dict[str, Any]]) -> None:
        """Append score lines (stored dicts of :class:`~psit_lib.runs.scores.ScoreLine`), one write."""
        if not lines:
            return
        data = "".join(json.dumps(line, sort_keys=True, default=str) + "\n" for line in lines).encode()
        with self._lock:
            path = self.dir / _SCORES
            if path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
                data = b"\n" + data  # a killed writer's partial line stays apart (and is skipped)
            with open(path, "ab") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())

    def write_scores(self, lines: Sequence[dict[str, Any]]) -> None:
        """Replace the scores file with ``lines`` (a rescore writes every score afresh)."""
        _atomic_write(self.dir / _SCORES, "".join(json.dumps(line, sort_keys=True, default=str) + "\n"
                                                  for line in lines))

    def _repair_tail(self) -> None:
        """Cut a partial last line left by a killed writer, so the next append starts clean."""
        path = self.dir / _RECORDS
        if not path.exists():
            return
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with open(path, "r+b") as fh:
                fh.truncate(cut)
