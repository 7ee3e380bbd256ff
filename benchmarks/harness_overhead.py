"""Is the harness ever the bottleneck? The real notebooks' episodes against a slow, wide server.

    .venv/bin/python benchmarks/harness_overhead.py [--latency 1.0] [--concurrency 64 256] [--notebooks 02 03 ...]
        [--processes N]

For each concurrency, every notebook of 02-06 runs its own episode function (every agent,
system and domain the notebook runs by default; only the episode counts are scaled so that one
notebook's plan fills the concurrency once) against a loopback OpenAI-compatible endpoint that
answers each call from the simulator after ``--latency`` seconds, as a large server would that
keeps hundreds of sequences in flight. The endpoint runs in its own process (an asyncio server:
waiting costs it nothing), so the CPU of this process and of its episode workers is the harness's alone.
``--processes`` (default: the cores) runs the episodes in that many worker processes, each with its share
of the limits (``psit_lib.runs.processes``); 1 runs them in this process.

Printed per notebook and in total (not a test: the figures depend on the machine):

- **achieved / bound**: the wall time a harness that cost nothing would need, over the wall time
  measured. The bound is computed from the calls the run actually made: each episode's critical
  path (its longest chain of calls that waited for one another) times the latency, scheduled in
  plan order onto ``concurrency`` episode slots (what the runner does). 1.0 is a free harness;
  goal >= 0.9 at 256. The critical paths are the episodes' own (seeded): with worker processes they are
  taken from a run of the same plan in this process with no latency first.
- **harness CPU per call**: the CPU time of this process and its workers over the model calls; it
  covers everything around a call: agent graphs, prompts, readers, memory tools, records, seeds,
  cache keys, the HTTP client. The workers' start (imports) falls in the warm-up, as this process's does.
- **in flight**: the most requests the endpoint held at once (at most ``concurrency``: the
  client's own limit); **server ms/call**: the endpoint's CPU per call (the simulator; it shares
  the machine with the harness); **load**: the 1-minute load average when the notebook ended
  (the machine may be shared: a high load slows the harness and the endpoint alike).
- **peak RSS** of this process, and of its largest child (an episode worker or the endpoint).
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import json
import math
import multiprocessing
import os
import resource
import tempfile
import time
from collections import defaultdict
from typing import Any

from psit_lib.llm import LLMSettings, ModelSession
from psit_lib.runs import RunStore, make_client
from psit_lib.runs.processes import dismiss_workers
from psit_lib.runs.runner import execute_episodes
from psit_lib.studies.registry import params_model, study_of

NOTEBOOKS = {
    "02": "02_hangman_fork_tests",
    "03": "03_diagnosis_ddxplus",
    "04": "04_memory_strategy_ablations",
    "05": "05_acc_judge_evaluation",
    "06": "06_basis_cab_scenarios",
}
SCALE_FIELD = {"02": "n_episodes", "03": "n_episodes", "04": "n_episodes", "05": "scenarios_per_domain",
               "06": "n_trials"}
"""The parameter scaled so that one notebook's plan holds about ``concurrency`` episodes."""
FIXED = {"05": {"n_turns": 4}}
"""Shorter than the notebook's default where one episode alone would take minutes at 1 s a call."""


# -- the endpoint: the simulator behind a fixed latency, in its own process -----------------------
async def _serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: Any,
                            flight: list[int], peak: Any, cpu: Any) -> None:
    from psit_lib.sim.engine import handle_http

    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
            length = int(next((v for k, v in headers.items() if k.lower() == "content-length"), "0"))
            raw = await reader.readexactly(length) if length else b""
            flight[0] += 1
            peak.value = max(peak.value, flight[0])
            try:
                await asyncio.sleep(latency.value)
            finally:
                flight[0] -= 1
            status, payload = handle_http(method, path, headers, raw)
            body = json.dumps(payload).encode()
            writer.write(f"HTTP/1.1 {status} OK\r\ncontent-type: application/json\r\n"
                         f"content-length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
            cpu.value = time.process_time()
    except (asyncio.IncompleteReadError, asyncio.CancelledError, ConnectionResetError, BrokenPipeError):
        pass  # the client left, or the server is stopping
    finally:
        writer.close()


def _serve(latency: Any, peak: Any, cpu: Any, port_out: Any) -> None:
    import signal

    flight = [0]

    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: _serve_connection(r, w, latency, flight, peak, cpu),
                                            "127.0.0.1", 0,
                                            backlog=4096)
        port_out.put(server.sockets[0].getsockname()[1])
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        async with server:
            await stop.wait()

    asyncio.run(main())


