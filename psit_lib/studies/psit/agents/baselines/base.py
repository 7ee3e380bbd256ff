"""What every retrieval baseline shares: the turn graph, forking, the memory block, the clock.

A baseline agent is a LangGraph graph with an in-memory checkpointer, like the PSIT agents:

    recall -> respond -> memorize -> finish

* ``recall``: the memory backend searches its store with the new user message and returns the
  *retrieved block* (plus the store, since some libraries count visits when they search).
* ``respond``: the model answers from the task's system prompt with the retrieved block
  appended (inside ``<retrieved_memories>``), the whole public transcript and the new message,
  exactly like the vanilla agent otherwise. Reasoning is dropped every turn.
* ``memorize``: the backend writes the finished public exchange into its store; libraries call
  the model here (fact extraction, notes, summaries): those *hidden calls* are recorded.
* ``finish``: appends the exchange to the public transcript and logs the turn.

Forking. The backend's whole memory store lives in the checkpointed state as a JSON-serialisable
snapshot (``store``). A turn restores the store from the state it starts from, searches and
writes only a copy, and checkpoints the new snapshot. So every fork branch starts from the
identical memory of the fork checkpoint and never sees another branch's writes, whatever the
library keeps in its own objects (those are scratch workspaces rebuilt from the snapshot).

Only public text enters a store: the user's messages and the agent's public replies.
"""

from __future__ import annotations

import functools

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from psit_lib.studies.psit.prompt_book import PROMPTS
from psit_lib.llm.client import ModelSession
from psit_lib.llm.tokens import count_tokens

from psit_lib.studies.psit.agents.checkpointed import CheckpointedAgent

from psit_lib.studies.psit.agents.baselines.calls import HiddenCall

CLOCK_START = dt.datetime(2025, 1, 6, 9, 0)  # a Monday; the episode's synthetic clock starts here


def turn_time(turn: int) -> dt.datetime:
    """The synthetic time of public exchange ``turn`` (1 is the opening; one minute apart)."""
    return CLOCK_START + dt.timedelta(minutes=turn - 1)


@dataclass(frozen=True)
class BaselineSettings:
    """``window`` (m): messages the library analyses; ``top_k`` (k): memories retrieved."""

    window: int
    top_k: int

    def __post_init__(self) -> None:
        if self.window < 1 or self.top_k < 1:
            raise ValueError(f"baseline settings need window >= 1 and top_k >= 1, got {self}")


@dataclass(frozen=True)
class TurnInput:
    """What a backend may use in a turn: the public history and the new user message."""

    session: ModelSession
    turn: int                            # number of this exchange (1 is the opening)
    history: tuple[dict[str, str], ...]  # public transcript before this turn
    user: str


@dataclass
class Recall:
    block: str                           # the retrieved block ("" when nothing was found)
    store: dict[str, Any]                # the store after searching
    calls: list[HiddenCall] = field(default_factory=list)


@dataclass
class Memorized:
    store: dict[str, Any]
    calls: list[HiddenCall] = field(default_factory=list)


class MemoryBackend(Protocol):
    """One retrieval baseline's memory policy over a JSON-serialisable store."""

    name: str
    settings: BaselineSettings

    def empty_store(self) -> dict[str, Any]: ...

    async def recall(self, store: dict[str, Any], turn: TurnInput) -> Recall: ...

    async def memorize(self, store: dict[str, Any], turn: TurnInput, reply: str) -> Memorized: ...


class BaselineLibraryError(RuntimeError):
    """A memory library failed in a way that would otherwise silently corrupt its memory."""


def memory_block(block: str, library: str) -> str:
    """The retrieved block with the study's guidance for that library (``baseline.<library>_memories``),
    as appended to the system prompt; "(none)" when nothing was retrieved, as in the reference."""
    return PROMPTS.render(f"baseline.{library}_memories", memories=block.strip() or "(none)")


class BaselineState(TypedDict, total=False):
    public: list[dict[str, str]]        # the public transcript (user / assistant)
    store: dict[str, Any]               # snapshot of the backend's memory store
    retrieved_block: str                # the block injected in the latest turn
    hidden_calls: list[dict[str, Any]]  # every hidden library call along this lineage
    turn_log: list[dict[str, Any]]      # per turn: block tokens, hidden calls
    pending_user: str
    reply: str
    turn_calls: list[dict[str, Any]]    # this turn's hidden calls (until finish)


