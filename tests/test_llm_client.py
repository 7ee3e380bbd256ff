"""The model layer against real loopback HTTP servers: retries, Retry-After, timeouts,
cache modes, credential hygiene and seeds."""

from __future__ import annotations


import pytest

from psit_lib.runs.backend import make_client
from psit_lib.llm import (CacheMissError, ConfigurationError, LLMClient, LLMSettings,
                          ModelCallError, ModelSession, ResponseCache, derive_seed)
from psit_lib.sim import SimReply, register_role

from loopback import Scripted

SECRET_KEY = "sk-" + "test-fake-key-" + "0123456789abcdef"  # built so no scanner mistakes it for a real key


@register_role("test_random")
def _test_random(ctx) -> SimReply:
    return SimReply(content=f"sample {ctx.rng.randrange(10**9)}")


def http_settings(url: str, **kw) -> LLMSettings:
    base = dict(backend="openai", base_urls=(url,), model="psit-sim", api_key=SECRET_KEY,
                backoff_base=0.01, backoff_max=2.0, max_retries=3, timeout=5.0)
    base.update(kw)
    return LLMSettings(**base)


MESSAGES = [{"role": "user", "content": "hello"}]


async def chat(client: LLMClient, episode="e1", role="test_random"):
    return await ModelSession(client, run_seed=7, episode_id=episode).chat(MESSAGES, role=role)


async def test_retries_on_5xx_then_succeeds(fault_server):
    fault_server.script = [Scripted(503), Scripted(502)]
    client = LLMClient(http_settings(fault_server.url))
    result = await chat(client)
    assert result.content.startswith("sample ")
    assert len(fault_server.requests) == 3
    assert client.stats.retries == 2 and client.stats.calls == 1


@pytest.mark.slow
async def test_honours_retry_after(fault_server):
    fault_server.script = [Scripted(429, {"Retry-After": "1"})]
    client = LLMClient(http_settings(fault_server.url))
    await chat(client)
    first, second = fault_server.requests[0]["time"], fault_server.requests[1]["time"]
    assert second - first >= 0.9


async def test_gives_one_clear_error_after_last_try(fault_server):
    fault_server.script = [Scripted(500)] * 10
    client = LLMClient(http_settings(fault_server.url, max_retries=2))
    with pytest.raises(ModelCallError, match=r"after 3 tries, last: HTTP 500"):
        await chat(client)
    assert len(fault_server.requests) == 3


async def test_client_errors_are_not_retried(fault_server):
    fault_server.script = [Scripted(400)]
    client = LLMClient(http_settings(fault_server.url))
    with pytest.raises(ModelCallError, match="HTTP 400"):
        await chat(client)
    assert len(fault_server.requests) == 1


async def test_timeouts_are_retried_then_reported(fault_server):
    fault_server.script = [Scripted(delay=1.5), Scripted(delay=1.5)]
    client = LLMClient(http_settings(fault_server.url, timeout=0.3, max_retries=1))
    with pytest.raises(ModelCallError, match="timeout"):
        await chat(client)
    assert len(fault_server.requests) == 2


