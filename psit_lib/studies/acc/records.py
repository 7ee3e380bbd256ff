"""Typed episode results of the ACC study (notebook 05): what each agent answered and carried per turn;
the judge's verdicts are scores, not part of the record.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from psit_lib.runs.records import StudyResult


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentAnswer(_Part):
    answer: str
    footprint_tokens: int
    details: dict[str, Any]


class AccTurn(_Part):
    turn: int
    topic: str
    query: str
    agents: dict[str, AgentAnswer]
    judge: dict[str, Any] | None = None
    """Schema 1 only: the live judge's verdict, kept as read and never used (the ``judge`` scorer
    re-runs over the turns)."""


class AccEpisode(StudyResult):
    """One scenario run live: every turn's query and answers, and how many CCS commits failed.
    Version 1 records (with the live judge's verdicts) still read; the judge scorer re-runs over them."""

    schema_version: Literal[1, 2] = 2
    model: str
    domain: str
    scenario_id: str
    scenario_seed: int
    n_turns: int
    turns: list[AccTurn]
    ccs_failures: int
    judge_failures: int | None = None
    memory_failures: int | None = None
