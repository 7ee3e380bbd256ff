"""The forkable handle every agent of the workbook shares: a turn function plus its checkpoints.

The state at the end of every turn is a checkpoint; a fork is a turn started from an earlier
one, so every branch starts from the identical state and never changes the checkpoint it forked
from (a turn replaces state values, never edits them in place). Subclasses say only how one turn
runs and what counts as their private state.
"""

from __future__ import annotations

import copy
from typing import Any

from psit_lib.llm.client import ModelSession


class CheckpointedAgent:
    def __init__(self) -> None:
        self._checkpoints: dict[str, dict[str, Any]] = {}
        self._head: str | None = None  # the latest turn's checkpoint, where the next turn continues

    async def _turn(self, state: dict[str, Any], session: ModelSession) -> dict[str, Any]:
        """The state after one turn from ``state`` (a checkpoint plus ``pending_user``)."""
        raise NotImplementedError

    def private_state(self, values: dict[str, Any]) -> str:
        raise NotImplementedError

    def _saved(self, checkpoint_id: str | None) -> dict[str, Any]:
        key = checkpoint_id or self._head
        if key is None:
            return {}
        if key not in self._checkpoints:
            raise KeyError(f"no checkpoint {key!r} in this agent")
        return self._checkpoints[key]

    async def send(self, text: str, session: ModelSession, *, checkpoint_id: str | None = None) -> dict[str, Any]:
        """Run one turn and return the agent's state after it (``state["reply"]`` is the answer);
        with ``checkpoint_id`` the turn forks from that checkpoint, which it never changes."""
        state = await self._turn({**self._saved(checkpoint_id), "pending_user": text}, session)
        self._head = str(len(self._checkpoints) + 1)
        self._checkpoints[self._head] = state
        return dict(state)

    async def checkpoint_id(self) -> str:
        if self._head is None:
            raise KeyError("no turn has run yet, so there is no checkpoint")
        return self._head

    async def state(self, checkpoint_id: str | None = None) -> dict[str, Any]:
        """A copy of the state at ``checkpoint_id`` (default: the latest turn's)."""
        return copy.deepcopy(dict(self._saved(checkpoint_id)))
