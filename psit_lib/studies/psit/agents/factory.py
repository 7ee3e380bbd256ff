"""Build any agent of the workbook by its table name: the PSIT agents here, other families through
the builders registered in names.py; every agent offers the fork test's :class:`ForkableAgent`
(each of the workbook's is a :class:`~psit_lib.studies.psit.agents.graph_agent.GraphAgent`: a
compiled LangGraph graph on the episode's thread; ``agents.langgraph_adapter`` makes one of a
researcher's own graph).
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from psit_lib.llm.client import ModelSession

from psit_lib.studies.psit.agents.graph_agent import AgentStateError, Turn
from psit_lib.studies.psit.agents.graphs import ChatAgent
from psit_lib.studies.psit.agents.config import parse_agent
from psit_lib.studies.psit.agents.names import _FAMILIES, OPTIONAL_AGENTS, family_builder


class ForkableAgent(Protocol):
    """What the fork test needs of an agent: a turn (continuing the main line, or forking from a
    checkpoint it never changes), the state at a checkpoint, and its private state as text."""

    thread_id: str | None  # the episode's thread (set by its first turn)

    async def send(self, text: str, session: ModelSession, *, checkpoint_id: str | None = None) -> Turn: ...

    async def state(self, checkpoint_id: str | None = None) -> dict[str, Any]: ...

    def private_state(self, values: dict[str, Any]) -> str: ...


FORK_STATE_KEYS = {"public": "the public dialogue as role/content messages",
                   "turn_log": "one entry per turn with private_state_tokens"}
"""What the fork test reads from an agent's state at the fork, besides its private state."""


def checked_fork_state(values: dict[str, Any], agent_name: str) -> dict[str, Any]:
    """``values`` (an agent's state at the fork), or one sentence naming the key it lacks: without
    ``public`` leakage could not be checked, without ``turn_log`` the private state per turn not shown."""
    for key, what in FORK_STATE_KEYS.items():
        if not isinstance(values.get(key), list):
            raise AgentStateError(f"{agent_name}'s state at the fork has no {key!r} list ({what}); "
                                  "the fork test cannot score it without one")
    return values


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


__all__ = ["ForkableAgent", "build_agent", "checked_fork_state"]
