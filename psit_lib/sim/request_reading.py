"""Request reading: how the simulated model reads its context: private blocks, its own notes and its
own replies (the harness's reading of model replies is elsewhere, and the simulator imports none of it).

Models write a secret down in many ways, so the reader accepts any clear statement of it in a private
place (memory block, kept reasoning, a tool result); public text is never read as "my secret".
"""

from __future__ import annotations

import re
from typing import Any

from .context import message_text

MEMORY_TAGS = ("working_memory", "memory", "private_memory")
REASONING_TAGS = ("private_reasoning", "thinking", "think", "reasoning")

_QUOTED = r"['\"“‘`*]+([^'\"”’`*\n]+?)['\"”’`*]+"
_BARE = r"([A-Za-z][A-Za-z0-9'’ \-/()]*?)"
_END = r"(?=\s*(?:[.,;!?]\s|[.,;!?]?$|\n|\)|</))"
_KIND = r"(?:word|condition|diagnosis|secret|answer|pathology|illness)"
SECRET_STATEMENTS = [
    re.compile(r"<secret>\s*(.*?)\s*</secret>", re.I | re.S),
    re.compile(rf"\bmy secret(?: {_KIND})? is:?\s*{_QUOTED}", re.I),
    re.compile(rf"\bsecret(?: {_KIND})?\s*[:=]\s*(?:{_QUOTED}|{_BARE}{_END})", re.I | re.M),
    re.compile(rf"\b(?:i|i've|i have)\s+(?:chose|chosen|picked|selected|committed to)\s+the\s+{_KIND}\s*:?\s*(?:{_QUOTED}|{_BARE}{_END})", re.I),
    re.compile(rf"\b(?:i|i've|i have)\s+(?:chose|chosen|picked|selected|committed to)\s+{_QUOTED}", re.I),
    re.compile(rf"\bthe (?:secret )?{_KIND} (?:i (?:chose|picked) )?is:?\s+(?:{_QUOTED}|{_BARE}{_END})", re.I),
    re.compile(rf"\bmy secret(?: {_KIND})? is:?\s+{_BARE}{_END}", re.I),
]


def tagged_blocks(text: str, tags: tuple[str, ...]) -> list[str]:
    """Bodies of ``<tag>...</tag>`` blocks (any of ``tags``) in order of appearance."""
    names = "|".join(tags)
    return [m.group(2) for m in re.finditer(rf"<({names})>(.*?)</\1>", text or "", re.I | re.S)]


def secret_statements(text: str) -> list[str]:
    """Every secret the text states, strongest form first (tags before prose)."""
    found: list[str] = []
    for pattern in SECRET_STATEMENTS:
        for match in pattern.finditer(text or ""):
            value = next((g for g in match.groups() if g), "").strip().strip(".,;:")
            if value and value not in found:
                found.append(value)
    return found


def memory_text(system: str) -> str | None:
    """My working memory, if the system prompt holds one."""
    blocks = tagged_blocks(system, MEMORY_TAGS)
    return blocks[0] if blocks else None


def kept_reasoning(messages: list[dict[str, Any]]) -> list[str]:
    """Reasoning I kept from earlier turns: reasoning blocks in the system prompt, and thinking
    written before my earlier replies (oldest first)."""
    kept: list[str] = []
    for message in messages:
        if message.get("role") in ("system", "developer", "assistant"):
            kept.extend(tagged_blocks(message_text(message.get("content")), REASONING_TAGS))
    return kept


def leading_yes_no(text: str) -> bool | None:
    """Yes or no when a reply starts with it ("Yes, I do." / "No."), else None."""
    match = re.match(r"\W*(yes|yeah|yep|no|nope)\b", text or "", re.I)
    if not match:
        return None
    return match.group(1).lower() in ("yes", "yeah", "yep")
