"""Faults are retried, never scored (issue: real endpoints).

Against loopback servers that misbehave the way real ones do: every fault kind is retried and
counted (``sum(faults) == retries + failures``); a small fork study with 10% of requests
faulted gives the same outcome table as a fault-free run; several replicas share the load and
a dead one is failed over.
"""

from __future__ import annotations

import pytest

from loopback import FAULT_KINDS, FaultServer, RandomFaults, scripted_fault
from psit_lib.llm import LLMClient, LLMSettings, ModelCallError, ModelSession
from psit_lib.llm.replicas import ReplicaPool
from psit_lib.llm.settings import parse_model_endpoints
from psit_lib.runs import RunStore, run_episodes
from psit_lib.runs.records import read_records
from fork_rows import fork_rows
from psit_lib.studies.psit.protocol.experiment import ForkTestParams, fork_episode_fn, plan_fork_episodes
from psit_lib.studies.psit.protocol.records import ForkEpisode
from psit_lib.studies.psit.tasks.hangman import HangmanTask

MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True, scope="module")
def warm_simulator():
    """The fault servers run the simulator in this process: load its tokenizer and word lists
    first, or the first calls of a cold process outlast the short test timeout (0.5 s, kept
    below the injected 0.8 s hangs) and count as timeouts."""
    from psit_lib.sim.engine import complete

    complete({"messages": [{"role": "user", "content": HangmanTask().opener()}]}, None, "default")


def settings(*urls: str, **kw) -> LLMSettings:
    base = dict(backend="openai", base_urls=urls, model="psit-sim", backoff_base=0.01, backoff_max=0.5,
                max_retries=4, timeout=0.5, cache="off")
    return LLMSettings(**{**base, **kw})


@pytest.mark.parametrize("kind", FAULT_KINDS)
async def test_every_fault_kind_is_retried_and_counted(fault_server, kind):
    fault_server.script = [scripted_fault(kind, hang_seconds=1.0)]
    client = LLMClient(settings(fault_server.url))
    result = await ModelSession(client, run_seed=1, episode_id="e").chat(MESSAGES, role="generic")
    assert result.content
    expected = {"http_429": "http_429", "http_500": "http_5xx", "http_503": "http_5xx", "hang": "timeout",
                "reset": "connection_error", "malformed_json": "malformed_body", "truncated": "connection_error",
                "empty_choices": "no_choices"}[kind]
    assert client.stats.faults == {expected: 1} and client.stats.retries == 1 and client.stats.failures == 0
    await client.aclose()


async def test_a_client_error_is_not_retried_and_the_counters_add_up(fault_server):
    fault_server.script = [scripted_fault("http_503"), scripted_fault("http_500")] + [pytest.importorskip("loopback").Scripted(400)]
    client = LLMClient(settings(fault_server.url))
    with pytest.raises(ModelCallError, match="HTTP 400"):
        await ModelSession(client, run_seed=1, episode_id="e").chat(MESSAGES, role="generic")
    stats = client.stats
    assert stats.faults == {"http_5xx": 2, "http_4xx": 1} and stats.retries == 2 and stats.failures == 1
    assert sum(stats.faults.values()) == stats.retries + stats.failures
    await client.aclose()


async def _fork_table(url: str, tmp_path, name: str, **kw):
    task = HangmanTask()
    params = ForkTestParams(agents=["vanilla", "private_cot", "workflow_overwrite"], n_episodes=4)
    client = LLMClient(settings(url, **kw))
    raw = await run_episodes(plan_fork_episodes(task, params, ["psit-sim"]), fork_episode_fn(task, params),
                             store=RunStore(tmp_path / name), client=client, run_seed=0, concurrency=4,
                             progress=False)
    await client.aclose()
    table = fork_rows(read_records(raw, ForkEpisode))[["episode_id", "agent", "outcome", "revealed"]]
    return table, client.stats


@pytest.mark.slow
async def test_a_fork_study_under_ten_percent_faults_gives_the_fault_free_table(tmp_path):
    clean, faulty = FaultServer(), FaultServer()
    faulty.random_faults = RandomFaults(0.10, seed=3, hang_seconds=0.8)
    try:
        expected, _ = await _fork_table(clean.url, tmp_path, "clean")
        table, stats = await _fork_table(faulty.url, tmp_path, "faulty", max_retries=8)
    finally:
        clean.close()
        faulty.close()
    assert table.equals(expected)
    injected = faulty.random_faults.injected
    assert sum(injected.values()) >= 5 and len(injected) >= 4          # the faults really happened
    assert stats.failures == 0 and stats.retries == sum(stats.faults.values()) >= sum(injected.values()) - 1


async def test_the_least_busy_healthy_replica_is_chosen_and_a_dead_one_passed_over():
    now = [0.0]
    pool = ReplicaPool(["a", "b", "c"], cooldown=5, clock=lambda: now[0])
    first, second, third = await pool.slot(), await pool.slot(), await pool.slot()
    assert (first, second, third) == ("a", "b", "c")
    pool.release("b")
    assert await pool.slot() == "b"
    pool.release("a", failed=True)
    pool.release("b")
    pool.release("c")
    assert pool.pick() == "b" and pool.healthy_count() == 2
    now[0] = 6.0
    assert pool.healthy_count() == 3


@pytest.mark.slow
async def test_calls_fail_over_from_a_dead_replica_and_spread_over_live_ones():
    live_a, live_b = FaultServer(), FaultServer()
    dead = "http://127.0.0.1:9/v1"  # nothing listens on the discard port: connection refused
    client = LLMClient(settings(dead, live_a.url, live_b.url, max_retries=2))
    try:
        import asyncio

        await asyncio.gather(*(ModelSession(client, run_seed=1, episode_id=f"e{i}").chat(MESSAGES, role="generic")
                               for i in range(12)))
    finally:
        await client.aclose()
        live_a.close()
        live_b.close()
    assert client.stats.failures == 0 and client.stats.faults.get("connection_refused", 0) >= 1
    assert len(live_a.requests) > 0 and len(live_b.requests) > 0


def test_models_can_live_on_different_servers():
    mapping = parse_model_endpoints("qwen3-32b=http://h1:8000/v1,http://h2:8000/v1; gpt-oss-20b=http://h3:8000/v1")
    s = LLMSettings(backend="openai", base_urls=("http://default/v1",), model_endpoints=mapping)
    assert s.urls_for("qwen3-32b") == ("http://h1:8000/v1", "http://h2:8000/v1")
    assert s.urls_for("gpt-oss-20b") == ("http://h3:8000/v1",) and s.urls_for("other") == ("http://default/v1",)
    env = {"PSIT_BACKEND": "openai", "PSIT_MODEL_ENDPOINTS": "m=http://x/v1"}
    assert LLMSettings.from_env(env).urls_for("m") == ("http://x/v1",)
    with pytest.raises(Exception, match="PSIT_MODEL_ENDPOINTS entry"):
        parse_model_endpoints("no-equals-sign")
