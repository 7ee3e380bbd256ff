"""What a run did, per notebook, read back from the run folder (for the terminal and the report).

``run.json`` in the run folder records each notebook's status as the command line saw it; each
notebook folder's ``metadata.json`` holds the counts of its last execution.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from psit_lib.runs.store import read_folder_metadata

RUN_FILE = "run.json"


@dataclass
class NotebookSummary:
    notebook: str
    status: str                  # "ok", "episodes failed", "failed", "interrupted"
    seconds: float
    error: str | None = None
    episodes: int = 0
    failed: int = 0
    resumed: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    retries: int = 0

    @classmethod
    def from_folder(cls, folder: Path, *, notebook: str, status: str, seconds: float,
                    error: str | None = None) -> "NotebookSummary":
        last = _last_execution(folder)
        failed = int(last.get("episodes_failed", 0))
        if status == "ok" and failed:
            status = "episodes failed"
        return cls(notebook, status, round(seconds, 1), error, int(last.get("episodes_recorded", 0)), failed,
                   int(last.get("episodes_resumed", 0)), int(last.get("model_calls", 0)),
                   int(last.get("cache_hits", 0)), int(last.get("retries", 0)))


def _last_execution(folder: Path) -> dict[str, Any]:
    return read_folder_metadata(folder).get("last_execution") or {}


def table(summaries: list[NotebookSummary]) -> str:
    """A fixed-width table of the summaries, one line per notebook."""
    head = f"{'notebook':38} {'status':16} {'episodes':>8} {'failed':>6} {'resumed':>7} {'calls':>7} {'cached':>7} {'retries':>7} {'time':>7}"
    lines = [head, "-" * len(head)]
    for s in summaries:
        lines.append(f"{s.notebook:38} {s.status:16} {s.episodes:>8} {s.failed:>6} {s.resumed:>7} "
                     f"{s.model_calls:>7} {s.cache_hits:>7} {s.retries:>7} {s.seconds:>6.0f}s")
    return "\n".join(lines)


def write_run_file(run_dir: Path, summaries: list[NotebookSummary], **extra: Any) -> None:
    data = {**extra, "notebooks": [asdict(s) for s in summaries]}
    (run_dir / RUN_FILE).write_text(json.dumps(data, indent=1))


def read_run_file(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / RUN_FILE).read_text())
    except (OSError, ValueError):
        return {}
