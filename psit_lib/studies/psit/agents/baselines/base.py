"""What every retrieval baseline shares: its LangGraph graph (one node per turn), the memory block, the clock.

Only public text enters a store. The whole store lives in the graph's state as a JSON snapshot, so
it is in every checkpoint; a turn reads it from its checkpoint, which LangGraph's saver deserialises
afresh for every run, so no fork branch sees another's writes, whatever a library keeps in its own
objects (scratch workspaces rebuilt from the snapshot).
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from langgraph.runtime import Runtime

from psit_lib.studies.psit.prompt_book import PROMPTS
from psit_lib.llm.client import ModelSession
from psit_lib.llm.tokens import count_tokens

from psit_lib.studies.psit.agents.graph_agent import GraphAgent, one_turn_graph

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


def memory_block(block: str, library: str) -> str:
    """The retrieved block with the study's guidance for that library (``baseline.<library>_memories``),
    as appended to the system prompt; "(none)" when nothing was retrieved, as in the reference."""
    return PROMPTS.render(f"baseline.{library}_memories", memories=block.strip() or "(none)")


class BaselineState(TypedDict, total=False):
    public: list[dict[str, str]]        # the public transcript (user / assistant)
    store: dict[str, Any]               # the library's store, as a JSON snapshot
    retrieved_block: str                # what this turn retrieved (its private state)
    reply: str
    hidden_calls: list[dict[str, Any]]  # every hidden library call on this lineage
    turn_log: list[dict[str, Any]]
    pending_user: str


@dataclass(frozen=True)
class BaselineContext:
    """A turn's runtime context: the branch's model session and the agent's library and prompt."""

    session: ModelSession
    backend: MemoryBackend
    system_prompt: str
    host_role: str


async def baseline_turn(state: BaselineState, runtime: Runtime[BaselineContext]) -> dict[str, Any]:
    """One turn: recall from the store, answer with the retrieved block, memorize the exchange."""
    ctx = runtime.context
    history = state.get("public", [])
    turn = TurnInput(session=ctx.session, turn=len(history) // 2 + 1, history=tuple(history),
                     user=state["pending_user"])
    found = await ctx.backend.recall(state.get("store") or ctx.backend.empty_store(), turn)
    system = f"{ctx.system_prompt}\n\n{memory_block(found.block, ctx.backend.name)}"
    result = await ctx.session.chat([{"role": "system", "content": system}, *history,
                                     {"role": "user", "content": turn.user}], role=ctx.host_role)
    written = await ctx.backend.memorize(found.store, turn, result.content)
    calls = [c.as_record(turn.turn) for c in (*found.calls, *written.calls)]
    public = [*history, {"role": "user", "content": turn.user}, {"role": "assistant", "content": result.content}]
    entry = {"turn": turn.turn, "private_state_tokens": count_tokens(found.block), "private_state": found.block,
             "retrieved_block_tokens": count_tokens(found.block), "hidden_calls": len(calls),
             "hidden_prompt_tokens": sum(c["prompt_tokens"] for c in calls),
             "hidden_completion_tokens": sum(c["completion_tokens"] for c in calls)}
    return {"public": public, "store": written.store, "retrieved_block": found.block, "reply": result.content,
            "hidden_calls": [*state.get("hidden_calls", []), *calls], "turn_log": [*state.get("turn_log", []), entry],
            "pending_user": ""}


@functools.cache
def compiled_graph() -> Any:
    """The retrieval baselines' graph (one node per turn), compiled once per process."""
    return one_turn_graph(BaselineState, BaselineContext, baseline_turn)


class BaselineAgent(GraphAgent):
    """One retrieval-baseline agent for one episode. Its state carries ``hidden_calls`` (every
    hidden library call on this lineage, each with its turn, kind, tokens and success) and
    ``turn_log`` entries with the retrieved block's tokens."""

    def __init__(self, backend: MemoryBackend, *, name: str, system_prompt: str, host_role: str) -> None:
        super().__init__(compiled_graph(), name=name)
        self.backend = backend
        self.system_prompt = system_prompt
        self.host_role = host_role

    def context(self, session: ModelSession) -> BaselineContext:
        return BaselineContext(session=session, backend=self.backend, system_prompt=self.system_prompt,
                               host_role=self.host_role)

    def private_state(self, values: dict[str, Any]) -> str:
        """The retrieved block of the latest turn: what the size figure counts for baselines."""
        return values.get("retrieved_block", "") or ""
