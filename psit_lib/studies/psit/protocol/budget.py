"""Was a cell run under the paper's token budget? (SPEC §9: a cell whose host replies had a smaller budget than the
paper's, or were cut at their budget too often, is not comparable with the paper.)

The paper gave every call 2,048 generated tokens "to accommodate reasoning traces ... without premature truncation".
On a real endpoint without the model's own settings (``PSIT_MODEL_SETTINGS``) the harness caps a host's replies at
512 tokens (:data:`psit_lib.llm.model_settings.REPLY_CAP`), so such a cell measures another protocol. Each episode's
stored calls say what budget every host call carried and why its reply ended; the ``budget`` scorer keeps the smallest
budget and the cut replies per episode, and the Table 1 rates carry the cell's smallest budget and its share of
episodes with a cut host reply beside the rate (a metric over scores: no stored verdict).
"""

from __future__ import annotations

import math

import pandas as pd

from psit_lib.runs.scores import Score, ScoreContext, scorer
from psit_lib.studies.psit.protocol.records import ForkRecord

PAPER_BUDGET = 2048
"""Generated tokens per call in the paper (SPEC §1; its reference config gave the 235B model 4,096)."""
CUT_LIMIT = 0.1
"""A cell is not comparable when more than this share of its episodes had a host reply cut at its budget: at the
paper's 50 episodes that is more than 5, which could move the rate by more than 0.1, about the paper's own 90%
half-width at 0.5 (0.113)."""
BUDGET_COLUMNS = ("host_max_tokens", "cut_share")
"""Columns the Table 1 rates carry beside each cell."""


@scorer("budget", version=1)
def budget_scorer(record: ForkRecord, ctx: ScoreContext) -> Score:
    """The smallest generated-token budget the host's calls carried (None in records from before budgets were
    recorded) and how many of its replies ended cut at it (``finish_reason`` ``length``)."""
    role = f"{record.require_result().task}_host"
    host = [c for c in record.calls if c.role == role and c.error is None]
    budgets = [c.max_tokens for c in host if c.max_tokens is not None]
    cut = sum(c.finish_reason == "length" for c in host)
    return Score(value=min(budgets) if budgets else None,
                 explanation=f"{len(host)} host calls, {cut} cut at their budget",
                 metadata={"host_calls": len(host), "cut": cut})


def with_budget(rates: pd.DataFrame, df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``rates`` with each cell's smallest host budget and its share of scored episodes with a cut host reply."""
    if "budget" not in df.columns or df.empty:
        return rates
    scored = df[df["scored"].astype(bool)].assign(cut=lambda d: d["budget_cut"].fillna(0).astype(float) > 0)
    cells = scored.groupby(keys, observed=True).agg(host_max_tokens=("budget", "min"), cut_share=("cut", "mean"))
    return rates.merge(cells.reset_index(), on=keys, how="left")


def comparability(host_max_tokens: float, cut_share: float, paper_budget: int = PAPER_BUDGET,
                  limit: float = CUT_LIMIT) -> str:
    """Why a cell is not comparable with the paper ("" when it is, or when its budget was not recorded)."""
    if host_max_tokens == host_max_tokens and host_max_tokens is not None and host_max_tokens < paper_budget:
        return (f"host replies capped at {int(host_max_tokens)} tokens, below the paper's {paper_budget:,} "
                "(set the model's max_tokens in PSIT_MODEL_SETTINGS)")
    if cut_share == cut_share and cut_share is not None and cut_share > limit:
        return f"host replies cut at their budget in {cut_share:.0%} of episodes (more than {limit:.0%})"
    return ""


def row_comparability(row: object) -> str:
    """:func:`comparability` of a Table 1 row (a namedtuple or Series; tables without the columns are comparable)."""
    budget = getattr(row, "host_max_tokens", float("nan"))
    cut = getattr(row, "cut_share", float("nan"))
    return comparability(float(budget) if budget is not None else math.nan, float(cut) if cut is not None else math.nan)
