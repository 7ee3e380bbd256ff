"""In-process transport: the ``openai`` client talks to the simulator with no socket."""

from __future__ import annotations

import json

import httpx2

from .engine import handle_http


class SimTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that answers every request from :func:`engine.handle_http`."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        raw = await request.aread()
        status, payload = handle_http(request.method, request.url.path, dict(request.headers), raw)
        return httpx2.Response(status, content=json.dumps(payload).encode(),
                               headers={"content-type": "application/json"}, request=request)
