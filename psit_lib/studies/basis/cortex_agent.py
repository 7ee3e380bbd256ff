"""The CortexAgent: turns every agent step into one episode of the shared store (SPEC §6).

One model call per step (role ``cortex_agent``), whose only tool is ``ingest_episode``, seeing
the new step and the agent's previous :data:`~psit_lib.studies.basis.cortex.CORTEX_WINDOW`
episodes. Whatever the model does, the run goes on: a failed ingest is recorded and the step
stored as a :func:`~psit_lib.studies.basis.cortex.fallback_episode`, and every ingest reply is
counted as a helper read, so a cortex that keeps failing shows in the run's health.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from psit_lib.llm.diagnostics import READ_HELPER
from psit_lib.llm.errors import ModelCallError, ModelOutputError
from psit_lib.studies.basis.cortex import (
    CORTEX_WINDOW,
    INGEST_TOOL,
    AgentRegistry,
    CortexInputError,
    Episode,
    EpisodeStore,
    fallback_episode,
    format_context_block,
    parse_ingest_call,
)

from psit_lib.studies.basis.prompts import CORTEX_ROLE, cortex_system_prompt, cortex_user_prompt

INGEST_TOOL_NAME: str = INGEST_TOOL["function"]["name"]
#: Ask for the ingest tool by name; servers that honour ``tool_choice`` then always call it.
INGEST_TOOL_CHOICE: dict[str, Any] = {"type": "function", "function": {"name": INGEST_TOOL_NAME}}


@dataclass(frozen=True)
class ContextView:
    """What one agent saw before one of its steps: the visible episodes and the block built from them."""

    agent_id: str
    step_label: str
    episode_ids: tuple[str, ...]
    block: str


def _raw_mask_text(arguments_json: str) -> Any:
    """The ``access_mask`` value as the model wrote it (for the record), or None if unreadable."""
    try:
        args = json.loads(arguments_json)
    except (TypeError, json.JSONDecodeError):
        return None
    return args.get("access_mask") if isinstance(args, dict) else None


class CortexAgent:
    """Episode store + registry + the model that writes summaries and masks. ``session`` is a
    branch reserved for the cortex, so its seeds do not depend on the other agents' calls."""

    def __init__(
        self,
        session: Any,
        registry: AgentRegistry,
        *,
        agent: str | None = "basis",
    ) -> None:
        if len(registry) == 0:
            raise ValueError("The CortexAgent needs a registry with at least one agent.")
        self.session = session
        self.registry = registry
        self.store = EpisodeStore()
        self.agent = agent

    def _read(self, reply: str, problem: str | None) -> None:
        """Count one ingest reply as read (``problem`` None) or unreadable."""
        diagnostics = getattr(self.session, "diagnostics", None)
        if diagnostics is not None:
            diagnostics.read(READ_HELPER, CORTEX_ROLE, problem is None, reply, problem or "", agent=self.agent)

    # -- reading -----------------------------------------------------------------------------
    def view_for(self, agent_id: str, step_label: str) -> ContextView:
        """The episodes ``agent_id`` may see right now and the ``<relevant_multiagent_context>`` block."""
        episodes = self.store.visible_to(self.registry.mask_of(agent_id))
        return ContextView(
            agent_id=agent_id,
            step_label=step_label,
            episode_ids=tuple(ep.episode_id for ep in episodes),
            block=format_context_block(episodes),
        )

    # -- writing -----------------------------------------------------------------------------
    async def ingest(self, source_agent_id: str, raw_trace: str, metadata: dict[str, Any] | None = None) -> Episode:
        """Store one agent step as an episode; never raises for anything the model does."""
        self.registry.index_of(source_agent_id)  # unknown agents are a harness bug: fail loudly
        episode_id = self.store.next_episode_id()
        previous = self.store.recent_by(source_agent_id, CORTEX_WINDOW)
        meta = dict(metadata or {})
        meta["cortex_window"] = [ep.episode_id for ep in previous]
        messages = [
            {"role": "system", "content": cortex_system_prompt(self.registry)},
            {"role": "user", "content": cortex_user_prompt(source_agent_id, previous, raw_trace)},
        ]

        def fall_back(reason: str) -> Episode:
            episode = fallback_episode(episode_id, source_agent_id, raw_trace, self.registry, reason, meta)
            self.store.append(episode)
            return episode

        try:
            result = await self.session.chat(
                messages, role=CORTEX_ROLE, tools=[INGEST_TOOL], tool_choice=INGEST_TOOL_CHOICE
            )
        except (ModelCallError, ModelOutputError) as exc:
            return fall_back(f"the cortex model call failed: {exc}")
        calls = [call for call in result.tool_calls if call.name == INGEST_TOOL_NAME]
        if not calls:
            others = ", ".join(call.name for call in result.tool_calls)
            reason = f"no {INGEST_TOOL_NAME} call in the reply" + (f" (it called {others} instead)" if others else "")
            self._read(result.content, reason)
            return fall_back(reason)
        call = calls[0]
        meta["mask_text"] = _raw_mask_text(call.arguments)
        if len(calls) > 1:
            meta["extra_ingest_calls"] = len(calls) - 1
        try:
            summary, mask = parse_ingest_call(call.arguments, self.registry)
        except CortexInputError as exc:
            self._read(call.arguments, str(exc))
            return fall_back(str(exc))
        self._read(call.arguments, None)
        meta["ingest"] = "ok"
        episode = Episode(
            episode_id=episode_id,
            source_agent_id=source_agent_id,
            access_mask=mask,
            raw_trace=raw_trace,
            summary=summary,
            metadata=meta,
        )
        self.store.append(episode)
        return episode
