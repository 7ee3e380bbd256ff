"""Small and slow servers: a timeout starts when a request can be served.

A llama.cpp server started with ``-np 2`` runs two requests at once and queues the rest; a
client that sends more waits in that queue, and the wait counts against its timeout, so calls
that never started time out together. With ``PSIT_ENDPOINT_CONCURRENCY`` the client keeps the
extra calls itself, untimed, earlier episodes first. A timeout never marks a lone replica down
(there is nowhere to fail over to); with several, one that times out repeatedly is passed over.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from loopback import FaultServer, HandlerServer, QuietHandler, scripted_fault, send_json
from psit_lib.llm import ConfigurationError, LLMClient, LLMSettings, ModelCallError, ModelSession
from psit_lib.llm.replicas import TIMEOUTS_BEFORE_COOLDOWN, ReplicaPool
from psit_lib.sim.engine import handle_http

MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True, scope="module")
def warm_simulator():
    """Load the simulator's word lists before timing anything (a cold first call is slow)."""
    from psit_lib.sim.engine import complete

    complete({"messages": MESSAGES}, None, "default")


class SlotServer(HandlerServer):
    """A loopback server like ``llama-server -np <slots>``: it accepts every connection but runs
    ``slots`` requests at a time, each taking ``seconds``; the others wait in its queue."""

    def __init__(self, slots: int = 1, seconds: float = 0.3) -> None:
        self.gate = threading.Semaphore(slots)
        self.running = 0
        self.max_running = 0
        self.served = 0
        lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                with outer.gate:
                    with lock:
                        outer.running += 1
                        outer.max_running = max(outer.max_running, outer.running)
                    time.sleep(seconds)
                    status, payload = handle_http("POST", self.path, dict(self.headers.items()), raw)
                    with lock:
                        outer.running -= 1
                        outer.served += 1
                send_json(self, status, payload)


        self._serve(Handler)



def settings(*urls: str, **kw) -> LLMSettings:
    base = dict(backend="openai", base_urls=urls, model="psit-sim", backoff_base=0.01, backoff_max=0.2,
                max_retries=0, timeout=0.5, cache="off", concurrency=16)
    return LLMSettings(**{**base, **kw})


async def _calls(client: LLMClient, n: int):
    return await asyncio.gather(*(ModelSession(client, run_seed=1, episode_id=f"e{i}").chat(MESSAGES, role="generic")
                                  for i in range(n)), return_exceptions=True)


@pytest.mark.slow
async def test_calls_waiting_for_a_slot_in_the_client_do_not_time_out():
    """One slot, 0.3 s a request, timeout 0.5 s: 8 calls at once all succeed, without a retry,
    and the server never runs more than one."""
    server = SlotServer(slots=1, seconds=0.3)
    client = LLMClient(settings(server.url, endpoint_concurrency=1))
    try:
        started = time.monotonic()
        results = await _calls(client, 8)
        elapsed = time.monotonic() - started
    finally:
        await client.aclose()
        server.close()
    assert all(not isinstance(r, BaseException) and r.content for r in results), results
    assert client.stats.faults == {} and client.stats.retries == 0 and client.stats.failures == 0
    assert server.max_running == 1 and server.served == 8
    assert elapsed >= 8 * 0.3 - 0.05  # they really were served one after another


async def test_without_the_limit_time_in_the_server_queue_counts_and_calls_time_out():
    """The problem the setting solves: the same server and calls, no endpoint limit."""
    server = SlotServer(slots=1, seconds=0.3)
    client = LLMClient(settings(server.url))
    try:
        results = await _calls(client, 8)
    finally:
        await client.aclose()
        server.close()
    failed = [r for r in results if isinstance(r, ModelCallError)]
    assert failed and client.stats.faults.get("timeout", 0) == len(failed)
    assert "PSIT_ENDPOINT_CONCURRENCY" in str(failed[0])  # the error says what to set


@pytest.mark.slow
async def test_two_slots_over_two_replicas_share_the_load():
    a, b = SlotServer(slots=2, seconds=0.2), SlotServer(slots=2, seconds=0.2)
    client = LLMClient(settings(a.url, b.url, endpoint_concurrency=2, timeout=0.35))
    try:
        results = await _calls(client, 12)
    finally:
        await client.aclose()
        a.close()
        b.close()
    assert all(not isinstance(r, BaseException) for r in results), results
    assert a.max_running <= 2 and b.max_running <= 2 and a.served > 0 and b.served > 0
    assert client.stats.faults == {}