@dataclass
class BaselineContext:
    session: ModelSession
    backend: MemoryBackend
    system_prompt: str
    host_role: str


def _turn_input(state: BaselineState, ctx: BaselineContext) -> TurnInput:
    public = state.get("public", [])
    return TurnInput(session=ctx.session, turn=len(public) // 2 + 1, history=tuple(public),
                     user=state["pending_user"])


async def recall(state: BaselineState, runtime: Runtime[BaselineContext]) -> dict[str, Any]:
    ctx = runtime.context
    turn = _turn_input(state, ctx)
    store = state.get("store") or ctx.backend.empty_store()
    found = await ctx.backend.recall(store, turn)
    return {"store": found.store, "retrieved_block": found.block,
            "turn_calls": [c.as_record(turn.turn) for c in found.calls]}


async def respond(state: BaselineState, runtime: Runtime[BaselineContext]) -> dict[str, Any]:
    ctx = runtime.context
    system = f"{ctx.system_prompt}\n\n{memory_block(state.get('retrieved_block') or '', ctx.backend.name)}"
    messages = [{"role": "system", "content": system}, *state.get("public", []),
                {"role": "user", "content": state["pending_user"]}]
    result = await ctx.session.chat(messages, role=ctx.host_role)
    return {"reply": result.content}


async def memorize(state: BaselineState, runtime: Runtime[BaselineContext]) -> dict[str, Any]:
    ctx = runtime.context
    turn = _turn_input(state, ctx)
    written = await ctx.backend.memorize(state["store"], turn, state.get("reply", ""))
    return {"store": written.store,
            "turn_calls": [*state.get("turn_calls", []), *(c.as_record(turn.turn) for c in written.calls)]}


async def finish(state: BaselineState, runtime: Runtime[BaselineContext]) -> dict[str, Any]:
    public = [*state.get("public", []), {"role": "user", "content": state["pending_user"]},
              {"role": "assistant", "content": state.get("reply", "")}]
    calls = state.get("turn_calls", [])
    block = state.get("retrieved_block", "")
    entry = {"turn": len(public) // 2, "private_state_tokens": count_tokens(block), "private_state": block,
             "retrieved_block_tokens": count_tokens(block), "hidden_calls": len(calls),
             "hidden_prompt_tokens": sum(c["prompt_tokens"] for c in calls),
             "hidden_completion_tokens": sum(c["completion_tokens"] for c in calls)}
    return {"public": public, "hidden_calls": [*state.get("hidden_calls", []), *calls],
            "turn_log": [*state.get("turn_log", []), entry], "pending_user": "", "turn_calls": []}


def build_baseline_graph():
    """The baseline agents' graph with its own checkpointer (compiled once, copied per agent)."""
    return _compiled_baseline_graph().copy(update={"checkpointer": InMemorySaver()})


@functools.lru_cache(maxsize=None)
def _compiled_baseline_graph():
    graph = StateGraph(BaselineState, context_schema=BaselineContext)
    for name, node in (("recall", recall), ("respond", respond), ("memorize", memorize), ("finish", finish)):
        graph.add_node(name, node)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "memorize")
    graph.add_edge("memorize", "finish")
    graph.add_edge("finish", END)
    return graph.compile()


class BaselineAgent(CheckpointedAgent):
    """One retrieval-baseline agent for one episode (own graph, own checkpointer).

    Same interface as :class:`psit_lib.studies.psit.agents.ChatAgent`. The state it returns carries
    ``hidden_calls`` (every hidden library call so far on this lineage, each with its turn,
    kind, tokens and success) and ``turn_log`` entries with the retrieved block's tokens.
    """

    def __init__(self, backend: MemoryBackend, *, name: str, system_prompt: str, host_role: str) -> None:
        self.backend = backend
        self.name = name
        self.system_prompt = system_prompt
        self.host_role = host_role
        self.graph = build_baseline_graph()

    def _context(self, session: ModelSession) -> BaselineContext:
        return BaselineContext(session=session, backend=self.backend,
                               system_prompt=self.system_prompt, host_role=self.host_role)

    def private_state(self, values: dict[str, Any]) -> str:
        """The retrieved block of the latest turn: what the size figure counts for baselines."""
        return values.get("retrieved_block", "") or ""
