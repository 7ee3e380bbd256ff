"""The forkable handle every agent graph of the workbook shares.

A retrieval baseline is a compiled LangGraph graph with its own checkpointer (the four PSIT
agents keep their own checkpoints, see ``chat_agent.ChatAgent``). One turn is one graph run on
a thread; a fork is a run started from an earlier checkpoint, so every branch starts from the
identical state and never changes the checkpoint it forked from. Subclasses say only which
context their graph nodes receive and what counts as their private state.
"""

from __future__ import annotations

from typing import Any

from psit_lib.llm.client import ModelSession


class CheckpointedAgent:
    graph: Any

    def _context(self, session: ModelSession) -> Any:
        raise NotImplementedError

    def private_state(self, values: dict[str, Any]) -> str:
        raise NotImplementedError

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
        # Forks start from turn boundaries only, so the state is saved once, when the turn ends
        # (not after every node: serialising the growing state at each step cost more CPU
        # than the rest of the harness).
        state = await self.graph.ainvoke({"pending_user": text}, self._config(thread, checkpoint_id),
                                         context=self._context(session), durability="exit")
        return dict(state)

    async def checkpoint_id(self, thread: str = "main") -> str:
        snapshot = await self.graph.aget_state(self._config(thread, None))
        return snapshot.config["configurable"]["checkpoint_id"]

    async def state(self, thread: str = "main", checkpoint_id: str | None = None) -> dict[str, Any]:
        snapshot = await self.graph.aget_state(self._config(thread, checkpoint_id))
        return dict(snapshot.values)
