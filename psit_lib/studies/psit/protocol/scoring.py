"""The fork test's scorers and metrics: every verdict and every table of notebooks 01-04.

The scorers apply the study's rules to the stored records, so the outcome figure and every table
rest on one scored label, never on a label stored with the episode, and ``psit rescore`` reproduces
every table from a run folder alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from psit_lib.analysis.labels import is_simulated_backend
from psit_lib.analysis.stats import rate_table
from psit_lib.analysis.sweeps import GAP_COLUMNS, gap_table
from psit_lib.runs.health import beside_rates
from psit_lib.runs.scores import Metric, Score, ScoreContext, Scored, Scorer, scorer
from psit_lib.runs.study import MAIN
from psit_lib.studies.psit.protocol import experiment as fx
from psit_lib.studies.psit.protocol.budget import budget_scorer, with_budget
from psit_lib.studies.psit.protocol.state_size import state_size_summary
from psit_lib.studies.psit.protocol.outcomes import OUTCOME_ORDER, Outcome
from psit_lib.studies.psit.protocol.records import ForkRecord
from psit_lib.studies.psit.protocol.reproduction import reproduction_check
from psit_lib.studies.psit.protocol.table1 import paper_outcome, score_table1, score_table1_workbook_reader


SOURCES = ("revealed", "stored", "dataset", "model")


# -- scorers -------------------------------------------------------------------------------------

@scorer("outcome", version=1)
def outcome_scorer(record: ForkRecord, ctx: ScoreContext) -> Score:
    """The workbook's classification of the fork (SPEC §1 step 3)."""
    result = record.require_result()
    outcome = fx.fork_outcome(result)
    revealed = result.reveal.parsed if result.reveal is not None else None
    return Score(value=outcome.value, explanation=f"revealed {revealed!r}; classified {outcome.value}",
                 metadata={"revealed": revealed})


@scorer("table1", version=2)
def table1_scorer(record: ForkRecord, ctx: ScoreContext) -> Score:
    """Self-consistency by Table 1's own rule (the study's metric; SPEC §1 step 5), the reveal read
    as the reference reads it; its Figure 2 class, and the same rule on the workbook's reading of
    the reveal (a labelled alternative view), beside. Version 2: the reference's reading."""
    result = record.require_result()
    score = score_table1(result)
    return Score(value=bool(score.self_consistent),
                 metadata={"outcome": paper_outcome(score),
                           "workbook_reader": bool(score_table1_workbook_reader(result).self_consistent)})


@scorer("candidates", version=1)
def candidates_scorer(record: ForkRecord, ctx: ScoreContext) -> Score:
    """The candidates offered at the fork: how many, from which source, how many rule R cannot check."""
    candidates = record.require_result().candidates
    counts = {source: sum(c.source == source for c in candidates) for source in SOURCES}
    return Score(value=len(candidates),
                 metadata={**counts, "unchecked": sum(c.checkable is False for c in candidates)})


FORK_SCORERS: tuple[Scorer, ...] = (outcome_scorer, table1_scorer, candidates_scorer, budget_scorer)


# -- the scored frame ------------------------------------------------------------------------------

def _column(rows: pd.DataFrame, name: str) -> pd.Series:
    """A score's metadata column, empty where no episode of ``rows`` has it (every episode failed)."""
    return rows[name] if name in rows.columns else pd.Series(None, index=rows.index, dtype=object)


