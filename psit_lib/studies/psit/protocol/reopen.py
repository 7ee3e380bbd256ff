"""Reopen a fork-test episode of a finished run at any turn, or fork it again, with LangGraph's API.

A run keeps its agents' checkpoints only with ``PSIT_CHECKPOINTS=sqlite`` (each notebook folder's
``checkpoints.sqlite``, ``runs.checkpoints``). The episode's record names its thread and the
checkpoint of every turn and branch; :func:`reopen_episode` rebuilds the episode's agent on that
thread of the file, so LangGraph's own calls read and run it::

    import psit_lib
    from psit_lib.studies.psit.protocol.reopen import reopen_episode

    run = psit_lib.load_run("myrun")
    async with reopen_episode(run, "02", "hangman/psit-sim/private_cot/0003") as episode:
        snapshot = await episode.graph.aget_state(episode.config(turn=2))   # the state after turn 2
        history = [s async for s in episode.graph.aget_state_history(episode.config())]
        again = await episode.agent.send("Is your word 'planet'? Answer with a single word: yes or no.",
                                         episode.session("again"), checkpoint_id=episode.fork_id)

A new branch is a new child of the checkpoint it starts from, written to the same file; the run's
records are never changed. Its model calls go to the backend the environment configures now.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psit_lib.llm.client import LLMClient, ModelSession
from psit_lib.llm.settings import LLMSettings
from psit_lib.runs.backend import make_client
from psit_lib.runs.checkpoints import checkpoints_file, open_checkpoints, sharing
from psit_lib.runs.load import Run, load_run
from psit_lib.runs.plugins import load_plugins
from psit_lib.studies.psit.agents.graph_agent import GraphAgent
from psit_lib.studies.psit.protocol.fork_test import fork_agent
from psit_lib.studies.psit.protocol.params import ForkTestParams
from psit_lib.studies.psit.protocol.records import ForkEpisode
from psit_lib.studies.psit.tasks.registry import make_task

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig


@dataclass
class ReopenedEpisode:
    """One recorded episode on its checkpoints: ``agent`` (its graph on the episode's thread of the
    run's file; ``agent.graph`` is the compiled LangGraph graph), the ``record`` and a client for
    new branches."""

    record: ForkEpisode
    agent: GraphAgent
    episode_id: str
    run_seed: int
    client: LLMClient

    @property
    def graph(self) -> Any:
        return self.agent.graph

    @property
    def fork_id(self) -> str:
        """The checkpoint every branch of the episode forked from (its last pre-fork turn's)."""
        return self.record.turn_checkpoints[-1].id

    def config(self, turn: int | None = None, branch: str | None = None) -> RunnableConfig:
        """LangGraph's config of the episode's thread: at pre-fork ``turn`` (1 is the opener), at a
        fork ``branch`` (``"reveal"`` or a candidate's secret), or its latest checkpoint."""
        if turn is not None and branch is not None:
            raise ValueError("name a turn or a branch, not both")
        if turn is not None:
            if not 1 <= turn <= len(self.record.turn_checkpoints):
                raise ValueError(f"turn {turn} is not a pre-fork turn of {self.episode_id} "
                                 f"(it has {len(self.record.turn_checkpoints)})")
            return self.agent.run_config(self.record.turn_checkpoints[turn - 1].id)
        if branch is not None:
            return self.agent.run_config(self._branch(branch))
        return self.agent.run_config()

    def _branch(self, branch: str) -> str:
        found = {"reveal": self.record.reveal.checkpoint if self.record.reveal else None,
                 **{c.secret: c.checkpoint for c in self.record.candidates}}
        if found.get(branch) is None:
            raise ValueError(f"{self.episode_id} has no recorded branch {branch!r}; its branches: "
                             + ", ".join(name for name, at in found.items() if at is not None))
        return found[branch].id  # type: ignore[union-attr]

    def session(self, branch: str) -> ModelSession:
        """A session for a new branch ``branch`` of the episode: its seeds follow the run's seed, the
        episode and the branch's name, as the run's own branches' did."""
        return ModelSession(self.client, run_seed=self.run_seed, episode_id=self.episode_id).branch(branch)


@asynccontextmanager
async def reopen_episode(run: Run | str | Path, notebook: str, episode_id: str) -> AsyncIterator[ReopenedEpisode]:
    """The fork-test episode ``episode_id`` of ``notebook`` (a name, stem or number) in ``run`` (a
    :func:`~psit_lib.load_run` result, a run id or a folder), reopened on the checkpoints it kept;
    one sentence when the run kept none or has no such episode."""
    load_plugins()  # an episode of a plug-in agent needs its family registered
    loaded = run if isinstance(run, Run) else load_run(run)
    folder = loaded.folder(notebook)
    path = checkpoints_file(folder.dir)
    stored = folder.records().get(episode_id)
    if stored is None or stored.get("status") != "ok":
        raise KeyError(f"{folder.dir.name} has no finished episode {episode_id!r}")
    record = folder.typed_records(ForkEpisode, [episode_id])[0].result
    if record is None or not record.turn_checkpoints or record.thread_id is None:
        raise ValueError(f"{episode_id} recorded no checkpoints (a record made before they were recorded)")
    params = dict(loaded.params[folder.dir.name])
    fork = ForkTestParams.model_validate({k: v for k, v in params.items() if k in ForkTestParams.model_fields})
    task = make_task(record.task, fork.condition_choice)
    settings = LLMSettings.from_env().model_copy(update={"model": record.model})
    client = make_client(settings)
    try:
        async with open_checkpoints(path.parent) as saver:
            with sharing(saver):
                agent = fork_agent(task, record.agent, fork.fork_settings())
            if not isinstance(agent, GraphAgent):
                raise TypeError(f"{record.agent} is not a LangGraph agent, so it has no checkpoints to reopen")
            agent.thread_id, agent.head = record.thread_id, record.turn_checkpoints[-1].id
            yield ReopenedEpisode(record=record, agent=agent, episode_id=episode_id, run_seed=fork.seed,
                                  client=client)
    finally:
        await client.close_connections()
