"""Report bytes per episode: what a rendered report weighs, per notebook and per episode (per turn where episodes
have turns), and what the study-scale plan's report would weigh.

Render the default series on the simulator, then point this script at the run:

    .venv/bin/psit run --run-id report-size
    .venv/bin/python benchmarks/report_bytes.py results/report-size [--write]

It prints the report's total and its shared files, per notebook the page (with its figures), the explorer's
rows and side files, bytes per episode and per unit, then the estimate for the default plan (a check of the
model against the report it came from) and for ``notebooks/params/study_scale.yaml``. ``--write`` stores the
measured model in ``data/report_size.json``, which ``psit run --dry-run`` estimates from.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import yaml

from psit_lib.data_files import data_root
from psit_lib.report.size import MB, REPORT_SIZE, estimate_bytes, measure, measured_model, planned


def _values(run_dir: Path) -> dict[str, dict]:
    """Each notebook's parameters as the run recorded them (the harness's ``_`` keys left out)."""
    from psit_lib.runs.folder import RunFolder

    return {p.stem: {k: v for k, v in RunFolder(run_dir / p.stem).params().stored().items() if not k.startswith("_")}
            for p in sorted((run_dir / "report").glob("*.html")) if p.stem[:1].isdigit()}


def _study_scale(run_values: dict[str, dict]) -> dict[str, dict]:
    scale = yaml.safe_load((Path(__file__).resolve().parents[1] / "notebooks/params/study_scale.yaml").read_text())
    return {nb: {**values, **(scale.get(nb) or {})} for nb, values in run_values.items()}


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    run_dir = Path(argv[0])
    shared, parts = measure(run_dir)
    total = shared + sum(p.page + p.episodes for p in parts)
    print(f"report of {run_dir.name}: {total / MB:.2f} MB in all; shared files (table library, stylesheets, index, "
          f"protocol) {shared / MB:.2f} MB")
    print(f"{'notebook':38} {'page+fig':>9} {'rows':>8} {'views':>8} {'episodes':>8} {'units':>6} {'B/episode':>9} "
          f"{'B/unit':>7}")
    for p in parts:
        per_episode = (p.episodes + p.rows) / p.n_episodes if p.n_episodes else 0
        print(f"{p.notebook:38} {p.page - p.rows:9,} {p.rows:8,} {p.episodes:8,} {p.n_episodes:8} {p.units:6} "
              f"{per_episode:9,.0f} {p.per_unit:7,.0f}")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    model = measured_model(run_dir, commit=commit, when=date.today().isoformat())
    values = _values(run_dir)
    for name, chosen in (("this run's plan", values), ("the study-scale plan", _study_scale(values))):
        plans = planned(chosen, ["psit-sim"], True)
        size = estimate_bytes(plans, model)
        print(f"estimate for {name}: {size.total / MB:.1f} MB ({size.episodes / MB:.1f} MB episodes)"
              + (f"; not measured: {', '.join(size.unmeasured)}" if size.unmeasured else ""))
        print("  " + "; ".join(f"{nb[:2]} {len(specs)} episodes {estimate_bytes({nb: specs}, {**model, 'shared_bytes': 0}).total / MB:.1f} MB"
                               for nb, specs in plans.items()))
    if "--write" in argv:
        path = data_root() / REPORT_SIZE
        path.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
