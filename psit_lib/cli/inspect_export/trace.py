"""One sample's messages and events, built in the order the episode made them, for Inspect's viewer.

Inspect reads a fork from its events: an anchor at the checkpoint, then one span of type ``branch``
per branch that opens with a ``BranchEvent`` naming the anchor; :func:`inspect_ai.event.timeline_build`
turns them into the timeline the viewer draws (the branches hang off the checkpoint). Its messages
view shows ``sample.messages`` as one list, so there each branch's question carries its marker in
the message metadata.

A record keeps each call's role, tokens and cache hit, and the episode's wall time, but not when
each call ran: the events are laid out in call order over the episode's wall time, parallel lanes
(the yes/no branches, ACC's agents) side by side (:data:`TIMES`, said in every sample's metadata).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from inspect_ai.event import (AnchorEvent, BranchEvent, Event, InfoEvent, ModelEvent, SpanBeginEvent, SpanEndEvent,
                              ToolEvent)
from inspect_ai.model import (ChatCompletionChoice, ChatMessage, ChatMessageAssistant, ChatMessageTool,
                              ChatMessageUser, GenerateConfig, ModelOutput, ModelUsage)
from inspect_ai.tool import ToolCall

TIMES = ("the record keeps the episode's wall time, not each call's: the transcript lays the calls out in the "
         "order they were made over that time, parallel branches and agents side by side")


def usage_of(calls: list[dict[str, Any]]) -> ModelUsage:
    """The tokens of some recorded calls as Inspect counts them."""
    prompt = sum(int(c.get("prompt_tokens") or 0) for c in calls)
    completion = sum(int(c.get("completion_tokens") or 0) for c in calls)
    return ModelUsage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion)


class Calls:
    """An episode's recorded model calls by path (``main``, ``main/reveal``, ``main/acc`` ...), each
    path's in the order made; a reader takes those whose text it shows, one by one."""

    def __init__(self, calls: list[dict[str, Any]]) -> None:
        self._by_path: dict[str, list[dict[str, Any]]] = {}
        for call in sorted(calls, key=lambda c: (str(c.get("path")), int(c.get("index") or 0))):
            self._by_path.setdefault(str(call.get("path")), []).append(call)

    def of(self, path: str, role: str | None = None) -> list[dict[str, Any]]:
        """The calls made on ``path`` (by ``role``), in order."""
        return [c for c in self._by_path.get(path, []) if role is None or c.get("role") == role]

    def matched(self, path: str, role: str | None, n: int) -> list[dict[str, Any] | None]:
        """The calls of ``path`` (by ``role``) for ``n`` replies in order; None for each when their
        number is not ``n`` (a retried or unread reply): a call is never paired with the wrong text."""
        found = self.of(path, role)
        return list(found) if len(found) == n else [None] * n


