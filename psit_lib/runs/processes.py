"""A notebook's episodes in several processes: one event loop per core.

One process's event loop runs everything around a model call (agent graphs, memory libraries, the HTTP
client, the in-process simulator), so past about one core of that work calls wait on the loop, not on the
server: at 256 calls in flight notebook 04 ran at a fifth of what the server allowed. Worker processes
(``python -m psit_lib.runs.processes``), each with its own event loop, model client and response-cache
connection, take episodes from this process's queue as they have room (plan order, the next episode to
whoever is free) and send each record back; this process writes every record, so the records file keeps
one writer and a resume works as before. An episode's record does not depend on the process that ran
it: its seeds come from the run seed and its id, the simulator answers each request alone, and the cache
is keyed by request.

- **Asked for** (``processes=N``, ``PSIT_PROCESSES``): N workers from the start, each with 1/N of the
  limits: episodes in flight, calls in flight and each endpoint's slots, so the server sees the same load.
- **Lent** (the simulator under ``psit run``): the episodes start here; when ``psit run`` has an idle core
  and no notebook to start, it lends it to a running one (:meth:`RunFolder.lent_processes`), and a worker
  joins its queue with a share of its episodes in flight. The simulator has no endpoint to share.

Workers stay alive for the process's later runs (a notebook's sweep parts) and end with it.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import itertools
import os
import pickle
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from psit_lib.llm.client import LLMClient, SamplingDefaults
from psit_lib.llm.errors import ConfigurationError, FatalRunError
from psit_lib.llm.replicas import EPISODE_RANK
from psit_lib.llm.settings import LLMSettings

from psit_lib.runs.folder import RunStore

PROCESSES_ENV = "PSIT_PROCESSES"

JOIN_MIN_EPISODES = 4
"""A lent core takes a worker only while at least this many episodes per worker lane wait: a worker's
start (its imports, a baseline's libraries) costs a few seconds of CPU."""

LEND_POLL = 0.5
"""Seconds between looks at whether ``psit run`` lent the notebook a core."""


def wanted_processes(processes: int | None = None) -> int:
    """Worker processes asked for: ``processes``, else ``PSIT_PROCESSES``, else 1 (episodes run here)."""
    if processes is not None:
        return max(1, processes)
    text = os.environ.get(PROCESSES_ENV, "").strip()
    if not text:
        return 1
    if not text.isdigit() or int(text) < 1:
        raise ConfigurationError(f"{PROCESSES_ENV}={text!r} is not a number of processes; use a whole number "
                                 "of at least 1 (1: the episodes run in the notebook's own process)")
    return int(text)


def share(total: int, index: int, parts: int) -> int:
    """Part ``index`` of ``total`` split into ``parts`` whole shares that add up to it (each at least 1 while
    ``parts`` <= ``total``)."""
    return total // parts + (index < total % parts)


def shared_settings(settings: LLMSettings, index: int, parts: int) -> LLMSettings:
    """A worker's client settings: its share of calls in flight and of each endpoint's slots."""
    update: dict[str, Any] = {"concurrency": share(settings.concurrency, index, parts)}
    if settings.endpoint_concurrency is not None:
        update["endpoint_concurrency"] = share(settings.endpoint_concurrency, index, parts)
    if settings.endpoint_slots:
        update["endpoint_slots"] = {url: share(n, index, parts) for url, n in settings.endpoint_slots.items()}
    return settings.model_copy(update=update)


def _most_parts(clients: Sequence[LLMClient], concurrency: int) -> int:
    """How many workers the limits can be split into, each keeping at least one of everything."""
    limits = [concurrency]
    for client in clients:
        limits += [client.settings.concurrency, *client.settings.endpoint_slots.values()]
        if client.settings.endpoint_concurrency is not None:
            limits.append(client.settings.endpoint_concurrency)
    return min(limits)


# -- the channel between two processes -------------------------------------------------------------
class Channel:
    """One end of a socket pair to the other process, read on the event loop: messages are pickled
    (cloudpickle, so an episode function made in a notebook or a closure travels too)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None

    def listen(self) -> None:
        """Start reading messages into :attr:`inbox` on the running loop (None arrives at the end)."""
        self.inbox = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.connection.fileno(), self._readable)

    def deafen(self) -> None:
        if self._loop is not None and not self.connection.closed:
            self._loop.remove_reader(self.connection.fileno())
        self._loop = None

    def _readable(self) -> None:
        try:
            while self.connection.poll():
                self.inbox.put_nowait(pickle.loads(self.connection.recv_bytes()))
        except (EOFError, OSError):
            self.deafen()
            self.inbox.put_nowait(None)

    def send(self, message: Any) -> None:
        import cloudpickle

        self.connection.send_bytes(cloudpickle.dumps(message))


# -- this process's side ----------------------------------------------------------------------------
@dataclass(eq=False)
class Worker:
    """A worker process and the channel to it."""

    process: subprocess.Popen
    channel: Channel
    clients: set[str] = field(default_factory=set)
    """Clients the worker was told about in the current job (by key)."""

    @classmethod
    def start(cls) -> "Worker":
        ours, theirs = socket.socketpair()
        try:
            process = subprocess.Popen([sys.executable, "-m", "psit_lib.runs.processes", str(theirs.fileno())],
                                       pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
        finally:
            theirs.close()
        return cls(process, Channel(Connection(ours.detach())))

    def stop(self) -> None:
        self.channel.deafen()
        self.channel.connection.close()  # the worker reads the end of its channel and exits
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_IDLE: list[Worker] = []
"""Workers between runs of this process, kept for its next run (a notebook's sweep parts)."""


def _hire() -> Worker:
    while _IDLE:
        worker = _IDLE.pop()
        if worker.process.poll() is None:
            return worker
    return Worker.start()


@atexit.register
def dismiss_workers() -> None:
    """End the idle workers (at exit, or when a caller wants their resources back)."""
    while _IDLE:
        _IDLE.pop().stop()


@dataclass
class Job:
    """What a worker needs besides the specs: the episode function and the runner's function that runs one
    into its record (:func:`psit_lib.runs.runner.episode_record`), seeds and sampling, its lanes (episodes in
    flight), the notebook folder (for kept checkpoints)."""

    episode_fn: Any
    record: Callable[..., Awaitable[dict[str, Any]]]
    run_seed: int
    sampling: SamplingDefaults | None
    lanes: int
    folder: str


@dataclass(frozen=True)
class ClientPlan:
    """How a worker builds a client like one of this process's: its settings (a share of the limits) and
    the response cache it reads and writes."""

    settings: LLMSettings
    cache_path: str | None
    cache_mode: str


async def run_queue(todo: Sequence[Any], one: Callable[[Any], Awaitable[None]],
                    write: Callable[[dict[str, Any]], Awaitable[None]], *, pick: Callable[[Any], LLMClient],
                    episode_fn: Any, record: Callable[..., Awaitable[dict[str, Any]]], store: RunStore,
                    run_seed: int, sampling: SamplingDefaults | None, concurrency: int,
                    processes: int | None) -> float:
    """Every spec of ``todo``, once: run here by ``one`` (``concurrency`` at a time), or by worker
    processes (``record`` runs one episode into its record there) whose records go to ``write``; the CPU
    seconds the workers spent on them comes back. A :class:`FatalRunError` anywhere stops them all."""
    queue: deque[Any] = deque(todo)
    clients = {id(c): c for c in (pick(s) for s in todo)}
    asked = min(wanted_processes(processes), len(queue), _most_parts(list(clients.values()), concurrency))
    here = {"target": 0 if asked > 1 else concurrency, "running": 0}
    workers: list[Worker] = []
    worker_cpu = [0.0]

    async def lane() -> None:
        here["running"] += 1
        try:
            while queue and here["running"] <= here["target"]:
                await one(queue.popleft())
        finally:
            here["running"] -= 1

    async def drive(worker: Worker, index: int, parts: int, lanes: int) -> None:
        """Hand ``worker`` specs as it asks, write what it sends back; a worker that dies leaves its
        episodes to the queue."""
        outstanding: dict[str, Any] = {}
        worker.channel.listen()
        worker.clients.clear()
        worker.channel.send(("job", Job(episode_fn, record, run_seed, sampling, lanes, str(store.dir))))
        try:
            while True:
                message = await worker.channel.inbox.get()
                if message is None:  # the worker died: its episodes were not recorded
                    queue.extendleft(reversed(list(outstanding.values())))
                    return
                kind, body = message
                if kind == "want":
                    batch = [queue.popleft() for _ in range(min(body, len(queue)))]
                    plans = {}
                    for spec in batch:
                        outstanding[spec.episode_id] = spec
                        client = pick(spec)
                        key = str(id(client))
                        if key not in worker.clients:
                            worker.clients.add(key)
                            settings = (shared_settings(client.settings, index, parts) if parts > 1
                                        else client.settings)
                            cache = client.cache
                            plans[key] = ClientPlan(settings, str(cache.path) if cache else None,
                                                    cache.mode if cache else "off")
                    worker.channel.send(("specs", ([(spec, str(id(pick(spec)))) for spec in batch], plans)))
                elif kind == "record":
                    outstanding.pop(body["episode_id"], None)
                    await write(body)
                elif kind == "done":
                    for key, stats in body["stats"].items():
                        clients[int(key)].stats.add(stats)
                    worker_cpu[0] += body["cpu"]
                    return
                elif kind == "fatal":
                    raise body
        finally:
            worker.channel.deafen()

    async def borrow(group: asyncio.TaskGroup) -> None:
        """Take the cores ``psit run`` lends the notebook while enough episodes wait."""
        while queue:
            lent = store.lent_processes()
            if lent > 1 + len(workers) and len(queue) >= JOIN_MIN_EPISODES * max(1, concurrency // lent):
                lanes = max(1, concurrency // lent)
                here["target"] = max(1, here["target"] - lanes)
                workers.append(worker := _hire())
                group.create_task(drive(worker, 0, 1, lanes))
            await asyncio.sleep(LEND_POLL)

    try:
        try:
            async with asyncio.TaskGroup() as group:  # a fatal error cancels the episodes in flight
                if asked > 1:
                    for index in range(asked):
                        workers.append(worker := _hire())
                        group.create_task(drive(worker, index, asked, share(concurrency, index, asked)))
                else:
                    for _ in range(concurrency):
                        group.create_task(lane())
                    if all(c.settings.backend == "sim" for c in clients.values()):
                        group.create_task(borrow(group))
            if queue:  # left by workers that died
                here["target"] = concurrency
                async with asyncio.TaskGroup() as group:
                    for _ in range(concurrency):
                        group.create_task(lane())
        except* FatalRunError as errors:
            raise errors.exceptions[0] from None
    except BaseException:
        for worker in workers:  # stopped mid-job: what they hold is unknown
            worker.process.kill()
            worker.process.wait()
        raise
    _IDLE.extend(w for w in workers if w.process.poll() is None)
    return worker_cpu[0]


# -- the worker's side ------------------------------------------------------------------------------
async def _serve(channel: Channel) -> None:
    """Run jobs until the channel closes."""
    channel.listen()
    while (message := await channel.inbox.get()) is not None:
        kind, job = message
        if kind == "job":
            await _run_job(channel, job)


async def _run_job(channel: Channel, job: Job) -> None:
    from psit_lib.llm.cache import ResponseCache
    from psit_lib.runs.backend import make_client
    from psit_lib.runs.checkpoints import kept_checkpoints

    gc.freeze()
    cpu = time.process_time()
    clients: dict[str, LLMClient] = {}
    caches: dict[str, ResponseCache] = {}
    specs: asyncio.Queue[Any] = asyncio.Queue()
    ranks = itertools.count(1)
    ended = asyncio.Event()

    def client_of(key: str, plan: ClientPlan) -> LLMClient:
        cache = None
        if plan.cache_path is not None and plan.cache_mode != "off":
            if plan.cache_path not in caches:
                caches[plan.cache_path] = ResponseCache(plan.cache_path, mode=plan.cache_mode)
            cache = caches[plan.cache_path]
        return make_client(plan.settings, cache=cache)

    async def receive() -> None:
        while (message := await channel.inbox.get()) is not None:
            if message[0] == "specs":
                batch, plans = message[1]
                for key, plan in plans.items():
                    clients[key] = client_of(key, plan)
                for item in batch:
                    specs.put_nowait(item)
                if not batch:
                    ended.set()
        ended.set()

    async def lane() -> None:
        while True:
            if specs.empty():
                if ended.is_set():
                    return
                getter = asyncio.ensure_future(specs.get())
                stop = asyncio.ensure_future(ended.wait())
                done, _ = await asyncio.wait({getter, stop}, return_when=asyncio.FIRST_COMPLETED)
                stop.cancel()
                if getter not in done:
                    getter.cancel()
                    continue
                spec, key = getter.result()
            else:
                spec, key = specs.get_nowait()
            EPISODE_RANK.set(next(ranks))
            record = await job.record(spec, job.episode_fn, clients[key], run_seed=job.run_seed,
                                      sampling=job.sampling)
            channel.send(("record", record))
            channel.send(("want", 1))

    receiver = asyncio.create_task(receive())
    channel.send(("want", job.lanes))
    try:
        async with kept_checkpoints(Path(job.folder)):
            async with asyncio.TaskGroup() as group:
                for _ in range(job.lanes):
                    group.create_task(lane())
    except* FatalRunError as errors:
        channel.send(("fatal", errors.exceptions[0]))
    else:
        channel.send(("done", {"stats": {key: client.stats for key, client in clients.items()},
                               "cpu": time.process_time() - cpu}))
    finally:
        receiver.cancel()
        for client in clients.values():
            await client.close_connections()
        for cache in caches.values():
            cache.close()


def main(fd: int) -> None:
    """A worker: run the jobs its parent sends on the socket ``fd`` until the parent closes it."""
    from psit_lib.runs.plugins import load_plugins

    load_plugins()  # a plug-in's agents and tasks register on import, as in the parent
    channel = Channel(Connection(fd))
    asyncio.run(_serve(channel))


if __name__ == "__main__":
    main(int(sys.argv[1]))
