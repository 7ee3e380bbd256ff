"""An LLMClient that remembers every request it was asked to send (for information-flow tests)."""

from __future__ import annotations

from psit_lib.llm import LLMClient


class RecordingClient(LLMClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.requests = []

    async def chat(self, request):
        self.requests.append(request)
        return await super().chat(request)
