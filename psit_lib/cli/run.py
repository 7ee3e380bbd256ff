"""``psit run``: check the settings once, execute the notebooks (:mod:`psit_lib.cli.execute`), summarise,
show each headline, render the report, and never report a broken run as done (exit statuses: ``EPILOG``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from psit_lib.cli.errors import CliError
from psit_lib.cli.notebooks import available, load_params, resolve_notebooks
from psit_lib.cli.preflight import check_settings, say_budget, size_by_server
from psit_lib.cli.resume import check_recorded_plugins, check_resumed_folders, mismatch_in, plan_run
from psit_lib.cli.signals import terminate_as_interrupt
from psit_lib.cli import terminal
from psit_lib.cli.summary import headline_block, table, write_run_file
from psit_lib.llm.settings import LLMSettings
from psit_lib.runs.folder import RunFolder, read_run_file
from psit_lib.runs.identity import default_run_id
from psit_lib.runs.outputs import publish_figures
from psit_lib.runs.paths import figures_dir, results_root

EXIT_EPISODES_FAILED = 1
EXIT_USAGE = 2
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


def choose_run(args: argparse.Namespace, notebooks: list[Path], params: dict[str, dict[str, Any]],
               settings: LLMSettings) -> tuple[str, Path]:
    """The run's id (``--run-id``, else the one this set-up's identity gives) and folder, its
    selected folders emptied with ``--fresh``; CliError when one would resume another set-up."""
    planned = plan_run(notebooks, params, settings)
    own_id = default_run_id({stem: plan.fingerprint for stem, plan in planned.items()})
    run_id = args.run_id or own_id
    run_dir = results_root() / run_id
    if args.fresh and not args.dry_run:
        for nb in notebooks:
            shutil.rmtree(run_dir / nb.stem, ignore_errors=True)
    if not args.fresh:
        check_resumed_folders(planned, run_dir, own_id if own_id != run_id else None)
    return run_id, run_dir


def move_latest(run_id: str) -> None:
    latest = results_root() / "latest"
    with contextlib.suppress(OSError):  # a folder of that name is left alone
        latest.unlink(missing_ok=True)
        latest.symlink_to(run_id)


def resume_command(args: argparse.Namespace, run_id: str) -> str:
    words = ["psit run", *args.notebooks]
    if args.params_file:
        words += ["-f", args.params_file]
    words += [f"-p {p}" for p in args.param]
    return " ".join(words + ["--run-id", run_id])


def check_jobs(jobs: int | None, *, simulated: bool = True) -> int:
    """``-j``: notebooks at once, at least 1; by default the machine's cores on the simulator, where they
    limit a run, and one on a real endpoint, whose call limits hold per notebook process."""
    if jobs is None:
        return max(1, os.cpu_count() or 1) if simulated else 1
    if jobs < 1:
        raise CliError(f"-j {jobs}: the number of notebooks run at once is at least 1 (-j 1 runs them one by one)")
    return jobs


def load_plugins_once() -> None:
    """Load the researcher's plug-ins before any parameter is checked (one sentence, exit 2, when
    one fails), and hand the kernels the absolute paths of plug-in files."""
    from psit_lib.runs.plugins import PLUGINS_ENV, PluginError, absolute_entries, load_plugins

    try:
        load_plugins()
    except PluginError as exc:
        raise CliError(str(exc)) from None
    if os.environ.get(PLUGINS_ENV):
        os.environ[PLUGINS_ENV] = absolute_entries()


def render_run_report(run_dir: Path) -> Path:
    """The run's HTML report (what ``psit report`` renders); the index's path."""
    from psit_lib.report import render_report

    return render_report(run_dir.resolve(), read_run_file(run_dir))


def cmd_run(args: argparse.Namespace) -> int:
    if args.run_id is not None:
        check_run_id(args.run_id)
    check_jobs(args.jobs)
    load_plugins_once()
    notebooks = resolve_notebooks(args.notebooks)
    if args.run_id is not None and not args.fresh:  # its plug-ins name the agents its parameters use
        check_recorded_plugins([RunFolder(results_root() / args.run_id / nb.stem) for nb in notebooks], changed=False)
    params = load_params(args.params_file, args.param, notebooks)
    if args.dry_run:  # plan and estimate, and ask the endpoint as the run would, without running anything
        from psit_lib.cli.estimate import dry_run_table, parse_price

        price = parse_price(args.price)
        settings = check_settings(probe=True, size=False)
        run_id, _ = choose_run(args, notebooks, params, settings)
        print(dry_run_table(notebooks, params, prompt_rate=args.prompt_rate, completion_rate=args.completion_rate,
                            price=price, margin=args.margin, run_id=run_id, fresh=args.fresh))
        return 0
    settings = check_settings(probe=True, size=False)  # the servers answer and serve the model
    run_id, run_dir = choose_run(args, notebooks, params, settings)
    if settings.backend == "openai":  # sized once the folders are known to resume (it sends completions)
        settings = size_by_server(settings)
    cores = check_jobs(args.jobs, simulated=settings.simulated)  # idle ones are lent to running notebooks
    jobs = min(cores, len(notebooks))
    at_once = f", {jobs} at a time" if jobs > 1 else ""
    if jobs > 1 and not settings.simulated:
        print(f"psit: -j {jobs} on a real endpoint: each notebook process keeps its own call limits "
              f"(PSIT_CONCURRENCY, PSIT_ENDPOINT_CONCURRENCY), so the server sees up to {jobs} times as many "
              "calls at once", file=sys.stderr)
    say_budget(settings, params)  # one line when a real run lacks the study's token budgets (docs/protocol.md §9)
    print(f"psit run: {len(notebooks)} notebook(s){at_once} -> {run_dir} "
          f"(backend {settings.backend}, model {settings.model}, profile {settings.profile_label})", flush=True)

    from psit_lib.cli.execute import execute  # here: a bad setting stops the run before these load
    from psit_lib.cli.progress import ProgressBoard

    def announce(i: int, nb: Path) -> str:
        shown = " ".join(f"{k}={v}" for k, v in params[nb.stem].items())
        return f"[{i}/{len(notebooks)}] {nb.stem} {shown}".rstrip()

    try:
        with terminate_as_interrupt():  # SIGTERM: a KeyboardInterrupt whose exit status is 143
            with ProgressBoard(enabled=args.progress) as board:
                summaries = execute(notebooks, params, run_dir, jobs=jobs, board=board, announce=announce,
                                    cores=cores)
    except KeyboardInterrupt as exc:
        print(f"\npsit: interrupted; finished episodes are saved. Resume with: {resume_command(args, run_id)}",
              file=sys.stderr)
        return getattr(exc, "exit_status", EXIT_INTERRUPTED)
    print("\n" + table(summaries))
    mismatch = mismatch_in([s.error for s in summaries])
    if mismatch:  # a folder made another way, found by the notebook: a usage error, as before a kernel
        print(f"psit: {mismatch}", file=sys.stderr)
        return EXIT_USAGE
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
    headlines = headline_block(run_dir, [s for s in summaries if s.status != "failed"], width=terminal.width())
    if headlines:
        print("\n" + headlines, flush=True)
    report_failed = False
    if args.report:
        try:
            print(f"report: {render_run_report(run_dir)}", flush=True)
        except Exception as exc:  # the run's results stand; the report is named as what failed
            from psit_lib.runs.runner import describe_error

            report_failed = True
            print(f"psit: the report could not be rendered: {describe_error(exc)} "
                  f"(retry with `psit report --run-id {run_id}`)", file=sys.stderr)
    if complete:
        if len(notebooks) == len(available()):
            move_latest(run_id)
            copied = publish_figures([run_dir / nb.stem for nb in notebooks], figures_dir())
            print(f"psit: results/latest -> {run_id}; {copied} figure files copied to {figures_dir()}", flush=True)
        else:
            print(f"psit: results/latest and figures/ stay with the last complete run of the whole series; "
                  f"this run's figures are in {run_dir}/<notebook>/figures", file=sys.stderr)
        return EXIT_EPISODES_FAILED if report_failed else 0
    if failed_notebooks:
        print(f"psit: {len(failed_notebooks)} notebook(s) failed: "
              f"{', '.join(s.notebook for s in failed_notebooks)} (executed copies with the error are in "
              f"{run_dir / 'notebooks'}; each kernel's own output in {run_dir}/<notebook>/kernel.log)",
              file=sys.stderr)
    if failed_episodes:
        print(f"psit: {failed_episodes} episode(s) failed and are left out of every rate; re-running "
              f"`{resume_command(args, run_id)}` retries exactly those.", file=sys.stderr)
    print(f"psit: results/latest and figures/ were not moved to this incomplete run; its figures are in "
          f"{run_dir}/<notebook>/figures", file=sys.stderr)
    return EXIT_EPISODES_FAILED if failed_notebooks or failed_episodes or report_failed else EXIT_SUSPECT

