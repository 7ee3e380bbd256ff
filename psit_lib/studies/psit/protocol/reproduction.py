"""Does a run reproduce the study's Table 1? A verdict per cell with power, not a glance at two numbers.

A Table 1 cell is (task, model, method). A run *covers* a cell when it ran that method on that
task with one of the study's four models, recognised by name however the server spells it
(``Qwen/Qwen3-32B``, ``qwen3-32b`` and ``Qwen3 32B`` are one model; ``data/reference/paper_models.csv``).
For each covered cell the run's self-consistency by Table 1's own rule (``table1.py``) is set beside
the paper's (its rate read back as a count of its 50 episodes), with the difference run − paper, its
Newcombe 95% interval, Cohen's h and a verdict (:mod:`psit_lib.analysis.verdicts`): *consistent*
(an equivalence test on the h scale), *differs*, or *inconclusive* with the run size that would
decide it. No verdict is given where the run cannot speak for the paper: a cell the simulated
model ran *illustrates the protocol* (SPEC §9), and a cell whose host replies had a smaller budget
than the paper's, or were cut at it too often, is *not comparable* (:mod:`.budget`); both keep their
numbers and say why. Each cell is its own family (no correction over the notebook's cells), so a
cell covered by two notebooks gets one verdict from the same counts. A cell no episode scored is
left out.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from psit_lib.analysis.paper_models import is_simulated_model
from psit_lib.analysis.verdicts import (CONSISTENT, DEFAULT_ALPHA, DEFAULT_MARGIN, DIFFERS, ILLUSTRATES, NOT_COMPARABLE,
                                        VERDICT_COLUMNS, chance_differs, verdict_row)
from psit_lib.studies.psit.protocol.budget import row_comparability
from psit_lib.studies.psit.reference import (model_match_notes, reference_models, self_consistency_reference,
                                              study_model)

PAPER_N = 50
"""Episodes per (task, model, method) cell in the study."""

COLUMNS = ["task", "model", "agent", "paper_model", *VERDICT_COLUMNS]
SIMULATED_NOTE = "the simulated model illustrates the protocol; it is not a measurement of the paper's models"


def reproduction_check(table1: pd.DataFrame, margin: float = DEFAULT_MARGIN, alpha: float = DEFAULT_ALPHA,
                       simulated: bool = False) -> pd.DataFrame:
    """One row per Table 1 cell the run covers (``table1``: :func:`~.experiment.table1_rates`);
    ``episodes_to_decide`` is set on inconclusive rows (empty where no run size decides). On a
    simulated run (``simulated``, or a simulator's model name) a covered cell illustrates the protocol."""
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
        budget = row_comparability(row)
        withheld, why = ((ILLUSTRATES, SIMULATED_NOTE) if simulated or is_simulated_model(str(row.model))
                         else (NOT_COMPARABLE, budget) if budget else ("", ""))
        rows.append({"task": row.task, "model": row.model, "agent": row.agent, "paper_model": paper,
                     **verdict_row(int(row.successes), int(row.n_scored), round(paper_rate * PAPER_N), PAPER_N,
                                   paper_rate, margin, alpha, withheld, why)})
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["episodes_to_decide"] = table["episodes_to_decide"].astype("Int64")
    return table


def _cells(rows: pd.DataFrame) -> str:
    return ", ".join(f"{r.task}/{r.agent} on {r.paper_model} ({r.run_rate:.2f} vs {r.paper_rate:.2f})"
                     for r in rows.itertuples(index=False))


def reproduction_reading(check: pd.DataFrame, run_models: Sequence[str]) -> str:
    """One generated sentence on the check (never a claim the table does not carry): how many
    cells are consistent within the margin, which differ and how many would by chance, which have no
    verdict and why, and, when nothing is decided, that the run is too small and how many episodes
    per cell would decide."""
    if check.empty:
        if run_models and all(is_simulated_model(m) for m in run_models):
            return (f"No Table 1 cell is tested: this run's model ({', '.join(run_models)}) is the simulated model, "
                    "which illustrates the protocol; it is not a measurement of the study's models "
                    f"({', '.join(reference_models())}).")
        return " ".join([f"No Table 1 cell is covered: this run's model(s) ({', '.join(run_models)}) are not among "
                         f"the study's ({', '.join(reference_models())}), so nothing is tested against the paper.",
                         *model_match_notes(run_models)])
    margin = float(check["margin_h"].iloc[0])
    illustrative, capped = check[check["verdict"] == ILLUSTRATES], check[check["verdict"] == NOT_COMPARABLE]
    if len(illustrative) == len(check):
        return (f"No Table 1 cell is tested: the {len(check)} cell(s) this run covers ran on the simulated model, "
                "which illustrates the protocol (the numbers are shown; no verdict).")
    tested = check[~check["verdict"].isin([ILLUSTRATES, NOT_COMPARABLE])]
    consistent, differs = tested[tested["verdict"] == CONSISTENT], tested[tested["verdict"] == DIFFERS]
    open_ = tested[~tested["verdict"].isin([CONSISTENT, DIFFERS])]
    rule = (f"(equivalence within Cohen's h ±{margin:g} by two one-sided tests; differs when the Newcombe 95% "
            f"interval of run − paper excludes 0; each cell on its own counts, the paper's n = {PAPER_N})")
    aside = (f" {len(capped)} cell(s) are not comparable and left out ({capped['note'].iloc[0]})."
             if len(capped) else "")
    if tested.empty:
        return f"No Table 1 cell is tested:{aside}"
    if consistent.empty and differs.empty:
        needs = open_["episodes_to_decide"].dropna()
        size = (f"about {int(needs.max())} episodes per cell would decide every cell that any run size can"
                if len(needs) else f"no run size decides them at h ±{margin:g}: the paper's own n = {PAPER_N} "
                "is too small for this margin")
        return (f"This run is too small to decide anything: all {len(tested)} tested Table 1 cell(s) are "
                f"inconclusive {rule}; {size}.{aside}")
    parts = [f"{len(consistent)} of {len(tested)} tested Table 1 cell(s) are consistent with the paper within "
             f"h ±{margin:g}"]
    if len(differs):
        parts.append(f"{len(differs)} differ: {_cells(differs)} (of {len(tested)} truly equal cells about "
                     f"{chance_differs(len(tested)):.2g} would differ by chance)")
    if len(open_):
        parts.append(f"{len(open_)} are inconclusive")
    return "; ".join(parts) + f" {rule}.{aside}"
