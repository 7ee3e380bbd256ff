"""Inaction is a health finding beside BASIS's rates (issue #28, item 2).

The reference check passes a ``quote_only_vs_book`` trial where nothing happened at all. The
paper's rule is kept for the rate; beside it, the successes decided without the tool call the
task needs are counted, and a cell whose successes all did nothing is said to be no result. The
headline names the view it reads (the main trials when there are no reference-design runs).
"""

from __future__ import annotations

import pandas as pd

from psit_lib.analysis.result_sentences import Direction, grouped_rate_readings, one_sentence, rate_headline
from psit_lib.studies.basis.results import RATES_HIGHER_IS_BETTER, measured_cells

POOLED_VIEW = "Success pooled over the reference-design runs (the paper's Success column)"
MAIN_VIEW = "Success over the main trials (reference validate; this run has no reference-design runs)"


def inaction_successes(table: pd.DataFrame) -> pd.DataFrame:
    """Per measured cell of a success table (model, scenario, system): its successes, how many
    of them were decided without the tool call the task needs, and whether all were
    (``only_inaction``: the cell's rate rests on trials where nothing happened)."""
    cells = measured_cells(table)
    if cells.empty or "unacted_successes" not in cells.columns:
        return pd.DataFrame(columns=["model", "scenario", "system", "successes", "unacted_successes", "only_inaction"])
    out = cells[["model", "scenario", "system", "successes", "unacted_successes"]].copy()
    out["successes"] = out["successes"].fillna(0).astype(int)
    out["unacted_successes"] = out["unacted_successes"].fillna(0).astype(int)
    out["only_inaction"] = (out["successes"] > 0) & (out["unacted_successes"] == out["successes"])
    return out.reset_index(drop=True)


def inaction_sentences(table: pd.DataFrame) -> list[str]:
    """One sentence per cell with successes that did nothing; a cell decided only by them is
    named as no result."""
    lines = []
    for row in inaction_successes(table).itertuples(index=False):
        if not row.unacted_successes:
            continue
        cell = f"{row.scenario} · {row.system} ({row.model})"
        if row.only_inaction:
            lines.append(f"- **{cell}**: all {row.successes} successes were decided without the tool call the task "
                         "needs, so this cell is not a result (the rate keeps the paper's rule).")
        else:
            lines.append(f"- **{cell}**: {row.unacted_successes} of {row.successes} successes were decided without "
                         "the tool call the task needs.")
    return lines


def has_scored_cells(table: pd.DataFrame) -> bool:
    """Whether a success table has a measured cell with at least one scored trial."""
    cells = measured_cells(table)
    return bool(not cells.empty and (cells["n_scored"].fillna(0) > 0).any())


def headline_reading(pooled: pd.DataFrame, main: pd.DataFrame, *, short: bool = False) -> str:
    """Notebook 06's headline: the view it reads named first (the pooled reference-design runs,
    or the main trials when there are none), its rate sentences, then the inaction sentences;
    ``short``: one sentence for the report's index."""
    view, table = (POOLED_VIEW, pooled) if has_scored_cells(pooled) or not has_scored_cells(main) else (MAIN_VIEW, main)
    cells = measured_cells(table)
    better: Direction = "higher" if RATES_HIGHER_IS_BETTER["rate"] else "lower"  # the success-rate metrics' declaration
    if short:
        rates = rate_headline(cells, ["model", "scenario"], "system", measure="success rate", direction=better)
        return f"*{view}:*\n" + one_sentence("\n".join(["- " + rates, *inaction_sentences(table)]))
    lines = [f"*{view}:*", grouped_rate_readings(cells, ["model", "scenario"], "system", measure="success rate",
                                                       direction=better)]
    return "\n".join([*lines, *inaction_sentences(table)])
