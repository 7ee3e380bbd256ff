"""Build any agent of the workbook by its table name: the PSIT agents here, other families through
the builders registered in names.py; every agent offers the fork test's :class:`ForkableAgent`.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from psit_lib.llm.client import ModelSession

from psit_lib.studies.psit.agents.graphs import ChatAgent
from psit_lib.studies.psit.agents.config import parse_agent
from psit_lib.studies.psit.agents.names import _FAMILIES, OPTIONAL_AGENTS, family_builder


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


__all__ = ["ForkableAgent", "build_agent"]
