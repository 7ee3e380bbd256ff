"""What a run did, per notebook, read back from the run folder (for the terminal and the report):
counts and health from the folder's records, calls and retries from its last execution's metadata."""

from __future__ import annotations

import json
from datetime import datetime
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from psit_lib.runs.health import DEFAULT_SUSPECT_THRESHOLD, folder_health
from psit_lib.runs.folder import RUN_FILE, RunFolder


@dataclass
class NotebookSummary:
    notebook: str
    status: str                  # "ok", "suspect", "episodes failed", "failed", "interrupted"
    seconds: float
    error: str | None = None
    episodes: int = 0
    failed: int = 0
    resumed: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    health: str = "ok"           # "ok" or "suspect" (psit_lib.runs.health)
    health_reasons: tuple[str, ...] = ()

    @classmethod
    def from_folder(cls, folder: Path, *, notebook: str, status: str, seconds: float,
                    error: str | None = None, since: float | None = None) -> "NotebookSummary":
        """The notebook's summary; ``since`` (a time stamp) is when this execution started: the
        metadata's call counts are used only when the notebook finished after it."""
        run = RunFolder(folder)
        records = run.records()
        last = run.metadata().last_execution
        finished_now = since is None or (last is not None and _stamp(last.ended) >= since - 1.0)  # stamps are to the second
        failed = sum(r.get("status") != "ok" for r in records.values())
        meta = run.metadata()
        # as the notebook judged it (its health record); an older folder kept it in its parameters
        threshold = meta.health.threshold if meta.health and meta.health.threshold is not None \
            else run.params().suspect_threshold
        verdict = folder_health(run, DEFAULT_SUSPECT_THRESHOLD if threshold is None else threshold)
        if status == "ok" and failed:
            status = "episodes failed"
        elif status == "ok" and verdict.suspect:
            status = "suspect"
        if finished_now and last is not None:
            calls, cached, retries = last.model_calls, last.cache_hits, last.retries
            resumed = last.episodes_resumed
        else:
            usage = [r.get("usage") or {} for r in records.values()]
            cached = sum(int(u.get("cache_hits", 0)) for u in usage)
            calls, retries, resumed = sum(int(u.get("calls", 0)) for u in usage) - cached, 0, 0
        return cls(notebook, status, round(seconds, 1), error, len(records), failed, resumed, calls,
                   cached, retries, verdict.status, verdict.sentences)


def _stamp(text: Any) -> float:
    """Seconds since the epoch of an ISO time stamp; 0 for none."""
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        return 0.0


def table(summaries: list[NotebookSummary]) -> str:
    """A fixed-width table of the summaries, one line per notebook, as narrow as its contents:
    the ``resumed`` and ``retries`` columns appear only when some notebook has any."""
    from psit_lib.cli.progress import format_duration

    columns = [("episodes", lambda s: s.episodes), ("failed", lambda s: s.failed), ("resumed", lambda s: s.resumed),
               ("calls", lambda s: s.model_calls), ("cached", lambda s: s.cache_hits),
               ("retries", lambda s: s.retries), ("time", lambda s: format_duration(s.seconds))]
    columns = [(h, f) for h, f in columns if h not in ("resumed", "retries") or any(f(s) for s in summaries)]
    rows = [["notebook", "status", *(h for h, _ in columns)]]
    rows += [[s.notebook, s.status, *(str(f(s)) for _, f in columns)] for s in summaries]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [" ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    return "\n".join([lines[0], "-" * len(lines[0]), *lines[1:]])


def headline_lines(notebook: str, headline: str, width: int = 100) -> list[str]:
    """A notebook's recorded headline (``Experiment.headline``, the report index's sentence) as
    terminal lines: the notebook's name, then each of its points wrapped to ``width`` under it,
    plain (:func:`~psit_lib.cli.terminal.plain`); nothing when it recorded none."""
    import textwrap

    from psit_lib.cli.terminal import plain

    points = [" ".join(plain(line).split()) for line in headline.splitlines() if line.strip()]
    if not points:
        return []
    lines = [f"  {notebook}"]
    for point in points:
        bullet = point.startswith(("- ", "* "))
        text = point[2:] if bullet else point
        lines += textwrap.wrap(text, width=max(30, width), initial_indent="    - " if bullet else "    ",
                               subsequent_indent="      " if bullet else "    ",
                               break_long_words=False, break_on_hyphens=False)
    return lines


def headline_block(run_dir: Path, summaries: list[NotebookSummary], width: int = 100) -> str:
    """Each notebook's headline as its folder records it, under one heading; empty when none has one."""
    lines = [line for s in summaries
             for line in headline_lines(s.notebook, RunFolder(run_dir / s.notebook).metadata().headline or "", width)]
    return "\n".join(["headlines (generated from each notebook's tables; the report has the rest):", *lines]) if lines else ""


def write_run_file(run_dir: Path, summaries: list[NotebookSummary], **extra: Any) -> None:
    data = {**extra, "notebooks": [asdict(s) for s in summaries]}
    (run_dir / RUN_FILE).write_text(json.dumps(data, indent=1))
