"""SIGTERM takes the same way out as Ctrl-C.

``kill``, a container stop or a CI cancellation sends SIGTERM, whose default ends the process with no
resume hint and a kernel left behind; inside :func:`terminate_as_interrupt` it raises a
``KeyboardInterrupt`` whose ``exit_status`` is 143 (128 + 15; Ctrl-C gives 130).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Iterator

EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived; handled wherever Ctrl-C is, with its own exit status."""

    exit_status = EXIT_TERMINATED


def _raise_terminated(signum, frame) -> None:
    # a second SIGTERM while cleaning up ends the process the default way
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # papermill's pending cell task would wake once the kernel is gone and log "Kernel died while
    # waiting for execute reply": cancelled first (as asyncio.run does on Ctrl-C), it ends quietly.
    loop = asyncio._get_running_loop()
    if loop is not None:
        for task in asyncio.all_tasks(loop):
            task.cancel("SIGTERM")
            task.add_done_callback(_collect)
    raise Terminated()


def _collect(task: asyncio.Task) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: asyncio does not log it as "never retrieved"


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` (a ``KeyboardInterrupt``); the previous
    handler comes back on leaving. Does nothing outside the main thread (signals cannot be
    handled there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
