"""Build any agent of the workbook by its table name.

PSIT agents (vanilla, private CoT, working memory) are built here; other agent families
(e.g. retrieval-memory baselines) register a builder with :func:`register_agent_family`.
Every agent offers the same small interface the fork test uses:
``send(text, session, checkpoint_id=None) -> state``, ``checkpoint_id()``,
``state(checkpoint_id=None)`` and ``private_state(values) -> str``.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from psit_lib.llm.client import ModelSession

from psit_lib.studies.psit.agents.graphs import ChatAgent
from psit_lib.studies.psit.agents.config import UnknownAgentError, parse_agent
from psit_lib.studies.psit.agents.names import (_FAMILIES, OPTIONAL_AGENTS, AgentBuilder, canonical_agent_name,
                                               family_builder, known_agents, register_agent_family,
                                               validate_agent_names)


class ForkableAgent(Protocol):
    async def send(self, text: str, session: ModelSession, *, checkpoint_id: str | None = None) -> dict[str, Any]: ...

    async def checkpoint_id(self) -> str: ...

    async def state(self, checkpoint_id: str | None = None) -> dict[str, Any]: ...

    def private_state(self, values: dict[str, Any]) -> str: ...


def build_agent(name: str, *, system_prompt: str, host_role: str,
                options: dict[str, Any] | None = None) -> ForkableAgent:
    """The agent ``name``; ``options`` are design choices of the PSIT agents (see
    :class:`~psit_lib.studies.psit.agents.config.AgentConfig`); other families ignore them."""
    text = name.strip().lower()
    if text in OPTIONAL_AGENTS and text not in _FAMILIES:
        importlib.import_module(OPTIONAL_AGENTS[text])  # registers the family
    builder = family_builder(text)
    if builder is not None:
        return builder(text, system_prompt, host_role)
    return ChatAgent(parse_agent(text, **(options or {})), system_prompt=system_prompt, host_role=host_role)


__all__ = ["OPTIONAL_AGENTS", "AgentBuilder", "ForkableAgent", "known_agents", "UnknownAgentError", "build_agent", "canonical_agent_name",
           "register_agent_family", "validate_agent_names"]
