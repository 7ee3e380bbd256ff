"""Typed episode results of the BASIS study (notebook 06): one trial of one system on one scenario.

Success is judged from what reached the CabApp, never from what an agent said, so the record
keeps every call that reached the app, the rides, the cortex's episodes and what each step saw.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from psit_lib.runs.records import StudyResult


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Delegation(_Part):
    index: int
    agent: str
    instruction: str
    reply: str | None
    steps: int


class AppCall(_Part):
    """A call that reached the CabApp: which delegation and subagent step asked for it."""

    delegation: int
    subagent_step: int
    name: str
    arguments: Any
    result: str
    ok: bool


class Ride(_Part):
    service_type: str | None
    start_location: str | None
    end_location: str | None
    status: str | None


class CortexEpisode(_Part):
    """One step stored in the cortex, with its access mask and who may see it."""

    episode_id: str
    source: str
    kind: str | None
    step: str | None
    access_mask: str
    visible_to: list[str]
    summary: str | None
    ingest: str | None
    mask_text: str | None
    fallback_reason: str | None
    cortex_window: list[str]
    raw_trace: str


class StepView(_Part):
    """Before one agent step: the episodes in its shared-context block."""

    agent: str
    step: str
    visible_episodes: list[str]
    context_chars: int


class BasisTrial(StudyResult):
    """One BASIS trial. Versions 3-4 still read (the scorers recompute both verdicts from ``tool_calls``
    and ``rides``); older ones (two agents, harness-applied confounders) are not comparable and refused."""

    schema_version: Literal[3, 4, 5] = 5
    model: str
    scenario: str
    system: str
    trial: int
    app_seed: int
    success: bool
    final_state_success: bool | None = None
    final_answer: str | None
    orchestrator_steps: int
    delegations: list[Delegation]
    user_messages: list[str]
    tool_calls: list[AppCall]
    rides: list[Ride]
    agents: list[str]
    episodes: list[CortexEpisode]
    ingest_fallbacks: int
    views: list[StepView]
    errors: list[str]
    decided_without_tool_calls: bool = False
    final_answer_as_tool_call: str | None = None
