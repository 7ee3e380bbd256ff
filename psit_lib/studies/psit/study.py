"""The private-state study as :class:`~psit_lib.runs.study.Study` objects.

``STUDY`` is the fork test (notebooks 01 to 04: 01's live section, 02 Hangman, 03 diagnosis, 04
the memory-strategy ablation); ``SECRET_CHOICE_STUDY`` is notebook 07, whose records are of
another type. Both are made of the study's existing functions; the tables they score are the
notebooks' own (``protocol/scoring.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from psit_lib.runs.runner import EpisodeSpec
from psit_lib.runs.study import Scorer, StoredRun, Study, StudyNotebook, imported
from psit_lib.studies.psit.protocol import ablation
from psit_lib.studies.psit.protocol import experiment as fx
from psit_lib.studies.psit.protocol import secret_choice as sc
from psit_lib.studies.psit.protocol.params import AblationParams, ForkTestParams, SecretChoiceParams
from psit_lib.studies.psit.protocol.records import ForkEpisode, SecretChoiceEpisode
from psit_lib.studies.psit.protocol.scoring import fork_tables
from psit_lib.studies.psit.tasks.base import PsitTask
from psit_lib.studies.psit.tasks.registry import make_task
from psit_lib.studies.psit.theorem_params import TheoremParams


_differences = imported("psit_lib.studies.psit.differences:DIFFERENCES")
_assumptions = imported("psit_lib.studies.psit.assumptions:SIMULATOR_ASSUMPTIONS")
_catalogue = imported("psit_lib.studies.psit.catalogue:prompt_catalogue", call=True)


def _fork_sweeps(params: ForkTestParams) -> dict[str, list[Any]]:
    return {params.sweep_knob: list(params.sweep_values)}


def _fork_notebook(task_of: Callable[[ForkTestParams], PsitTask], tables: tuple[str, ...]) -> StudyNotebook:
    """Notebooks 02 and 03: one task, the fork test over the agent list, one sweep."""

    def scorer(name: str) -> Scorer:
        def score(run: StoredRun) -> pd.DataFrame:
            task = task_of(run.params)
            return fork_tables(run, fx.plan_fork_episodes(task, run.params, run.models), task, [task.name])[name]
        return score

    return StudyNotebook(
        params_model=ForkTestParams,
        plan=lambda params, models: fx.plan_fork_episodes(task_of(params), params, models),
        episode=lambda params: fx.fork_episode_fn(task_of(params), params),
        scorers={name: scorer(name) for name in tables},
        sweeps=_fork_sweeps,
        sweep_plan=lambda params, models: fx.sweep_specs(task_of(params), params, models),
        key_tables=("table1_self_consistency", "self_consistency", "summary"))


def _ablation_specs(params: AblationParams, models: list[str]) -> list[EpisodeSpec]:
    return ablation.plan_ablation(params, models)[0]


def _ablation_scorer(name: str) -> Scorer:
    def score(run: StoredRun) -> pd.DataFrame:
        params = run.params
        specs = _ablation_specs(params, run.models)
        sweep_task = make_task(params.tasks[0], params.condition_choice)
        return fork_tables(run, specs, sweep_task, list(params.tasks))[name]
    return score


def _ablation_episode(params: AblationParams) -> Any:
    return ablation.ablation_episode_fn({t: make_task(t, params.condition_choice) for t in params.tasks}, params)


FORK_TABLES = ("self_consistency", "table1_self_consistency", "significance", "significance_table1", "summary",
               "reproduction", "outcome_mix", "sweep")

STUDY = Study(
    name="psit",
    result_type=ForkEpisode,
    notebooks={
        "01_theorem_illustration": StudyNotebook(params_model=TheoremParams),
        "02_hangman_fork_tests": _fork_notebook(lambda p: make_task("hangman"), FORK_TABLES),
        "03_diagnosis_ddxplus": _fork_notebook(lambda p: make_task("diagnosis", p.condition_choice),
                                               (*FORK_TABLES, "candidate_sources")),
        "04_memory_strategy_ablations": StudyNotebook(
            params_model=AblationParams, plan=_ablation_specs, episode=_ablation_episode,
            scorers={name: _ablation_scorer(name)
                     for name in ("self_consistency", "table1_self_consistency", "significance",
                                  "significance_table1", "summary", "reproduction", "sweep")},
            sweeps=_fork_sweeps,
            sweep_plan=lambda params, models: fx.sweep_specs(make_task(params.tasks[0], params.condition_choice),
                                                             params, models),
            key_tables=("table1_self_consistency", "self_consistency", "summary")),
    },
    prompt_catalogue=_catalogue, differences=_differences, simulator_assumptions=_assumptions)


# -- notebook 07: the secret-choice experiment and Appendix E (its tables, scored from stored records) --


def _secret_frame(run: StoredRun) -> pd.DataFrame:
    return sc.secret_frame(run.select(sc.plan_secret_choice(run.params, run.models)), run.notebook)


def _fork_reveals(run: StoredRun) -> pd.DataFrame:
    """The main fork-test reveals of the run this notebook belongs to (Appendix E's source)."""
    import os

    from psit_lib.studies.psit.protocol import appendix_e

    folder = run.folder.dir if run.folder is not None else None
    return appendix_e.main_fork_reveals(appendix_e.fork_folder_root(run.params.read_from, folder,
                                                                    os.environ.get("PSIT_RUN_DIR")))


def _secret_spread(run: StoredRun) -> pd.DataFrame:
    return sc.metrics_table(_secret_frame(run), ["task", "model", "temperature"], n_boot=run.params.n_boot,
                            seed=run.params.seed)


def _appendix_e(run: StoredRun) -> pd.DataFrame:
    from psit_lib.studies.psit.protocol import appendix_e

    return appendix_e.top_secrets(_fork_reveals(run))


SECRET_CHOICE_SCORERS: dict[str, Scorer] = {
    "secret_spread": _secret_spread,
    "chi_square": lambda run: sc.chi_square_table(_secret_frame(run), ["task", "model", "temperature"]),
    "appendix_e_top10": _appendix_e,
    "attractors": lambda run: sc.attractor_table(_secret_frame(run), _fork_reveals(run)),
}
"""Notebook 07's tables by the names it saves them under. Appendix E and the attractors' fork
counts read the fork-test notebooks of the same run folder (records only, no model call)."""

SECRET_CHOICE_STUDY = Study(
    name="psit-secret-choice",
    result_type=SecretChoiceEpisode,
    notebooks={"07_secret_distribution_mode_collapse": StudyNotebook(
        params_model=SecretChoiceParams, plan=sc.plan_secret_choice, episode=sc.secret_choice_episode_fn,
        scorers=SECRET_CHOICE_SCORERS, key_tables=("appendix_e_top10", "attractors", "secret_spread"))},
    prompt_catalogue=_catalogue, differences=_differences, simulator_assumptions=_assumptions)
