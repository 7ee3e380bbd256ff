"""Does a run reproduce the study's Table 1? A test per cell, not a glance at two numbers.

A Table 1 cell is (task, model, method). A run *covers* a cell when it ran that method on that
task with one of the study's four models, recognised by name however the server spells it
(``Qwen/Qwen3-32B``, ``qwen3-32b`` and ``Qwen3 32B`` are one model). For each covered cell the
run's self-consistency by Table 1's own rule (``table1.py``) is set beside the paper's, with a
two-sided Fisher exact test of the two proportions at the paper's sample size (50 episodes per
cell, its rate read back as a count), Holm-corrected over the cells of the run; the verdict is
``differs`` where the corrected p-value is below alpha, else ``consistent`` (which says the run
cannot tell them apart, not that they are equal). A cell no episode of the run scored is left out.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd
from scipy.stats import fisher_exact

from psit_lib.analysis.stats import holm
from psit_lib.studies.psit.reference import (model_match_notes, reference_models, self_consistency_reference,
                                              study_model)

PAPER_N = 50
"""Episodes per (task, model, method) cell in the study."""

COLUMNS = ["task", "model", "agent", "paper_model", "run_successes", "run_n", "run_rate", "paper_rate",
           "paper_n", "p_two_sided", "p_holm", "verdict"]


def paper_model(run_model: str, models: Sequence[str] | None = None) -> str | None:
    """The study's model a served model name is, by exact name or the user's roster
    (:func:`~psit_lib.studies.psit.reference.study_model`); a near name is not it."""
    found = study_model(run_model)
    return found if found is not None and (models is None or found in models) else None


def reproduction_check(table1: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """One row per Table 1 cell the run covers (``table1``: :func:`~.experiment.table1_rates`)."""
    rows = []
    for row in table1.itertuples(index=False):
        study_model = paper_model(str(row.model))
        if study_model is None or not row.n_scored:
            continue
        ref = self_consistency_reference(str(row.task), [str(row.agent)])
        ref = ref[ref["model"] == study_model]
        if ref.empty:
            continue
        paper_rate = float(ref["rate"].iloc[0])
        paper_k = round(paper_rate * PAPER_N)
        k, n = int(row.successes), int(row.n_scored)
        p = float(fisher_exact([[k, n - k], [paper_k, PAPER_N - paper_k]], alternative="two-sided")[1])
        rows.append({"task": row.task, "model": row.model, "agent": row.agent, "paper_model": study_model,
                     "run_successes": k, "run_n": n, "run_rate": k / n, "paper_rate": paper_rate,
                     "paper_n": PAPER_N, "p_two_sided": p})
    table = pd.DataFrame(rows, columns=COLUMNS[:-2])
    if table.empty:
        return pd.DataFrame(columns=COLUMNS)
    rejected, adjusted = holm(table["p_two_sided"].tolist(), alpha)
    table["p_holm"] = adjusted
    table["verdict"] = ["differs" if r else "consistent" for r in rejected]
    return table


def reproduction_reading(check: pd.DataFrame, run_models: Sequence[str]) -> str:
    """One generated sentence on the check (never a claim the table does not carry)."""
    if check.empty:
        return " ".join([f"No Table 1 cell is covered: this run's model(s) ({', '.join(run_models)}) are not among "
                         f"the study's ({', '.join(reference_models())}), so nothing is tested against the paper.",
                         *model_match_notes(run_models)])
    differs = check[check["verdict"] == "differs"]
    if differs.empty:
        return (f"All {len(check)} covered Table 1 cell(s) are consistent with the paper (two-sided Fisher at "
                f"the paper's n = {PAPER_N}, Holm-corrected): this run cannot tell them apart.")
    named = ", ".join(f"{r.task}/{r.agent} on {r.paper_model} ({r.run_rate:.2f} vs {r.paper_rate:.2f})"
                      for r in differs.itertuples(index=False))
    return f"{len(differs)} of {len(check)} covered Table 1 cell(s) differ from the paper: {named}."
