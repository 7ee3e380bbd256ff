"""Scoring stored fork-test records without a model (``Study.rescore``, ``psit rescore``).

The fork test classifies its outcome while it runs and stores it. Everything the rule
(:func:`~psit_lib.studies.psit.protocol.outcomes.classify_fork`) reads is stored beside it: the
reveal read from its branch, the public transcript at the fork, the decision read from each
candidate's branch and the pre-fork contradictions. :func:`derived_outcome` applies the rule
again to those fields, so a rescored table rests on the rule, not on the stored label; an
episode whose host reply was unreadable before the fork has no fork to classify and keeps its
stored ``unparseable``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from psit_lib.analysis.stats import rate_table
from psit_lib.runs.health import beside_rates
from psit_lib.runs.records import EpisodeRecord
from psit_lib.runs.runner import EpisodeSpec
from psit_lib.runs.study import StoredRun
from psit_lib.studies.psit.protocol import experiment as fx
from psit_lib.studies.psit.protocol.fork_test import host_text
from psit_lib.studies.psit.protocol.outcomes import Outcome, classify_fork
from psit_lib.studies.psit.protocol.records import ForkEpisode
from psit_lib.studies.psit.tasks.base import PsitTask

ForkRecord = EpisodeRecord[ForkEpisode]


def derived_outcome(result: ForkEpisode) -> Outcome:
    """The outcome the classification rule gives for a stored episode's fields."""
    contradictions = len(result.public_contradictions)
    if result.reveal is None:  # play stopped before the fork: nothing was classified
        return result.outcome
    if result.reveal.parsed is None:
        return classify_fork(None, "", {}, contradictions)
    public = [m.model_dump() for m in result.transcript]
    return classify_fork(result.reveal.parsed, host_text(public), result.answers, contradictions)


def rescored(records: Sequence[ForkRecord]) -> list[ForkRecord]:
    """The records with each finished episode's outcome derived again from its fields."""
    return [rec if rec.result is None else
            rec.model_copy(update={"result": rec.result.model_copy(update={"outcome": derived_outcome(rec.result)})})
            for rec in records]


def self_consistency(records: Sequence[ForkRecord], agents: list[str]) -> pd.DataFrame:
    """The notebook's self-consistency table (rates beside the unreadable shares)."""
    df = fx.fork_frame(list(records))
    return beside_rates(fx.in_agent_order(rate_table(df, ["task", "model", "agent"], "self_consistent"), agents),
                        records, ["model", "agent"])


def fork_tables(run: StoredRun, specs: Sequence[EpisodeSpec], tasks: list[str]) -> dict[str, pd.DataFrame]:
    """Every table a fork-test notebook saves from its main episodes (the stored records of
    ``specs``), outcomes derived again (:func:`rescored`)."""
    params = run.params
    records = rescored(run.select(specs))
    df = fx.fork_frame(records)
    rates = self_consistency(records, params.agents)
    sig, _ = fx.significance(df, params.agents)
    table1 = fx.table1_rates(df, params.agents, records)
    sig1, summary, check = fx.table1_view(df, table1, rates, tasks, params.agents)
    return {"self_consistency": rates, "significance": sig, "table1_self_consistency": table1,
            "significance_table1": sig1, "summary": summary, "reproduction": check,
            "outcome_mix": fx.outcome_mix(df) if len(df) else pd.DataFrame(),
            "candidate_sources": fx.candidate_sources(records)}


def sweep_table(run: StoredRun, sweep_task: PsitTask) -> pd.DataFrame:
    """The sweep's gap table (the study's named sweep, ``params.sweep``) from the stored records
    of its episodes on ``sweep_task``; empty on a real endpoint, where no sweep ran."""
    params = run.params
    swept = params.swept
    models = run.sweep_models(swept.knob, list(swept.values))
    records = rescored(run.select(fx.sweep_specs(sweep_task, params, models)))
    return fx.sweep_gaps(records, models, swept.knob, params.sweep_agents)
