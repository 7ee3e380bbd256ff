"""Recording test doubles for information-flow tests: what was actually sent to the model."""

from __future__ import annotations

import copy

from psit_lib.llm import ChatResult, LLMClient


class RecordingClient(LLMClient):
    """An LLMClient that remembers every request it was asked to send."""

    def __init__(self, settings, **kwargs):
        if settings.backend == "sim" and "transport" not in kwargs:
            from psit_lib.sim.transport import SimTransport

            kwargs["transport"] = SimTransport()
        super().__init__(settings, **kwargs)
        self.requests = []

    async def chat(self, request):
        self.requests.append(request)
        return await super().chat(request)


class CapturingSession:
    """Wraps a ModelSession: records every request as sent; ``override(role)`` may answer a
    role itself with a ChatResult or plain text (None lets the real session answer)."""

    def __init__(self, inner, sink: list, override=None) -> None:
        self.inner, self.sink, self.override = inner, sink, override

    def branch(self, name: str) -> "CapturingSession":
        return CapturingSession(self.inner.branch(name), self.sink, self.override)

    @property
    def episode_id(self) -> str:
        return self.inner.episode_id

    @property
    def path(self) -> str:
        return self.inner.path

    async def chat(self, messages, **kwargs):
        self.sink.append({"role": kwargs["role"], "messages": copy.deepcopy(list(messages))})
        scripted = self.override(kwargs["role"]) if self.override is not None else None
        if isinstance(scripted, str):
            return ChatResult(content=scripted)
        if scripted is not None:
            return scripted
        return await self.inner.chat(messages, **kwargs)
