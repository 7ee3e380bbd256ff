"""Measure the call model ``psit run --dry-run`` estimates from, and write ``data/call_model.json``.

Run the series on the simulator at default parameters, then point this script at the run:

    .venv/bin/psit run --run-id call-model
    .venv/bin/python benchmarks/measure_call_model.py results/call-model [more run folders ...]

For every finished episode it reads the model calls and tokens the run recorded and averages
them per unit (an episode, or a turn where episodes have turns) of each (task or scenario, agent
or system) of each notebook, with the coarser averages (per task, per notebook) as fall-backs;
and per notebook the simulator's seconds per call (its executions' wall time over their calls)
and the longest prompt of each role in each kind of episode (the dry-run checks the plan's
against an endpoint's context).
It prints the table it writes. A later folder's notebook replaces an earlier one's.
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


def seconds_per_call(folder: RunFolder) -> float | None:
    """The notebook's wall time over its model calls, summed over its executions."""
    spans = [((datetime.fromisoformat(e.ended) - datetime.fromisoformat(e.started)).total_seconds(), e.model_calls)
             for e in folder.metadata().executions if e.started and e.ended]
    calls = sum(c for _, c in spans)
    return round(sum(s for s, _ in spans) / calls, 4) if calls else None


def measure(run_dirs: list[Path], commits: dict[str, str], seconds: dict[str, float],
            longest: dict[str, dict[str, dict[str, int]]]) -> dict[str, dict[str, dict[str, float]]]:
    """Per notebook and episode kind, the mean calls and tokens per unit; ``commits`` gets the
    commit each notebook's run was made at (from its run metadata), ``seconds`` its seconds per
    call and ``longest`` its longest prompt per episode kind and role."""
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
                if (per_call := seconds_per_call(RunFolder(run_dir / notebook))) is not None:
                    seconds[notebook] = per_call
                per_unit[notebook] = {k: {**{name: round(v[i] / v[3], 2) for i, name in enumerate(FIELDS)},
                                          "units": int(v[3])} for k, v in sorted(sums.items())}
    return per_unit


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    commits: dict[str, str] = {}
    seconds: dict[str, float] = {}
    longest: dict[str, dict[str, dict[str, int]]] = {}
    per_unit = measure([Path(a) for a in argv], commits, seconds, longest)
    model = {"measured": date.today().isoformat(), "commit": commit, "backend": "sim", "profile": "default",
             "unit": "an episode, or a turn where episodes have turns", "run_commits": commits,
             "per_unit": per_unit, "seconds_per_call": seconds, "longest_prompt": longest}
    out = data_root() / CALL_MODEL
    out.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n")
    for notebook, table in per_unit.items():
        print(f"{notebook}  ({seconds.get(notebook, '?')} s per call)")
        for key, row in table.items():
            print(f"  {key:40} calls {row['calls']:8.2f}  prompt {row['prompt_tokens']:10.1f}  "
                  f"completion {row['completion_tokens']:9.1f}  over {row['units']} units")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
