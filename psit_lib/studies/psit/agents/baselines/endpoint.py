"""Where a memory library's own model calls go, for the run's model session.

On the simulator backend the libraries talk to a loopback simulator server (one per process,
started on first use on 127.0.0.1 and kept for the life of the process), exactly as they would
talk to a real OpenAI-compatible server; on a real backend they use the run's first endpoint,
model and key. Every library call carries the simulator's role and profile headers (real
servers ignore them), so the simulated model knows it is answering a memory library.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from psit_lib.llm.client import PROFILE_HEADER, ROLE_HEADER, ModelSession, sim_profile_for

LIBRARY_ROLE = "memory_library"

_server_lock = threading.Lock()
_server_url: str | None = None
_clients: dict[tuple, object] = {}
_clients_lock = threading.Lock()


@dataclass(frozen=True)
class LibraryEndpoint:
    base_url: str
    api_key: str = field(repr=False, default="not-needed")
    model: str = "psit-sim"
    headers: tuple[tuple[str, str], ...] = ()
    max_retries: int = 2
    timeout: float = 120.0


def loopback_base_url() -> str:
    """Base URL of this process's loopback simulator server (started on the first call)."""
    global _server_url
    with _server_lock:
        if _server_url is None:
            from psit_lib.sim.server import make_server

            server = make_server(host="127.0.0.1", port=0)
            threading.Thread(target=server.serve_forever, name="psit-sim-loopback", daemon=True).start()
            _server_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        return _server_url


def library_endpoint(session: ModelSession, role: str = LIBRARY_ROLE) -> LibraryEndpoint:
    """The endpoint a library should call for this session's run."""
    settings = session.client.settings
    headers = ((ROLE_HEADER, role), (PROFILE_HEADER, sim_profile_for(session.model, settings)))
    if settings.backend == "sim":
        return LibraryEndpoint(loopback_base_url(), model=session.model, headers=headers,
                               max_retries=settings.max_retries, timeout=settings.timeout)
    key = settings.api_key.get_secret_value() if settings.api_key else "not-needed"
    return LibraryEndpoint(settings.base_urls[0], api_key=key, model=settings.model, headers=headers,
                           max_retries=settings.max_retries, timeout=settings.timeout)


def openai_client(endpoint: LibraryEndpoint):
    """A shared synchronous ``openai.OpenAI`` for ``endpoint`` (thread-safe, pooled)."""
    key = (endpoint.base_url, endpoint.api_key, endpoint.headers, endpoint.max_retries, endpoint.timeout)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            import openai

            client = openai.OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key,
                                   default_headers=dict(endpoint.headers),
                                   max_retries=endpoint.max_retries, timeout=endpoint.timeout)
            _clients[key] = client
        return client
