"""The kernel manager ``psit run`` executes notebooks with.

IPC sockets in a private temporary folder, not TCP: no port, no unencrypted-TCP warning, and no two runs
reading each other's ``kernel-ipc-N`` files ("Invalid Signature"). The kernel's own output is appended to
the file ``PSIT_KERNEL_LOG`` names, never to the terminal, where it would land inside the progress lines.
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