class Endpoint:
    """The loopback endpoint's process at ``url``. Shared with it: ``latency`` (seconds; may change
    between runs), ``peak`` (the most requests it held at once; reset it between runs) and
    ``cpu`` (its CPU seconds at its latest reply)."""

    def __init__(self, latency: float) -> None:
        self.latency: Any = multiprocessing.Value("d", latency)
        self.peak: Any = multiprocessing.Value("i", 0)
        self.cpu: Any = multiprocessing.Value("d", 0.0)
        self._ports: Any = multiprocessing.Queue()
        self._proc = multiprocessing.Process(target=_serve, args=(self.latency, self.peak, self.cpu, self._ports),
                                             daemon=True)
        self._proc.start()
        self.url = f"http://127.0.0.1:{self._ports.get(timeout=60)}/v1"

    def stop(self) -> None:
        self._proc.terminate()
        self._proc.join()


# -- what the run did, and what a free harness would have needed ----------------------------------
class CallLog:
    """Every model call's (episode, start, end), recorded around ``ModelSession.chat``."""

    def __init__(self) -> None:
        self.calls: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self._original = ModelSession.chat

    def __enter__(self) -> "CallLog":
        original, calls = self._original, self.calls

        async def chat(session: ModelSession, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(session, *args, **kwargs)
            finally:
                calls[session.episode_id].append((started, time.perf_counter()))

        ModelSession.chat = chat  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: Any) -> None:
        ModelSession.chat = self._original  # type: ignore[method-assign]


def critical_path(calls: list[tuple[float, float]]) -> int:
    """The longest chain of calls where each started after the one before ended."""
    ordered = sorted(calls)
    depth: list[int] = []
    for i, (start, _) in enumerate(ordered):
        depth.append(1 + max((depth[j] for j in range(i) if ordered[j][1] <= start), default=0))
    return max(depth, default=0)


def ideal_wall(paths: list[int], latency: float, slots: int) -> float:
    """Makespan of episodes of ``paths`` calls each, in plan order, on ``slots`` episode slots,
    when every call takes exactly ``latency`` and the harness takes no time."""
    free = [0.0] * min(slots, max(1, len(paths)))
    end = 0.0
    for path in paths:
        start = heapq.heappop(free)
        heapq.heappush(free, start + path * latency)
        end = max(end, start + path * latency)
    return end


# -- one notebook's episodes ----------------------------------------------------------------------
def notebook_plan(short: str, concurrency: int):
    """(specs, episode function) of one notebook, scaled to about ``concurrency`` episodes."""
    name = NOTEBOOKS[short]
    study, model = study_of(name), params_model(name)
    assert study is not None
    part = study.notebook(name)
    field = SCALE_FIELD[short]
    one = model(**FIXED.get(short, {}), **{field: 1})
    per_unit = max(1, len(study.plan(name, one, ["psit-sim"])))
    params = model(**FIXED.get(short, {}), **{field: max(1, math.ceil(concurrency / per_unit))})
    assert part.episode is not None
    return study.plan(name, params, ["psit-sim"]), part.episode(params)


