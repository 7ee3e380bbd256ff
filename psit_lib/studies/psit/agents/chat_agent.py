"""The PSIT agents' handle: send a message, read state, fork from a checkpoint."""

from __future__ import annotations

import copy
from typing import Any

from psit_lib.llm.client import ModelSession

from psit_lib.studies.psit.agents.checkpointed import CheckpointedAgent
from psit_lib.studies.psit.agents.config import AgentConfig
from psit_lib.studies.psit.agents.graphs import AgentContext, AgentState, private_state_text, run_turn


class ChatAgent(CheckpointedAgent):
    """One agent instance for one episode, with its checkpoints: the state at the end of every
    turn, by id, and each thread's latest (a turn continues from it unless given a checkpoint)."""

    def __init__(self, config: AgentConfig, *, system_prompt: str, host_role: str) -> None:
        self.config = config
        self.system_prompt = system_prompt
        self.host_role = host_role
        self._checkpoints: dict[str, AgentState] = {}
        self._heads: dict[str, str] = {}

    def _context(self, session: ModelSession) -> AgentContext:
        return AgentContext(session=session, config=self.config, system_prompt=self.system_prompt,
                            host_role=self.host_role)

    def private_state(self, values: dict[str, Any]) -> str:
        return private_state_text(self.config, values)

    def _saved(self, thread: str, checkpoint_id: str | None) -> AgentState:
        key = checkpoint_id or self._heads.get(thread)
        if key is None:
            return {}
        if key not in self._checkpoints:
            raise KeyError(f"no checkpoint {key!r} in this agent")
        return self._checkpoints[key]

    async def send(self, text: str, session: ModelSession, *, thread: str = "main",
                   checkpoint_id: str | None = None) -> dict[str, Any]:
        """Run one turn and return the agent's state after it (``state["reply"]`` is the answer);
        with ``checkpoint_id`` the turn forks from that checkpoint, which it never changes (the
        steps replace state values, never edit them in place)."""
        state = await run_turn({**self._saved(thread, checkpoint_id), "pending_user": text}, self._context(session))
        key = str(len(self._checkpoints) + 1)
        self._checkpoints[key], self._heads[thread] = state, key
        return dict(state)

    async def checkpoint_id(self, thread: str = "main") -> str:
        return self._heads[thread]

    async def state(self, thread: str = "main", checkpoint_id: str | None = None) -> dict[str, Any]:
        """A copy of the state at ``checkpoint_id`` (default: the thread's latest)."""
        return copy.deepcopy(dict(self._saved(thread, checkpoint_id)))
