"""Episode progress in the terminal, streamed from the kernel.

The runner inside the notebook kernel rewrites the notebook folder's progress file as episodes
finish (``psit_lib.runs.runner.RunProgress``, ``psit_lib.runs.folder.RunFolder.progress_path``);
a thread of the command line follows the file
and prints one status line: done / failed / cached of the planned episodes, rate and ETA.

On a terminal the line is rewritten in place (padded, so a shorter line leaves nothing of a
longer one behind). Anywhere else (a log file, a pipe, CI) each line is a line of its own, with
no carriage returns: one when the counts first appear, then at most one every ``log_interval``
seconds (10 s by default) and only when the counts changed, plus one when an execution finishes,
so a log of a long run shows it is alive without filling up.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

LOG_INTERVAL = 10.0
"""Seconds between progress lines in a log (not a terminal), at least."""

_COUNTED = ("planned", "resumed", "done", "failed", "cached", "started", "finished")


def status_line(counts: dict, now: float | None = None) -> str:
    planned, resumed = counts.get("planned", 0), counts.get("resumed", 0)
    done, failed, cached = counts.get("done", 0), counts.get("failed", 0), counts.get("cached", 0)
    end = counts.get("ended") or now or time.time()  # a finished run's rate stays fixed
    elapsed = max(1e-6, end - counts.get("started", end))
    rate = done / elapsed
    left = planned - resumed - done
    eta = f"{left / rate:.0f}s" if rate > 0 and left > 0 else "-"
    return (f"    episodes {resumed + done}/{planned} (resumed {resumed}, failed {failed}, from cache {cached}) "
            f"· {rate:.1f}/s · ETA {eta}")


class ProgressFollower:
    """Follows one notebook's progress file while the notebook runs."""

    def __init__(self, path: Path, *, interval: float = 1.0, log_interval: float = LOG_INTERVAL,
                 stream=None, clock=time.monotonic) -> None:
        self.path, self.interval, self.log_interval = path, interval, log_interval
        self.stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._last = ""
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._clock = clock
        self._logged: tuple | None = None  # the counts of the last line in a log, and when
        self._logged_at = 0.0

    def __enter__(self) -> "ProgressFollower":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._show(final=True)

    def _read(self) -> dict | None:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None

    def _show(self, final: bool = False) -> None:
        counts = self._read()
        if counts is None:
            return
        line = status_line(counts)
        if self._tty:
            if line == self._last and not final:
                return
            pad = " " * max(0, len(self._last) - len(line))  # no residue of a longer line
            self.stream.write("\r" + line + pad + ("\n" if final else ""))
            self._last = "" if final else line
        else:
            key = tuple(counts.get(k) for k in _COUNTED)
            now = self._clock()
            due = self._logged is None or final or counts.get("finished") or now - self._logged_at >= self.log_interval
            if key == self._logged or not due:
                return
            self.stream.write(line + "\n")
            self._logged, self._logged_at = key, now
        self.stream.flush()

    def _follow(self) -> None:
        while not self._stop.wait(self.interval):
            self._show()
