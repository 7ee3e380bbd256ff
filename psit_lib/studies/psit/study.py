"""The private-state study as :class:`~psit_lib.runs.study.Study` objects.

``STUDY`` is the fork test (notebooks 01 to 04: 01's live section, 02 Hangman, 03 diagnosis, 04
the memory-strategy ablation; each notebook's sweep is one of the study's named sweeps,
``protocol/sweeps.py``); ``SECRET_CHOICE_STUDY`` is notebook 07, whose records are of
another type. Both are made of the study's existing functions; the tables they score are the
notebooks' own (``protocol/scoring.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from psit_lib.runs.runner import EpisodeSpec
from psit_lib.runs.study import Scorer, StoredRun, Study, StudyNotebook, imported
from psit_lib.studies.psit.protocol import ablation
from psit_lib.studies.psit.protocol import experiment as fx
from psit_lib.studies.psit.protocol import secret_choice as sc
from psit_lib.studies.psit.protocol.params import AblationParams, ForkTestParams, SecretChoiceParams
from psit_lib.studies.psit.protocol.records import ForkEpisode, SecretChoiceEpisode
from psit_lib.studies.psit.protocol.scoring import fork_tables, rescored, sweep_table
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


class _SharedTables:
    """One computation of a notebook's main tables per stored run, shared by the scorers that
    each return one of them (the tables rest on the same frame and tests)."""

    def __init__(self, compute: Callable[[StoredRun], dict[str, pd.DataFrame]]) -> None:
        self.compute = compute
        self.run: StoredRun | None = None
        self.tables: dict[str, pd.DataFrame] = {}

    def __call__(self, run: StoredRun) -> dict[str, pd.DataFrame]:
        if run is not self.run:
            self.tables, self.run = self.compute(run), run
        return self.tables

    def scorer(self, name: str) -> Scorer:
        return lambda run: self(run)[name]


def _fork_scorers(specs: Callable[[Any, list[str]], Sequence[EpisodeSpec]], tasks: Callable[[Any], list[str]],
                  sweep_task: Callable[[Any], PsitTask], names: tuple[str, ...]) -> dict[str, Scorer]:
    """The named tables of a fork-test notebook (main episodes: ``specs``) and its sweep table."""
    shared = _SharedTables(lambda run: fork_tables(run, specs(run.params, run.models), tasks(run.params)))
    scorers = {name: shared.scorer(name) for name in names}
    scorers["sweep"] = lambda run: sweep_table(run, sweep_task(run.params))
    return scorers


FORK_TABLES = ("self_consistency", "table1_self_consistency", "significance", "significance_table1", "summary",
               "reproduction", "outcome_mix")


def _fork_notebook(task_of: Callable[[ForkTestParams], PsitTask], tables: tuple[str, ...]) -> StudyNotebook:
    """Notebooks 02 and 03: one task, the fork test over the agent list, the named sweep."""
    return StudyNotebook(
        params_model=ForkTestParams,
        plan=lambda params, models: fx.plan_fork_episodes(task_of(params), params, models),
        episode=lambda params: fx.fork_episode_fn(task_of(params), params),
        scorers=_fork_scorers(lambda params, models: fx.plan_fork_episodes(task_of(params), params, models),
                              lambda params: [task_of(params).name], task_of, tables),
        sweeps=_fork_sweeps,
        sweep_plan=lambda params, models: fx.sweep_specs(task_of(params), params, models),
        key_tables=("table1_self_consistency", "self_consistency", "summary"))


def _ablation_specs(params: AblationParams, models: list[str]) -> list[EpisodeSpec]:
    return ablation.plan_ablation(params, models)[0]


def _ablation_episode(params: AblationParams) -> Any:
    return ablation.ablation_episode_fn({t: make_task(t, params.condition_choice) for t in params.tasks}, params)


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


def _live_specs(params: TheoremParams, models: list[str]) -> list[EpisodeSpec]:
    return fx.plan_fork_episodes(make_task(LIVE_TASK), live_fork_params(params), models)


def _live_outcome_mix(run: StoredRun) -> pd.DataFrame:
    """Outcome counts per agent of the live episodes, outcomes derived again from the records."""
    df = fx.fork_frame(rescored(run.select(_live_specs(run.params, run.models))))
    return fx.outcome_mix(df) if len(df) else pd.DataFrame()


THEOREM_NOTEBOOK = StudyNotebook(
    params_model=TheoremParams, plan=_live_specs,
    episode=lambda params: fx.fork_episode_fn(make_task(LIVE_TASK), live_fork_params(params)),
    scorers={"live_outcome_mix": _live_outcome_mix}, key_tables=("live_outcome_mix",))
"""Notebook 01: sections 1-5 are exact computation (no records); section 6 runs the fork test."""


STUDY = Study(
    name="psit",
    result_type=ForkEpisode,
    notebooks={
        "01_theorem_illustration": THEOREM_NOTEBOOK,
        "02_hangman_fork_tests": _fork_notebook(lambda p: make_task("hangman"), FORK_TABLES),
        "03_diagnosis_ddxplus": _fork_notebook(lambda p: make_task("diagnosis", p.condition_choice),
                                               (*FORK_TABLES, "candidate_sources")),
        "04_memory_strategy_ablations": StudyNotebook(
            params_model=AblationParams, plan=_ablation_specs, episode=_ablation_episode,
            scorers=_fork_scorers(_ablation_specs, lambda params: list(params.tasks), _sweep_task,
                                  ("self_consistency", "table1_self_consistency", "significance",
                                   "significance_table1", "summary", "reproduction")),
            sweeps=_fork_sweeps,
            sweep_plan=lambda params, models: fx.sweep_specs(_sweep_task(params), params, models),
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
