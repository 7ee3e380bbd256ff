"""The ``psit`` command line: run notebooks headlessly, render the report, serve the simulator.

    psit run [NOTEBOOK ...] [-f params.yaml] [-p name=value ...] [--run-id ID] [--fresh]
    psit report [--run-id ID]
    psit sim serve [--port N] [--profile NAME]

``psit run`` executes notebooks with papermill into ``results/<run-id>/notebooks/`` and rejects
unknown parameter names itself (papermill only warns). A params file holds either one mapping
for every notebook, or a mapping per notebook name, with an optional ``all`` key for shared
values. Re-running with the same run id resumes: finished episodes are not redone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from psit_lib.runs.experiment import repo_root, results_root


class CliError(RuntimeError):
    """A user-facing error: printed as one line, exit status 2."""


def notebooks_dir() -> Path:
    return Path(os.environ.get("PSIT_NOTEBOOKS_DIR") or repo_root() / "notebooks")


def resolve_notebooks(names: list[str]) -> list[Path]:
    available = sorted(p for p in notebooks_dir().glob("[0-9][0-9]_*.ipynb"))
    if not names:
        return available
    chosen = []
    for name in names:
        stem = Path(name).stem
        matches = [p for p in available if p.stem == stem or p.stem.startswith(stem + "_")
                   or p.stem.split("_", 1)[0] == stem]
        if len(matches) != 1:
            raise CliError(f"no single notebook matches {name!r}; available: "
                           f"{', '.join(p.stem for p in available)}")
        chosen.append(matches[0])
    return chosen


def parse_value(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def load_params(path: str | None, overrides: list[str], notebooks: list[Path]) -> dict[str, dict[str, Any]]:
    """Per-notebook parameters from a YAML file and ``-p name=value`` overrides."""
    stems = {p.stem for p in notebooks}
    per_nb: dict[str, dict[str, Any]] = {s: {} for s in stems}
    if path:
        try:
            data = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise CliError(f"cannot read params file {path}: {exc}") from None
        if not isinstance(data, dict):
            raise CliError(f"params file {path} must hold a mapping")
        all_known = {p.stem for p in sorted(notebooks_dir().glob('[0-9][0-9]_*.ipynb'))}
        if any(k in all_known or k == "all" for k in data):
            for key, values in data.items():
                if key != "all" and key not in all_known:
                    raise CliError(f"params file names unknown notebook {key!r}")
                if not isinstance(values, dict):
                    raise CliError(f"params for {key!r} must be a mapping")
                for stem in (stems if key == "all" else {key} & stems):
                    per_nb[stem].update(values)
        else:
            for stem in stems:
                per_nb[stem].update(data)
    for item in overrides:
        if "=" not in item:
            raise CliError(f"-p takes name=value, not {item!r}")
        name, value = item.split("=", 1)
        for stem in stems:
            per_nb[stem][name.strip()] = parse_value(value)
    return per_nb


def check_parameter_names(notebook: Path, params: dict[str, Any], strict_shared: bool) -> dict[str, Any]:
    """Reject names the notebook does not declare (papermill would only warn)."""
    import papermill

    declared = set(papermill.inspect_notebook(str(notebook)))
    unknown = sorted(set(params) - declared)
    if unknown and strict_shared:
        raise CliError(f"{notebook.stem} has no parameter(s) {', '.join(unknown)}; "
                       f"it declares {', '.join(sorted(declared))}")
    return {k: v for k, v in params.items() if k in declared}


def default_run_id(per_nb: dict[str, dict[str, Any]]) -> str:
    text = json.dumps(per_nb, sort_keys=True, default=str)
    env = "|".join(os.environ.get(k, "") for k in ("PSIT_BACKEND", "PSIT_MODEL", "PSIT_SIM_PROFILE"))
    return "run-" + hashlib.sha256((text + env).encode()).hexdigest()[:8]


def cmd_run(args: argparse.Namespace) -> int:
    import papermill

    notebooks = resolve_notebooks(args.notebooks)
    per_nb = load_params(args.params_file, args.param, notebooks)
    shared_names = bool(args.param)
    cleaned = {}
    for nb in notebooks:
        strict = not shared_names or len(notebooks) == 1
        params = per_nb[nb.stem]
        if shared_names and not strict:
            # shared -p values apply to the notebooks that declare them, but each must fit one
            declared_anywhere = set()
            for other in notebooks:
                declared_anywhere |= set(papermill.inspect_notebook(str(other)))
            unknown = sorted(set(params) - declared_anywhere)
            if unknown:
                raise CliError(f"no selected notebook has parameter(s) {', '.join(unknown)}")
        cleaned[nb.stem] = check_parameter_names(nb, params, strict)
    run_id = args.run_id or default_run_id(cleaned)
    run_dir = results_root() / run_id
    out_dir = run_dir / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.fresh:
        for nb in notebooks:
            shutil.rmtree(run_dir / nb.stem, ignore_errors=True)
    os.environ["PSIT_RUN_DIR"] = str(run_dir)
    print(f"psit run: {len(notebooks)} notebook(s) -> {run_dir}")
    failures = []
    for i, nb in enumerate(notebooks, 1):
        started = time.perf_counter()
        print(f"[{i}/{len(notebooks)}] {nb.stem} {cleaned[nb.stem] or ''}", flush=True)
        try:
            papermill.execute_notebook(str(nb), str(out_dir / nb.name), parameters=cleaned[nb.stem],
                                       cwd=str(nb.parent), progress_bar=args.progress,
                                       kernel_name="python3", log_output=False)
        except papermill.PapermillExecutionError as exc:
            failures.append(nb.stem)
            print(f"    FAILED in cell {exc.exec_count}: {exc.ename}: {exc.evalue}", file=sys.stderr)
            continue
        print(f"    done in {time.perf_counter() - started:.1f}s", flush=True)
    latest = results_root() / "latest"
    try:
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(run_id)
    except OSError:
        pass
    if failures:
        raise CliError(f"{len(failures)} notebook(s) failed: {', '.join(failures)} "
                       f"(executed copies with the error are in {out_dir})")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from psit_lib.report import render_report

    run_dir = results_root() / (args.run_id or "latest")
    if not (run_dir / "notebooks").exists():
        raise CliError(f"no executed notebooks in {run_dir}; run `psit run` first")
    index = render_report(run_dir.resolve())
    print(f"report: {index}")
    return 0


def cmd_sim_serve(args: argparse.Namespace) -> int:
    from psit_lib.sim.profiles import get_profile
    from psit_lib.sim.server import serve

    get_profile(args.profile)
    serve(args.host, args.port, args.profile)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="psit", description="PSIT workbench command line")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="execute notebooks headlessly with papermill")
    run.add_argument("notebooks", nargs="*", help="notebook names or numbers (default: all)")
    run.add_argument("-f", "--params-file", help="YAML file of parameters")
    run.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE")
    run.add_argument("--run-id", help="results/<run-id>; re-using one resumes it")
    run.add_argument("--fresh", action="store_true",
                     help="redo the episodes of the selected notebooks (the response cache is kept)")
    run.add_argument("--no-progress", dest="progress", action="store_false")
    run.set_defaults(func=cmd_run)
    report = sub.add_parser("report", help="render executed notebooks to HTML with an index")
    report.add_argument("--run-id", help="default: the latest run")
    report.set_defaults(func=cmd_report)
    sim = sub.add_parser("sim", help="the simulated model")
    sim_sub = sim.add_subparsers(dest="sim_command", required=True)
    serve = sim_sub.add_parser("serve", help="serve the simulator on a loopback port")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--profile", default="default")
    serve.set_defaults(func=cmd_sim_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CliError as exc:
        print(f"psit: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # one clear line, not a traceback wall
        from psit_lib.runs.runner import describe_error

        print(f"psit: {describe_error(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
