"""The one episode runner every experiment uses.

Bounded concurrency, a progress bar, per-episode seeds (through ``ModelSession``), and an
error record per failed episode instead of an exception that would abort the whole run.
Finished episodes found in the store are skipped, which is what makes runs resumable.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import gc
import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Generic, Sequence, TypeVar

from pydantic import BaseModel
from tqdm.auto import tqdm

from psit_lib.llm.client import LLMClient, ModelSession, SamplingDefaults
from psit_lib.llm.errors import FatalRunError
from psit_lib.llm.replicas import EPISODE_RANK

from psit_lib.runs.folder import RunStore
from psit_lib.runs.paths import digest


@dataclass(frozen=True)
class EpisodeSpec:
    """One planned episode: a stable id (its seed depends on it) and its design cell."""

    episode_id: str
    params: dict[str, Any] = field(default_factory=dict)


EpisodeFn = Callable[[EpisodeSpec, ModelSession], Awaitable[dict[str, Any] | BaseModel]]

R = TypeVar("R", bound=BaseModel)


class StudyEpisode(Generic[R]):
    """An episode function that names the study result it returns (a pydantic model), so that
    :meth:`Experiment.run <psit_lib.runs.experiment.Experiment.run>` reads its records back typed.
    Made by the :func:`study_episode` decorator; called like the function it wraps."""

    def __init__(self, fn: Callable[[EpisodeSpec, ModelSession], Awaitable[R]], result_type: type[R]) -> None:
        self.fn = fn
        self.result_type = result_type
        functools.update_wrapper(self, fn)

    def __call__(self, spec: EpisodeSpec, session: ModelSession) -> Awaitable[R]:
        return self.fn(spec, session)


def study_episode(result_type: type[R]) -> Callable[[Callable[[EpisodeSpec, ModelSession], Awaitable[R]]],
                                                   StudyEpisode[R]]:
    """Decorate a study's episode function with the result model it returns."""
    def declare(fn: Callable[[EpisodeSpec, ModelSession], Awaitable[R]]) -> StudyEpisode[R]:
        return StudyEpisode(fn, result_type)
    return declare


@dataclass
class RunProgress:
    """Episode counts of one execution, written to the progress file ``psit run`` follows:
    ``resumed`` were finished before it, ``failed`` and ``cached`` (every call from the cache) are among ``done``."""

    planned: int
    resumed: int
    done: int = 0
    failed: int = 0
    cached: int = 0
    started: float = field(default_factory=time.time)
    finished: bool = False
    phase: str = ""
    """What these episodes are in the notebook ("main", "sweep unheld_secret"), shown by ``psit run``."""
    ended: float | None = None
    worker_cpu: float = 0.0
    """CPU seconds worker processes spent on these episodes (:mod:`psit_lib.runs.processes`)."""
    store: RunStore | None = None
    _written: float = 0.0

    def update(self, status: str, all_cached: bool) -> None:
        self.done += 1
        self.failed += status != "ok"
        self.cached += all_cached and status == "ok"
        self.write()

    def as_dict(self) -> dict[str, Any]:
        return {"planned": self.planned, "resumed": self.resumed, "done": self.done, "failed": self.failed,
                "cached": self.cached, "started": self.started, "finished": self.finished, "ended": self.ended,
                "phase": self.phase}

    def write(self, force: bool = False) -> None:
        now = time.time()
        if self.store is None or (not force and now - self._written < 0.25):
            return
        self._written = now
        self.store.write_progress(self.as_dict())


PROMPT_KEPT_CHARS = 4000
"""A system prompt up to this long is kept whole in the record; a longer one by its head and hash."""


def shown_prompt(text: str) -> str:
    """A system prompt as the episode record keeps it: whole, or its first 500 characters with its
    length and hash (a long prompt's memory block would otherwise repeat in every record)."""
    if len(text) <= PROMPT_KEPT_CHARS:
        return text
    return f"{text[:500]}… [{len(text):,} characters, sha256 {digest(text.encode())}]"


def describe_error(exc: BaseException) -> str:
    """One line: the exception type and message, without a traceback wall."""
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text[:500]}"


async def run_episodes(specs: Sequence[EpisodeSpec], episode_fn: EpisodeFn, *, store: RunStore,
                       **options: Any) -> list[dict[str, Any]]:
    """:func:`execute_episodes` (same arguments), then every planned episode's record in plan order,
    in the flat view (:func:`psit_lib.runs.records.flat_record`)."""
    await execute_episodes(specs, episode_fn, store=store, **options)
    return list(store.flat_records([s.episode_id for s in specs]).values())


