"""Does a run reproduce the study's Table 1? A verdict per cell with power, not a glance at two numbers.

A Table 1 cell is (task, model, method). A run *covers* a cell when it ran that method on that
task with one of the study's four models, recognised by name however the server spells it
(``Qwen/Qwen3-32B``, ``qwen3-32b`` and ``Qwen3 32B`` are one model). For each covered cell the
run's self-consistency by Table 1's own rule (``table1.py``) is set beside the paper's (its rate
read back as a count of its 50 episodes), with the difference run − paper, its Newcombe 95%
interval and a verdict (:mod:`psit_lib.analysis.verdicts`): *consistent within ±margin* (an
equivalence test), *differs*, or *inconclusive* with the run size that would decide it. Each cell
is its own family (no correction over the notebook's cells), so a cell covered by two notebooks
gets one verdict from the same counts. A cell no episode of the run scored is left out.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from psit_lib.analysis.verdicts import CONSISTENT, DEFAULT_ALPHA, DEFAULT_MARGIN, DIFFERS, compare_counts
from psit_lib.studies.psit.reference import (model_match_notes, reference_models, self_consistency_reference,
                                              study_model)

PAPER_N = 50
"""Episodes per (task, model, method) cell in the study."""

COLUMNS = ["task", "model", "agent", "paper_model", "run_successes", "run_n", "run_rate", "paper_rate",
           "paper_n", "difference", "diff_low", "diff_high", "margin", "verdict", "episodes_to_decide"]


def reproduction_check(table1: pd.DataFrame, margin: float = DEFAULT_MARGIN,
                       alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
    """One row per Table 1 cell the run covers (``table1``: :func:`~.experiment.table1_rates`);
    ``episodes_to_decide`` is set on inconclusive rows (empty where no run size decides)."""
    rows = []
    for row in table1.itertuples(index=False):
        paper = study_model(str(row.model))
        if paper is None or not row.n_scored:
            continue
        ref = self_consistency_reference(str(row.task), [str(row.agent)])
        ref = ref[ref["model"] == paper]
        if ref.empty:
            continue
        paper_rate = float(ref["rate"].iloc[0])
        v = compare_counts(int(row.successes), int(row.n_scored), round(paper_rate * PAPER_N), PAPER_N, margin, alpha)
        rows.append({"task": row.task, "model": row.model, "agent": row.agent, "paper_model": paper,
                     "run_successes": v.run_successes, "run_n": v.run_n, "run_rate": v.run_rate,
                     "paper_rate": paper_rate, "paper_n": PAPER_N, "difference": v.difference,
                     "diff_low": v.diff_low, "diff_high": v.diff_high, "margin": margin, "verdict": v.verdict,
                     "episodes_to_decide": v.episodes_to_decide})
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["episodes_to_decide"] = table["episodes_to_decide"].astype("Int64")
    return table


def _cells(rows: pd.DataFrame) -> str:
    return ", ".join(f"{r.task}/{r.agent} on {r.paper_model} ({r.run_rate:.2f} vs {r.paper_rate:.2f})"
                     for r in rows.itertuples(index=False))


def reproduction_reading(check: pd.DataFrame, run_models: Sequence[str]) -> str:
    """One generated sentence on the check (never a claim the table does not carry): how many
    cells are consistent within the margin, which differ, and, when nothing is decided, that the
    run is too small and how many episodes per cell would decide."""
    if check.empty:
        return " ".join([f"No Table 1 cell is covered: this run's model(s) ({', '.join(run_models)}) are not among "
                         f"the study's ({', '.join(reference_models())}), so nothing is tested against the paper.",
                         *model_match_notes(run_models)])
    margin = float(check["margin"].iloc[0])
    consistent, differs = check[check["verdict"] == CONSISTENT], check[check["verdict"] == DIFFERS]
    open_ = check[~check["verdict"].isin([CONSISTENT, DIFFERS])]
    rule = (f"(equivalence within ±{margin:g} by two one-sided tests; differs when the Newcombe 95% interval of "
            f"run − paper excludes 0; each cell on its own counts, the paper's n = {PAPER_N})")
    if consistent.empty and differs.empty:
        needs = open_["episodes_to_decide"].dropna()
        size = (f"about {int(needs.max())} episodes per cell would decide every cell that any run size can"
                if len(needs) else f"no run size decides them at ±{margin:g}: the paper's own n = {PAPER_N} "
                "is too small for this margin")
        return (f"This run is too small to decide anything: all {len(check)} covered Table 1 cell(s) are "
                f"inconclusive {rule}; {size}.")
    parts = [f"{len(consistent)} of {len(check)} covered Table 1 cell(s) are consistent with the paper within "
             f"±{margin:g}"]
    if len(differs):
        parts.append(f"{len(differs)} differ: {_cells(differs)}")
    if len(open_):
        parts.append(f"{len(open_)} are inconclusive")
    return "; ".join(parts) + f" {rule}."
