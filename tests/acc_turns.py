"""Test helpers: ACC turns frames as the study's metrics read them (``study.turns_of`` over scores)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from psit_lib.llm import ModelSession
from psit_lib.studies.acc import scoring
from psit_lib.studies.acc.judge import verdict_rows
from psit_lib.studies.acc.study import turns_of


def _row(record: Any, judged: list[dict[str, Any]] | None) -> dict[str, Any]:
    row = {"episode_id": record.episode_id, "status": record.status, "error": record.error, **record.spec}
    if record.ok:
        row["footprint.rows"] = scoring.answer_rows(record.result)
        row["judge.rows"] = judged
    return row


def recorded_turns(records: list[Any]) -> pd.DataFrame:
    """The turns frame of hand-made records that carry a judge's verdicts (schema 1's form)."""
    rows = []
    for record in records:
        judged = None
        if record.ok:
            judged = [v for t in record.result.turns for v in verdict_rows(
                t.turn, t.agents, t.judge["order"], t.judge["evaluations"], t.judge["memory_error"],
                t.judge["scoring_error"])]
        rows.append(_row(record, judged))
    return turns_of(pd.DataFrame(rows))


async def judged_turns(records: list[Any], client: Any, *, run_seed: int = 0,
                       answer_chars: int = 1200) -> pd.DataFrame:
    """The turns frame of episodes run on ``client``, the study's judge run over each (its calls
    on the episode's own seeds, as the ``judge`` scorer makes them)."""
    rows = []
    for record in records:
        judged = None
        if record.ok:
            session = ModelSession(client, run_seed=run_seed, episode_id=record.episode_id)
            judged, _ = await scoring.judge_episode(session, record.result, seed=record.result.scenario_seed,
                                                    answer_chars=answer_chars)
        rows.append(_row(record, judged))
    return turns_of(pd.DataFrame(rows))