async def episode_record(spec: EpisodeSpec, episode_fn: EpisodeFn, client: LLMClient, *, run_seed: int,
                         sampling: SamplingDefaults | None) -> dict[str, Any]:
    """Run one episode and return its record (what happened, or the error that stopped it); a
    :class:`FatalRunError` propagates. The same in this process and in a worker process."""
    session = ModelSession(client, run_seed=run_seed, episode_id=spec.episode_id, sampling=sampling)
    started = time.perf_counter()
    body: dict[str, Any] | None
    try:
        result = await episode_fn(spec, session)
        # a study's typed result is stored as JSON, nested in the record
        body = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
        status, error = "ok", None
    except FatalRunError:
        raise  # e.g. a replay-only cache miss: the run must stop, not record a failure
    except Exception as exc:  # recorded, never dropped
        body, status, error = None, "error", describe_error(exc)
    return {"episode_id": spec.episode_id, "status": status, "error": error, "spec": spec.params,
            "usage": session.usage_summary(),
            # concurrent branches finish in any order: list calls by where they were made
            "calls": [dataclasses.asdict(c) for c in sorted(session.log, key=lambda c: (c.path, c.index))],
            "wall_seconds": round(time.perf_counter() - started, 4),
            # what could not be read, however the episode ended (psit_lib.runs.health)
            "diagnostics": session.diagnostics.as_dict(),
            "system_prompts": {r: shown_prompt(t) for r, t in sorted(session.system_prompts.items())},
            "result": body}


async def execute_episodes(specs: Sequence[EpisodeSpec], episode_fn: EpisodeFn, *, store: RunStore,
                           client: LLMClient | Callable[[EpisodeSpec], LLMClient], run_seed: int,
                           sampling: SamplingDefaults | None = None, concurrency: int = 16, desc: str = "episodes",
                           progress: bool = True, count_progress: bool = False,
                           processes: int | None = None) -> RunProgress:
    """Run the unfinished episodes of ``specs``, appending one record each to ``store``; the episode
    counts of this execution come back. ``client``: one, or a function choosing an episode's (several
    models); ``count_progress`` writes the counts to the run folder as episodes finish. ``processes``
    (default ``PSIT_PROCESSES``, else 1): worker processes that run the episodes, each with its share of
    the limits (:mod:`psit_lib.runs.processes`); with one, they run here, and on the simulator workers
    may join when ``psit run`` lends the notebook an idle core."""
    from psit_lib.runs import processes as worker_processes

    # Everything alive now (vocabularies, tokenizers, the simulator's knowledge, compiled agent graphs)
    # lives as long as the process: out of the cyclic GC's scans with it. Episodes allocate many
    # short-lived objects (LangGraph's per-turn bookkeeping above all), and every collection of the
    # oldest generation would walk that heap again (measured on 02: about half of the harness CPU
    # per call that the LangGraph agents added).
    gc.freeze()
    pick = client if callable(client) and not isinstance(client, LLMClient) else (lambda spec: client)
    ids = [s.episode_id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError("episode ids must be unique within a run")
    finished = store.finished_ids()
    todo = [s for s in specs if s.episode_id not in finished]
    counts = RunProgress(planned=len(specs), resumed=len(specs) - len(todo), store=store if count_progress else None,
                         phase=desc)
    counts.write(force=True)
    bar = tqdm(total=len(specs), initial=len(specs) - len(todo), desc=desc, disable=not progress,
               unit="ep", mininterval=0.5)
    used: dict[int, LLMClient] = {}
    ranks = itertools.count(1)

    async def write(record: dict[str, Any]) -> None:
        # fsync waits on the disk: in a thread, so the other episodes' calls go on meanwhile
        await asyncio.to_thread(store.append, record)
        usage = record["usage"]
        counts.update(record["status"], all_cached=usage["calls"] > 0 and usage["cache_hits"] == usage["calls"])
        bar.update(1)

    async def one(spec: EpisodeSpec) -> None:
        EPISODE_RANK.set(next(ranks))  # its calls wait behind those of episodes started before it
        chosen = pick(spec)
        used[id(chosen)] = chosen
        await write(await episode_record(spec, episode_fn, chosen, run_seed=run_seed, sampling=sampling))

    try:
        counts.worker_cpu = await worker_processes.run_queue(
            todo, one, write, pick=pick, episode_fn=episode_fn, record=episode_record, store=store, run_seed=run_seed,
            sampling=sampling, concurrency=max(1, concurrency), processes=processes)
    finally:
        bar.close()
        counts.finished, counts.ended = True, time.time()
        counts.write(force=True)
        for used_client in used.values():
            await used_client.close_connections()
    return counts
