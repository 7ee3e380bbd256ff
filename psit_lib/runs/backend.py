"""Connecting a model client to its backend: the one place the harness reaches the simulator (the
in-process transport), so the embedded model answers exactly as a real server would."""

from __future__ import annotations

from typing import Any

from psit_lib.llm.cache import ResponseCache
from psit_lib.llm.client import LLMClient
from psit_lib.llm.settings import LLMSettings


def make_client(settings: LLMSettings | None = None, *, cache: ResponseCache | None = None) -> LLMClient:
    """A client for ``settings`` (default: from the environment), wired to its backend."""
    settings = settings or LLMSettings.from_env()
    transport = None
    if settings.backend == "sim":
        from psit_lib.sim.transport import SimTransport

        transport = SimTransport()
    return LLMClient(settings, cache=cache, transport=transport)


def list_served_models(settings: LLMSettings, base_url: str, timeout: float = 10.0) -> list[dict[str, Any]]:
    """What ``GET <base_url>/models`` lists, through the ``openai`` client's ``models.list()``;
    on the ``sim`` backend the in-process simulator answers, as it answers chat calls."""
    import httpx2
    import openai

    transport = None
    if settings.backend == "sim":
        from psit_lib.sim.engine import handle_http

        def answer(request: httpx2.Request) -> httpx2.Response:
            status, payload = handle_http(request.method, request.url.path, dict(request.headers), request.read())
            return httpx2.Response(status, json=payload)

        transport = httpx2.MockTransport(answer)
    key = settings.api_key.get_secret_value() if settings.api_key else "not-needed"
    with httpx2.Client(transport=transport, timeout=timeout) as http:
        client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, http_client=http, timeout=timeout)
        return [m.model_dump() for m in client.models.list()]
