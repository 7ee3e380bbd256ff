"""The memory-strategy ablation (notebook 04): the agent grid, several tasks, significance.

Grid: {workflow, autonomous} x {overwrite, append_delete, patch_replace}, with vanilla and
private CoT as anchors (and retrieval baselines when named). Proposed methods are the
working-memory agents; baselines are vanilla and any retrieval agent. Each proposed method is
tested against each baseline with a one-sided Fisher exact test per (task, model), Holm
correction within each method's comparisons (see ``experiment.significance``).
"""

from __future__ import annotations

import pandas as pd

from psit_lib.llm.client import ModelSession
from psit_lib.runs.records import EpisodeRecord, ok_results
from psit_lib.runs.runner import EpisodeSpec, StudyEpisode, study_episode
from psit_lib.studies.psit.protocol.records import ForkEpisode
from psit_lib.studies.psit.tasks.registry import make_task

from psit_lib.studies.psit.protocol.experiment import fork_episode_fn, plan_fork_episodes
from psit_lib.studies.psit.protocol.params import AblationParams


def plan_ablation(params: AblationParams, models: list[str]) -> list[EpisodeSpec]:
    return [spec for name in params.tasks
            for spec in plan_fork_episodes(make_task(name, params.condition_choice), params, models)]


def ablation_episode_fn(params: AblationParams) -> StudyEpisode[ForkEpisode]:
    per_task = {name: fork_episode_fn(make_task(name, params.condition_choice), params) for name in params.tasks}

    @study_episode(ForkEpisode)
    async def episode(spec: EpisodeSpec, session: ModelSession) -> ForkEpisode:
        return await per_task[spec.params["task"]](spec, session)

    return episode


def edit_success_table(records: list[EpisodeRecord[ForkEpisode]]) -> pd.DataFrame | str:
    """Per (agent, tool): memory edits attempted and the share the tool accepted."""
    edits = pd.DataFrame([{"agent": rec.spec["agent"], "ok": edit.ok, "tool": edit.name}
                          for rec, result in ok_results(records)
                          for turn in result.memory_edits for edit in turn])
    if edits.empty:
        return "no memory edits"
    return edits.groupby(["agent", "tool"])["ok"].agg(["count", "mean"]).rename(columns={"mean": "success share"})
