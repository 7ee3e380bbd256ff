"""Executing the notebooks of a run, ``-j N`` at once, each in a worker process of its own session (so
Ctrl-C reaches only ``psit run``, which stops workers by SIGTERM and each shuts its kernel down).

Episodes are seeded per notebook and episode, never by what else runs, so the tables do not depend on ``-j``.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager

from psit_lib.cli.progress import ProgressBoard, final_line
from psit_lib.cli.summary import NotebookSummary
from psit_lib.runs.folder import RunFolder

KERNEL_LOG_NAME = "kernel.log"
KERNEL_LOG = "PSIT_KERNEL_LOG"
"""The environment variable naming the file a kernel's own output is appended to."""
STOP_GRACE = 60.0
"""Seconds a stopped worker has to shut its kernel down before it is killed."""


class LocalKernelManager(AsyncKernelManager):
    """Kernels on IPC sockets in a private temporary folder, not TCP: no port, no unencrypted-TCP warning, no
    two runs reading each other's ``kernel-ipc-N`` files ("Invalid Signature"); the kernel's own output goes
    to ``PSIT_KERNEL_LOG``, never to the terminal, where it would land inside the progress lines."""

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


def run_notebook(notebook: Path, params: dict[str, Any], run_dir: Path) -> NotebookSummary:
    """Execute one notebook into ``run_dir`` and summarise it; a notebook's error is its summary's, never
    raised; a KeyboardInterrupt propagates after papermill shut the kernel down. The process runs this
    one notebook: its environment (:func:`worker_environment`) tells the kernel where its folder is."""
    import papermill

    out_dir = run_dir / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    folder = run_dir / notebook.stem
    started, since = time.perf_counter(), time.time()
    status, error = "ok", None
    try:
        papermill.execute_notebook(str(notebook), str(out_dir / notebook.name), parameters=params,
                                   cwd=str(notebook.parent), progress_bar=False, kernel_name="python3",
                                   log_output=False,
                                   kernel_manager_class="psit_lib.cli.execute.LocalKernelManager")
    except Exception as exc:  # papermill's execution errors, and a kernel that died
        status, error = "failed", notebook_error(exc, out_dir / notebook.name)
    return NotebookSummary.from_folder(folder, notebook=notebook.stem, status=status,
                                       seconds=time.perf_counter() - started, error=error, since=since)


_EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Interrupt|Exit)):\s*(.+)$")


def notebook_error(exc: Exception, executed: Path) -> str:
    """The error a notebook raised as its own message (``CacheMissError: ...``, not an empty
    ``CellExecutionError``): the last error output of the executed notebook, else its last stderr error line."""
    name, value = getattr(exc, "ename", None), (getattr(exc, "evalue", None) or "").strip()
    found = _error_in_notebook(executed)
    if found and (not value or name in (None, "CellExecutionError")):
        name, value = found
    text = " ".join((value or str(exc)).split())
    return f"{name or type(exc).__name__}: {text[:600]}"


def _error_in_notebook(path: Path) -> tuple[str, str] | None:
    try:
        cells = json.loads(path.read_text()).get("cells", [])
    except (OSError, ValueError):
        return None
    outputs = [o for c in cells for o in c.get("outputs", [])]
    for output in reversed(outputs):
        if output.get("output_type") == "error" and output.get("evalue"):
            return output.get("ename", "Error"), output["evalue"]
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            lines = "".join(output.get("text", "")).splitlines()
            for line in reversed(lines):
                match = _EXCEPTION_LINE.match(line.strip())
                if match:
                    return match.group(1), match.group(2)
    return None


Announce = Callable[[int, Path], str]
"""The line that says a notebook starts (its position and parameters)."""


@dataclass
class _Job:
    notebook: Path
    process: subprocess.Popen
    result: Path
    started: float = field(default_factory=time.perf_counter)


def _start_worker(notebook: Path, params: dict[str, Any], run_dir: Path, scratch: Path) -> _Job:
    order = scratch / f"{notebook.stem}.job"
    result = scratch / f"{notebook.stem}.json"
    with order.open("wb") as f:
        pickle.dump({"notebook": str(notebook), "params": params, "run_dir": str(run_dir),
                     "result": str(result)}, f)
    log = run_dir / notebook.stem / KERNEL_LOG_NAME
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as sink:  # the worker's own warnings, beside its kernel's log
        process = subprocess.Popen([sys.executable, "-m", "psit_lib.cli.execute", str(order)],
                                   stdin=subprocess.DEVNULL, stdout=sink, stderr=sink,
                                   start_new_session=True, env=worker_environment(run_dir, log))
    return _Job(notebook, process, result)


def worker_environment(run_dir: Path, log: Path) -> dict[str, str]:
    """The environment of a notebook's worker and so of its kernel: this one's, with the run's folder
    (``PSIT_RUN_DIR``, where ``Experiment`` writes) and the kernel's log. Where, not what: the
    folder's identity is bound by the notebook itself (:mod:`psit_lib.runs.identity`)."""
    return {**os.environ, "PSIT_RUN_DIR": str(run_dir), KERNEL_LOG: str(log)}


