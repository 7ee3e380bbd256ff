"""Typed values that cross the model-layer boundary.

Everything above ``psit_lib.llm`` sees only these: a request, the result of one call, and
the per-call audit record. They are plain frozen dataclasses so they can be cached, compared
and written into episode records as JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from psit_lib.llm.errors import ModelOutputError


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model wrote it; ``arguments`` stays the raw JSON string."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any]:
        """Arguments as a dict, or a ModelOutputError naming the tool and the JSON problem."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ModelOutputError(
                f"tool call {self.name!r} has arguments that are not valid JSON ({exc.msg})"
            ) from None
        if not isinstance(value, dict):
            raise ModelOutputError(f"tool call {self.name!r} has arguments that are not a JSON object")
        return value

    def to_message(self) -> dict[str, Any]:
        """The OpenAI wire form, for putting the call back into an assistant message."""
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class ChatRequest:
    """Everything that defines one chat-completions call (and therefore its cache key)."""

    role: str
    messages: tuple[dict[str, Any], ...]
    model: str
    temperature: float = 0.3
    max_tokens: int = 2048
    seed: int | None = None
    tools: tuple[dict[str, Any], ...] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None
    """Optional top-level fields of the model's own settings (``llm.model_settings``: reasoning
    effort, a provider's fields), sent only while the server accepts them."""

    def without(self, fields: Any) -> "ChatRequest":
        """This request without the optional ``fields`` (those a server refused)."""
        if not self.extra or not set(self.extra) & set(fields):
            return self
        kept = {k: v for k, v in self.extra.items() if k not in fields}
        return replace(self, extra=kept or None)

    def wire_body(self) -> dict[str, Any]:
        """The JSON body sent to ``/chat/completions`` (without the role header)."""
        body: dict[str, Any] = {"model": self.model, "messages": list(self.messages),
                                "temperature": self.temperature, "max_tokens": self.max_tokens}
        optional = {"seed": self.seed, "tools": list(self.tools) if self.tools else None,
                    "tool_choice": self.tool_choice, "response_format": self.response_format}
        body.update({k: v for k, v in optional.items() if v is not None})
        if self.extra:
            body.update({k: v for k, v in self.extra.items() if k not in body})
        return body

    @cached_property
    def canonical(self) -> str:
        """The request as canonical JSON (the harness's role label and the wire body, keys sorted): what
        the response cache keys and stores. Computed once per request (a frozen dataclass keeps it)."""
        return json.dumps({"role": self.role, **self.wire_body()}, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)

    def describe(self) -> str:
        """A short human description used in error messages (never includes credentials)."""
        last = self.messages[-1].get("content") if self.messages else ""
        last = (last or "") if isinstance(last, str) else json.dumps(last)[:200]
        snippet = last.replace("\n", " ")[:120]
        return (f"role={self.role!r} model={self.model!r} seed={self.seed} "
                f"messages={len(self.messages)} last={snippet!r}")


@dataclass(frozen=True)
class ChatResult:
    """What one call returned. A ``cached`` result carries the usage of the call that made it."""

    content: str
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    finish_reason: str | None = None
    model: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ChatResult":
        return cls(
            content=data.get("content") or "",
            reasoning=data.get("reasoning"),
            tool_calls=tuple(ToolCall(**tc) for tc in data.get("tool_calls") or ()),
            usage=Usage(**(data.get("usage") or {})),
            cached=bool(data.get("cached", False)),
            finish_reason=data.get("finish_reason"),
            model=data.get("model", ""),
        )


@dataclass(frozen=True)
class CallRecord:
    """Audit line for one call inside an episode: who asked, where in the episode, at what cost."""

    role: str
    path: str
    index: int
    seed: int | None
    cached: bool
    prompt_tokens: int
    completion_tokens: int
    error: str | None = None
    read_error: str | None = None
    """Set when the call succeeded but its reply could not be read (a helper role's garbage)."""
    max_tokens: int | None = None
    """The generated-token budget the request carried (what a reply could use before it was cut)."""
    finish_reason: str | None = None
    """Why the reply ended (``length``: cut at ``max_tokens``), as the server said."""
