"""SIGTERM takes the same way out as Ctrl-C.

``kill <pid>``, a container stop, a CI job's cancellation or ``timeout(1)`` send SIGTERM, whose
default action ends the process at once: no message, no resume hint, and a notebook kernel left
behind. Inside :func:`terminate_as_interrupt`, SIGTERM raises :class:`Terminated`, a
``KeyboardInterrupt``, in the main thread instead, so everything that handles Ctrl-C (papermill
shutting the kernel down, ``psit run`` printing the resume command) handles it too; its
``exit_status`` is 143 (128 + 15, the shell's convention for a process ended by SIGTERM), where
Ctrl-C gives 130.
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
    # The interrupt leaves the event loop that papermill runs a cell on with that cell's task
    # pending; when the loop runs again to shut the kernel down, the task would wake up, find
    # the kernel gone and log a traceback ("Kernel died while waiting for execute reply").
    # Cancelled first (as asyncio.run does with its main task on Ctrl-C), and with its outcome
    # collected (nbclient turns the cancellation into DeadKernelError), it ends quietly.
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
