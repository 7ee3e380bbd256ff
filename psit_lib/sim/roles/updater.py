"""The workflow agents' memory-update call, simulated.

Sees the memory, recent dialogue, this turn's private reasoning and the public answer (all in
its request) and returns JSON tool calls. It records the secret only if the reasoning it was
shown contains one; it can never know a secret that is not in its request.
"""

from __future__ import annotations

import json
import re

from ..context import SimContext, SimReply
from ..registry import register_role
from .memory_edits import compose_edits, offered_tools, secret_from_reasoning

_BLOCK = re.compile(r"<(working_memory|private_reasoning_this_turn|public_answer)>\n?(.*?)\n?</\1>", re.S)


def _note(answer: str) -> str | None:
    first = next((l.strip() for l in answer.splitlines() if l.strip()), "")
    return f"After my last reply: {first[:80]}" if first else None


@register_role("memory_updater")
def memory_updater(ctx: SimContext) -> SimReply:
    blocks = {name: body for name, body in _BLOCK.findall(ctx.last_user_text())}
    memory = blocks.get("working_memory", "")
    secret = secret_from_reasoning(blocks.get("private_reasoning_this_turn", ""))
    edits = compose_edits(ctx, offered_tools(ctx), memory, secret, _note(blocks.get("public_answer", "")))
    if ctx.chance(ctx.profile.malformed_output_rate):
        return SimReply(content='[{"name": "append_in_memory", "arguments": {"section_title": ')
    payload = [{"name": name, "arguments": args} for name, args in edits]
    return SimReply(content=json.dumps(payload[0] if len(payload) == 1 else payload))
