"""Typed episode results of the BASIS study (notebook 06): one trial of one system on one scenario.

Success is judged from what reached the CabApp, never from what an agent said; the record keeps
what the orchestrator delegated, every call that reached the app (including those the
subagent's hidden policy made), the cortex's episodes with their masks, and which episodes
each agent step saw.
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
    """One BASIS trial. Version 5: ``success`` is the reference scenarios' ``validate()`` on the
    log of calls that reached the app, and ``final_state_success`` the workbench's final-state
    check (in versions 3 and 4 ``success`` was the final-state check; the scorers recompute both
    from ``tool_calls`` and ``rides`` for every version). Version 4 says whether the trial was decided without the CabApp call its
    task needs (``decided_without_tool_calls``: a ``quote_only_vs_book`` success then means
    nothing was done, not that a booking was refused) and which tool the orchestrator's final
    answer names when that answer is a tool call written as text; version 3 records read with
    neither (False, None). Version 3: three agents (orchestrator, cab subagent, notifier), each
    delegation names its agent and the notifier's messages are kept. Version 2 had the
    confounder as a policy in the subagent's prompt with two agents; version 1 records, from
    harness-applied confounders, are not comparable. Older versions are refused by name."""

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