async def test_a_lone_replica_that_times_out_is_not_marked_down(fault_server):
    fault_server.script = [scripted_fault("hang", hang_seconds=0.8)]
    client = LLMClient(settings(fault_server.url, max_retries=2))
    try:
        result = await ModelSession(client, run_seed=1, episode_id="e").chat(MESSAGES, role="generic")
        pool = client._pool()
        assert result.content and client.stats.faults == {"timeout": 1}
        assert pool.healthy_count() == 1  # timed out, yet still healthy: nowhere else to go
    finally:
        await client.aclose()


@pytest.mark.slow
async def test_a_replica_of_several_that_times_out_repeatedly_is_passed_over():
    slow, fast = FaultServer(), FaultServer()
    slow.script = [scripted_fault("hang", hang_seconds=0.8)] * TIMEOUTS_BEFORE_COOLDOWN
    client = LLMClient(settings(slow.url, fast.url, max_retries=3))
    try:
        session = ModelSession(client, run_seed=1, episode_id="e")
        assert (await session.chat(MESSAGES, role="generic")).content
        # both idle: list order sends the call to the slow one until it is passed over
        assert len(slow.requests) == TIMEOUTS_BEFORE_COOLDOWN and len(fast.requests) == 1
        assert client.stats.faults == {"timeout": TIMEOUTS_BEFORE_COOLDOWN}
        assert client._pool().healthy_count() == 1
        assert (await session.chat(MESSAGES, role="generic")).content
        assert len(slow.requests) == TIMEOUTS_BEFORE_COOLDOWN and len(fast.requests) == 2
    finally:
        await client.aclose()
        slow.close()
        fast.close()


async def test_timeouts_count_only_in_a_row_and_refusals_still_mark_down():
    now = [0.0]
    lone = ReplicaPool(["a"], cooldown=5, clock=lambda: now[0])
    for _ in range(5):
        await lone.slot()
        assert lone.release("a", timed_out=True) is False
    assert lone.healthy_count() == 1
    await lone.slot()
    assert lone.release("a", failed=True) is True and lone.healthy_count() == 0  # refused: down
    pair = ReplicaPool(["a", "b"], cooldown=5, clock=lambda: now[0])
    for outcome in ({"timed_out": True}, {"answered": True}, {"timed_out": True}):
        await pair.slot()
        assert pair.release("a", **outcome) is False  # a reply in between starts the count again
    await pair.slot()
    assert pair.release("a", timed_out=True) is True and pair.healthy_count() == 1


async def test_slots_are_handed_out_in_arrival_order_and_a_cancelled_waiter_takes_none():
    pool = ReplicaPool(["a"], slots=1)
    assert await pool.slot() == "a"
    order: list[str] = []

    async def wait(name: str) -> None:
        url = await pool.slot()
        order.append(name)
        await asyncio.sleep(0.01)
        pool.release(url, answered=True)

    first, cancelled, last = (asyncio.create_task(wait(n)) for n in ("first", "cancelled", "last"))
    await asyncio.sleep(0.01)
    cancelled.cancel()
    await asyncio.sleep(0.01)
    pool.release("a", answered=True)
    await asyncio.gather(first, last)
    assert order == ["first", "last"] and pool.in_flight("a") == 0
    assert await pool.slot() == "a" and pool.pick() is None  # its one slot taken: the next call waits


async def test_a_waiting_call_takes_a_replica_that_comes_back_from_its_cooldown():
    pool = ReplicaPool(["a", "b"], slots=1, cooldown=0.05)
    assert await pool.slot() == "a"
    pool.release("a", failed=True)  # refused: "a" cools down for 0.05 s
    assert await pool.slot() == "b"  # b's one slot is now taken
    started = time.monotonic()
    url = await asyncio.wait_for(pool.slot(), timeout=2)
    assert url == "a" and time.monotonic() - started >= 0.03


def test_the_endpoint_limit_is_read_from_the_environment():
    env = {"PSIT_BACKEND": "openai", "PSIT_BASE_URLS": "http://x/v1", "PSIT_MODEL": "m"}
    assert LLMSettings.from_env(env).endpoint_concurrency is None
    assert LLMSettings.from_env({**env, "PSIT_ENDPOINT_CONCURRENCY": "2"}).endpoint_concurrency == 2
    with pytest.raises(ConfigurationError, match="PSIT_ENDPOINT_CONCURRENCY='0' is not valid"):
        LLMSettings.from_env({**env, "PSIT_ENDPOINT_CONCURRENCY": "0"})


