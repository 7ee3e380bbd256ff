"""Reading the memory updater's reply: JSON tool calls, as an object or a list of them."""

from __future__ import annotations

import json
import re
from typing import Any

from psit_lib.llm.errors import ModelOutputError

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def parse_tool_calls_json(text: str) -> list[tuple[str, dict[str, Any]]]:
    """``[(name, arguments), ...]`` from the reply; ModelOutputError says what is wrong."""
    cleaned = _FENCE.sub("", (text or "").strip()).strip()
    if not cleaned:
        raise ModelOutputError("the memory update reply is empty (expected JSON tool calls)")
    try:
        value = json.loads(cleaned)
    except json.JSONDecodeError:
        start = min((i for i in (cleaned.find("["), cleaned.find("{")) if i >= 0), default=-1)
        try:
            value = json.loads(cleaned[start:]) if start >= 0 else None
        except json.JSONDecodeError as exc:
            raise ModelOutputError(f"the memory update reply is not valid JSON ({exc.msg})") from None
        if value is None:
            raise ModelOutputError("the memory update reply holds no JSON") from None
    items = value if isinstance(value, list) else [value]
    calls = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ModelOutputError(f"memory update item {i} is not an object with a 'name'")
        arguments = item.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                raise ModelOutputError(f"arguments of {item['name']!r} are not valid JSON") from None
        if not isinstance(arguments, dict):
            raise ModelOutputError(f"arguments of {item['name']!r} must be a JSON object")
        calls.append((item["name"], arguments))
    return calls
