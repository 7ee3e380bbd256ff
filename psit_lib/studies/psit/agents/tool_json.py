"""Reading the memory updater's reply: JSON tool calls, as an object or a list of them, bare,
fenced or followed by prose."""

from __future__ import annotations

import json
import re
from typing import Any

from psit_lib.llm.errors import ModelOutputError
from psit_lib.llm.reply_readers import read_json_value

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def parse_tool_calls_json(text: str) -> list[tuple[str, dict[str, Any]]]:
    """``[(name, arguments), ...]`` from the reply; ModelOutputError says what is wrong."""
    if not (text or "").strip():
        raise ModelOutputError("the memory update reply is empty (expected JSON tool calls)")
    value = read_json_value(text)
    if value is None:
        cleaned = _FENCE.sub("", text.strip()).strip()
        try:
            json.loads(cleaned)
            reason = "holds no JSON object or list"
        except json.JSONDecodeError as exc:
            reason = f"is not valid JSON ({exc.msg})"
        raise ModelOutputError(f"the memory update reply {reason}")
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
