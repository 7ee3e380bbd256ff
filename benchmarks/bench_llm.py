"""Model-layer throughput: calls/s and client overhead per call, in-process and over loopback
HTTP, at concurrency 1 and 64. Prints a table; not a test (numbers depend on the machine).

    .venv/bin/python benchmarks/bench_llm.py [--calls 400]

Overhead per call = wall time per call minus the simulator engine's own time per call
(measured by calling the engine directly on the same requests).
"""

from __future__ import annotations

import argparse
import asyncio
import time

from psit_lib.runs.backend import make_client
from psit_lib.llm import LLMSettings, ModelSession
from psit_lib.sim.engine import complete
from psit_lib.sim.server import running_server

MESSAGES = [{"role": "system", "content": "You host a guessing game."},
            {"role": "user", "content": "My next guess is the letter 'e'."}]


def engine_seconds_per_call(n: int) -> float:
    complete({"model": "psit-sim", "messages": MESSAGES}, "generic", "default")  # warm-up
    started = time.perf_counter()
    for i in range(n):
        complete({"model": "psit-sim", "messages": MESSAGES, "seed": i, "temperature": 0.3},
                 "generic", "default")
    return (time.perf_counter() - started) / n


async def run(settings: LLMSettings, n: int, concurrency: int) -> float:
    client = make_client(settings)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            await ModelSession(client, run_seed=0, episode_id=f"b{i}").chat(MESSAGES, role="generic")

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - started
    await client.aclose()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    args = parser.parse_args()
    engine = engine_seconds_per_call(args.calls)
    print(f"simulator engine alone: {engine * 1e3:.3f} ms/call")
    print(f"{'path':<12} {'concurrency':>11} {'calls/s':>9} {'ms/call':>8} {'overhead ms/call':>17}")
    with running_server() as url:
        paths = {"in-process": LLMSettings(cache="off", concurrency=64),
                 "loopback": LLMSettings(backend="openai", base_urls=(url,), model="psit-sim",
                                         cache="off", concurrency=64)}
        for name, settings in paths.items():
            for concurrency in (1, 64):
                asyncio.run(run(settings, 20, concurrency))  # warm-up
                elapsed = asyncio.run(run(settings, args.calls, concurrency))
                per_call = elapsed / args.calls
                print(f"{name:<12} {concurrency:>11} {args.calls / elapsed:>9.0f} {per_call * 1e3:>8.2f} "
                      f"{(per_call - engine) * 1e3:>17.2f}")


if __name__ == "__main__":
    main()