def _execute(specs: list[Any], episode: Any, endpoint: Endpoint, concurrency: int, seed: int,
             processes: int) -> tuple[float, float, int, int]:
    """One run of ``specs`` against the endpoint: wall and CPU seconds (this process's and its workers'),
    model calls, failed episodes."""
    client = make_client(LLMSettings(backend="openai", base_urls=(endpoint.url,), model="psit-sim", api_key="none",
                                     cache="off", concurrency=concurrency, max_retries=0, timeout=120.0))
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(folder)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        counts = asyncio.run(execute_episodes(specs, episode, store=store, client=client, run_seed=seed,
                                              concurrency=concurrency, progress=False, processes=processes))
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0 + counts.worker_cpu
        records = store.records().values()
    return wall, cpu, client.stats.calls, sum(r.get("status") != "ok" for r in records)


def run_notebook(short: str, endpoint: Endpoint, concurrency: int, seed: int, processes: int) -> dict[str, float]:
    specs, episode = notebook_plan(short, concurrency)
    latency = endpoint.latency.value
    with CallLog() as log:  # in this process, the calls' chains are seen; with workers, first with no latency
        if processes > 1:
            endpoint.latency.value = 0.0
            _execute(specs, episode, endpoint, concurrency, seed, 1)
            endpoint.latency.value = latency
        else:
            endpoint.peak.value, server_cpu = 0, endpoint.cpu.value
            timed = _execute(specs, episode, endpoint, concurrency, seed, 1)
    paths = [critical_path(log.calls.get(s.episode_id, [])) for s in specs]
    if processes > 1:
        endpoint.peak.value, server_cpu = 0, endpoint.cpu.value
        timed = _execute(specs, episode, endpoint, concurrency, seed, processes)
    wall, cpu, calls, failed = timed
    return {"episodes": len(specs), "failed": failed, "calls": calls, "wall": wall, "cpu": cpu,
            "bound": ideal_wall(paths, latency, concurrency), "peak": endpoint.peak.value,
            "server_cpu": endpoint.cpu.value - server_cpu, "load": os.getloadavg()[0]}


def _line(concurrency: Any, name: str, row: dict[str, float]) -> str:
    calls = max(1, row["calls"])
    return (f"{concurrency:>11} {name:>8} {row['episodes']:>8.0f} {row['failed']:>6.0f} {row['calls']:>6.0f} "
            f"{row['bound']:>8.1f} {row['wall']:>7.1f} {row['bound'] / row['wall']:>14.3f} "
            f"{row['cpu'] / calls * 1e3:>11.2f} {row['peak']:>9.0f} {row['server_cpu'] / calls * 1e3:>14.2f} "
            f"{row['load']:>5.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--notebooks", nargs="+", default=list(NOTEBOOKS), choices=list(NOTEBOOKS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                        help="episode worker processes (default: the cores; 1: in this process)")
    args = parser.parse_args()
    endpoint = Endpoint(0.0)
    print(f"latency {args.latency:g} s per call; goal: achieved/bound >= 0.9 at 256; {os.cpu_count()} CPUs, "
          f"episodes in {args.processes} process(es)")
    print(f"{'concurrency':>11} {'notebook':>8} {'episodes':>8} {'failed':>6} {'calls':>6} {'bound s':>8} "
          f"{'wall s':>7} {'achieved/bound':>14} {'CPU ms/call':>11} {'in flight':>9} {'server ms/call':>14} "
          f"{'load':>5}")
    try:
        for short in args.notebooks:  # warm-up: imports, word lists, indexes load once per process
            run_notebook(short, endpoint, 4, seed=99, processes=args.processes)
        endpoint.latency.value = args.latency
        for concurrency in args.concurrency:
            total: dict[str, float] = defaultdict(float)
            for short in args.notebooks:
                row = run_notebook(short, endpoint, concurrency, seed=args.seed, processes=args.processes)
                for k, v in row.items():
                    total[k] = max(total[k], v) if k in ("peak", "load") else total[k] + v
                print(_line(concurrency, short, row), flush=True)
            print(_line(concurrency, "all", total), flush=True)
    finally:
        endpoint.stop()
    dismiss_workers()  # waited for: their peak RSS is counted below
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB, largest child process "
          f"(a worker, the endpoint) {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
