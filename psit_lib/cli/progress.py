"""Episode progress in the terminal, streamed from the kernel.

The runner inside the notebook kernel rewrites ``<run>/<notebook>/progress.json`` as episodes
finish (``psit_lib.runs.runner.RunProgress``); a thread of the command line follows the file
and prints one status line: done / failed / cached of the planned episodes, rate and ETA.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path


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

    def __init__(self, path: Path, *, interval: float = 1.0, stream=None) -> None:
        self.path, self.interval = path, interval
        self.stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._last = ""
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()

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
            if line != self._last or final:
                self.stream.write("\r" + line + ("\n" if final else ""))
        elif (final or counts.get("finished")) and line != self._last:
            self.stream.write(line + "\n")  # a log gets each finished execution once
        else:
            return
        self._last = line
        self.stream.flush()

    def _follow(self) -> None:
        while not self._stop.wait(self.interval):
            self._show()
