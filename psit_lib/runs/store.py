"""The results store of one experiment: parameters, run metadata, one record per episode.

Records are JSON lines appended with a single ``write`` + ``fsync`` under a lock, so a run
killed at any moment leaves at worst one partial last line, which the reader discards (and
the writer truncates before appending again). An episode is *finished* once it has a record
with ``status == "ok"``; failed episodes keep their error record and are retried on resume,
the newest record winning — so the table always holds exactly the planned episodes, each
once.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any


class ParameterMismatchError(ValueError):
    """A run folder is being resumed with parameters other than the ones it was made with."""


class RunStore:
    RECORDS = "episodes.jsonl"
    PARAMS = "params.json"
    METADATA = "metadata.json"

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._repair_tail()

    # -- parameters and metadata -----------------------------------------------------------
    def bind_params(self, params: dict[str, Any]) -> None:
        """Record the parameters, or check them against the ones already recorded."""
        path = self.dir / self.PARAMS
        canonical = json.loads(json.dumps(params, sort_keys=True, default=str))
        if path.exists():
            old = json.loads(path.read_text())
            if old != canonical:
                diffs = [f"{k}: {old.get(k)!r} -> {canonical.get(k)!r}"
                         for k in sorted(set(old) | set(canonical)) if old.get(k) != canonical.get(k)]
                raise ParameterMismatchError(
                    f"{self.dir} was made with other parameters ({'; '.join(diffs)}); "
                    "use a new run id or delete the folder to start over")
        else:
            _atomic_write(path, json.dumps(canonical, indent=2, sort_keys=True))

    def write_metadata(self, metadata: dict[str, Any]) -> None:
        _atomic_write(self.dir / self.METADATA, json.dumps(metadata, indent=2, sort_keys=True, default=str))

    def read_metadata(self) -> dict[str, Any]:
        path = self.dir / self.METADATA
        return json.loads(path.read_text()) if path.exists() else {}


    # -- episode records -------------------------------------------------------------------
    def append(self, record: dict[str, Any]) -> None:
        if "episode_id" not in record or "status" not in record:
            raise ValueError("an episode record needs 'episode_id' and 'status'")
        line = (json.dumps(record, sort_keys=True, default=str) + "\n").encode()
        with self._lock:
            fd = os.open(self.dir / self.RECORDS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)

    def _raw_records(self) -> list[dict[str, Any]]:
        return _read_lines(self.dir / self.RECORDS)

    def records(self) -> dict[str, dict[str, Any]]:
        """Latest record per episode id."""
        return read_folder_records(self.dir)

    def finished_ids(self) -> set[str]:
        return {eid for eid, rec in self.records().items() if rec.get("status") == "ok"}

    def attempts(self, episode_id: str) -> int:
        return sum(1 for r in self._raw_records() if r.get("episode_id") == episode_id)

    def _repair_tail(self) -> None:
        """Cut a partial last line left by a killed writer, so the next append starts clean."""
        path = self.dir / self.RECORDS
        if not path.exists():
            return
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with open(path, "r+b") as fh:
                fh.truncate(cut)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def read_folder_metadata(folder: Path) -> dict[str, Any]:
    """A notebook folder's ``metadata.json`` for readers of finished runs (summary, report):
    empty when it is missing or unreadable, and the folder is never created."""
    try:
        return json.loads((Path(folder) / RunStore.METADATA).read_text())
    except (OSError, ValueError):
        return {}


def _read_lines(path: Path) -> list[dict[str, Any]]:
    """Every whole record of a JSON-lines file; a partial line from a killed run is skipped
    (never finished, so it will be redone)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "episode_id" in record:
            out.append(record)
    return out


def read_folder_records(folder: Path) -> dict[str, dict[str, Any]]:
    """A notebook folder's latest record per episode, for the store and for readers of finished
    runs (summary, report): empty when there are none, and the folder is never created.
    Counting from the records, not from the notebook's own counters, keeps a notebook that
    crashed before it could count honest: its failed episodes still show."""
    latest: dict[str, dict[str, Any]] = {}
    for record in _read_lines(Path(folder) / RunStore.RECORDS):
        latest[record["episode_id"]] = record
    return latest
