"""``psit compare RUN_A RUN_B``: what two runs set differently, and their result tables side by side.

Configuration comes from each notebook folder's parameters and run metadata
(:class:`psit_lib.runs.folder.RunFolder`: backend, model, profile, seed, simulator knobs and role
constants, prompt fingerprints, package versions, git commit); tables from its saved result
tables (``tables/*.csv``, written by ``Experiment.save_table``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from psit_lib.cli.errors import CliError
from psit_lib.runs.folder import RunFolder, notebooks_with_metadata
from psit_lib.runs.paths import results_root

CONFIG_KEYS = ("backend", "model", "profile", "seed", "simulated", "git_commit", "python")


def run_folder(name: str) -> Path:
    path = Path(name)
    folder = path if path.is_dir() else results_root() / name
    if not folder.is_dir():
        raise CliError(f"no run folder {name!r} (looked in {results_root()})")
    return folder


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


def configuration(folder: Path) -> dict[str, Any]:
    """Flat configuration of one notebook folder: its parameters and what its metadata records."""
    run = RunFolder(folder)
    meta = run.metadata()
    flat: dict[str, Any] = {}
    _flatten("param", run.params().stored(), flat)
    _flatten("", {k: getattr(meta, k) for k in CONFIG_KEYS}, flat)
    _flatten("simulator", meta.simulator or {}, flat)
    _flatten("prompts", meta.prompts, flat)
    _flatten("packages", meta.packages, flat)
    return flat


def config_differences(a: Path, b: Path) -> list[tuple[str, Any, Any]]:
    ca, cb = configuration(a), configuration(b)
    return [(k, ca.get(k, "—"), cb.get(k, "—")) for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)]


def table_comparison(a: Path, b: Path, name: str) -> str:
    ta, tb = pd.read_csv(RunFolder(a).tables_dir / name), pd.read_csv(RunFolder(b).tables_dir / name)
    if ta.equals(tb):
        return f"  {name}: identical ({len(ta)} rows)"
    side = pd.concat({"A": ta, "B": tb}, axis=1)
    return f"  {name}: differs\n" + "\n".join("    " + line for line in side.to_string(index=False).splitlines())


def compare(run_a: str, run_b: str) -> str:
    a, b = run_folder(run_a), run_folder(run_b)
    notebooks = sorted(notebooks_with_metadata(a) & notebooks_with_metadata(b))
    if not notebooks:
        raise CliError(f"{a.name} and {b.name} have no notebook in common")
    lines = [f"A = {a}", f"B = {b}"]
    for nb in notebooks:
        lines.append(f"\n== {nb}")
        diffs = config_differences(a / nb, b / nb)
        lines.append("  configuration: identical" if not diffs else "  configuration differences (A | B):")
        lines += [f"    {k}: {va!r} | {vb!r}" for k, va, vb in diffs]
        tables = sorted(set(RunFolder(a / nb).table_names()) & set(RunFolder(b / nb).table_names()))
        if not tables:
            lines.append("  (no saved result tables in common)")
        lines += [table_comparison(a / nb, b / nb, t) for t in tables]
    return "\n".join(lines)


def compare_with_paper(run: str) -> str:
    """``psit compare RUN --paper``: every Table 1 cell the run covers, its rate by Table 1's rule
    beside the paper's, a two-sided test at the paper's n and a verdict (studies/psit reproduction
    check), from each fork notebook's saved ``table1_self_consistency`` table."""
    from psit_lib.studies.psit.protocol.reproduction import reproduction_check, reproduction_reading

    folder = run_folder(run)
    lines = [f"run = {folder}"]
    found = False
    for nb in sorted(notebooks_with_metadata(folder)):
        names = RunFolder(folder / nb).table_names()
        if "table1_self_consistency.csv" not in names:
            continue
        found = True
        table1 = pd.read_csv(RunFolder(folder / nb).tables_dir / "table1_self_consistency.csv")
        check = reproduction_check(table1)
        lines.append(f"\n== {nb}")
        lines.append("  " + reproduction_reading(check, sorted(set(table1["model"].astype(str)))))
        if len(check):
            lines.append(f"  {'task':10} {'agent':26} {'paper model':13} {'run':>9} {'paper':>6} {'p (Holm)':>9}  verdict")
            for r in check.itertuples(index=False):
                lines.append(f"  {str(r.task)[:10]:10} {str(r.agent)[:26]:26} {str(r.paper_model)[:13]:13} "
                             f"{r.run_successes:>3}/{r.run_n:<3}{r.run_rate:>3.2f} {r.paper_rate:>6.2f} "
                             f"{r.p_holm:>9.3g}  {r.verdict}")
    if not found:
        raise CliError(f"{folder.name} has no fork-test notebook with a Table 1 table (02, 03 or 04); run one first")
    return "\n".join(lines)