async def test_a_waiting_call_of_an_earlier_episode_gets_the_free_slot_first():
    """Calls wait by the order their episodes started, so a small server finishes episodes one
    after another instead of advancing every episode in flight in step."""
    from psit_lib.llm.replicas import EPISODE_RANK

    pool = ReplicaPool(["a"], slots=1)
    assert await pool.slot() == "a"
    order: list[int] = []

    async def wait(rank: int) -> None:
        EPISODE_RANK.set(rank)
        url = await pool.slot()
        order.append(rank)
        pool.release(url, answered=True)

    waiting = [asyncio.create_task(wait(rank)) for rank in (3, 1, 2, 1)]
    await asyncio.sleep(0.01)
    pool.release("a", answered=True)
    await asyncio.gather(*waiting)
    assert order == [1, 1, 2, 3] and pool.in_flight("a") == 0


async def _three_calls(spec, session):
    """An episode of three calls, each waiting for the one before."""
    for turn in range(3):
        result = await session.chat([{"role": "user", "content": f"turn {turn} of {spec.episode_id}"}], role="generic")
    return {"last": result.content}


async def _run_through_a_one_slot_server(tmp_path, **kw):
    from psit_lib.runs import EpisodeSpec, RunStore, run_episodes

    server = SlotServer(slots=1, seconds=0.1)  # one request at a time, the rest queue in the server
    client = LLMClient(settings(server.url, timeout=0.6, max_retries=3, concurrency=12, **kw))
    specs = [EpisodeSpec(f"e{i}") for i in range(12)]
    try:
        records = await run_episodes(specs, _three_calls, store=RunStore(tmp_path / str(len(kw))), client=client,
                                     run_seed=0, concurrency=12, progress=False)
    finally:
        await client.aclose()
        server.close()
    return records, client


@pytest.mark.slow
async def test_a_slow_server_that_reports_no_slots_loses_no_episode_the_run_backs_off(tmp_path, caplog):
    """12 episodes at once against a server that runs one request at a time (0.1 s each) and reports no
    slots, timeout 0.6 s: queueing in the server would time calls out; the client halves its calls in
    flight when replies take more than half their timeout, so every episode finishes."""
    caplog.set_level("WARNING", logger="psit_lib.llm")
    records, client = await _run_through_a_one_slot_server(tmp_path)
    assert any("calls in flight there lowered to 6 (from 12)" in r.getMessage() for r in caplog.records)
    assert [r["status"] for r in records] == ["ok"] * 12, [r.get("error") for r in records]
    assert client.stats.failures == 0
    url = client.settings.base_urls[0]
    assert client._pool().limit_of(url) < 12  # it backed off (and may be growing back)


@pytest.mark.slow
async def test_the_same_run_with_its_calls_in_flight_fixed_loses_episodes(tmp_path):
    """The problem the back-off solves: the same run with 12 calls in flight set by hand (a setting the
    client keeps) times calls out in the server's queue until episodes fail."""
    records, client = await _run_through_a_one_slot_server(tmp_path, endpoint_concurrency=12)
    assert any(r["status"] != "ok" for r in records)
    assert client.stats.faults.get("timeout", 0) > 0


def test_an_adaptive_replica_halves_once_per_round_and_grows_back_by_one_per_round():
    now = [0.0]
    pool = ReplicaPool(["a"], adaptive={"a": 8}, clock=lambda: now[0])
    assert pool.limit_of("a") == 8 and pool.slots_of("a") is None
    pool._in_flight["a"] = 8
    now[0] = 1.0
    pool.release("a", timed_out=True, sent_at=0.5)
    assert pool.limit_of("a") == 4
    pool.release("a", queued=True, answered=True, sent_at=0.6)  # sent before the cut: the same round
    assert pool.limit_of("a") == 4
    pool.release("a", queued=True, answered=True, sent_at=1.5)  # sent after it: a new round cuts again
    assert pool.limit_of("a") == 2
    pool._in_flight["a"] = 10
    for _ in range(3):
        pool.release("a", answered=True, sent_at=2.0)  # about a round of replies in time: one more
    assert pool.limit_of("a") == 3
    for _ in range(8):
        pool.release("a", answered=True, sent_at=2.0)
    assert pool.limit_of("a") <= 8
    limited = ReplicaPool(["a"], slots=2, adaptive={"a": 8})  # reported slots stand
    assert limited.limit_of("a") == 2
