"""Runaways are bounded on a real server: every host reply (turns and answers at the fork) and the
candidate list are capped by role (a one-word reveal never gets 2048 tokens), every call carries the chat
template's turn markers as stop sequences, a model's own ``max_tokens`` and a call's own stand,
and the simulator's requests are unchanged (its draws depend on them)."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import given, strategies as st

from loopback import HandlerServer, QuietHandler, send_json
from psit_lib.llm import LLMClient, LLMSettings, ModelSession
from psit_lib.llm.model_settings import REPLY_CAP, ROLE_CAPS, STOP_SEQUENCES, ModelRequestSettings, role_cap
from psit_lib.sim.engine import handle_http

MESSAGES = [{"role": "user", "content": "What was your word?"}]


class RecordingServer(HandlerServer):
    """Answers from the simulator and keeps every request body."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        lock, outer = threading.Lock(), self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                with lock:
                    outer.bodies.append(json.loads(raw))
                send_json(self, *handle_http("POST", self.path, dict(self.headers.items()), raw))

        self._serve(Handler)


@pytest.fixture
def server():
    server = RecordingServer()
    yield server
    server.close()


def client_for(url: str, model: str = "qwen-test", own: dict | None = None) -> LLMClient:
    return LLMClient(LLMSettings(backend="openai", base_urls=(url,), model=model, cache="off", max_retries=0,
                                 timeout=10.0, model_settings={m: ModelRequestSettings.model_validate(s)
                                                               for m, s in (own or {}).items()}))


async def ask(client: LLMClient, role: str, branch: str | None = None, **kw) -> None:
    session = ModelSession(client, run_seed=1, episode_id="e")
    await (session.branch(branch) if branch else session).chat(MESSAGES, role=role, **kw)
    await client.close_connections()


async def test_every_host_reply_is_capped_and_the_agents_own_bookkeeping_is_not(server):
    client = client_for(server.url)
    await ask(client, "hangman_host", "reveal")
    await ask(client, "diagnosis_host", "confirm-3")
    await ask(client, "hangman_host")  # an ordinary turn of the game
    await ask(client, "memory_updater", "reveal")  # the agent's own bookkeeping at the fork
    await ask(client, "candidate_generator", "candidates")
    await ask(client, "amem_evolution")  # a memory baseline's own JSON (ran to 2048 repeated keys)
    assert [b["max_tokens"] for b in server.bodies] == [REPLY_CAP, REPLY_CAP, REPLY_CAP, 2048,
                                                        ROLE_CAPS["candidate_generator"], REPLY_CAP]
    assert all(b["stop"] == list(STOP_SEQUENCES) for b in server.bodies)


async def test_a_models_own_max_tokens_and_a_calls_own_stand(server):
    await ask(client_for(server.url, own={"qwen-test": {"max_tokens": 4096}}), "hangman_host", "reveal")
    await ask(client_for(server.url), "hangman_host", "reveal", max_tokens=64)
    assert [b["max_tokens"] for b in server.bodies] == [4096, 64]


async def test_the_simulator_served_over_http_gets_its_requests_unchanged(server):
    await ask(client_for(server.url, model="psit-sim"), "hangman_host", "reveal")
    assert server.bodies[0]["max_tokens"] == 2048 and "stop" not in server.bodies[0]


@given(st.sampled_from(["hangman_host", "diagnosis_host", "acc_agent", "memory_updater", "orchestrator",
                        "candidate_generator", "amem_evolution"]))
def test_hosts_and_short_roles_are_capped_and_no_other_role_is(role):
    expected = ROLE_CAPS.get(role, REPLY_CAP if role.endswith("_host") else None)
    assert role_cap(role) == expected
    assert role_cap(role) is None or role_cap(role) <= REPLY_CAP
