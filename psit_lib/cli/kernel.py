"""The kernel manager ``psit run`` executes notebooks with.

Local kernels talk over IPC (Unix sockets) rather than TCP on localhost: nothing listens on a
port, and the kernel has no reason to print its warning about unencrypted TCP into the run's
terminal output, where it would read like a problem.
"""

from __future__ import annotations

import os

from jupyter_client.manager import AsyncKernelManager


class LocalKernelManager(AsyncKernelManager):
    """An async kernel manager on IPC transport where the platform has Unix sockets."""

    def __init__(self, **kwargs):
        if os.name == "posix":
            kwargs.setdefault("transport", "ipc")
        super().__init__(**kwargs)
