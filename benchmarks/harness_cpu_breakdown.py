"""Where the harness's CPU per model call goes, by component and by thread (loop or workers).

    .venv/bin/python benchmarks/harness_cpu_breakdown.py [--notebooks 04] [--concurrency 64] [--latency 1.0]

Runs a notebook's own episodes as ``harness_overhead.py`` does (the simulator behind a fixed
latency, in its own process, so this process's CPU is the harness's alone) with the functions
below wrapped in a per-thread CPU clock (``time.thread_time``; a wrapped call inside another is
counted once, by the inner one). Printed per notebook (not a test: the figures depend on the
machine): the process's CPU per call, each component's CPU per call and share, split into what
ran on the event loop's thread (it delays every other episode) and in worker threads, and the
rest of the loop (agents, protocol, HTTP client, records). The embedder's figures include its
batches and how many texts it embedded against how many it was asked for (the cache).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import tempfile
import threading
import time
from collections import defaultdict
from typing import Any, Callable

from harness_overhead import Endpoint, notebook_plan

from psit_lib.llm import LLMSettings
from psit_lib.runs import RunStore, make_client, run_episodes

TARGETS: tuple[tuple[str, str, str], ...] = (
    # (module, attribute path, component)
    ("sentence_transformers", "SentenceTransformer.encode", "embedder (torch)"),
    ("psit_lib.studies.psit.agents.baselines.embedder", "_forward", "embedder (forward pass)"),
    ("psit_lib.studies.psit.agents.baselines.mem0_adapter", "Mem0Backend._recall", "mem0 + qdrant"),
    ("psit_lib.studies.psit.agents.baselines.mem0_adapter", "Mem0Backend._memorize", "mem0 + qdrant"),
    ("mem0.memory.main", "Memory._add_to_vector_store", "mem0 + qdrant"),  # in mem0's own threads
    ("mem0.memory.main", "Memory._search_vector_store", "mem0 + qdrant"),
    ("psit_lib.studies.psit.agents.baselines.memoryos_adapter", "MemoryOSBackend._recall", "memoryos + faiss"),
    ("memoryos.retriever", "Retriever._retrieve_mid_term_context", "memoryos + faiss"),  # in its own threads
    ("memoryos.retriever", "Retriever._retrieve_user_knowledge", "memoryos + faiss"),
    ("memoryos.retriever", "Retriever._retrieve_assistant_knowledge", "memoryos + faiss"),
    ("memoryos.updater", "Updater._process_page_embedding_and_keywords", "memoryos + faiss"),
    ("psit_lib.studies.psit.agents.baselines.memoryos_adapter", "MemoryOSBackend._memorize", "memoryos + faiss"),
    ("psit_lib.studies.psit.agents.baselines.similarity", "top_k", "cosine top-k (A-Mem, LightMem)"),
    ("psit_lib.studies.psit.agents.baselines.lightmem_adapter", "topic_segments", "cosine top-k (A-Mem, LightMem)"),
    ("copy", "deepcopy", "deepcopy (agent state)"),
    ("psit_lib.runs.folder", "RunStore.append", "record writes"),
    ("psit_lib.llm.tokens", "count_tokens", "token counts"),
    ("psit_lib.llm.client", "_result_from_body", "reply reading"),
    ("json", "dumps", "JSON encode"),
)

_local = threading.local()


class Clock:
    """Exclusive per-thread CPU seconds by (component, on the loop's thread or not)."""

    def __init__(self) -> None:
        self.cpu: dict[tuple[str, bool], float] = defaultdict(float)
        self.lock = threading.Lock()
        self.main = threading.main_thread()

    def wrap(self, fn: Callable[..., Any], component: str) -> Callable[..., Any]:
        clock = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            stack = getattr(_local, "stack", None)
            if stack is None:
                stack = _local.stack = []
            if stack and stack[-1][0] == component:  # recursion (deepcopy): counted by the outer call
                return fn(*args, **kwargs)
            stack.append([component, 0.0])
            started = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.thread_time() - started
                _, children = stack.pop()
                if stack:
                    stack[-1][1] += elapsed
                with clock.lock:
                    clock.cpu[(component, threading.current_thread() is clock.main)] += elapsed - children

        return timed


def install(clock: Clock) -> list[tuple[Any, str, Any]]:
    """Wrap every target that exists in this version of the code; the originals, to restore."""
    undo = []
    for module_name, path, component in TARGETS:
        try:
            owner: Any = importlib.import_module(module_name)
        except ImportError:
            continue
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent, None)
        if owner is None or not hasattr(owner, name):
            continue
        original = owner.__dict__.get(name, getattr(owner, name))
        if isinstance(original, (staticmethod, classmethod)):
            continue
        undo.append((owner, name, original))
        setattr(owner, name, clock.wrap(original, component))
    return undo


