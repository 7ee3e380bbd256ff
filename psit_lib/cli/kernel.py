"""The kernel manager ``psit run`` executes notebooks with.

Local kernels talk over IPC (Unix sockets) rather than TCP on localhost: nothing listens on a
port, and the kernel has no reason to print its warning about unencrypted TCP into the run's
terminal output, where it would read like a problem.

Each kernel's sockets live in a private temporary folder of their own, removed when the kernel
shuts down. jupyter_client's default names them ``kernel-ipc-1``, ``kernel-ipc-2``, ... in the
working directory (the notebooks folder), where two runs at once could pick the same names and
read each other's messages ("Invalid Signature"), and a killed run leaves them behind.

The kernel's own output (its log lines, such as "[IPKernelApp] ERROR | KeyboardInterrupt caught
in kernel" while a run stops, and anything written to its file descriptors) goes to the file
``PSIT_KERNEL_LOG`` names (``psit run`` sets it to ``<notebook folder>/kernel.log``), appended,
never to the terminal, where it would land inside the progress lines. The notebook's outputs are
unaffected: they travel over the kernel's messages into the executed notebook.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from jupyter_client.manager import AsyncKernelManager

KERNEL_LOG = "PSIT_KERNEL_LOG"
"""The environment variable naming the file a kernel's own output is appended to."""


class LocalKernelManager(AsyncKernelManager):
    """An async kernel manager on IPC transport, in a private folder, where the platform has
    Unix sockets."""

    def __init__(self, **kwargs):
        ipc_dir = None
        if os.name == "posix":
            kwargs.setdefault("transport", "ipc")
            if kwargs["transport"] == "ipc" and "ip" not in kwargs:
                ipc_dir = tempfile.mkdtemp(prefix="psit-kernel-")
                kwargs["ip"] = os.path.join(ipc_dir, "kernel")
        super().__init__(**kwargs)
        self._psit_ipc_dir = ipc_dir

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart and self._psit_ipc_dir:
            shutil.rmtree(self._psit_ipc_dir, ignore_errors=True)

    cleanup_resources = _async_cleanup_resources

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        log = os.environ.get(KERNEL_LOG)
        if not log or "stdout" in kw or "stderr" in kw:
            await super()._async_launch_kernel(kernel_cmd, **kw)
            return
        os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
        with open(log, "ab") as sink:  # the kernel keeps its own copy of the descriptor
            await super()._async_launch_kernel(kernel_cmd, **{**kw, "stdout": sink, "stderr": sink})
