"""``psit run``: check the settings once, execute notebooks with papermill, follow their episodes,
summarise what happened, and never report a broken run as done.

Exit status: 0 when every notebook ran, no episode failed and no notebook is suspect; 1 when
episodes failed (re-running with the same ``--run-id`` retries exactly those) or a notebook
failed; 3 when everything ran but a notebook is ``suspect`` (too many replies could not be
read, or roles lacked what they need: ``psit_lib.runs.health``; failures take precedence);
2 for a usage or configuration error (before anything ran); 130 when interrupted by Ctrl-C
(SIGINT) and 143 (128 + 15) when stopped by SIGTERM (``kill``, a container stop, a CI
cancellation): both stop the same way, the running notebook's kernel is shut down, finished
episodes stay saved, and the message names the command that resumes the run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from psit_lib.cli.errors import CliError
from psit_lib.cli.notebooks import available, load_params, resolve_notebooks
from psit_lib.cli.preflight import check_settings
from psit_lib.cli.progress import ProgressFollower
from psit_lib.cli.signals import terminate_as_interrupt
from psit_lib.cli.summary import NotebookSummary, table, write_run_file
from psit_lib.runs.folder import RunFolder
from psit_lib.runs.outputs import publish_figures
from psit_lib.runs.paths import figures_dir, results_root

EXIT_EPISODES_FAILED = 1
EXIT_SUSPECT = 3
EXIT_INTERRUPTED = 130


_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def check_run_id(run_id: str) -> str:
    """A run id names one folder under the results root: letters, digits, ``.``, ``_`` and ``-``,
    starting with a letter or digit, never ``..`` (so no id writes outside the results folder or
    repoints ``latest`` there)."""
    if not _RUN_ID.fullmatch(run_id) or ".." in run_id or run_id == "latest":
        raise CliError(f"--run-id {run_id!r} is not a run id: use letters, digits, '.', '_' and '-' "
                       "(starting with a letter or digit, no '..', not 'latest'), e.g. --run-id my-run")
    return run_id


def default_run_id(per_nb: dict[str, dict[str, Any]]) -> str:
    text = json.dumps(per_nb, sort_keys=True, default=str)
    env = "|".join(os.environ.get(k, "") for k in ("PSIT_BACKEND", "PSIT_MODEL", "PSIT_SIM_PROFILE"))
    return "run-" + hashlib.sha256((text + env).encode()).hexdigest()[:8]


_EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Interrupt|Exit)):\s*(.+)$")


def notebook_error(exc: Exception, executed: Path) -> str:
    """The error a notebook raised, as its own message: ``CacheMissError: replay-only cache ...``,
    not ``CellExecutionError: `` with nothing after it.

    Kernels report errors in different shapes (an ``error`` output; or, when a library adds
    notes to the exception, only a traceback on stderr), so the executed notebook is read back:
    the last error output, else the last ``SomeError: message`` line of the last stderr stream.
    """
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


def execute(notebooks: list[Path], params: dict[str, dict[str, Any]], run_dir: Path, *,
            progress: bool) -> list[NotebookSummary]:
    """Run the notebooks in order into ``run_dir``; one summary each (a failure does not stop
    the others). The kernels learn the run folder from ``PSIT_RUN_DIR``, set only meanwhile."""
    saved = os.environ.get("PSIT_RUN_DIR")
    os.environ["PSIT_RUN_DIR"] = str(run_dir)
    try:
        return _execute(notebooks, params, run_dir, progress=progress)
    finally:
        os.environ.pop("PSIT_RUN_DIR", None) if saved is None else os.environ.__setitem__("PSIT_RUN_DIR", saved)


def _execute(notebooks: list[Path], params: dict[str, dict[str, Any]], run_dir: Path, *,
             progress: bool) -> list[NotebookSummary]:
    import papermill

    out_dir = run_dir / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    summaries = []
    for i, nb in enumerate(notebooks, 1):
        folder = run_dir / nb.stem
        RunFolder(folder).clear_progress()
        shown = " ".join(f"{k}={v}" for k, v in params[nb.stem].items())
        print(f"[{i}/{len(notebooks)}] {nb.stem} {shown}".rstrip(), flush=True)
        started, since = time.perf_counter(), time.time()
        status, error = "ok", None
        try:
            with ProgressFollower(RunFolder(folder).progress_path) if progress else _nothing():
                papermill.execute_notebook(str(nb), str(out_dir / nb.name), parameters=params[nb.stem],
                                           cwd=str(nb.parent), progress_bar=False, kernel_name="python3",
                                           log_output=False,
                                           kernel_manager_class="psit_lib.cli.kernel.LocalKernelManager")
        except Exception as exc:  # papermill's execution errors, and a kernel that died
            status, error = "failed", notebook_error(exc, out_dir / nb.name)
        except KeyboardInterrupt:
            summaries.append(NotebookSummary.from_folder(folder, notebook=nb.stem, status="interrupted",
                                                         seconds=time.perf_counter() - started, since=since))
            raise
        summary = NotebookSummary.from_folder(folder, notebook=nb.stem, status=status,
                                              seconds=time.perf_counter() - started, error=error, since=since)
        summaries.append(summary)
        if error:
            print(f"    FAILED: {error}", file=sys.stderr, flush=True)
        else:
            note = f", {summary.failed} episode(s) failed" if summary.failed else ""
            note += ", SUSPECT (see below)" if summary.health == "suspect" else ""
            print(f"    done in {summary.seconds:.1f}s{note}", flush=True)
    return summaries


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def move_latest(run_id: str) -> None:
    latest = results_root() / "latest"
    try:
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(run_id)
    except OSError:
        pass


def resume_command(args: argparse.Namespace, run_id: str) -> str:
    words = ["psit run", *args.notebooks]
    if args.params_file:
        words += ["-f", args.params_file]
    words += [f"-p {p}" for p in args.param]
    return " ".join(words + ["--run-id", run_id])


def cmd_run(args: argparse.Namespace) -> int:
    if args.run_id is not None:
        check_run_id(args.run_id)
    notebooks = resolve_notebooks(args.notebooks)
    params = load_params(args.params_file, args.param, notebooks)
    if args.dry_run:
        return dry_run(notebooks, params, prompt_rate=args.prompt_rate, completion_rate=args.completion_rate)
    settings = check_settings()
    run_id = args.run_id or default_run_id(params)
    run_dir = results_root() / run_id
    if args.fresh:
        for nb in notebooks:
            shutil.rmtree(run_dir / nb.stem, ignore_errors=True)
    print(f"psit run: {len(notebooks)} notebook(s) -> {run_dir} "
          f"(backend {settings.backend}, model {settings.model}, profile {settings.profile_label})", flush=True)
    try:
        with terminate_as_interrupt():  # SIGTERM: a KeyboardInterrupt whose exit status is 143
            summaries = execute(notebooks, params, run_dir, progress=args.progress)
    except KeyboardInterrupt as exc:
        print(f"\npsit: interrupted; finished episodes are saved. Resume with: {resume_command(args, run_id)}",
              file=sys.stderr)
        return getattr(exc, "exit_status", EXIT_INTERRUPTED)
    print("\n" + table(summaries))
    failed_notebooks = [s for s in summaries if s.status == "failed"]
    failed_episodes = sum(s.failed for s in summaries)
    suspect = [s for s in summaries if s.health == "suspect"]
    for s in suspect:
        print(f"psit: {s.notebook} is SUSPECT: {s.health_reasons[0]}"
              + (f" (+{len(s.health_reasons) - 1} more in its notebook)" if len(s.health_reasons) > 1 else ""),
              file=sys.stderr)
    complete = not failed_notebooks and not failed_episodes and not suspect
    write_run_file(run_dir, summaries, run_id=run_id, complete=complete, backend=settings.backend,
                   model=settings.model, profile=settings.profile_label)
    if complete:
        if len(notebooks) == len(available()):
            move_latest(run_id)
            copied = publish_figures([run_dir / nb.stem for nb in notebooks], figures_dir())
            print(f"psit: results/latest -> {run_id}; {copied} figure files copied to {figures_dir()}", flush=True)
        else:
            print(f"psit: results/latest and figures/ stay with the last complete run of the whole series; "
                  f"this run's figures are in {run_dir}/<notebook>/figures", file=sys.stderr)
        return 0
    if failed_notebooks:
        print(f"psit: {len(failed_notebooks)} notebook(s) failed: "
              f"{', '.join(s.notebook for s in failed_notebooks)} (executed copies with the error are in "
              f"{run_dir / 'notebooks'})", file=sys.stderr)
    if failed_episodes:
        print(f"psit: {failed_episodes} episode(s) failed and are left out of every rate; re-running "
              f"`{resume_command(args, run_id)}` retries exactly those.", file=sys.stderr)
    print("psit: results/latest was not moved to this incomplete run", file=sys.stderr)
    return EXIT_EPISODES_FAILED if failed_notebooks or failed_episodes else EXIT_SUSPECT


def dry_run(notebooks: list[Path], params: dict[str, dict[str, Any]], *, prompt_rate: float = 1000.0,
            completion_rate: float = 100.0) -> int:
    """Plan and estimate without running anything (``cli/estimate.py``)."""
    from psit_lib.cli.estimate import dry_run_table

    print(dry_run_table(notebooks, params, prompt_rate=prompt_rate, completion_rate=completion_rate))
    return 0
