"""The PSIT agents' handle: send a message, read state, fork from a checkpoint."""

from __future__ import annotations

from typing import Any

from psit_lib.llm.client import ModelSession

from psit_lib.studies.psit.agents.checkpointed import CheckpointedAgent
from psit_lib.studies.psit.agents.config import AgentConfig
from psit_lib.studies.psit.agents.graphs import AgentContext, build_graph, private_state_text


class ChatAgent(CheckpointedAgent):
    """One agent instance for one episode (its own graph and checkpointer)."""

    def __init__(self, config: AgentConfig, *, system_prompt: str, host_role: str) -> None:
        self.config = config
        self.system_prompt = system_prompt
        self.host_role = host_role
        self.graph = build_graph(config)

    def _context(self, session: ModelSession) -> AgentContext:
        return AgentContext(session=session, config=self.config, system_prompt=self.system_prompt,
                            host_role=self.host_role)

    def private_state(self, values: dict[str, Any]) -> str:
        return private_state_text(self.config, values)
