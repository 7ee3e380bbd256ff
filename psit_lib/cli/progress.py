"""Episode progress in the terminal, one line per running notebook, with its phase named.

Lines follow the progress files each kernel's runner rewrites, whichever process runs the notebook.
On a terminal they form a block redrawn in place, cut to the width (a wrapped line breaks the redraw);
in a log a line comes only when counts or phase change, at most every ``log_interval`` seconds.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import Any, TextIO

from psit_lib.runs.folder import RunFolder

LOG_INTERVAL = 10.0
"""Seconds between one notebook's progress lines in a log (not a terminal), at least."""

_COUNTED = ("phase", "planned", "resumed", "done", "failed", "cached", "finished")
_UP_AND_CLEAR = "\x1b[{n}F\x1b[J"  # to the start of the line n lines up, erase to the end of the screen


def format_duration(seconds: float) -> str:
    """``45s``, ``1m05s``, ``2h03m``: whole units, never a unit twice."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def fit(line: str, width: int | None) -> str:
    """``line`` cut to ``width`` characters (an ellipsis marks the cut); unchanged without one."""
    if width is None or len(line) <= width:
        return line
    return line[:max(0, width - 1)] + "…"


def progress_line(notebook: str, counts: dict[str, Any] | None, *, now: float | None = None,
                  width: int | None = None) -> str:
    """One notebook's progress: its name, the phase, episodes finished of planned, what failed,
    was resumed or came from the cache, and the time left (or taken, once the phase finished).
    ``counts`` is the progress file's content; None before the notebook's first episodes."""
    if not counts:
        return fit(f"{notebook} starting", width)
    planned, resumed = int(counts.get("planned", 0)), int(counts.get("resumed", 0))
    done, failed, cached = int(counts.get("done", 0)), int(counts.get("failed", 0)), int(counts.get("cached", 0))
    phase = str(counts.get("phase") or "episodes")
    extras = [f"{n} {what}" for n, what in ((failed, "failed"), (resumed, "resumed"), (cached, "cached")) if n]
    line = f"{notebook} {phase} {resumed + done}/{planned}" + (f" ({', '.join(extras)})" if extras else "")
    started = float(counts.get("started") or 0.0)
    if counts.get("finished"):
        end = float(counts.get("ended") or started)
        return fit(f"{line} done in {format_duration(end - started)}", width)
    current = time.time() if now is None else now
    rate = done / max(1e-6, current - started) if counts.get("started") is not None else 0.0
    left = planned - resumed - done
    eta = format_duration(left / rate) if rate > 0 and left > 0 else "-"
    return fit(f"{line} ETA {eta}", width)


def final_line(notebook: str, status: str, seconds: float, *, episodes: int = 0, failed: int = 0,
               error: str | None = None, width: int | None = None) -> str:
    """The line that stays when a notebook ends: its status, time and episodes (or its error)."""
    took = format_duration(seconds)
    if status == "failed":
        return fit(f"{notebook} FAILED after {took}: {error or 'no error recorded'}", width)
    if status == "interrupted":
        return fit(f"{notebook} interrupted after {took}", width)
    shown = {"ok": "ok", "episodes failed": "episodes failed", "suspect": "SUSPECT"}.get(status, status)
    tail = f"{episodes} episodes" + (f", {failed} failed" if failed else "")
    return fit(f"{notebook} {shown} in {took}: {tail}", width)


class ProgressBoard:
    """Follows the progress files of the running notebooks and writes their lines (see the
    module's docstring); :meth:`say` writes a line that stays. Thread-safe; a background thread
    refreshes every second while inside ``with``."""

    def __init__(self, stream: TextIO | None = None, *, log_interval: float = LOG_INTERVAL,
                 clock=time.monotonic, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.log_interval, self.enabled = log_interval, enabled
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._clock = clock
        self._lock = threading.RLock()
        self._running: dict[str, RunFolder] = {}  # notebook -> its folder, in start order
        self._drawn = 0                        # lines of the live block on the terminal
        self._shown: list[str] = []            # and what they say
        self._logged: dict[str, tuple] = {}    # notebook -> counts of its last line in a log
        self._logged_at: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, daemon=True)

    def __enter__(self) -> "ProgressBoard":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        with self._lock:
            self._clear()
            self.stream.flush()

    # -- the notebooks followed -------------------------------------------------------------------
    def start(self, notebook: str, folder: RunFolder) -> None:
        with self._lock:
            self._running[notebook] = folder
            self.refresh()

    def finish(self, notebook: str, line: str, stream: TextIO | None = None) -> None:
        """Stop following ``notebook`` (its last counts logged if they changed) and write ``line``."""
        with self._lock:
            if self.enabled and not self._tty and notebook in self._running:
                self._log(notebook, final=True)
            self._running.pop(notebook, None)
            self.say(line, stream)

    def say(self, text: str, stream: TextIO | None = None) -> None:
        """Write ``text`` as lines that stay, above the live block."""
        with self._lock:
            target = stream or sys.stdout
            self._clear()
            target.write(text + "\n")
            target.flush()
            self._draw()

    # -- writing ----------------------------------------------------------------------------------
    def refresh(self) -> None:
        with self._lock:
            if not self.enabled:
                return
            if self._tty:
                if self._lines() != self._shown:  # unchanged: not redrawn
                    self._clear()
                    self._draw()
            else:
                for notebook in list(self._running):
                    self._log(notebook)

    def _width(self) -> int:
        return max(20, shutil.get_terminal_size((100, 24)).columns - 1)

    def _clear(self) -> None:
        if self._tty and self._drawn:
            self.stream.write(_UP_AND_CLEAR.format(n=self._drawn))
        self._drawn, self._shown = 0, []

    def _draw(self) -> None:
        if not (self.enabled and self._tty and self._running):
            self.stream.flush()
            return
        lines = self._lines()
        self.stream.write("".join(line + "\n" for line in lines))
        self._drawn, self._shown = len(lines), lines
        self.stream.flush()

    def _lines(self) -> list[str]:
        width = self._width()
        return [progress_line(nb, folder.progress(), width=width) for nb, folder in self._running.items()]

    def _log(self, notebook: str, final: bool = False) -> None:
        counts = self._running[notebook].progress()
        if not counts:
            return
        key = tuple(counts.get(k) for k in _COUNTED)
        last = self._logged.get(notebook)
        now = self._clock()
        due = (last is None or final or counts.get("finished") or last[0] != key[0]
               or now - self._logged_at.get(notebook, 0.0) >= self.log_interval)
        if key == last or not due:
            return
        self.stream.write(progress_line(notebook, counts) + "\n")
        self.stream.flush()
        self._logged[notebook], self._logged_at[notebook] = key, now

    def _follow(self) -> None:
        while not self._stop.wait(1.0):
            self.refresh()
