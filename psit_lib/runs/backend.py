"""Connecting a model client to its backend: the one place the harness reaches the simulator.

The model layer (``psit_lib.llm``) talks HTTP through the ``openai`` client and never imports
the simulator. On the ``sim`` backend this module hands it the in-process transport, so the
embedded simulated model answers exactly as a loopback or remote server would.
"""

from __future__ import annotations

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
