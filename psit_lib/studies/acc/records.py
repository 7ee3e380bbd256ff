"""Typed episode results of the ACC study (notebook 05): one live evaluation of a scenario.

Per turn: the judge's query, each agent's answer with its memory footprint and details (the
ACC's CCS, gate decisions; empty for the other agents), and the judge's blinded verdicts.
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


class Verdict(_Part):
    """The judge's scores (0-10) and atomic-claim / rule counts for one answer."""

    relevance: float
    answer_quality: float
    instruction_following: float
    coherence: float
    supported_claims: int
    unsupported_claims: int
    active_constraints: int
    violations: int
    omitted_required: int

    @property
    def failures(self) -> int:
        """Unsupported claims plus rules violated or omitted."""
        return self.unsupported_claims + self.violations + self.omitted_required


class TurnJudgement(_Part):
    order: list[str]
    evaluations: dict[str, Verdict]
    memory_error: str | None
    scoring_error: str | None
    canonical_memory: dict[str, Any]


class AccTurn(_Part):
    turn: int
    topic: str
    query: str
    agents: dict[str, AgentAnswer]
    judge: TurnJudgement


class AccEpisode(StudyResult):
    """One scenario evaluated live: every turn, and how many CCS / judge / memory calls failed."""

    schema_version: Literal[1] = 1
    model: str
    domain: str
    scenario_id: str
    scenario_seed: int
    n_turns: int
    turns: list[AccTurn]
    ccs_failures: int
    judge_failures: int
    memory_failures: int
