"""A thin handle on an agent graph: send a message, read state, fork from a checkpoint."""

from __future__ import annotations

from typing import Any

from psit_lib.llm.client import ModelSession

from .config import AgentConfig
from .graphs import AgentContext, build_graph, private_state_text


class ChatAgent:
    """One agent instance for one episode (its own graph and checkpointer)."""

    def __init__(self, config: AgentConfig, *, system_prompt: str, host_role: str) -> None:
        self.config = config
        self.system_prompt = system_prompt
        self.host_role = host_role
        self.graph = build_graph(config)

    @staticmethod
    def _config(thread: str, checkpoint_id: str | None) -> dict[str, Any]:
        configurable = {"thread_id": thread}
        if checkpoint_id:
            configurable["checkpoint_id"] = checkpoint_id
        return {"configurable": configurable}

    async def send(self, text: str, session: ModelSession, *, thread: str = "main",
                   checkpoint_id: str | None = None) -> dict[str, Any]:
        """Run one turn and return the agent's state after it (``state["reply"]`` is the answer).

        With ``checkpoint_id`` the turn forks from that checkpoint: it starts from exactly the
        state saved there, and what it writes never changes that checkpoint.
        """
        context = AgentContext(session=session, config=self.config,
                               system_prompt=self.system_prompt, host_role=self.host_role)
        state = await self.graph.ainvoke({"pending_user": text}, self._config(thread, checkpoint_id),
                                         context=context)
        return dict(state)

    async def checkpoint_id(self, thread: str = "main") -> str:
        snapshot = await self.graph.aget_state(self._config(thread, None))
        return snapshot.config["configurable"]["checkpoint_id"]

    async def state(self, thread: str = "main", checkpoint_id: str | None = None) -> dict[str, Any]:
        snapshot = await self.graph.aget_state(self._config(thread, checkpoint_id))
        return dict(snapshot.values)

    def private_state(self, values: dict[str, Any]) -> str:
        return private_state_text(self.config, values)  # type: ignore[arg-type]