def run(short: str, endpoint: Endpoint, concurrency: int, seed: int) -> None:
    specs, episode = notebook_plan(short, concurrency)
    client = make_client(LLMSettings(backend="openai", base_urls=(endpoint.url,), model="psit-sim", api_key="none",
                                     cache="off", concurrency=concurrency, max_retries=0, timeout=120.0))
    clock = Clock()
    embedder = importlib.import_module("psit_lib.studies.psit.agents.baselines.embedder")
    stats = getattr(embedder, "embedder_stats", lambda: {})
    before = dict(stats())
    undo = install(clock)
    calls_before = client.stats.calls
    try:
        with tempfile.TemporaryDirectory() as folder:
            cpu0, wall0, loop0 = time.process_time(), time.perf_counter(), time.thread_time()
            records = asyncio.run(run_episodes(specs, episode, store=RunStore(folder), client=client, run_seed=seed,
                                               concurrency=concurrency, progress=False))
            wall, cpu, loop_cpu = time.perf_counter() - wall0, time.process_time() - cpu0, time.thread_time() - loop0
    finally:
        for owner, name, original in reversed(undo):
            setattr(owner, name, original)
    calls = max(1, client.stats.calls - calls_before)
    failed = sum(r.get("status") != "ok" for r in records)
    print(f"\n{short}: {len(specs)} episodes ({failed} failed), {calls} model calls, wall {wall:.1f} s, "
          f"process CPU {cpu:.1f} s = {cpu / calls * 1e3:.2f} ms per call")
    print(f"  {'component':34} {'loop ms/call':>12} {'workers ms/call':>15} {'share':>6}")
    components = sorted({c for c, _ in clock.cpu}, key=lambda c: -(clock.cpu[(c, True)] + clock.cpu[(c, False)]))
    for component in components:
        loop, workers = clock.cpu[(component, True)], clock.cpu[(component, False)]
        print(f"  {component:34} {loop / calls * 1e3:>12.2f} {workers / calls * 1e3:>15.2f} "
              f"{(loop + workers) / cpu:>6.1%}")
    on_loop = sum(v for (_, main), v in clock.cpu.items() if main)
    in_workers = sum(v for (_, main), v in clock.cpu.items() if not main)
    rest_loop, rest_workers = loop_cpu - on_loop, cpu - loop_cpu - in_workers
    print(f"  {'the rest':34} {rest_loop / calls * 1e3:>12.2f} {rest_workers / calls * 1e3:>15.2f} "
          f"{(rest_loop + rest_workers) / cpu:>6.1%}")
    print(f"  {'all':34} {loop_cpu / calls * 1e3:>12.2f} {(cpu - loop_cpu) / calls * 1e3:>15.2f}")
    after = dict(stats())
    if after:
        delta = {k: after[k] - before.get(k, 0) for k in after}
        print(f"  embedder: {delta.get('requested', 0)} texts asked, {delta.get('embedded', 0)} embedded "
              f"in {delta.get('batches', 0)} batches (the rest from its cache)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--notebooks", nargs="+", default=["04"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    endpoint = Endpoint(0.0)
    try:
        for short in args.notebooks:  # warm-up: imports, models and indexes load once per process
            specs, episode = notebook_plan(short, 4)
            client = make_client(LLMSettings(backend="openai", base_urls=(endpoint.url,), model="psit-sim",
                                             api_key="none", cache="off", concurrency=4, max_retries=0))
            with tempfile.TemporaryDirectory() as folder:
                asyncio.run(run_episodes(specs, episode, store=RunStore(folder), client=client, run_seed=99,
                                         concurrency=4, progress=False))
        endpoint.latency.value = args.latency
        print(f"latency {args.latency:g} s per call, {args.concurrency} in flight; the 1-minute load average "
              "says how busy the machine was")
        for short in args.notebooks:
            run(short, endpoint, args.concurrency, args.seed)
    finally:
        endpoint.stop()
    print(f"\nload average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
