"""The candidate generator: proposes extra secrets that fit the public constraints.

The protocol asks for these only when the task's own data gives too few, and re-checks every
proposal against the constraints. The request carries the constraints as JSON inside
``<constraints>`` tags with a ``"task"`` key; each task registers a proposer here.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

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


@register_role("candidate_generator")
def candidate_generator(ctx: SimContext) -> SimReply:
    text = ctx.last_user_text()
    found = _CONSTRAINTS.search(text)
    count = int(m.group(1)) if (m := _COUNT.search(text)) else 5
    try:
        constraints = json.loads(found.group(1)) if found else {}
    except json.JSONDecodeError:
        constraints = {}
    proposer = PROPOSERS.get(str(constraints.get("task", "")))
    proposals = proposer(ctx, constraints, count) if proposer else []
    return SimReply(content=json.dumps(proposals),
                    reasoning=f"I list {len(proposals)} options that fit the constraints.")
