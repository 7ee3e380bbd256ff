"""What every retrieval baseline shares: the turn, forking, the memory block, the clock.

Only public text enters a store. The whole store lives in the checkpointed state as a JSON snapshot
and a turn gets a deep copy of it, so no fork branch sees another's writes, whatever a library keeps
in its own objects (scratch workspaces rebuilt from the snapshot).
"""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Protocol

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


def memory_block(block: str, library: str) -> str:
    """The retrieved block with the study's guidance for that library (``baseline.<library>_memories``),
    as appended to the system prompt; "(none)" when nothing was retrieved, as in the reference."""
    return PROMPTS.render(f"baseline.{library}_memories", memories=block.strip() or "(none)")


class BaselineAgent(CheckpointedAgent):
    """One retrieval-baseline agent for one episode. Its state carries ``hidden_calls`` (every
    hidden library call on this lineage, each with its turn, kind, tokens and success) and
    ``turn_log`` entries with the retrieved block's tokens."""

    def __init__(self, backend: MemoryBackend, *, name: str, system_prompt: str, host_role: str) -> None:
        super().__init__()
        self.backend = backend
        self.name = name
        self.system_prompt = system_prompt
        self.host_role = host_role

    async def _turn(self, state: dict[str, Any], session: ModelSession) -> dict[str, Any]:
        history = state.get("public", [])
        turn = TurnInput(session=session, turn=len(history) // 2 + 1, history=tuple(history),
                         user=state["pending_user"])
        found = await self.backend.recall(copy.deepcopy(state.get("store") or self.backend.empty_store()), turn)
        system = f"{self.system_prompt}\n\n{memory_block(found.block, self.backend.name)}"
        result = await session.chat([{"role": "system", "content": system}, *history,
                                     {"role": "user", "content": turn.user}], role=self.host_role)
        written = await self.backend.memorize(found.store, turn, result.content)
        calls = [c.as_record(turn.turn) for c in (*found.calls, *written.calls)]
        public = [*history, {"role": "user", "content": turn.user}, {"role": "assistant", "content": result.content}]
        entry = {"turn": turn.turn, "private_state_tokens": count_tokens(found.block), "private_state": found.block,
                 "retrieved_block_tokens": count_tokens(found.block), "hidden_calls": len(calls),
                 "hidden_prompt_tokens": sum(c["prompt_tokens"] for c in calls),
                 "hidden_completion_tokens": sum(c["completion_tokens"] for c in calls)}
        return {**state, "public": public, "store": written.store, "retrieved_block": found.block,
                "reply": result.content, "hidden_calls": [*state.get("hidden_calls", []), *calls],
                "turn_log": [*state.get("turn_log", []), entry], "pending_user": ""}

    def private_state(self, values: dict[str, Any]) -> str:
        """The retrieved block of the latest turn: what the size figure counts for baselines."""
        return values.get("retrieved_block", "") or ""
