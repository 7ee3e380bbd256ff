"""The workflow agents' memory-update call, simulated: it records the secret only if the reasoning in
its request states one, so it can never know a secret that is not in its request.
"""

from __future__ import annotations

import json
import re

from ..context import SimContext, SimReply
from ..request_reading import secret_statements, tagged_blocks
from ..registry import register_role
from .memory_edits import compose_edits, offered_tools


def _block(text: str, tag: str) -> str:
    found = tagged_blocks(text, (tag,))
    return found[0].strip("\n") if found else ""


def _note(answer: str) -> str | None:
    first = next((l.strip() for l in answer.splitlines() if l.strip()), "")
    return f"After my last reply: {first[:80]}" if first else None


def asked_to_update_memory(ctx: SimContext) -> bool:
    """The request hands me a working memory and this turn's answer, and wants edits back."""
    text = ctx.last_user_text()
    return bool(tagged_blocks(text, ("working_memory",))) and bool(
        re.search(r"<(public_answer|private_reasoning_this_turn)>", text, re.I))


@register_role("memory_updater", recognise=asked_to_update_memory, tier=0)
def memory_updater(ctx: SimContext) -> SimReply:
    text = ctx.last_user_text()
    memory = _block(text, "working_memory")
    stated = secret_statements(_block(text, "private_reasoning_this_turn"))
    edits = compose_edits(ctx, offered_tools(ctx), memory, stated[0] if stated else None,
                          _note(_block(text, "public_answer")))
    if ctx.chance(ctx.profile.malformed_output_rate):
        return SimReply(content='[{"name": "append_in_memory", "arguments": {"section_title": ')
    payload = [{"name": name, "arguments": args} for name, args in edits]
    return SimReply(content=json.dumps(payload[0] if len(payload) == 1 else payload))
