"""How the simulated model *writes*: the output formats real models and servers produce (the knob
``output_format``; each is described in README.md, "Trying the readers offline", and sim/README.md).
It runs after the role with its own random numbers, so a format never changes a role's decisions."""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any, Literal

OutputFormat = Literal["plain", "inline_think", "reasoning_field", "markdown", "fenced_json",
                       "string_numbers", "chatty", "bulleted_patches", "fractional_scores"]

HEDGE_RATE = 0.03
"""Under ``chatty``: P(a reply that starts with yes or no is preceded by a hedge)."""

_SMALL_TALK = ("Let me know what you'd like to do next!", "Happy to keep going whenever you are.",
               "Hope that helps.", "Anything else I can do?")
_HEDGES = ("Hmm, let me check my notes... ", "Good question! Let me think. ",
           "I shouldn't give too much away, but... ")
_FENCE_PROSE = ("Let me know if anything needs changing.", "This follows the requested format.")
_LEADING_YES_NO = re.compile(r"\W*(?:yes|no)\b", re.I)


def format_rng(request_digest: str, output_format: str) -> random.Random:
    """Random numbers for the format layer alone (the role's draws are untouched)."""
    seed = hashlib.sha256(f"{output_format}|{request_digest}".encode()).digest()[:8]
    return random.Random(int.from_bytes(seed, "big"))


def json_or_none(text: Any) -> Any:
    """``text`` read as JSON, or None when it is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def _json_value(text: str) -> Any:
    value = json_or_none(text)
    return value if isinstance(value, (dict, list)) else None


def _numbers_as_strings(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, dict):
        return {k: _numbers_as_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers_as_strings(v) for v in value]
    return value


def _bold_first_line(text: str) -> str:
    first, sep, rest = text.partition("\n")
    if not first.strip() or first.lstrip().startswith(("**", "#", "-", "*")):
        return text
    return f"**{first.strip()}**{sep}{rest}"


def restyle(message: dict[str, Any], output_format: str, rng: random.Random) -> dict[str, Any]:
    """``message`` (an assistant chat message) as a model writing ``output_format`` sends it."""
    message = dict(message)
    content = message.get("content") or ""
    as_json = _json_value(content) if content else None
    is_text = bool(content.strip()) and as_json is None
    if output_format == "inline_think":
        reasoning = message.pop("reasoning_content", None)
        if reasoning:
            message["content"] = f"<think>\n{reasoning}\n</think>\n\n{content}"
    elif output_format == "reasoning_field":
        if "reasoning_content" in message:
            message["reasoning"] = message.pop("reasoning_content")
    elif output_format == "markdown" and is_text:
        message["content"] = _bold_first_line(content)
    elif output_format == "fenced_json" and as_json is not None:
        message["content"] = f"```json\n{json.dumps(as_json, indent=2)}\n```\n{rng.choice(_FENCE_PROSE)}"
    elif output_format == "string_numbers":
        calls = []
        for call in message.get("tool_calls") or []:
            arguments = _json_value(call["function"]["arguments"])
            if arguments is not None:
                call = {**call, "function": {**call["function"],
                                             "arguments": json.dumps(_numbers_as_strings(arguments))}}
            calls.append(call)
        if calls:
            message["tool_calls"] = calls
    elif output_format == "chatty" and is_text:
        hedge = rng.choice(_HEDGES) if _LEADING_YES_NO.match(content) and rng.random() < HEDGE_RATE else ""
        message["content"] = f"{hedge}{content}\n\n{rng.choice(_SMALL_TALK)}"
    return message
