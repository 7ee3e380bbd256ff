"""What each notebook makes of a real model: exit code, health flags and outcome table, per model.

    .venv/bin/python benchmarks/real_model_outcomes.py [--code DIR] [--params FILE] [--work DIR]

For each model of ``PSIT_REAL_MODELS`` (``bash .ci/real-model`` prints it and ``PSIT_LLAMA_SERVER``)
it starts ``llama-server`` exactly as ``tests/test_real_model.py`` does (threads the load leaves
idle, 2 slots, ``--jinja``), runs ``psit run`` on notebooks 02-07 with the test's small
parameters (``tests/real_model_params.yaml``) and no ``PSIT_*`` concurrency or timeout, stops the
server, and prints per notebook: the run's status and health flags (``run.json``), and the
episodes' outcome counts per agent under the view each notebook's headline uses (read with
:func:`psit_lib.load_run`). ``--code`` runs the CLI of another checkout (e.g. an older commit's
worktree) and reads its run with this checkout's reader; where that run stored no scores, its
saved tables are printed instead. Not a test: what a model writes varies with the machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_real_model import (PARAMS, _unavailable, configured_models,  # noqa: E402
                             serve_and_run, server_log_counts)

from psit_lib.runs.load import load_run  # noqa: E402

FORK = (("table1.outcome", "outcome"), "agent")
VIEWS = {"02": FORK, "03": FORK, "04": FORK, "06": (("success",), "system"), "07": (("secret.status",), "agent")}
"""Per notebook, the score columns it shows (fork tests: Table 1's rule, its Figure 2 class, the
headline's view, then the workbook's classification, the view an older run's ``outcome_mix`` table
holds; BASIS: the reference's validate(); 07: whether the reveal was read) and the group column."""


def run_model(name: str, model: Path, code: Path, params: Path, work: Path) -> tuple[int, Path, str]:
    """``psit run`` of the notebooks against one model's server; (exit code, run folder, summary line)."""
    done, seconds, (threads, slots), log = serve_and_run(model, name, code, params, work)
    (work / "psit.err").write_text(done.stderr)
    counts = server_log_counts(log.read_text(errors="replace"))
    line = (f"llama-server -t {threads} -np {slots}; psit run exit {done.returncode} in {seconds:.0f}s; server log: "
            f"{counts['started']} requests started, {counts['finished']} finished, {counts['cancelled']} cancelled")
    said = [s for s in done.stderr.splitlines() if s.startswith("psit: model server:") or " is SUSPECT: " in s]
    return done.returncode, work / "results" / "real", "\n".join([line, *said])


def outcome_tables(run, notebook: str) -> list:
    """The episodes' outcome counts per group under each view the notebook shows (failed episodes
    as ``error``); empty where the run stored no scores for it."""
    import pandas as pd

    key = notebook[:2]
    scores = run.scores[run.scores["notebook"] == notebook] if not run.scores.empty else pd.DataFrame()
    episodes = run.episodes[run.episodes["notebook"] == notebook]
    if key == "05":
        return [t for t in [_judge_table(scores)] if t is not None]
    columns, group = VIEWS[key]
    tables = []
    for column in (c for c in columns if not scores.empty and c in scores):
        outcome = scores.set_index("episode_id")[column].astype(str)
        rows = episodes.assign(outcome=[outcome.get(e, "error") if s == "ok" else "error"
                                        for e, s in zip(episodes["episode_id"], episodes["status"])])
        tables.append(pd.crosstab(rows[group], rows["outcome"]).rename_axis(columns=column))
    return tables


def _judge_table(scores):
    """05: the judge's reads of each agent's answers (scored or not, and the mean score)."""
    import pandas as pd

    rows = [row for cell in scores.get("judge.rows", ()) if isinstance(cell, list) for row in cell]
    if not rows:
        return None
    frame = pd.DataFrame(rows)
    table = pd.crosstab(frame["agent"], frame["status"]).rename_axis(columns="judge status")
    if "score" in frame:
        table["mean score"] = pd.to_numeric(frame["score"], errors="coerce").groupby(frame["agent"]).mean().round(2)
    return table


def report(name: str, code: int, run_dir: Path, said: str) -> None:
    print(f"\n=== {name}: {said}")
    summary = json.loads((run_dir / "run.json").read_text()) if (run_dir / "run.json").is_file() else {}
    try:
        run = load_run(run_dir)
    except FileNotFoundError as exc:
        print(f"  no run to read: {exc}")
        return
    for entry in summary.get("notebooks", []):
        notebook = entry["notebook"]
        print(f"\n--- {notebook}: status {entry['status']}, health {entry.get('health')}, "
              f"{entry.get('episodes')} episodes, {entry.get('failed')} failed")
        for reason in entry.get("health_reasons") or ():
            print(f"  flag: {reason}")
        if notebook not in run.folders:
            continue
        tables = outcome_tables(run, notebook)
        for table in tables:
            print(table.to_string())
        if not tables:  # a run made before scores were stored: its saved tables
            for stem, saved in run.tables.get(notebook, {}).items():
                print(f"  [saved table {stem}]\n{saved.to_string(max_rows=20, max_colwidth=40)}")
    print(f"\nexit code {code}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose psit CLI runs (default: this one)")
    parser.add_argument("--params", type=Path, default=PARAMS, help="notebook parameters (default: the test's)")
    parser.add_argument("--work", type=Path, default=None, help="folder for runs and server logs (default: a temp dir)")
    args = parser.parse_args()
    reason = _unavailable()
    if reason:
        sys.exit(reason)
    import tempfile

    base = args.work or Path(tempfile.mkdtemp(prefix="real-outcomes-"))
    print(f"code {args.code.resolve()} (commit {_commit(args.code)}); params {args.params}; work {base}")
    for name, model in sorted(configured_models().items()):
        work = base / name
        work.mkdir(parents=True, exist_ok=True)
        report(name, *run_model(name, model, args.code.resolve(), args.params.resolve(), work))
        sys.stdout.flush()


def _commit(code: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=code, capture_output=True, text=True)
    return done.stdout.strip() or "?"


if __name__ == "__main__":
    main()
