"""Harness cost per model call, and how close the harness gets to the latency bound.

    .venv/bin/python benchmarks/harness_overhead.py [--episodes 6] [--calls-per-episode 5]

Prints, side by side in one run (not a test: the figures depend on the machine):

1. **Harness CPU per model call, simulator excluded** (goal < 2 ms): a real fork study (Hangman,
   every PSIT agent) on the in-process simulator; process CPU time minus the CPU time spent
   inside the simulator engine, divided by the number of model calls. It covers everything the
   harness does around a call: agent graphs, prompts, readers, memory tools, records, seeds,
   cache keys and the openai client.
2. **Achieved / bound against a canned endpoint with 100 ms latency** at concurrency 8 and 64
   (goal >= 0.9 at 64): episodes of sequential calls against a loopback server that answers
   every request with the same completion after ``--latency`` seconds. The bound on wall time
   is ``max(critical-path calls x latency, total calls x latency / concurrency)``; the ratio
   bound / achieved wall time is 1.0 for a harness that adds nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import tempfile
import time

import psit_lib.sim.engine as engine
from psit_lib.sim.server import LoopbackHandler, LoopbackServer
from psit_lib.llm import LLMSettings, ModelSession
from psit_lib.runs import RunStore, make_client, run_episodes
from psit_lib.studies.psit.agents.config import PSIT_AGENTS
from psit_lib.studies.psit.protocol.experiment import ForkTestParams, fork_episode_fn, plan_fork_episodes
from psit_lib.studies.psit.tasks.hangman import HangmanTask

REPEATS = 3

CANNED = json.dumps({
    "id": "chatcmpl-canned", "object": "chat.completion", "created": 0, "model": "canned",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "No, that is not my word."}}],
    "usage": {"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27}}).encode()


# -- 1. harness CPU per call ------------------------------------------------------------------------
def harness_cpu_per_call(episodes: int) -> tuple[float, float, int]:
    """(harness CPU ms per call, simulator CPU ms per call, calls) over a real fork study: the
    median of REPEATS runs with different seeds."""
    inside = [0.0]
    original = engine.complete

    def timed(*args, **kwargs):
        started = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            inside[0] += time.process_time() - started

    task = HangmanTask()

    def study(n: int, seed: int):
        params = ForkTestParams(agents=list(PSIT_AGENTS), n_episodes=n)
        client = make_client(LLMSettings(backend="sim", cache="off"))
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(run_episodes(plan_fork_episodes(task, params, ["psit-sim"]), fork_episode_fn(task, params),
                                     store=RunStore(folder), client=client, run_seed=seed, concurrency=8,
                                     progress=False))
        return client

    study(1, seed=99)  # warm-up: tokenizers, word lists and indexes load once per process
    engine.complete = timed
    measured = []
    try:
        for repeat in range(REPEATS):  # the median of a few runs: a shared machine's speed wanders
            inside[0] = 0.0
            started = time.process_time()
            client = study(episodes, seed=repeat)
            total = time.process_time() - started
            calls = client.stats.calls
            measured.append(((total - inside[0]) / calls * 1e3, inside[0] / calls * 1e3, calls))
    finally:
        engine.complete = original
    return sorted(measured)[len(measured) // 2]


# -- 2. achieved / bound against a canned endpoint ------------------------------------------------------
class _Canned(LoopbackHandler):
    """The simulator server's handler (keep-alive, TCP_NODELAY), answering with a canned reply."""

    latency = 0.1

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        time.sleep(self.latency)
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(CANNED)))
        self.end_headers()
        self.wfile.write(CANNED)


async def _episodes(url: str, n_episodes: int, per_episode: int, concurrency: int) -> float:
    client = make_client(LLMSettings(backend="openai", base_urls=(url,), model="canned", api_key="none",
                                     cache="off", concurrency=concurrency, max_retries=0, timeout=30.0))

    async def episode(i: int) -> None:
        session = ModelSession(client, run_seed=0, episode_id=f"e{i}")
        for turn in range(per_episode):  # sequential: each call waits for the one before
            await session.chat([{"role": "user", "content": f"episode {i} turn {turn}"}], role="bench")

    started = time.perf_counter()
    await asyncio.gather(*(episode(i) for i in range(n_episodes)))
    elapsed = time.perf_counter() - started
    await client.aclose()
    return elapsed


def _serve(latency: float, port_out) -> None:
    handler = type("Canned", (_Canned,), {"latency": latency})
    server = LoopbackServer(("127.0.0.1", 0), handler)
    port_out.put(server.server_address[1])
    server.serve_forever()


def achieved_over_bound(concurrency: int, per_episode: int, latency: float) -> tuple[float, float, float]:
    """(bound s, wall s, bound / wall) for 4 x concurrency episodes of ``per_episode`` calls.
    The endpoint runs in its own process, as a real server would (not competing for this
    process's interpreter)."""
    n_episodes = 4 * concurrency
    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(latency, ports), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{ports.get(timeout=30)}/v1"
    try:
        asyncio.run(_episodes(url, concurrency, 1, concurrency))  # warm-up: connections, imports
        wall = asyncio.run(_episodes(url, n_episodes, per_episode, concurrency))
    finally:
        server.terminate()
        server.join()
    bound = max(per_episode * latency, n_episodes * per_episode * latency / concurrency)
    return bound, wall, bound / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=10, help="fork episodes per agent for the CPU figure")
    parser.add_argument("--calls-per-episode", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    harness, sim, calls = harness_cpu_per_call(args.episodes)
    rows = [("harness CPU per call, simulator excluded", f"{harness:.2f} ms", "< 2 ms",
             f"{calls} calls; simulator itself {sim:.2f} ms/call")]
    for concurrency in (8, 64):
        bound, wall, ratio = achieved_over_bound(concurrency, args.calls_per_episode, args.latency)
        rows.append((f"achieved / bound at concurrency {concurrency}", f"{ratio:.3f}",
                     ">= 0.9" if concurrency == 64 else "",
                     f"bound {bound:.2f} s, wall {wall:.2f} s, {4 * concurrency * args.calls_per_episode} calls"))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>9}  {'goal':>7}  detail")
    for name, value, goal, detail in rows:
        print(f"{name:<{width}}  {value:>9}  {goal:>7}  {detail}")


if __name__ == "__main__":
    main()
