"""The ACC study (notebook 05) as a :class:`~psit_lib.runs.study.Study` over its existing functions.

Scorers: ``hallucination_drift`` and ``footprint_by_domain``, from the main episodes' stored
turns. The judge-sensitivity and sweep tables rest on further runs (re-judging, swept models)
and are not rescored yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from psit_lib.runs.study import StoredRun, Study, StudyNotebook
from psit_lib.studies.acc import experiment as accx
from psit_lib.studies.acc import metrics as accm
from psit_lib.studies.acc.records import AccEpisode


def _turns(run: StoredRun) -> pd.DataFrame:
    return accm.turns_frame(run.select(accx.make_specs(run.params, run.models)))


def _differences() -> Sequence[Any]:
    from psit_lib.studies.acc.differences import DIFFERENCES

    return DIFFERENCES


def _assumptions() -> Mapping[str, Any]:
    from psit_lib.studies.acc.assumptions import SIMULATOR_ASSUMPTIONS

    return SIMULATOR_ASSUMPTIONS


def _catalogue() -> Mapping[str, str]:
    from psit_lib.studies.acc.catalogue import prompt_catalogue

    return prompt_catalogue()


STUDY = Study(
    name="acc",
    result_type=AccEpisode,
    notebooks={"05_acc_judge_evaluation": StudyNotebook(
        params_model=accx.AccParams, plan=accx.make_specs, episode=lambda params: accx.run_acc_episode,
        scorers={"hallucination_drift": lambda run: accm.rate_table(_turns(run)),
                 "footprint_by_domain": lambda run: accm.footprint_table(_turns(run))},
        sweeps=lambda params: params.sweeps,
        key_tables=("hallucination_drift", "footprint_by_domain"))},
    prompt_catalogue=_catalogue, differences=_differences, simulator_assumptions=_assumptions)
