"""A real run is sized by what its server reports: slots become calls in flight per replica, a
measured decoding speed a timeout; a setting the user made stands; a server that reports nothing
gets one line saying what the run uses and how to change it."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from loopback import HandlerServer, QuietHandler, send_json
from psit_lib.llm import ConfigurationError, LLMSettings
from psit_lib.llm.replicas import ReplicaPool
from psit_lib.llm.server_limits import (MIN_TIMEOUT, TIMEOUT_SAFETY, ServerLimits, format_endpoint_slots,
                                        plan_sizing, probe, read_models_context, read_props, read_speed,
                                        server_root)
from psit_lib.llm.settings import parse_endpoint_slots


class FakeServer(HandlerServer):
    """Answers GET routes from a table (others 404) and chat completions with ``completion``."""

    def __init__(self, routes: dict, completion: dict | None = None) -> None:
        self.seen: list[str] = []
        outer = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                outer.seen.append(self.path)
                if self.path in routes:
                    send_json(self, 200, routes[self.path])
                else:
                    send_json(self, 404, {"error": "not found"})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.seen.append("POST " + self.path)
                send_json(self, 200, completion or {"choices": []})

        self._serve(Handler)


LLAMA_PROPS = {"total_slots": 2, "default_generation_settings": {"n_ctx": 8192, "params": {}}, "model_alias": "m"}
LLAMA_REPLY = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "one two"}}],
               "usage": {"completion_tokens": 16}, "timings": {"predicted_per_second": 8.0}}


def test_a_llama_cpp_server_reports_slots_context_and_its_measured_speed():
    server = FakeServer({"/props": LLAMA_PROPS}, LLAMA_REPLY)
    try:
        limits = probe(server.url, "m")
    finally:
        server.close()
    assert limits == ServerLimits(server.url, "llama.cpp", 2, 8192, 8.0)
    # one short completion per slot, sent together, measured the speed with every slot busy
    assert server.seen.count("POST /v1/chat/completions") == 2


def test_a_vllm_server_reports_its_context_but_no_slots():
    server = FakeServer({"/v1/models": {"data": [{"id": "other", "max_model_len": 4096},
                                                 {"id": "m", "max_model_len": 32768}]}})
    try:
        limits = probe(server.url, "m")
    finally:
        server.close()
    assert (limits.server, limits.slots, limits.context) == ("vllm", None, 32768)


def test_an_ollama_server_reports_the_context_of_a_loaded_model():
    server = FakeServer({"/v1/models": {"data": [{"id": "m"}]},
                         "/api/ps": {"models": [{"name": "m", "context_length": 4096}]}})
    try:
        limits = probe(server.url, "m")
    finally:
        server.close()
    assert (limits.server, limits.slots, limits.context) == ("ollama", None, 4096)


def test_a_server_that_reports_nothing_and_a_dead_one_report_nothing():
    server = FakeServer({})
    try:
        assert probe(server.url, "m") == ServerLimits(server.url)
    finally:
        server.close()
    assert probe("http://127.0.0.1:9/v1", "m", timeout=0.5) == ServerLimits("http://127.0.0.1:9/v1")


def test_readers_take_only_what_the_server_wrote():
    assert read_props(LLAMA_PROPS) == (2, 8192)
    assert read_props({"total_slots": 0}) == (None, None)
    assert read_props({"total_slots": True}) == (None, None)
    assert read_props([1, 2]) == (None, None)
    assert read_models_context({"data": [{"id": "x", "meta": {"n_ctx": 4096}}]}, "m") == 4096  # the only model
    assert read_models_context({"data": [{"id": "x", "max_model_len": 1}, {"id": "y"}]}, "m") is None
    assert read_speed({"timings": {"predicted_per_second": 12.5}}, 9.0) == 12.5
    assert read_speed({"usage": {"completion_tokens": 16}}, 2.0) == 8.0
    assert read_speed({"usage": {}}, 2.0) is None
    assert server_root("http://h:8080/v1/") == "http://h:8080"


def test_reported_slots_and_speed_size_the_run():
    limits = [ServerLimits("http://a/v1", "llama.cpp", 2, 8192, 8.0)]
    sizing = plan_sizing(limits, env={}, concurrency=32, timeout=120, max_tokens=2048)
    assert sizing.endpoint_slots == {"http://a/v1": 2}
    assert sizing.timeout == TIMEOUT_SAFETY * 2048 / 8.0
    assert "2 at http://a/v1" in sizing.message and "PSIT_TIMEOUT" in sizing.message
    assert "\n" not in sizing.message


def test_a_fast_server_never_shortens_the_timeout():
    limits = [ServerLimits("http://a/v1", "llama.cpp", 4, 8192, 5000.0)]
    assert plan_sizing(limits, env={}, concurrency=32, timeout=120, max_tokens=2048).timeout == MIN_TIMEOUT


def test_what_the_user_set_stands():
    limits = [ServerLimits("http://a/v1", "llama.cpp", 2, 8192, 8.0)]
    env = {"PSIT_ENDPOINT_CONCURRENCY": "5", "PSIT_TIMEOUT": "30"}
    sizing = plan_sizing(limits, env=env, concurrency=32, timeout=30, max_tokens=2048)
    assert sizing.endpoint_slots == {} and sizing.timeout is None
    assert "5 (PSIT_ENDPOINT_CONCURRENCY)" in sizing.message and "timeout 30s" in sizing.message


def test_a_server_that_reports_nothing_gets_one_line_saying_what_the_run_uses_and_how_to_change_it():
    sizing = plan_sizing([ServerLimits("http://v/v1", "vllm", None, 32768)], env={}, concurrency=32,
                         timeout=120, max_tokens=2048)
    assert sizing.endpoint_slots == {} and sizing.timeout is None
    assert "\n" not in sizing.message
    for said in ("up to 32 calls in flight", "timeout 120s", "PSIT_ENDPOINT_CONCURRENCY", "PSIT_TIMEOUT",
                 "reported no slot count"):
        assert said in sizing.message


@given(st.dictionaries(st.from_regex(r"http://h[0-9]{1,3}(:[0-9]{2,5})?/v1", fullmatch=True),
                       st.integers(1, 4096), min_size=1, max_size=5))
def test_per_replica_slots_round_trip_through_the_environment(slots):
    assert parse_endpoint_slots(format_endpoint_slots(slots)) == slots


async def test_per_replica_slots_from_the_environment_limit_each_replica():
    env = {"PSIT_BACKEND": "openai", "PSIT_BASE_URLS": "http://a/v1,http://b/v1", "PSIT_MODEL": "m",
           "PSIT_ENDPOINT_CONCURRENCY": "http://a/v1=1,http://b/v1=3"}
    settings = LLMSettings.from_env(env)
    assert settings.endpoint_concurrency is None
    assert (settings.slots_for("http://a/v1"), settings.slots_for("http://b/v1")) == (1, 3)
    pool = ReplicaPool(settings.base_urls, slots={u: settings.slots_for(u) for u in settings.base_urls})
    taken = [await pool.slot() for _ in range(4)]
    assert sorted(taken) == ["http://a/v1", "http://b/v1", "http://b/v1", "http://b/v1"]
    assert pool.pick() is None
    with pytest.raises(ConfigurationError, match="PSIT_ENDPOINT_CONCURRENCY entry"):
        LLMSettings.from_env({**env, "PSIT_ENDPOINT_CONCURRENCY": "http://a/v1=0"})


def test_preflight_sizes_the_run_and_hands_the_kernels_the_result(monkeypatch):
    from psit_lib.cli.preflight import check_settings

    server = FakeServer({"/props": LLAMA_PROPS, "/v1/models": {"data": [{"id": "m"}]}}, LLAMA_REPLY)
    for name in ("PSIT_ENDPOINT_CONCURRENCY", "PSIT_TIMEOUT", "PSIT_CONCURRENCY", "PSIT_MODEL_SETTINGS",
                 "PSIT_PROMPTS_FILE", "PSIT_MODEL_ENDPOINTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PSIT_BACKEND", "openai")
    monkeypatch.setenv("PSIT_BASE_URLS", server.url)
    monkeypatch.setenv("PSIT_MODEL", "m")
    said: list[str] = []
    try:
        settings = check_settings(say=said.append)
    finally:
        server.close()
    assert settings.slots_for(server.url) == 2 and settings.timeout == TIMEOUT_SAFETY * 2048 / 8.0
    import os

    assert os.environ["PSIT_ENDPOINT_CONCURRENCY"] == f"{server.url}=2"
    assert LLMSettings.from_env().slots_for(server.url) == 2  # what a notebook kernel reads
    assert len(said) == 1 and "2 at" in said[0]


async def test_a_server_that_reports_slower_decoding_lengthens_the_timeout_and_never_shortens_it():
    from psit_lib.llm import ChatRequest, LLMClient

    slow = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "word"}}],
            "usage": {"completion_tokens": 20}, "timings": {"predicted_per_second": 2.0, "predicted_n": 20}}
    server = FakeServer({}, slow)
    client = LLMClient(LLMSettings(backend="openai", base_urls=(server.url,), model="m", cache="off", timeout=10.0))
    request = ChatRequest(role="r", messages=({"role": "user", "content": "hi"},), model="m", max_tokens=100)
    try:
        assert client.timeout_for(request) == 10.0  # nothing reported yet: the setting
        await client.chat(request)
    finally:
        await client.aclose()
        server.close()
    assert client.timeout_for(request) == TIMEOUT_SAFETY * 100 / 2.0
    short = ChatRequest(role="r", messages=request.messages, model="m", max_tokens=4)
    assert client.timeout_for(short) == 10.0


class HeldServer(HandlerServer):
    """Holds a completion that may be long (``max_tokens`` 100) for ``hold`` seconds; answers short ones
    (``max_tokens`` 4) at once, reporting the slow decoding speed ``speed``."""

    def __init__(self, hold: float, speed: float) -> None:
        import json
        import time

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                if body.get("max_tokens") == 100:
                    time.sleep(hold)
                send_json(self, 200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": "word"}}],
                                      "usage": {"completion_tokens": 20},
                                      "timings": {"predicted_per_second": speed, "predicted_n": 20}})

        self._serve(Handler)


@pytest.mark.slow
async def test_an_attempt_on_the_wire_gets_more_time_when_the_server_slows_down(caplog):
    """The timeout follows the decoding speed measured during the run, calls already sent included: a
    reply of up to 100 tokens sent with the 0.5 s setting (no speed known yet) is not cut off at 0.5 s
    when, meanwhile, another reply reports 200 tokens/s (4 x 100 tokens at that speed: 2 s)."""
    import asyncio

    from psit_lib.llm import ChatRequest, LLMClient

    server = HeldServer(hold=1.2, speed=200.0)
    client = LLMClient(LLMSettings(backend="openai", base_urls=(server.url,), model="m", cache="off", timeout=0.5,
                                   max_retries=0))
    long = ChatRequest(role="r", messages=({"role": "user", "content": "a long one"},), model="m", max_tokens=100)
    short = ChatRequest(role="r", messages=({"role": "user", "content": "a short one"},), model="m", max_tokens=4)
    caplog.set_level("WARNING", logger="psit_lib.llm")
    try:
        assert client.timeout_for(long) == 0.5
        pending = asyncio.ensure_future(client.chat(long))
        await asyncio.sleep(0.1)
        await client.chat(short)  # reports the slower speed while the long one is on the wire
        assert client.timeout_for(long) == TIMEOUT_SAFETY * 100 / 200.0
        result = await pending
    finally:
        await client.aclose()
        server.close()
    assert result.content == "word" and client.stats.faults == {}
    said = [r.getMessage() for r in caplog.records if "decode at" in r.getMessage()]
    assert len(said) == 1 and "of 100 tokens times out after 2s" in said[0] and "it was 0.5s" in said[0]


@pytest.mark.slow
async def test_without_a_slower_speed_the_attempt_times_out_at_its_setting():
    """The contrast: the same long reply alone keeps the 0.5 s it was sent with, and times out."""
    from psit_lib.llm import ChatRequest, LLMClient, ModelCallError

    server = HeldServer(hold=1.2, speed=200.0)
    client = LLMClient(LLMSettings(backend="openai", base_urls=(server.url,), model="m", cache="off", timeout=0.5,
                                   max_retries=0))
    long = ChatRequest(role="r", messages=({"role": "user", "content": "a long one"},), model="m", max_tokens=100)
    try:
        with pytest.raises(ModelCallError, match="timeout after 0.5s"):
            await client.chat(long)
    finally:
        await client.aclose()
        server.close()
