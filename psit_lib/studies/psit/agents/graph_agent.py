"""The handle every fork-test agent is: a compiled LangGraph graph, its checkpointer and one thread.

A turn is one run of the graph on the episode's thread (``thread_id`` = the episode id), and the
state after it is a checkpoint of LangGraph's own checkpointer (``runs.checkpoints``: an in-memory
saver per episode, or the notebook's SQLite file). Durability ``"exit"``: one checkpoint per turn,
the states the fork test forks from, not one per node. A fork is LangGraph time travel: a run
started from an earlier checkpoint by its ``checkpoint_id``, which writes a new checkpoint whose
parent is that one and never changes it. The savers serialise every checkpoint when they write it,
so nothing a caller does to a returned state can reach a checkpoint or another branch.

Graphs are compiled once per process (one per agent kind); each agent binds its episode's saver
to a copy (``CompiledStateGraph.copy``, no recompilation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from psit_lib.runs.checkpoints import episode_checkpointer, is_kept

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph.state import CompiledStateGraph

    from psit_lib.llm.client import ModelSession


def one_turn_graph(state_schema: type, context_schema: type, turn: Any) -> Any:
    """A graph of one node, the agent's turn (START -> turn -> END), compiled: the shape of every agent
    whose turn is one step (the non-tool PSIT agents, the retrieval baselines)."""
    from langgraph.graph import END, START, StateGraph

    graph: StateGraph[Any, Any, Any, Any] = StateGraph(state_schema, context_schema=context_schema)
    graph.add_node("turn", turn)
    graph.add_edge(START, "turn")
    graph.add_edge("turn", END)
    return graph.compile()


class AgentStateError(ValueError):
    """An agent's state lacks what the fork test reads (a key missing, or not what it must hold)."""


class AgentStepLimitError(RuntimeError):
    """A turn ran past its graph's recursion limit: it has no reply, so the episode fails."""


@dataclass(frozen=True)
class CheckpointRef:
    """One LangGraph checkpoint of an episode's thread (``id``) and the checkpoint its turn continued
    or forked from (``parent``; None for the first turn): recorded for every turn and fork branch,
    they are the episode's checkpoint tree as data."""

    id: str
    parent: str | None


@dataclass(frozen=True)
class Turn:
    """What one turn returns: the agent's state after it (the fork test's view: ``reply``, ``public``,
    ``turn_log``, ...) and the checkpoint that holds it."""

    values: dict[str, Any]
    checkpoint: CheckpointRef

    @property
    def reply(self) -> str:
        return str(self.values.get("reply") or "")


class GraphAgent:
    """One agent for one episode: ``send`` runs a turn, ``state`` reads a checkpoint. Subclasses give
    the graph's input and runtime context for a turn, and may map a graph's state to the fork test's
    view (:meth:`view`) and name their private state (:meth:`private_state`)."""

    recursion_limit: int | None = None
    """LangGraph's ``recursion_limit`` for one turn (None: LangGraph's default)."""

    def __init__(self, graph: CompiledStateGraph[Any, Any, Any, Any], *, name: str) -> None:
        self.name = name
        self.saver = episode_checkpointer()
        self.graph = graph.copy(update={"checkpointer": self.saver})
        self.thread_id: str | None = None
        self.head: str | None = None  # the latest main-line checkpoint, where a turn without an id continues

    # -- what a subclass says ------------------------------------------------------------------
    def turn_input(self, text: str) -> dict[str, Any]:
        return {"pending_user": text}

    def context(self, session: ModelSession) -> Any:
        raise NotImplementedError

    def view(self, values: dict[str, Any]) -> dict[str, Any]:
        """The fork test's view of a state of the graph (here the state itself)."""
        return values

    def private_state(self, values: dict[str, Any]) -> str:
        raise NotImplementedError

    # -- running and reading ---------------------------------------------------------------------
    def run_config(self, checkpoint_id: str | None = None) -> RunnableConfig:
        """The LangGraph config of this episode's thread, at ``checkpoint_id`` when given."""
        configurable: dict[str, Any] = {"thread_id": self.thread_id}
        if checkpoint_id is not None:
            configurable["checkpoint_id"] = checkpoint_id
        config: RunnableConfig = {"configurable": configurable}
        if self.recursion_limit is not None:
            config["recursion_limit"] = self.recursion_limit
        return config

    async def send(self, text: str, session: ModelSession, *, checkpoint_id: str | None = None) -> Turn:
        """Run one turn on ``text``. Without ``checkpoint_id`` it continues the main line (the latest
        turn sent without one); with it, the turn forks from that checkpoint, which it never changes."""
        from langgraph.errors import GraphRecursionError

        if self.thread_id is None:
            self.thread_id = session.episode_id
            if is_kept(self.saver):  # a retried episode starts afresh on the run's file
                await self.saver.adelete_thread(self.thread_id)
        start = checkpoint_id or self.head
        values: dict[str, Any] | None = None
        saved: str | None = None
        try:
            # the checkpoints a run makes, with their values: the last is the one saved on exit
            async for part in self.graph.astream(
                    self.turn_input(text), self.run_config(start), context=self.context(session),
                    durability="exit", stream_mode="checkpoints", version="v2"):
                if part["type"] == "checkpoints" and (config := part["data"]["config"]) is not None:
                    saved = config["configurable"]["checkpoint_id"]
                    values = part["data"]["values"]
        except GraphRecursionError:
            raise AgentStepLimitError(f"{self.name} ran past LangGraph's recursion limit of {self.recursion_limit} "
                                      "steps in one turn, so the turn has no reply") from None
        if values is None or saved is None:
            raise RuntimeError(f"{self.name}'s graph ended a turn without a state")
        if checkpoint_id is None:
            self.head = saved
        return Turn(self.view(values), CheckpointRef(saved, start))

    async def state(self, checkpoint_id: str | None = None) -> dict[str, Any]:
        """The state saved at ``checkpoint_id`` (default: the main line's latest turn), a fresh copy:
        the saver deserialises it."""
        if (checkpoint_id or self.head) is None:
            raise KeyError(f"{self.name} has run no turn yet, so it has no checkpoint")
        snapshot = await self.graph.aget_state(self.run_config(checkpoint_id or self.head))
        if not snapshot.values:
            raise KeyError(f"no checkpoint {checkpoint_id!r} on {self.name}'s thread {self.thread_id!r}")
        return self.view(dict(snapshot.values))