def _collect(job: _Job, run_dir: Path) -> NotebookSummary:
    try:
        data = json.loads(job.result.read_text())
        return NotebookSummary(**{**data, "health_reasons": tuple(data.get("health_reasons") or ())})
    except (OSError, ValueError, TypeError):
        code = job.process.returncode
        error = (f"WorkerError: the process executing it ended with status {code} "
                 f"(its output: {run_dir / job.notebook.stem / KERNEL_LOG_NAME})")
        status = "interrupted" if code in (130, 143, -signal.SIGTERM, -signal.SIGINT) else "failed"
        return NotebookSummary.from_folder(run_dir / job.notebook.stem, notebook=job.notebook.stem, status=status,
                                           seconds=time.perf_counter() - job.started, error=error)


def execute(notebooks: list[Path], params: dict[str, dict[str, Any]], run_dir: Path, *, jobs: int,
            board: ProgressBoard, announce: Announce, cores: int | None = None) -> list[NotebookSummary]:
    """Run the notebooks into ``run_dir``, ``jobs`` at a time, each in a worker process; one summary each,
    in the order given (a failure does not stop the others), start and final lines written through ``board``.
    ``cores`` (default ``jobs``) not taken by a notebook are lent to the running ones (:func:`lend_idle_cores`)."""
    for nb in notebooks:
        RunFolder(run_dir / nb.stem).clear_progress()  # never show an earlier execution's counts
    pending = list(enumerate(notebooks, 1))
    running: dict[str, _Job] = {}
    done: dict[str, NotebookSummary] = {}
    scratch = Path(tempfile.mkdtemp(prefix="psit-jobs-"))
    try:
        while pending or running:
            while len(running) < jobs and (ready := _next_ready(pending, notebooks, done)) is not None:
                i, nb = pending.pop(ready)
                board.say(announce(i, nb))
                running[nb.stem] = _start_worker(nb, params[nb.stem], run_dir, scratch)
                board.start(nb.stem, RunFolder(run_dir / nb.stem))
            lend_idle_cores(running, cores or jobs, run_dir)
            time.sleep(0.1)
            for stem, job in list(running.items()):
                if job.process.poll() is not None:
                    summary = done[stem] = _collect(job, run_dir)
                    del running[stem]
                    board.finish(stem, final_line(stem, summary.status, summary.seconds, episodes=summary.episodes,
                                                  failed=summary.failed, error=summary.error),
                                 sys.stderr if summary.status == "failed" else None)
    except KeyboardInterrupt:
        stop_workers(list(running.values()))
        for stem, job in running.items():
            board.finish(stem, final_line(stem, "interrupted", time.perf_counter() - job.started), sys.stderr)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return [done[nb.stem] for nb in notebooks]


def lend_idle_cores(running: dict[str, Any], cores: int, run_dir: Path) -> None:
    """With fewer notebooks running than ``cores`` and none to start, lend the idle cores to those running:
    on the simulator their episodes take worker processes (:mod:`psit_lib.runs.processes`), so one notebook
    left at the end no longer leaves the other core idle. Called when nothing could start."""
    if not running or len(running) >= cores:
        return
    idle = cores - len(running)
    for k, stem in enumerate(sorted(running)):
        lent = 1 + idle // len(running) + (k < idle % len(running))
        folder = RunFolder(run_dir / stem)
        if folder.lent_processes() < lent:
            folder.lend_processes(lent)


def _next_ready(pending: list[tuple[int, Path]], notebooks: list[Path],
                done: dict[str, NotebookSummary]) -> int | None:
    """The position in ``pending`` of the first notebook whose run-mates it reads from
    (:func:`psit_lib.studies.registry.runs_after`) have all ended; None while each waits."""
    from psit_lib.studies.registry import runs_after

    in_run = {nb.stem for nb in notebooks}
    for position, (_, nb) in enumerate(pending):
        if all(stem in done for stem in runs_after().get(nb.stem, ()) if stem in in_run):
            return position
    return None


def stop_workers(jobs: list[_Job], grace: float = STOP_GRACE) -> None:
    """SIGTERM to every worker still running (each shuts its kernel down), then wait; a worker
    still there after ``grace`` seconds is killed."""
    for job in jobs:
        if job.process.poll() is None:
            try:
                job.process.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + grace
    for job in jobs:
        while True:
            try:
                job.process.wait(timeout=max(0.0, deadline - time.monotonic()))
                break
            except subprocess.TimeoutExpired:
                job.process.kill()
                job.process.wait()
                break
            except KeyboardInterrupt:  # a second Ctrl-C while waiting: keep waiting, the kernels matter
                continue


def _worker(order_path: str) -> int:
    """``python -m psit_lib.cli.execute ORDER``: the one notebook of ``psit run``'s order, its summary
    written as JSON; SIGTERM (how ``psit run`` stops workers) is an interrupt: exit 143 (130 for SIGINT)."""
    from psit_lib.cli.signals import terminate_as_interrupt

    with open(order_path, "rb") as f:
        order = pickle.load(f)  # written by this package's own psit run, in a private folder
    try:
        with terminate_as_interrupt():
            summary = run_notebook(Path(order["notebook"]), order["params"], Path(order["run_dir"]))
    except KeyboardInterrupt as exc:
        return int(getattr(exc, "exit_status", 130))
    Path(order["result"]).write_text(json.dumps(asdict(summary)))
    return 0


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1]))
