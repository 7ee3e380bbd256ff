"""A notebook's episodes in worker processes (psit_lib.runs.processes) and memory libraries off the loop."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from types import SimpleNamespace

import cloudpickle
import pytest
from hypothesis import given
from hypothesis import strategies as st

from psit_lib.llm import LLMSettings
from psit_lib.llm.client import CallStats
from psit_lib.llm.errors import CacheMissError
from psit_lib.runs import EpisodeSpec, RunStore, make_client
from psit_lib.runs.processes import JOIN_MIN_EPISODES, share, shared_settings, wanted_processes
from psit_lib.runs.runner import execute_episodes

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import a test module


async def _episode(spec, session):
    replies = [(await session.chat([{"role": "user", "content": f"{spec.episode_id} {turn}"}], role="generic")).content
               for turn in range(2)]
    return {"replies": replies}


def _without_wall_time(store: RunStore) -> dict[str, dict]:
    return {k: {f: v for f, v in r.items() if f != "wall_seconds"} for k, r in store.records().items()}


def _specs(n: int) -> list[EpisodeSpec]:
    return [EpisodeSpec(f"e{i:02d}", {"i": i}) for i in range(n)]


async def _run(folder, specs, **options):
    client = make_client(LLMSettings(cache="off"))
    store = RunStore(folder)
    counts = await execute_episodes(specs, options.pop("episode", _episode), store=store, client=client, run_seed=3,
                                    progress=False, **options)
    return store, counts, client


@pytest.mark.slow
async def test_worker_processes_give_the_records_and_call_counts_of_one_process(tmp_path):
    here, _, one = await _run(tmp_path / "one", _specs(12), concurrency=4)
    sharded, counts, two = await _run(tmp_path / "two", _specs(12), concurrency=4, processes=2)
    assert _without_wall_time(sharded) == _without_wall_time(here)
    assert counts.done == 12 and counts.worker_cpu > 0
    assert two.stats.calls == one.stats.calls == 24  # the workers' calls are counted by this process's client
    assert two.stats.by_role == {"generic": 24}


@pytest.mark.slow
async def test_a_resume_after_a_sharded_run_redoes_only_what_is_missing(tmp_path):
    async def failing_once(spec, session):
        if spec.params["i"] % 5 == 0 and not spec.params.get("fixed"):
            raise RuntimeError("scripted failure")
        return await _episode(spec, session)

    store, counts, _ = await _run(tmp_path / "run", _specs(10), concurrency=4, processes=2, episode=failing_once)
    assert counts.failed == 2
    fixed = [EpisodeSpec(s.episode_id, {**s.params, "fixed": True}) for s in _specs(10)]
    store, counts, client = await _run(tmp_path / "run", fixed, concurrency=4, processes=2, episode=failing_once)
    assert (counts.resumed, counts.done, client.stats.calls) == (8, 2, 4)
    assert all(r["status"] == "ok" for r in store.records().values()) and store.attempts("e00") == 2
    fresh, _, _ = await _run(tmp_path / "fresh", fixed, concurrency=4, episode=failing_once)
    assert {k: r["result"] for k, r in store.records().items()} == {k: r["result"] for k, r in fresh.records().items()}


@pytest.mark.slow
async def test_episodes_of_a_worker_that_dies_are_run_again(tmp_path):
    parent = os.getpid()

    async def dies_in_a_worker(spec, session):
        if spec.params["i"] == 3 and os.getpid() != parent:
            os._exit(1)  # the worker dies with the episode in flight
        return await _episode(spec, session)

    store, counts, _ = await _run(tmp_path, _specs(8), concurrency=2, processes=2, episode=dies_in_a_worker)
    assert counts.done == 8 and all(r["status"] == "ok" for r in store.records().values())


@pytest.mark.slow
async def test_a_fatal_error_in_a_worker_stops_the_run(tmp_path):
    from psit_lib.llm.cache import ResponseCache

    client = make_client(LLMSettings(cache="replay"), cache=ResponseCache(tmp_path / "cache.sqlite", mode="replay"))
    with pytest.raises(CacheMissError):
        await execute_episodes(_specs(4), _episode, store=RunStore(tmp_path / "run"), client=client, run_seed=0,
                               progress=False, concurrency=2, processes=2)


@pytest.mark.slow
async def test_a_lent_core_takes_a_worker_on_the_simulator(tmp_path):
    store = RunStore(tmp_path / "lent")
    store.lend_processes(2)  # what psit run writes when the other core is idle
    _, counts, _ = await _run(tmp_path / "lent", _specs(8 * JOIN_MIN_EPISODES), concurrency=4)
    assert counts.worker_cpu > 0
    here, _, _ = await _run(tmp_path / "here", _specs(8 * JOIN_MIN_EPISODES), concurrency=4)
    assert _without_wall_time(RunStore(tmp_path / "lent")) == _without_wall_time(here)


@given(st.integers(1, 4096), st.integers(1, 64))
def test_shares_add_up_to_the_limit(total, parts):
    shares = [share(total, i, parts) for i in range(parts)]
    assert sum(shares) == total and max(shares) - min(shares) <= 1


def test_a_workers_client_gets_its_share_of_every_limit():
    settings = LLMSettings(backend="openai", base_urls=("http://a/v1", "http://b/v1"), model="m", concurrency=7,
                           endpoint_concurrency=3, endpoint_slots={"http://b/v1": 5})
    parts = [shared_settings(settings, i, 2) for i in range(2)]
    assert [p.concurrency for p in parts] == [4, 3]
    assert [p.endpoint_concurrency for p in parts] == [2, 1]
    assert [p.endpoint_slots["http://b/v1"] for p in parts] == [3, 2]


def test_processes_asked_in_the_environment(monkeypatch):
    from psit_lib.llm.errors import ConfigurationError

    monkeypatch.delenv("PSIT_PROCESSES", raising=False)
    assert wanted_processes() == 1 and wanted_processes(3) == 3
    monkeypatch.setenv("PSIT_PROCESSES", "2")
    assert wanted_processes() == 2
    monkeypatch.setenv("PSIT_PROCESSES", "two")
    with pytest.raises(ConfigurationError, match="PSIT_PROCESSES='two'"):
        wanted_processes()


def test_call_statistics_add_up():
    a = CallStats(calls=2, faults={"timeout": 1}, by_role={"x": 2}, prompt_tokens=10)
    a.add(CallStats(calls=3, faults={"timeout": 2, "http_5xx": 1}, by_role={"y": 3}, prompt_tokens=5))
    assert (a.calls, a.faults, a.by_role, a.prompt_tokens) == (5, {"timeout": 3, "http_5xx": 1}, {"x": 2, "y": 3}, 15)


def test_idle_cores_are_lent_to_the_running_notebooks(tmp_path):
    from psit_lib.cli.execute import lend_idle_cores
    from psit_lib.runs.folder import RunFolder

    for stem in ("a", "b"):
        (tmp_path / stem).mkdir()
    lend_idle_cores({"a": None}, 2, tmp_path)
    assert RunFolder(tmp_path / "a").lent_processes() == 2
    lend_idle_cores({"a": None, "b": None}, 5, tmp_path)
    assert [RunFolder(tmp_path / s).lent_processes() for s in "ab"] == [3, 2]
    RunFolder(tmp_path / "b").clear_progress()  # a new execution starts unlent
    assert RunFolder(tmp_path / "b").lent_processes() == 1


async def test_library_operations_run_beyond_the_default_pool_and_leave_the_loop_free():
    from psit_lib.studies.psit.agents.baselines.calls import in_library_thread

    session = SimpleNamespace(client=SimpleNamespace(settings=SimpleNamespace(concurrency=32)))
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.perf_counter()
        for _ in range(20):
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    started = time.perf_counter()
    # 24 operations that each hold their thread for 0.3 s, as a library waiting for the model does:
    # the default pool (6 threads on two cores) would take four rounds
    await asyncio.gather(ticker(), *(in_library_thread(session, time.sleep, 0.3) for _ in range(24)))
    assert time.perf_counter() - started < 0.9
    assert max(gaps) < 0.1