async def test_cache_hits_keep_the_calls_usage_but_spend_nothing(fault_server, tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite", "rw")
    client = LLMClient(http_settings(fault_server.url), cache=cache)
    first = await chat(client)
    second = await chat(client)
    assert len(fault_server.requests) == 1
    assert second.cached and not first.cached
    assert second.content == first.content
    assert second.usage == first.usage and first.usage.completion_tokens > 0  # records stay identical
    assert client.stats.calls == 1 and client.stats.cache_hits == 1
    assert client.stats.prompt_tokens == first.usage.prompt_tokens  # spent once


async def test_cache_off_always_calls(fault_server, tmp_path):
    client = LLMClient(http_settings(fault_server.url), cache=ResponseCache(tmp_path / "c", "off"))
    await chat(client)
    await chat(client)
    assert len(fault_server.requests) == 2


async def test_replay_only_fails_loudly_naming_the_request(fault_server, tmp_path):
    path = tmp_path / "c.sqlite"
    client = LLMClient(http_settings(fault_server.url), cache=ResponseCache(path, "rw"))
    recorded = await chat(client, episode="recorded")
    replay = LLMClient(http_settings(fault_server.url), cache=ResponseCache(path, "replay"))
    assert (await chat(replay, episode="recorded")).content == recorded.content
    with pytest.raises(CacheMissError, match=r"role='test_random'.*last='hello'"):
        await chat(replay, episode="never-recorded")
    assert len(fault_server.requests) == 1


async def test_credentials_never_leak(fault_server, tmp_path):
    path = tmp_path / "c.sqlite"
    settings = http_settings(fault_server.url, max_retries=0)
    client = LLMClient(settings, cache=ResponseCache(path, "rw"))
    await chat(client)
    assert fault_server.requests[0]["headers"].get("authorization") == f"Bearer {SECRET_KEY}"
    assert SECRET_KEY not in repr(settings) and SECRET_KEY not in str(settings.public_dict())
    client.cache.close()
    assert SECRET_KEY.encode() not in path.read_bytes()
    fault_server.script = [Scripted(401)]
    with pytest.raises(ModelCallError) as info:
        await chat(make_client(settings), episode="other")
    assert SECRET_KEY not in str(info.value)


async def test_role_header_is_sent(fault_server):
    await chat(LLMClient(http_settings(fault_server.url)), role="test_random")
    assert fault_server.requests[0]["headers"].get("x-psit-role") == "test_random"


async def test_seeds_differ_by_episode_and_branch_and_reproduce():
    client = make_client(LLMSettings(cache="off"))
    a1 = await chat(client, episode="a")
    a2 = await chat(client, episode="a")
    b = await chat(client, episode="b")
    assert a1.content == a2.content and a1.content != b.content
    session = ModelSession(client, run_seed=7, episode_id="a")
    left, right = session.branch("x"), session.branch("y")
    r_right = await right.chat(MESSAGES, role="test_random")
    r_left = await left.chat(MESSAGES, role="test_random")
    again = ModelSession(client, run_seed=7, episode_id="a")
    assert (await again.branch("x").chat(MESSAGES, role="test_random")).content == r_left.content
    assert r_left.content != r_right.content
    assert len(session.log) == 2


def test_derive_seed_properties():
    seeds = {derive_seed(1, f"ep{i}", "main", j) for i in range(50) for j in range(20)}
    assert len(seeds) == 1000
    assert all(0 <= s < 2**31 for s in seeds)
    assert derive_seed(1, "e", "main", 0) != derive_seed(2, "e", "main", 0)


async def test_in_process_and_loopback_simulator_agree(sim_server_url):
    local = await chat(make_client(LLMSettings(cache="off")))
    remote = await chat(LLMClient(http_settings(sim_server_url)))
    assert local.content == remote.content and local.usage == remote.usage


def test_settings_from_env_and_errors():
    s = LLMSettings.from_env({"PSIT_BACKEND": "openai", "PSIT_BASE_URLS": "http://a/v1, http://b/v1",
                              "PSIT_MODEL": "qwen", "PSIT_API_KEY": SECRET_KEY})
    assert s.base_urls == ("http://a/v1", "http://b/v1") and not s.simulated
    assert LLMSettings.from_env({}).simulated
    with pytest.raises(ConfigurationError, match="PSIT_BASE_URLS"):
        LLMSettings.from_env({"PSIT_BACKEND": "openai"})
    with pytest.raises(ConfigurationError, match="PSIT_CACHE=.sometimes. is not valid"):
        LLMSettings.from_env({"PSIT_CACHE": "sometimes"})


def test_a_real_endpoint_names_its_model():
    """Left at the simulator's name, a real server that ignores model names would answer and the
    run would be labelled simulated: PSIT_BACKEND=openai needs PSIT_MODEL, or takes the first model
    of PSIT_MODEL_ENDPOINTS."""
    with pytest.raises(ConfigurationError, match="PSIT_BACKEND=openai needs PSIT_MODEL"):
        LLMSettings.from_env({"PSIT_BACKEND": "openai", "PSIT_BASE_URLS": "http://a/v1"})
    mapped = LLMSettings.from_env({"PSIT_BACKEND": "openai", "PSIT_MODEL_ENDPOINTS": "qwen3-32b=http://h/v1; m2=http://g/v1"})
    assert mapped.model == "qwen3-32b" and not mapped.simulated
    served_sim = LLMSettings.from_env({"PSIT_BACKEND": "openai", "PSIT_BASE_URLS": "http://a/v1", "PSIT_MODEL": "psit-sim"})
    assert served_sim.simulated
