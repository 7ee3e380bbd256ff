"""The private-state study as one :class:`~psit_lib.runs.study.Study` object (notebooks 01-04, 07):
01's live section and 02-04 run the fork test (``protocol/scoring.py``); 07 the secret-choice
experiment, reading the fork tests of its run-mates (``protocol/secret_choice.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from psit_lib.llm.client import ModelSession
from psit_lib.runs.runner import EpisodeSpec, StudyEpisode, study_episode
from psit_lib.runs.study import Study, StudyNotebook, imported
from psit_lib.studies.psit.protocol import experiment as fx
from psit_lib.studies.psit.protocol import secret_choice as sc
from psit_lib.studies.psit.protocol.appendix_e import FORK_NOTEBOOKS
from psit_lib.studies.psit.protocol.params import AblationParams, ForkTestParams, SecretChoiceParams
from psit_lib.studies.psit.protocol.records import ForkEpisode, SecretChoiceEpisode
from psit_lib.studies.psit.protocol.scoring import FORK_SCORERS, fork_metrics
from psit_lib.studies.psit.tasks.base import PsitTask
from psit_lib.studies.psit.tasks.registry import make_task
from psit_lib.studies.psit.theorem_params import TheoremParams


_differences = imported("psit_lib.studies.psit.differences:DIFFERENCES")
_assumptions = imported("psit_lib.studies.psit.assumptions:SIMULATOR_ASSUMPTIONS")
_catalogue = imported("psit_lib.studies.psit.catalogue:prompt_catalogue", call=True)


def _fork_sweeps(params: ForkTestParams) -> dict[str, list[Any]]:
    """The study's sweep the notebook names (``params.sweep``): its knob and values."""
    swept = params.swept
    return {swept.knob: list(swept.values)}


FORK_TABLES = ("self_consistency", "table1_self_consistency", "significance", "significance_table1", "summary",
               "reproduction", "outcome_mix", "failure_modes", "state_size")


def _fork_notebook(task_of: Callable[[ForkTestParams], PsitTask], tables: tuple[str, ...]) -> StudyNotebook:
    """Notebooks 02 and 03: one task, the fork test over the agent list, the named sweep."""
    return StudyNotebook(
        params_model=ForkTestParams,
        plan=lambda params, models: fx.plan_fork_episodes(task_of(params), params, models),
        episode=lambda params: fx.fork_episode_fn(task_of(params), params),
        scorers=FORK_SCORERS, key_table="table1_self_consistency",
        metrics=fork_metrics(lambda params: [task_of(params).name], (*tables, "sweep")),
        sweeps=_fork_sweeps,
        sweep_plan=lambda params, models: fx.sweep_specs(task_of(params), params, models))


def _plan_ablation(params: AblationParams, models: list[str]) -> list[EpisodeSpec]:
    """Notebook 04: the fork test of every agent of the grid on every task."""
    return [spec for name in params.tasks
            for spec in fx.plan_fork_episodes(make_task(name, params.condition_choice), params, models)]


def _ablation_episode(params: AblationParams) -> StudyEpisode[ForkEpisode]:
    per_task = {name: fx.fork_episode_fn(make_task(name, params.condition_choice), params) for name in params.tasks}

    @study_episode(ForkEpisode)
    async def episode(spec: EpisodeSpec, session: ModelSession) -> ForkEpisode:
        return await per_task[spec.params["task"]](spec, session)

    return episode


def _sweep_task(params: AblationParams) -> PsitTask:
    """The ablation sweeps on its first task."""
    return make_task(params.tasks[0], params.condition_choice)


# -- notebook 01: the live fork test of section 6 ------------------------------------------------

LIVE_TASK = "hangman"


def live_fork_params(params: TheoremParams) -> ForkTestParams:
    """Notebook 01's live fork test as fork-test parameters: its agents and episodes, the
    theory's ``k`` candidates, and the fork after the theory's ``t_fork`` player guesses (the
    opener is turn 1, so at turn ``t_fork + 1``: one turn later than 02-04's default, registered
    in ``differences.py``), so the live fork meets the compatible sets of sections 2-4."""
    return ForkTestParams(agents=params.live_agents, n_episodes=params.n_live_episodes, t_fork=params.t_fork + 1,
                          n_candidates=params.k, temperature=params.temperature, max_tokens=params.max_tokens,
                          seed=params.seed, profile=params.profile, concurrency=params.concurrency, sweep_episodes=0)


def _live_specs(params: TheoremParams, models: list[str]) -> Sequence[EpisodeSpec]:
    return fx.plan_fork_episodes(make_task(LIVE_TASK), live_fork_params(params), models)


THEOREM_NOTEBOOK = StudyNotebook(
    params_model=TheoremParams, plan=_live_specs,
    episode=lambda params: fx.fork_episode_fn(make_task(LIVE_TASK), live_fork_params(params)),
    scorers=FORK_SCORERS, metrics=fork_metrics(lambda params: [LIVE_TASK], ("live_outcome_mix",)))
"""Notebook 01: sections 1-5 are exact computation (no records); section 6 runs the fork test."""


SECRET_CHOICE_NOTEBOOK = StudyNotebook(
    params_model=SecretChoiceParams, plan=sc.plan_secret_choice, episode=sc.secret_choice_episode_fn,
    scorers=sc.SCORERS, metrics=sc.METRICS, reads=FORK_NOTEBOOKS, key_table="appendix_e_top10",
    reads_from=lambda params: params.read_from)
"""Notebook 07: the secret-choice experiment, and Appendix E from the fork tests of 02, 03 and 04
(its run-mates: the folders of the same run, or of the run ``read_from`` names)."""


STUDY = Study(
    name="psit",
    result_type=ForkEpisode,
    result_types={"07_secret_distribution_mode_collapse": SecretChoiceEpisode},
    notebooks={
        "01_theorem_illustration": THEOREM_NOTEBOOK,
        "02_hangman_fork_tests": _fork_notebook(lambda p: make_task("hangman"), FORK_TABLES),
        "03_diagnosis_ddxplus": _fork_notebook(lambda p: make_task("diagnosis", p.condition_choice),
                                               (*FORK_TABLES, "candidate_sources")),
        "04_memory_strategy_ablations": StudyNotebook(
            params_model=AblationParams, plan=_plan_ablation, episode=_ablation_episode,
            scorers=FORK_SCORERS, key_table="table1_self_consistency",
            metrics=fork_metrics(lambda params: list(params.tasks),
                                 ("self_consistency", "table1_self_consistency", "significance",
                                  "significance_table1", "summary", "reproduction", "failure_modes", "state_size",
                                  "sweep")),
            sweeps=_fork_sweeps,
            sweep_plan=lambda params, models: fx.sweep_specs(_sweep_task(params), params, models)),
        "07_secret_distribution_mode_collapse": SECRET_CHOICE_NOTEBOOK,
    },
    prompt_catalogue=_catalogue, differences=_differences, simulator_assumptions=_assumptions,
    episode_view=imported("psit_lib.studies.psit.protocol.transcript_view:VIEW"))
