"""Measure the call model ``psit run --dry-run`` estimates from, and write ``data/call_model.json``.

Run the series on the simulator at default parameters, one notebook at a time (on an otherwise
idle machine: the simulator's seconds are wall time), then point this script at the run:

    .venv/bin/psit run --run-id call-model -j 1
    .venv/bin/python benchmarks/measure_call_model.py results/call-model [more run folders ...]

For every finished episode it reads the model calls and tokens the run recorded and averages
them per unit (an episode, or a turn where episodes have turns) of each (task or scenario, agent
or system) of each notebook, with the coarser averages (per task, per notebook) as fall-backs,
and the longest prompt of each role in each kind of episode (the dry-run checks the plan's
against an endpoint's context), the simulator's start-up and seconds per call of each notebook,
and each model-graded scorer's own calls per unit (05's judge and its variants, from the ``usage``
of its score lines); a later folder's notebook replaces an earlier one's. It prints the table it writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from datetime import date, datetime
from pathlib import Path

from psit_lib.cli.estimate import CALL_MODEL, episode_key, episode_units
from psit_lib.data_files import data_root
from psit_lib.runs.folder import RunFolder, notebooks_with_metadata

FIELDS = ("calls", "prompt_tokens", "completion_tokens")


def notebook_seconds(run_dir: Path, notebook: str) -> tuple[float, float]:
    """(seconds inside the notebook's executions, ``psit run``'s seconds for it, start-up included)."""
    executions = RunFolder(run_dir / notebook).metadata().executions
    inside = sum((datetime.fromisoformat(e.ended) - datetime.fromisoformat(e.started)).total_seconds()
                 for e in executions if e.started and e.ended)
    run_file = run_dir / "run.json"
    summary = json.loads(run_file.read_text()).get("notebooks", []) if run_file.exists() else []
    return inside, next((float(n["seconds"]) for n in summary if n.get("notebook") == notebook), inside)


def simulator_seconds(calls: float, inside: float, total: float) -> dict[str, float] | None:
    """A notebook's simulator time as ``start_up + per_call * calls``: its time inside over the calls its
    episodes record (what the estimate counts, so calls outside episodes, 05's judges, are in the time)
    and the rest of ``psit run``'s time for it as start-up."""
    if not calls or not inside:
        return None
    return {"per_call": round(inside / calls, 4), "start_up": round(max(0.0, total - inside), 1)}


def measure(run_dirs: list[Path], commits: dict[str, str], seconds: dict[str, dict[str, float]],
            longest: dict[str, dict[str, dict[str, int]]]) -> dict[str, dict[str, dict[str, float]]]:
    """Per notebook and episode kind, the mean calls and tokens per unit; ``commits`` gets the
    commit each notebook's run was made at (from its run metadata), ``seconds`` its simulator
    seconds and ``longest`` its longest prompt per episode kind and role."""
    per_unit: dict[str, dict[str, dict[str, float]]] = {}
    for run_dir in run_dirs:
        for notebook in sorted(notebooks_with_metadata(run_dir)):
            sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
            roles: dict[str, dict[str, int]] = defaultdict(dict)
            for record in RunFolder(run_dir / notebook).flat_records().values():
                if record.get("status") != "ok":
                    continue
                key, units = episode_key(record["spec"]), episode_units(record["spec"])
                for call in record.get("calls") or ():
                    roles[key][call["role"]] = max(roles[key].get(call["role"], 0), int(call["prompt_tokens"]))
                for k in (key, key.split("/")[0] + "/*", "*"):
                    for i, name in enumerate(FIELDS):
                        sums[k][i] += float(record["usage"][name])
                    sums[k][3] += units
            if sums:
                commits[notebook] = str(RunFolder(run_dir / notebook).metadata().git_commit or "?")
                longest[notebook] = {k: dict(sorted(v.items())) for k, v in sorted(roles.items())}
                if (timing := simulator_seconds(sums["*"][0], *notebook_seconds(run_dir, notebook))) is not None:
                    seconds[notebook] = timing
                per_unit[notebook] = {k: {**{name: round(v[i] / v[3], 2) for i, name in enumerate(FIELDS)},
                                          "units": int(v[3])} for k, v in sorted(sums.items())}
    return per_unit


def measure_scoring(run_dirs: list[Path]) -> dict[str, dict[str, dict[str, float]]]:
    """Per notebook and model-graded scorer, its new model calls and tokens per unit of the episodes
    it called a model for (``usage`` of its score lines: calls the response cache did not answer)."""
    scoring: dict[str, dict[str, dict[str, float]]] = {}
    for run_dir in run_dirs:
        for notebook in sorted(notebooks_with_metadata(run_dir)):
            folder = RunFolder(run_dir / notebook)
            specs = {eid: r.get("spec") or {} for eid, r in folder.records().items()}
            sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
            for (eid, scorer), line in folder.score_lines().items():
                usage = line.get("usage") or {}
                if usage.get("calls"):
                    for i, name in enumerate(FIELDS):
                        sums[scorer][i] += float(usage.get(name, 0))
                    sums[scorer][3] += episode_units(specs.get(eid, {}))
            if sums:
                scoring[notebook] = {k: {**{name: round(v[i] / v[3], 2) for i, name in enumerate(FIELDS)},
                                         "units": int(v[3])} for k, v in sorted(sums.items())}
    return scoring


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    commits: dict[str, str] = {}
    seconds: dict[str, dict[str, float]] = {}
    longest: dict[str, dict[str, dict[str, int]]] = {}
    per_unit = measure([Path(a) for a in argv], commits, seconds, longest)
    model = {"measured": date.today().isoformat(), "commit": commit, "backend": "sim", "profile": "default",
             "unit": "an episode, or a turn where episodes have turns", "run_commits": commits,
             "per_unit": per_unit, "simulator_seconds": seconds, "longest_prompt": longest,
             "scoring": measure_scoring([Path(a) for a in argv])}
    out = data_root() / CALL_MODEL
    out.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n")
    for notebook, table in per_unit.items():
        print(f"{notebook}  (simulator seconds {seconds.get(notebook, '?')})")
        for key, row in table.items():
            print(f"  {key:40} calls {row['calls']:8.2f}  prompt {row['prompt_tokens']:10.1f}  "
                  f"completion {row['completion_tokens']:9.1f}  over {row['units']} units")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
