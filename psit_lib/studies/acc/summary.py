"""The paper's summary rates of the ACC study (SPEC §5): H_u and D_r, turn averages.

``H_u`` is the mean over scored turns of H_t (a turn with no claim counts as 0, as the definition
gives); ``D_r`` the mean over turns 2..T of D_t, not clamped. The pooled rates
(:func:`~psit_lib.studies.acc.metrics.rate_table`) stay beside as a labelled second view.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from psit_lib.analysis.result_sentences import Direction, gap_separates, rate_headline, rate_reading
from psit_lib.analysis.sweeps import mean_gap
from psit_lib.studies.acc.judge import CRITERIA
from psit_lib.studies.acc.metrics import agents_of, rate_table

#: The paper's symbol for each turn-averaged rate.
PAPER_SYMBOL = {"hallucination": "H_u", "drift": "D_r"}
SUMMARY_COLUMNS = ["agent", "metric", "symbol", "turns", "mean", "std", "pooled_failures",
                   "pooled_opportunities", "pooled_rate"]


def turn_values(df: pd.DataFrame, metric: str) -> dict[str, np.ndarray]:
    """Per agent (answering order): its per-turn rates H_t or D_t over scored turns (turns 2..T
    for drift, where D_t is defined)."""
    ok = df[(df["status"] == "ok") & df[metric].notna()]
    if metric == "drift":
        ok = ok[ok["turn"].astype(float) >= 2]
    return {str(agent): ok.loc[ok["agent"] == agent, metric].to_numpy(dtype=float) for agent in agents_of(df)}


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (agent, metric): the paper's turn average (H_u or D_r), its std across turns and the
    turns averaged, with the workbook's pooled rate and its counts beside."""
    pooled = rate_table(df).set_index(["agent", "metric"])
    rows: list[dict[str, Any]] = []
    for metric, symbol in PAPER_SYMBOL.items():
        for agent, values in turn_values(df, metric).items():
            p = pooled.loc[(agent, metric)]  # rate_table has every agent of the frame, both metrics
            rows.append({"agent": agent, "metric": metric, "symbol": symbol, "turns": len(values),
                         "mean": float(values.mean()) if len(values) else float("nan"),
                         "std": float(values.std(ddof=0)) if len(values) else float("nan"),
                         "pooled_failures": int(p["failures"]), "pooled_opportunities": int(p["opportunities"]),
                         "pooled_rate": float(p["rate"])})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def tested_gap(values: dict[str, np.ndarray], one: str, other: str, seed: int) -> tuple[float, float, float, bool | None]:
    """(gap, low, high, separated) of the higher-valued agent minus the lower-valued one (so the
    gap reads positive): separated when the bootstrap 95% interval of the gap excludes zero; None
    when the interval has no width (there was nothing to resample, so nothing is tested)."""
    hi, lo = (one, other) if values[one].mean() >= values[other].mean() else (other, one)
    gap, low, high = mean_gap(values[hi].tolist(), values[lo].tolist(), seed=seed, batch=200)
    return gap, low, high, None if low == high else bool(gap_separates(low, high))


SUMMARY_HIGHER_IS_BETTER = {"mean": False, "pooled_rate": False}
"""Which way is better for the ``summary_rates`` table's values (the study's metric declares
these): H_u, D_r and the pooled rates are failure rates, so lower is better."""


EPISODE_HIGHER_IS_BETTER = {"H_u": False, "D_r": False, "relevance": True, "answer_quality": True,
                            "instruction_following": True, "coherence": True}
"""Which way is better for the ``episode_rates`` table's values."""


SUMMARY_DIRECTION: Direction = "higher" if SUMMARY_HIGHER_IS_BETTER["mean"] else "lower"
"""Which way is better for H_u and D_r, as the ``summary_rates`` metric declares it."""


def metric_reading(values: dict[str, np.ndarray], metric: str, *, seed: int = 0) -> str:
    """One generated sentence on one turn-averaged rate (``values``: agent -> per-turn rates), read
    as any rate table is (:func:`~psit_lib.analysis.result_sentences.rate_reading`), each gap
    tested by the bootstrap of the gap in turn averages."""
    means = [float(v.mean()) if len(v) else float("nan") for v in values.values()]
    return rate_reading(pd.DataFrame({"agent": list(values), "mean": means}), "agent",
                        measure=PAPER_SYMBOL.get(metric, metric), rate_col="mean",
                        unit="turns" if metric == "hallucination" else "turns from turn 2 on",
                        direction=SUMMARY_DIRECTION, interval="bootstrap",
                        untested="no variation to resample",
                        test=lambda a, b: tested_gap(values, str(a["agent"]), str(b["agent"]), seed))


def turn_average_headline(df: pd.DataFrame, *, seed: int = 0) -> str:
    """One sentence for the report's index: per metric, the best and worst agents' turn averages
    and whether the bootstrap interval of their gap excludes zero."""
    values = {metric: turn_values(df, metric) for metric in PAPER_SYMBOL} if len(df) else {}
    return rate_headline(summary_table(df) if len(df) else pd.DataFrame(columns=SUMMARY_COLUMNS), ["symbol"], "agent",
                         measure="turn average", rate_col="mean", direction=SUMMARY_DIRECTION, interval="bootstrap",
                         untested="no variation to resample",
                         test=lambda a, b: tested_gap(values[a["metric"]], str(a["agent"]), str(b["agent"]), seed))


def turn_average_reading(df: pd.DataFrame, *, seed: int = 0) -> str:
    """Generated sentences on H_u and D_r (one per metric, a Markdown list)."""
    if df.empty or not (df["status"] == "ok").any():
        return "No turn was scored, so there is no H_u or D_r to read."
    return "\n".join(f"- **{PAPER_SYMBOL[m]} ({m}, mean over turns; {SUMMARY_DIRECTION} is better)**: "
                     + metric_reading(turn_values(df, m), m, seed=seed) for m in PAPER_SYMBOL)


EPISODE_COLUMNS = ["episode_id", "domain", "agent", "turns", "H_u", "D_r", *CRITERIA]


def episode_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (episode, agent): the paper's turn averages within the episode, H_u (mean H_t over its scored turns) and
    D_r (mean D_t over turns 2..T), and its mean judge score per criterion. Turns of one episode are not
    independent; episodes are, and every agent answered the same turns of one scenario, so a claim compares agents
    paired by episode (the ACC claims' tests)."""
    ok = df[(df["status"] == "ok") & df["agent"].notna()]
    if ok.empty:
        return pd.DataFrame(columns=EPISODE_COLUMNS)
    later = ok[ok["turn"].astype(float) >= 2]
    keys = ["episode_id", "domain", "agent"]
    table = ok.groupby(keys, observed=True, sort=False).agg(
        turns=("turn", "size"), H_u=("hallucination", "mean"), **{c: (c, "mean") for c in CRITERIA})
    table["D_r"] = later.groupby(keys, observed=True, sort=False)["drift"].mean()
    return table.reset_index()[EPISODE_COLUMNS]