def scored_frame(scored: Scored, part: str = MAIN) -> pd.DataFrame:
    """One row per episode of ``part`` with its scored outcome: failed episodes appear with outcome
    ``error`` and ``scored`` False (kept and counted, never scored). The frame every fork-test
    table and the outcome figure read."""
    rows = scored.part(part)
    columns = ["episode_id", "task", "model", "agent", "outcome", "scored", "self_consistent",
               "table1_self_consistent", "table1_outcome", "table1_workbook_reader_self_consistent", "budget",
               "budget_cut"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    ok = rows["status"] == "ok"
    outcome = rows["outcome"].where(ok, Outcome.ERROR.value)
    df = pd.DataFrame({"episode_id": rows["episode_id"], "task": rows["task"], "model": rows["model"],
                       "agent": rows["agent"], "outcome": outcome, "scored": ok,
                       "self_consistent": outcome == Outcome.SELF_CONSISTENT.value,
                       "table1_self_consistent": rows["table1"].where(ok, False).astype(bool),
                       "table1_outcome": _column(rows, "table1.outcome").where(ok, None),
                       "table1_workbook_reader_self_consistent":
                           _column(rows, "table1.workbook_reader").where(ok, False).astype(bool),
                       "budget": _column(rows, "budget").where(ok, None),
                       "budget_cut": _column(rows, "budget.cut").where(ok, None)}, columns=columns)
    df["outcome"] = pd.Categorical(df["outcome"], [o.value for o in OUTCOME_ORDER])
    return df.reset_index(drop=True)


# -- metrics ---------------------------------------------------------------------------------------

def _main(scored: Scored) -> tuple[pd.DataFrame, list[ForkRecord]]:
    df = scored_frame(scored)
    return df, scored.records_of(df)


def self_consistency(scored: Scored) -> pd.DataFrame:
    """The workbook's strict self-consistency per (task, model, agent), the unreadable shares beside."""
    df, records = _main(scored)
    agents = scored.params.agents
    return beside_rates(fx.in_agent_order(rate_table(df, ["task", "model", "agent"], "self_consistent"), agents),
                        records, ["model", "agent"])


def table1_self_consistency(scored: Scored) -> pd.DataFrame:
    df, records = _main(scored)
    return fx.table1_rates(df, scored.params.agents, records)


def _significance_table1(scored: Scored) -> pd.DataFrame:
    return fx.significance(scored_frame(scored), scored.params.agents, success_col="table1_self_consistent")


def _summary(scored: Scored, tasks: Callable[[Any], list[str]]) -> pd.DataFrame:
    """The Table 1 layout (Table 1's rule, ``*`` on its significance) with the strict view beside."""
    return fx.summary_table(table1_self_consistency(scored), fx.stars(_significance_table1(scored)),
                            tasks(scored.params), scored.params.agents, strict=self_consistency(scored))


def outcome_mix(scored: Scored) -> pd.DataFrame:
    df = scored_frame(scored)
    return fx.outcome_mix(df) if len(df) else pd.DataFrame()


FIGURE2_CLASSES = ("self-consistent", "over-confirmation", "state substitution", "all denial", "leakage")
"""The study's Figure 2 partition of scored episodes by Table 1's rule (:func:`~.table1.paper_outcome`)."""


def failure_modes(scored: Scored) -> pd.DataFrame:
    """Scored episodes per (task, model, agent) in each class of the study's Figure 2 (Table 1's rule), with the
    host's budget beside (RQ2's claim reads it)."""
    df = scored_frame(scored)
    df = df[df["scored"]]
    keys = ["task", "model", "agent"]
    if df.empty:
        return pd.DataFrame(columns=[*keys, *FIGURE2_CLASSES])
    table = pd.crosstab([df[k] for k in keys], df["table1_outcome"]).reindex(columns=list(FIGURE2_CLASSES),
                                                                              fill_value=0)
    table = fx.in_agent_order(table.reset_index().rename_axis(columns=None), scored.params.agents)
    return with_budget(table, df, keys)


def state_size(scored: Scored) -> pd.DataFrame:
    """Private state per (task, model, agent) from each scored episode's mean over turns (RQ3's claim reads it)."""
    df, records = _main(scored)
    ok = {e for e, flag in zip(df["episode_id"], df["scored"]) if flag}
    rows = [{"task": rec.spec.get("task", result.task), "model": rec.spec["model"], "agent": rec.spec["agent"],
             "state_tokens": sum(result.state_size_per_turn) / len(result.state_size_per_turn)}
            for rec in records if rec.episode_id in ok and (result := rec.result) is not None
            and result.state_size_per_turn]
    return with_budget(state_size_summary(pd.DataFrame(rows, columns=["task", "model", "agent", "state_tokens"])), df,
                       ["task", "model", "agent"])


def candidate_sources(scored: Scored) -> pd.DataFrame:
    """Per agent: candidates offered at the fork, the share from each source, the share rule R
    could not check."""
    rows = scored.part(MAIN)
    rows = rows[(rows["status"] == "ok") & (rows["candidates"].fillna(0) > 0)] if len(rows) else rows
    if rows.empty:
        return pd.DataFrame(columns=["candidates", "revealed", "stored", "dataset", "model", "unchecked"])
    sums = rows.groupby("agent", sort=False)[["candidates", *(f"candidates.{s}" for s in SOURCES),
                                             "candidates.unchecked"]].sum()
    table = pd.DataFrame({"candidates": sums["candidates"].astype(int)}, index=sums.index)
    for source in SOURCES:
        table[source] = sums[f"candidates.{source}"] / sums["candidates"]
    table["unchecked"] = sums["candidates.unchecked"] / sums["candidates"]
    table.index.name = "agent"
    return table


def sweep_table(scored: Scored) -> pd.DataFrame:
    """The sweep's gap table (method - baseline, ``sweep_agents`` in that order) at each swept value,
    with its Newcombe 95% interval; scored episodes only. The value is each part's own (no model
    name read back); empty on a real endpoint, where no sweep ran."""
    params = scored.params
    frames = []
    for part in scored.part_names("sweep:"):
        df = scored_frame(scored, part)
        frames.append(df[df["scored"]].assign(value=scored.parts[part]["value"]))
    if not frames or all(f.empty for f in frames):
        return pd.DataFrame(columns=GAP_COLUMNS)
    df = pd.concat(frames, ignore_index=True)
    return gap_table(df, knob=params.swept.knob, value_col="value", system_col="agent", a=params.sweep_agents[0],
                     b=params.sweep_agents[1], outcome_col="self_consistent")


_RATE = {"rate": True, "wilson_low": True, "wilson_high": True, "unreadable_replies": False,
         "unreadable_fork_answers": False}


def fork_metrics(tasks: Callable[[Any], list[str]], names: Sequence[str]) -> tuple[Metric, ...]:
    """The fork-test notebook's tables, by name (``names``: the ones this notebook shows), each a
    metric over the stored scores; ``tasks``: parameters -> the tasks of Table 1's layout."""
    every = {
        "self_consistency": Metric("self_consistency", self_consistency, _RATE),
        "table1_self_consistency": Metric("table1_self_consistency", table1_self_consistency, _RATE),
        "significance": Metric("significance", lambda s: fx.significance(scored_frame(s), s.params.agents),
                               {"rate_method": True, "rate_baseline": False}),
        "significance_table1": Metric("significance_table1", _significance_table1,
                                      {"rate_method": True, "rate_baseline": False}),
        "summary": Metric("summary", lambda s: _summary(s, tasks)),
        "reproduction": Metric("reproduction", lambda s: reproduction_check(
            table1_self_consistency(s), simulated=is_simulated_backend(s.backend))),
        "outcome_mix": Metric("outcome_mix", outcome_mix),
        "failure_modes": Metric("failure_modes", failure_modes),
        "state_size": Metric("state_size", state_size),
        "candidate_sources": Metric("candidate_sources", candidate_sources),
        "sweep": Metric("sweep", sweep_table, {"gap": True, "a": True, "b": True}, parts=("sweep:",)),
        "live_outcome_mix": Metric("live_outcome_mix", outcome_mix),
    }
    return tuple(every[name] for name in names)
