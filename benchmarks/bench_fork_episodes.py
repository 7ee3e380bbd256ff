"""Fork-test episodes per second on the simulator, per agent (not a test).

    .venv/bin/python benchmarks/bench_fork_episodes.py [--episodes 50] [--task hangman]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from psit_lib.runs.backend import make_client
from psit_lib.llm import LLMSettings
from psit_lib.studies.psit.protocol.experiment import ForkTestParams, fork_episode_fn, fork_outcome, plan_fork_episodes
from psit_lib.studies.psit.protocol.outcomes import Outcome
from psit_lib.runs import RunStore, run_episodes


def make_task(name: str):
    if name == "hangman":
        from psit_lib.studies.psit.tasks.hangman import HangmanTask
        return HangmanTask()
    from psit_lib.studies.psit.tasks.diagnosis import DiagnosisTask
    return DiagnosisTask()


async def bench(task, agent: str, n: int, folder: str) -> tuple[float, float, int]:
    params = ForkTestParams(agents=[agent], n_episodes=n)
    client = make_client(LLMSettings(cache="off"))
    started = time.perf_counter()
    records = await run_episodes(plan_fork_episodes(task, params, ["psit-sim"]), fork_episode_fn(task, params),
                                 store=RunStore(folder), client=client, run_seed=0, progress=False)
    elapsed = time.perf_counter() - started
    consistent = [r.result is not None and fork_outcome(r.result) == Outcome.SELF_CONSISTENT for r in records]
    return elapsed, sum(consistent) / len(consistent), client.stats.calls


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--task", default="hangman", choices=["hangman", "diagnosis"])
    parser.add_argument("--agents", nargs="*", default=["vanilla", "private_cot", "workflow_overwrite",
                                                        "autonomous_overwrite"])
    args = parser.parse_args()
    task = make_task(args.task)
    print(f"{'agent':<24} {'episodes/s':>10} {'calls/episode':>13} {'self-consistency':>16}")
    with tempfile.TemporaryDirectory() as tmp:
        for agent in args.agents:
            elapsed, rate, calls = asyncio.run(bench(task, agent, args.episodes, f"{tmp}/{agent}"))
            print(f"{agent:<24} {args.episodes / elapsed:>10.1f} {calls / args.episodes:>13.1f} {rate:>16.2f}")


if __name__ == "__main__":
    main()
