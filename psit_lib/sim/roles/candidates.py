"""The candidate generator: proposes extra secrets that fit the public constraints.

The model works out the game from the constraints' JSON in the request (its ``"task"`` key, else their
shape), as a real model would; each game registers a proposer here.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from ..formats import json_or_none
from ..context import SimContext, SimReply
from ..registry import register_role

Proposer = Callable[[SimContext, dict[str, Any], int], list[str]]
PROPOSERS: dict[str, Proposer] = {}
_CONSTRAINTS = re.compile(r"<constraints>(.*?)</constraints>", re.S)
_COUNT = re.compile(r"propose\s+(\d+)", re.I)


def register_proposer(task: str) -> Callable[[Proposer], Proposer]:
    def decorate(fn: Proposer) -> Proposer:
        PROPOSERS[task] = fn
        return fn
    return decorate


def _constraints(text: str) -> dict[str, Any] | None:
    found = _CONSTRAINTS.search(text) or re.search(r"(\{.*\})", text, re.S)
    value = json_or_none(found.group(1)) if found else None
    return value if isinstance(value, dict) else None


def _game_of(constraints: dict[str, Any]) -> str:
    if constraints.get("task") in PROPOSERS:
        return str(constraints["task"])
    if "length" in constraints and "known" in constraints:
        return "hangman"
    if "present_evidences" in constraints or "absent_evidences" in constraints:
        return "diagnosis"
    return ""


def asked_for_candidates(ctx: SimContext) -> bool:
    """The call asks me to list possible secrets that fit some stated constraints."""
    text = ctx.last_user_text()
    return bool(_COUNT.search(text)) and _constraints(text) is not None and "secret" in text.lower()


@register_role("candidate_generator", recognise=asked_for_candidates, tier=0)
def candidate_generator(ctx: SimContext) -> SimReply:
    text = ctx.last_user_text()
    count = int(m.group(1)) if (m := _COUNT.search(text)) else 5
    constraints = _constraints(text) or {}
    proposer = PROPOSERS.get(_game_of(constraints))
    proposals = proposer(ctx, constraints, count) if proposer else []
    return SimReply(content=json.dumps(proposals),
                    reasoning=f"I list {len(proposals)} options that fit the constraints.")
