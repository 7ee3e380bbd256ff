"""ACC study metrics (SPEC §5): the tables built from a turns frame
(:func:`frame_of_turns`, one row per (episode, turn, agent)). Failed episodes and judgements keep
their own status; intervals treat turns as independent, which they are not within an episode, so
they are optimistic (the notebook says so).
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd

from psit_lib.analysis.stats import wilson_interval

from psit_lib.studies.acc.agents import agent_rank
from psit_lib.studies.acc.judge import COUNTS, CRITERIA


#: The columns of a turns frame. Rows of failed episodes and failed judgements leave the score
#: columns empty, so a run where nothing was scored still has every column (NaN), and the tables
#: built from it come out empty or NaN instead of failing on a missing column.
SCORE_COLUMNS: tuple[str, ...] = (*CRITERIA, *COUNTS, "hallucination", "drift")
TURN_COLUMNS: tuple[str, ...] = ("episode_id", "model", "domain", "turn", "topic", "agent", "footprint_tokens",
                                 "ccs_valid", "presented_as", "memory_error", *SCORE_COLUMNS, "status", "error")


def frame_of_turns(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """(turn, agent) rows as a turns frame: every column of :data:`TURN_COLUMNS` is there even
    when no turn was scored (or no episode ran), agents ordered as they answer."""
    df = pd.DataFrame(rows)
    for column in TURN_COLUMNS:
        if column not in df:
            df[column] = pd.Series(np.nan, index=df.index, dtype=float if column in SCORE_COLUMNS else object)
    df["agent"] = pd.Categorical(df["agent"], categories=sorted(df["agent"].dropna().unique(), key=agent_rank))
    return df


def agents_of(df: pd.DataFrame) -> list[str]:
    """The agents of a turns frame (:func:`frame_of_turns`), in answering order."""
    return list(df["agent"].cat.categories)


def status_table(df: pd.DataFrame) -> pd.DataFrame:
    """How many (turn, agent) evaluations were scored, failed at the judge, or lost with an episode."""
    table = df.groupby("status", observed=True).size().rename("rows").reset_index()
    return table.sort_values("status").reset_index(drop=True)


def _bootstrap_mean(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile interval of the mean over resampled values."""
    if len(values) == 0:
        return (float("nan"), float("nan"))
    picks = rng.integers(0, len(values), size=(n_boot, len(values)))
    means = values[picks].sum(axis=1) / len(values)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def score_table(df: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Mean 0-10 judge score per (agent, criterion) with a percentile-bootstrap 95% interval over
    scored turns."""
    ok = df[df["status"] == "ok"]
    rng = np.random.default_rng(seed)
    rows = []
    for agent in agents_of(df):
        sub = ok[ok["agent"] == agent]
        for criterion in CRITERIA:
            values = sub[criterion].to_numpy(dtype=float)
            low, high = _bootstrap_mean(values, n_boot, rng)
            rows.append({"agent": agent, "criterion": criterion, "n": len(values),
                         "mean": float(values.mean()) if len(values) else float("nan"),
                         "std": float(values.std(ddof=0)) if len(values) else float("nan"),
                         "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=["agent", "criterion", "n", "mean", "std", "ci_low", "ci_high"])


def rate_table(df: pd.DataFrame) -> pd.DataFrame:
    """Pooled hallucination (claims) and drift (constraint checks, turn >= 2) per agent, Wilson 95%."""
    ok = df[df["status"] == "ok"]
    rows = []
    for agent in agents_of(df):
        sub = ok[ok["agent"] == agent]
        claims = int(sub["supported_claims"].sum() + sub["unsupported_claims"].sum()) if len(sub) else 0
        bad = int(sub["unsupported_claims"].sum()) if len(sub) else 0
        later = sub[sub["turn"] >= 2]
        checks = int(later["active_constraints"].sum()) if len(later) else 0
        failures = int(later["violations"].sum() + later["omitted_required"].sum()) if len(later) else 0
        failures = min(failures, checks)
        for metric, k, n in (("hallucination", bad, claims), ("drift", failures, checks)):
            low, high = wilson_interval(k, n)
            rows.append({"agent": agent, "metric": metric, "failures": k, "opportunities": n,
                         "rate": k / n if n else float("nan"), "wilson_low": low, "wilson_high": high})
    return pd.DataFrame(rows, columns=["agent", "metric", "failures", "opportunities", "rate",
                                       "wilson_low", "wilson_high"])


def per_turn_table(df: pd.DataFrame, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """Mean hallucination and drift (scored rows) and footprint (every answered turn) per (turn,
    agent), and per each column of ``by`` (e.g. ``("domain",)``, the study's Figure 7)."""
    answered = df[df["agent"].notna()].astype({"turn": int})
    return (answered.groupby([*by, "turn", "agent"], observed=True)
              .agg(hallucination=("hallucination", "mean"), drift=("drift", "mean"),
                   footprint_tokens=("footprint_tokens", "mean"), n_scored=("hallucination", "count"))
              .reset_index())


def footprint_table(df: pd.DataFrame) -> pd.DataFrame:
    """Mean memory footprint per (domain, agent) over every answered turn, and at the last turn
    (the study's Figure 5b)."""
    answered = df[df["agent"].notna()]
    if answered.empty:
        return pd.DataFrame(columns=["domain", "agent", "mean_tokens", "last_turn_tokens"])
    last = answered["turn"].max()
    table = answered.groupby(["domain", "agent"], observed=True).agg(mean_tokens=("footprint_tokens", "mean"))
    table["last_turn_tokens"] = answered[answered["turn"] == last].groupby(
        ["domain", "agent"], observed=True)["footprint_tokens"].mean()
    return table.reset_index()


CCS_FORM_COLUMNS = ["domain", "turns", "rendered_tokens", "compact_tokens", "json_tokens", "compact_over_rendered"]


def ccs_form_table(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Tokens of the ACC's committed CCS per turn, mean per domain, as the labelled lines the agent
    reads (the footprint reported), the paper's compact form and JSON (``rows``: one per state)."""
    rows = list(rows)
    if not rows:
        return pd.DataFrame(columns=CCS_FORM_COLUMNS)
    df = pd.DataFrame(rows)
    table = df.groupby("domain", sort=False).agg(turns=("rendered_tokens", "size"),
                                                  rendered_tokens=("rendered_tokens", "mean"),
                                                  compact_tokens=("compact_tokens", "mean"),
                                                  json_tokens=("json_tokens", "mean")).reset_index()
    table["compact_over_rendered"] = table["compact_tokens"] / table["rendered_tokens"]
    return table[CCS_FORM_COLUMNS]


RATES_HIGHER_IS_BETTER = {"rate": False, "wilson_low": False, "wilson_high": False}
"""Which way is better for the pooled rates (the ``hallucination_drift`` metric declares these)."""
