"""The ``psit`` command line (``psit --help`` lists the commands, :data:`EPILOG` the examples)."""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Callable
from importlib import metadata

from psit_lib.cli.errors import CliError
from psit_lib.cli import terminal
from psit_lib.cli.terminal import HelpFormatter


def _lazy(reference: str) -> Callable[[argparse.Namespace], int]:
    """A command whose module (``"module:name"``) is imported only when it runs, so ``psit --help`` stays quick."""
    module, _, name = reference.partition(":")
    return lambda args: getattr(importlib.import_module(module), name)(args)


def cmd_list(args: argparse.Namespace) -> int:
    import textwrap

    from psit_lib.cli.notebooks import available, declared

    columns = terminal.width()
    for nb in available():
        print(nb.stem)
        for p in declared(nb).values():  # a comment may give the study-scale value: "# per cell; study: 50"
            study = re.search(r"\bstudy:\s*([^;,)]+)", p.get("help") or "", re.I)
            head = f"    {p['name']:26} = "
            text = f"{p['default']:30}" + (f"  (study: {study.group(1).strip()})" if study else "")
            print("\n".join(textwrap.wrap(text, columns, initial_indent=head, subsequent_indent=" " * len(head),
                                         break_long_words=False, break_on_hyphens=False)))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from psit_lib.cli.run import check_run_id, render_run_report
    from psit_lib.runs.paths import results_root

    run_dir = results_root() / (check_run_id(args.run_id) if args.run_id is not None else "latest")
    if not (run_dir / "notebooks").exists():
        raise CliError(f"no executed notebooks in {run_dir}; run `psit run` first")
    print(f"report: {render_run_report(run_dir)}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from psit_lib.cli.compare import compare, compare_page, compare_with_paper

    if args.html:
        print(f"compare page: {compare_page([args.run_a, *([args.run_b] if args.run_b else []), *args.more], args.out)}")
        return 0
    if args.more:
        raise CliError("more than two runs are compared on a page: add --html")
    if args.paper:
        if args.run_b:
            raise CliError("psit compare RUN --paper takes one run")
        print(compare_with_paper(args.run_a, args.margin))
    elif not args.run_b:
        raise CliError("psit compare takes two runs (or one run and --paper)")
    else:
        print(compare(args.run_a, args.run_b))
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from psit_lib.report.runs_index import runs_html, runs_index, runs_text
    from psit_lib.runs.paths import results_root

    root = results_root()
    entries = runs_index(root)
    print(runs_text(entries, terminal.width()))
    if args.html:
        page = root / "runs.html"
        page.write_text(runs_html(entries, root), encoding="utf-8")
        print(f"runs page: {page}")
    return 0


def cmd_sim_serve(args: argparse.Namespace) -> int:
    from psit_lib.sim.profiles import UnknownProfileError, get_profile
    from psit_lib.sim.server import serve

    try:
        get_profile(args.profile)
    except UnknownProfileError as exc:
        raise CliError(str(exc)) from None
    serve(args.host, args.port, args.profile)
    return 0


def version() -> str:
    try:
        return metadata.version("psit-lib")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


EPILOG = """\
examples:
  psit run                                   every notebook on the configured backend
  psit run 02 03 -p n_episodes=20            two notebooks with a parameter changed
  psit run -f notebooks/params/study_scale.yaml --run-id study
  psit run 02 --run-id study                 resume (finished episodes are never redone)
  psit run -j 1 --no-report                  one notebook at a time, no HTML report at the end
  psit run --dry-run                         plan and estimate only (the endpoint is asked)
  psit compare run-a run-b                   configuration and result tables of two runs
  psit compare run-a run-b --html            one page: dot plots and differences side by side
  psit compare run-a --paper                 claims ledger; each paper number against the run's
  psit run 02 --dry-run --margin 0.3         episodes per cell that decide Table 1 at a margin
  psit rescore run-a 02                      rescore 02's stored episodes, reproduce its tables
  psit export run-a --inspect --markdown     Inspect eval logs; each key table in Markdown
  psit prompts from-reference ~/src/Hangman  the study's own prompts, from your checkout of it

environment (models are configured here, never by notebook parameters):
  PSIT_BACKEND            sim (default, the embedded simulated model) or openai
  PSIT_BASE_URLS          endpoint URL(s) of the served model, comma-separated replicas
  PSIT_MODEL              the served model's name
  PSIT_API_KEY            the endpoint's key, if it wants one (never written anywhere)
  PSIT_MODEL_ENDPOINTS    per-model replicas: model-a=url1,url2;model-b=url3
  PSIT_CONCURRENCY        model calls in flight in all
  PSIT_ENDPOINT_CONCURRENCY  calls in flight per replica (the server's slot count)
  PSIT_TIMEOUT            per-attempt timeout in seconds, from when a call is sent
  PSIT_MAX_RETRIES        retries of a failed call (429, 5xx, timeouts) before the episode fails
  PSIT_CACHE              response cache: rw (default), off, or replay (a miss stops the run)
  PSIT_MODEL_SETTINGS     per-model request settings (max_tokens, reasoning_effort, extra_body)
  PSIT_PROMPTS_FILE       a TOML of prompt templates replacing the workbench's by name
  PSIT_PLUGINS            your modules (names or .py paths) registering agents, tasks or studies
  PSIT_CHECKPOINTS        memory (default) or sqlite: keep the agents' LangGraph checkpoints in
                          each notebook folder (checkpoints.sqlite) to reopen episodes at any turn
  PSIT_PAPER_MODELS       served names that are the study's models: Qwen3-32B-AWQ=Qwen3 32B;...
  PSIT_SIM_PROFILE        the simulator's profile (default, or knob overrides)
  PSIT_RESULTS_DIR        where runs are written (default: results/)
  PSIT_FIGURES_DIR        where the latest complete run's figures are copied (default: figures/)
  PSIT_ADHOC_DIR          where notebooks run by hand write (default ~/.cache/psit/adhoc;
                          with PSIT_RESULTS_DIR set, its adhoc/)
The README lists every variable. Exit status of `psit run`: 0 complete, 1 failed notebooks or
episodes, 2 usage or configuration error (a resumed folder made with another set-up too),
3 suspect (unreadable replies), 130 Ctrl-C, 143 SIGTERM.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="psit", description="PSIT workbench command line", epilog=EPILOG,
                                     formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"psit {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="execute notebooks headlessly (papermill) and summarise the run",
                         description="Execute notebooks on the configured backend, -j at a time, showing each "
                                     "running notebook's phase and progress; end with a summary, each notebook's "
                                     "headline and the rendered report. Exit 0 complete, 1 if any notebook or "
                                     "episode failed (re-run with the same --run-id to retry them), 2 for a usage "
                                     "error, 3 if a notebook is suspect.")
    run.add_argument("notebooks", nargs="*", help="notebook names, stems or numbers (default: all)")
    run.add_argument("-f", "--params-file", help="YAML parameters: one mapping (each key goes to the notebooks "
                                                 "that declare it) or one mapping per notebook, plus 'all'")
    run.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                     help="a parameter for every selected notebook that declares it (repeatable)")
    run.add_argument("--run-id", help="results/<run-id>; re-using one resumes it (default: from the parameters)")
    run.add_argument("--fresh", action="store_true",
                     help="redo the episodes of the selected notebooks (the response cache is kept)")
    run.add_argument("--dry-run", action="store_true",
                     help="run nothing: print the planned episodes and the estimated model calls, tokens and time "
                          "per notebook (from a call model measured on the simulator, data/call_model.json)")
    run.add_argument("--prompt-rate", type=float, default=1000.0, metavar="TOK_S",
                     help="with --dry-run: prompt tokens per second the server processes in all (default 1000)")
    run.add_argument("--completion-rate", type=float, default=100.0, metavar="TOK_S",
                     help="with --dry-run: completion tokens per second the server generates in all (default 100)")
    run.add_argument("--price", metavar="IN,OUT",
                     help="with --dry-run: USD per million prompt and completion tokens, for a cost per model")
    run.add_argument("--margin", type=float, default=None,
                     help="with --dry-run: size the run for this equivalence margin (Cohen's h) against the "
                          "papers (episodes per cell needed; default 0.3, docs/protocol.md §9)")
    run.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                     help="notebooks run at once, each in its own process (default: the machine's cores on the "
                          "simulator, 1 on a real endpoint, whose call limits hold per process; -j 1 runs them "
                          "one by one); the tables are the same either way")
    run.add_argument("--no-progress", dest="progress", action="store_false", help="no episode progress lines")
    run.add_argument("--no-report", dest="report", action="store_false",
                     help="do not render the HTML report at the end (psit report renders it later)")
    run.set_defaults(func=_lazy("psit_lib.cli.run:cmd_run"))
    listing = sub.add_parser("list", help="the notebooks and their parameters (defaults, study-scale values)")
    listing.set_defaults(func=cmd_list)
    report = sub.add_parser("report", help="render a run's executed notebooks to HTML with an index")
    report.add_argument("--run-id", help="default: the latest complete run")
    report.set_defaults(func=cmd_report)
    comp = sub.add_parser("compare", help="configuration differences and result tables of two runs")
    comp.add_argument("run_a", help="run id (under results/) or folder")
    comp.add_argument("run_b", nargs="?", help="run id (under results/) or folder")
    comp.add_argument("--paper", action="store_true",
                      help="one run against the papers: the claims ledger, then every paper number with a count "
                           "beside the run's, with a verdict (consistent within ±margin, differs, inconclusive; "
                           "none on the simulator or another model: it illustrates the protocol)")
    comp.add_argument("--margin", type=float, default=None,
                      help="with --paper: equivalence margin of the verdicts in Cohen's h (default 0.3, "
                           "docs/protocol.md §9)")
    comp.add_argument("more", nargs="*", help="further runs (with --html)")
    comp.add_argument("--html", action="store_true",
                      help="one offline page: overlaid dot plots with each difference and its interval per cell, "
                           "configuration differences")
    comp.add_argument("--out", help="with --html: the page's path (default results/compare-<runs>.html)")
    comp.set_defaults(func=cmd_compare)
    runs = sub.add_parser("runs", help="every run under results/: date, commit, models, status, headline")
    runs.add_argument("--html", action="store_true", help="also write results/runs.html")
    runs.set_defaults(func=cmd_runs)
    rescore = sub.add_parser("rescore", help="score a run's stored episodes again and reproduce its tables",
                             description="Rescore each notebook's stored episodes with its study's scorers, "
                                         "compute its metrics and compare with the tables the run saved; exit 0 when all are "
                                         "reproduced, 1 otherwise, 2 for a bad run id.")
    rescore.add_argument("run", help="run id (under results/)")
    rescore.add_argument("notebooks", nargs="*", help="notebook names, stems or numbers (default: all of the run)")
    rescore.add_argument("--scorer", action="append", metavar="NAME",
                         help="recompute this scorer's scores even where stored (repeatable; model-graded "
                              "scorers replay the run's cache)")
    rescore.set_defaults(func=_lazy("psit_lib.cli.rescore:cmd_rescore"))
    export = sub.add_parser("export", help="a run as Inspect AI eval logs, or its key tables as Markdown, LaTeX or CSV")
    export.add_argument("run", help="run id (under results/) or folder")
    export.add_argument("notebooks", nargs="*", help="notebook names, stems or numbers (default: all of the run)")
    export.add_argument("--inspect", action="store_true",
                        help="one Inspect eval log per notebook and model, one sample per episode (inspect view opens them)")
    export.add_argument("--markdown", action="store_true",
                        help="each notebook's key table as Markdown, captioned with run, backend, model, profile")
    export.add_argument("--latex", action="store_true", help="the same tables as LaTeX booktabs tables")
    export.add_argument("--csv", action="store_true", help="the same tables as CSV, each row naming its source")
    export.set_defaults(func=_lazy("psit_lib.cli.export:cmd_export"))
    lab = sub.add_parser("lab", help="JupyterLab on working copies of the notebooks (outputs never reach the repository)")
    lab.add_argument("--refresh", action="store_true", help="replace every working copy with the repository's notebook")
    lab.add_argument("lab_args", nargs=argparse.REMAINDER, help="JupyterLab's own options after --, e.g. -- --port 8889")
    lab.set_defaults(func=_lazy("psit_lib.cli.lab:cmd_lab"))
    prompts = sub.add_parser("prompts", help="prompt files")
    prompts_sub = prompts.add_subparsers(dest="prompts_command", required=True)
    from_ref = prompts_sub.add_parser(
        "from-reference", help="build a prompts file from your local checkout of the study's reference code",
        description="Read the prompt modules of a local checkout of chandar-lab/Hangman (as text, nothing is "
                    "run) and write a TOML whose templates replace the workbench's by name; name it in "
                    "PSIT_PROMPTS_FILE to run the study's exact wording (the run metadata records it).")
    from_ref.add_argument("path", help="the checkout's root folder (holding src/hangman/prompts/)")
    from_ref.add_argument("-o", "--output", default="reference_prompts.toml",
                          help="the prompts file to write (default: reference_prompts.toml)")
    from_ref.set_defaults(func=_lazy("psit_lib.cli.reference_prompts:cmd_from_reference"))
    sim = sub.add_parser("sim", help="the simulated model")
    sim_sub = sim.add_subparsers(dest="sim_command", required=True)
    serve = sim_sub.add_parser("serve", help="serve the simulator on a loopback port")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    serve.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    serve.add_argument("--profile", default="default", help="profile for requests that name none")
    serve.set_defaults(func=cmd_sim_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CliError as exc:
        print(f"psit: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("psit: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one clear line, not a traceback wall
        from psit_lib.runs.load import RunNotFoundError
        from psit_lib.runs.runner import describe_error

        if isinstance(exc, RunNotFoundError):
            print(f"psit: {exc}", file=sys.stderr)
            return 2
        print(f"psit: {describe_error(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
