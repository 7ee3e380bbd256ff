"""Invariants of the simulator machinery (SPEC §8): determinism, seeds, temperature,
roles, profiles, wire format, and that a reply depends only on the request."""

from __future__ import annotations

import json
import random

import pytest

from psit_lib.sim import SimReply, complete, get_profile, known_roles, register_role
from psit_lib.sim.context import SimContext
from psit_lib.sim.engine import handle_http
from psit_lib.sim.profiles import UnknownProfileError


@register_role("test_choice")
def _choice(ctx: SimContext) -> SimReply:
    word = ctx.weighted_choice(["planet", "garden", "silver", "copper"], [8.0, 4.0, 2.0, 1.0])
    return SimReply(content=word, reasoning=f"I pick {word}.",
                    tool_calls=[("note", {"text": word})] if ctx.tools else [])


def body(seed=1, temperature=0.7, **extra):
    return {"model": "psit-sim", "messages": [{"role": "user", "content": "pick"}],
            "seed": seed, "temperature": temperature, **extra}


def content(reply):
    return reply["choices"][0]["message"]["content"]


def test_deterministic_for_request_and_seed():
    assert complete(body(), "test_choice", "default") == complete(body(), "test_choice", "default")


def test_different_seeds_give_different_samples():
    picks = {content(complete(body(seed=s), "test_choice", "default")) for s in range(40)}
    assert len(picks) >= 3


def test_low_temperature_collapses_to_the_mode():
    cold = [content(complete(body(seed=s, temperature=0.05), "test_choice", "default")) for s in range(60)]
    hot = [content(complete(body(seed=s, temperature=2.0), "test_choice", "default")) for s in range(60)]
    assert cold.count("planet") == 60
    assert hot.count("planet") < 45 and len(set(hot)) >= 3


def test_reply_depends_only_on_the_request():
    first = complete(body(seed=3), "test_choice", "default")
    for s in range(20):  # unrelated traffic in between must not matter
        complete(body(seed=s), "test_choice", "sloppy")
    random.seed(12345)
    assert complete(body(seed=3), "test_choice", "default") == first


def test_wire_format_reasoning_tools_and_usage():
    tools = [{"type": "function", "function": {"name": "note", "parameters": {"type": "object"}}}]
    reply = complete(body(tools=tools), "test_choice", "default")
    msg = reply["choices"][0]["message"]
    assert msg["reasoning_content"].startswith("I pick")
    call = msg["tool_calls"][0]
    assert call["type"] == "function" and json.loads(call["function"]["arguments"])["text"] == msg["content"]
    assert reply["choices"][0]["finish_reason"] == "tool_calls"
    assert reply["usage"]["prompt_tokens"] > 0 and reply["usage"]["completion_tokens"] > 0


def test_reasoning_off_profile_hides_reasoning():
    msg = complete(body(), "test_choice", "no_reasoning")["choices"][0]["message"]
    assert "reasoning_content" not in msg


def test_unknown_role_gets_a_valid_minimal_reply():
    assert content(complete(body(), "no-such-role", "default")) == "OK."
    as_json = complete(body(response_format={"type": "json_object"}), None, "default")
    assert json.loads(content(as_json)) == {}


def test_bad_requests_and_profiles_are_clear_400s():
    status, payload = handle_http("POST", "/v1/chat/completions", {}, b'{"messages": []}')
    assert status == 400 and "messages" in payload["error"]["message"]
    status, payload = handle_http("POST", "/v1/chat/completions", {"X-PSIT-Profile": "nope"},
                                  json.dumps(body()).encode())
    assert status == 400 and "unknown simulator profile" in payload["error"]["message"]
    assert handle_http("GET", "/v1/models", {}, b"")[0] == 200
    assert handle_http("GET", "/v1/other", {}, b"")[0] == 404
    with pytest.raises(UnknownProfileError):
        get_profile("nope")


def test_role_registry_lists_roles_and_refuses_duplicates():
    assert "test_choice" in known_roles()
    with pytest.raises(ValueError, match="twice"):
        register_role("test_choice")(lambda ctx: SimReply())


@pytest.mark.slow
def test_the_loopback_server_takes_hundreds_of_simultaneous_connections():
    import concurrent.futures
    import json as _json
    import urllib.request

    from psit_lib.sim.server import running_server

    body = _json.dumps({"model": "psit-sim", "messages": [{"role": "user", "content": "hi"}]}).encode()

    def call(url):
        request = urllib.request.Request(url + "/chat/completions", data=body,
                                         headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status

    with running_server() as url, concurrent.futures.ThreadPoolExecutor(max_workers=300) as pool:
        statuses = list(pool.map(call, [url] * 300))
    assert statuses == [200] * 300
