"""The PSIT agents' handle: send a message, read state, fork from a checkpoint."""

from __future__ import annotations

from typing import Any

from psit_lib.llm.client import ModelSession

from psit_lib.studies.psit.agents.checkpointed import CheckpointedAgent
from psit_lib.studies.psit.agents.config import AgentConfig
from psit_lib.studies.psit.agents.graphs import AgentContext, private_state_text, run_turn


class ChatAgent(CheckpointedAgent):
    """One PSIT agent instance for one episode, with its checkpoints."""

    def __init__(self, config: AgentConfig, *, system_prompt: str, host_role: str) -> None:
        super().__init__()
        self.config = config
        self.system_prompt = system_prompt
        self.host_role = host_role

    async def _turn(self, state: dict[str, Any], session: ModelSession) -> dict[str, Any]:
        context = AgentContext(session=session, config=self.config, system_prompt=self.system_prompt,
                               host_role=self.host_role)
        return dict(await run_turn(state, context))  # type: ignore[arg-type]

    def private_state(self, values: dict[str, Any]) -> str:
        return private_state_text(self.config, values)