class Trace:
    """Messages and events of one sample. ``say`` adds a message; an assistant message made by a
    model call also adds that call as a :class:`ModelEvent` (its input, its output, its tokens)."""

    def __init__(self, key: str, model: str) -> None:
        self.key = key
        self.model = model
        self.messages: list[ChatMessage] = []
        self.events: list[Event] = []
        self._slots: list[int] = []  # per event: its place in time, in model calls from the start
        self._clock = 0
        self._spans: list[str] = []
        self._count = 0

    def _id(self) -> str:
        """A stable id (the same export writes the same file)."""
        self._count += 1
        return hashlib.sha256(f"{self.key}#{self._count}".encode()).hexdigest()[:22]

    def _add(self, event: Event) -> Event:
        event.uuid = self._id()
        event.span_id = self._spans[-1] if self._spans else None
        self.events.append(event)
        self._slots.append(self._clock)
        return event

    # -- structure ---------------------------------------------------------------------------
    @contextmanager
    def span(self, name: str, kind: str = "agent") -> Iterator[str]:
        """A named stretch of the episode (an agent's turns, a branch)."""
        span_id = self._id()
        self._add(SpanBeginEvent(id=span_id, parent_id=self._spans[-1] if self._spans else None, name=name,
                                 type=kind))
        self._spans.append(span_id)
        try:
            yield span_id
        finally:
            self._spans.pop()
            self._add(SpanEndEvent(id=span_id))

    def checkpoint(self) -> str:
        """Mark the point branches start from; its anchor id."""
        anchor = self._id()
        self._add(AnchorEvent(anchor_id=anchor))
        return anchor

    @contextmanager
    def branch(self, name: str, anchor: str) -> Iterator[None]:
        """A branch from ``anchor``: Inspect's ``timeline_branch`` shape."""
        with self.span(name, "branch"):
            self._add(BranchEvent(from_anchor=anchor))
            yield

    @contextmanager
    def side_by_side(self) -> Iterator[Any]:
        """Lanes that ran at once: each ``lane()`` starts where the block started; after the block
        the clock stands at the longest lane's end."""
        start, ends = self._clock, [self._clock]

        @contextmanager
        def lane() -> Iterator[None]:
            self._clock = start
            try:
                yield
            finally:
                ends.append(self._clock)

        yield lane
        self._clock = max(ends)

    # -- content -----------------------------------------------------------------------------
    def say(self, message: ChatMessage, *, call: dict[str, Any] | None = None,
            context: list[ChatMessage] | None = None) -> ChatMessage:
        """Add a message; an assistant message with ``context`` (what the model was given) is also
        the model call ``call`` that wrote it."""
        self.messages.append(message)
        if isinstance(message, ChatMessageAssistant) and context is not None:
            self.model_call(message, context, call)
        return message

    def model_call(self, reply: ChatMessageAssistant, context: list[ChatMessage], call: dict[str, Any] | None) -> None:
        usage = usage_of([call]) if call else None
        output = ModelOutput(model=self.model, usage=usage, choices=[ChatCompletionChoice(
            message=reply, stop_reason="tool_calls" if reply.tool_calls else "stop")])
        self._add(ModelEvent(model=self.model, role=(call or {}).get("role"), input=list(context), tools=[],
                             tool_choice="auto" if reply.tool_calls else "none", config=GenerateConfig(),
                             output=output, cache="read" if (call or {}).get("cached") else None,
                             error=(call or {}).get("error")))
        self._clock += 1

    def tool(self, call: ToolCall, result: str, *, ok: bool = True) -> ChatMessageTool:
        """A tool call's run and its result (the message the model reads next)."""
        self._add(ToolEvent(id=call.id, function=call.function, arguments=call.arguments, result=result))
        message = ChatMessageTool(content=result, tool_call_id=call.id, function=call.function,
                                  metadata=None if ok else {"ok": False})
        self.messages.append(message)
        return message

    def info(self, title: str, data: Any) -> None:
        """A note in the transcript: the private state, what an agent was shown, a search's result.
        Text is shown as written (fenced), anything else as data."""
        shown = f"```text\n{data}\n```" if isinstance(data, str) else data
        self._add(InfoEvent(source=title, data=shown))

    def user(self, text: str, **metadata: Any) -> ChatMessageUser:
        return ChatMessageUser(content=text, metadata=metadata or None)

    def assistant(self, text: str, tool_calls: list[ToolCall] | None = None, **metadata: Any) -> ChatMessageAssistant:
        return ChatMessageAssistant(content=text, model=self.model, tool_calls=tool_calls or None,
                                    metadata=metadata or None)

    def tool_call(self, function: str, arguments: Any) -> ToolCall:
        return ToolCall(id=self._id(), function=function,
                        arguments=arguments if isinstance(arguments, dict) else {"value": arguments})

    # -- time --------------------------------------------------------------------------------
    def timed(self, start: datetime, seconds: float) -> None:
        """Lay the events over ``seconds`` from ``start`` (see :data:`TIMES`)."""
        step = seconds / max(1, max(self._slots, default=0) + 1)
        for event, slot in zip(self.events, self._slots):
            event.timestamp = start + timedelta(seconds=slot * step)
            event.working_start = slot * step
            if isinstance(event, (ModelEvent, ToolEvent)):  # a call takes its slot
                event.completed = event.timestamp + timedelta(seconds=step)
