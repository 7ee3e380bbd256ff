"""The ACC study (notebook 05) as a :class:`~psit_lib.runs.study.Study` over its existing functions.

Scorers: ``hallucination_drift`` and ``footprint_by_domain``, from the main episodes' stored
turns. The judge-sensitivity and sweep tables rest on further runs (re-judging, swept models)
and are not rescored yet.
"""

from __future__ import annotations


import pandas as pd

from psit_lib.runs.study import StoredRun, Study, StudyNotebook, imported
from psit_lib.studies.acc import experiment as accx
from psit_lib.studies.acc import metrics as accm
from psit_lib.studies.acc import sensitivity as accs
from psit_lib.studies.acc.records import AccEpisode


def _turns(run: StoredRun) -> pd.DataFrame:
    return accm.turns_frame(run.select(accx.make_specs(run.params, run.models)))


_differences = imported("psit_lib.studies.acc.differences:DIFFERENCES")
_assumptions = imported("psit_lib.studies.acc.assumptions:SIMULATOR_ASSUMPTIONS")
_catalogue = imported("psit_lib.studies.acc.catalogue:prompt_catalogue", call=True)


STUDY = Study(
    name="acc",
    result_type=AccEpisode,
    notebooks={"05_acc_judge_evaluation": StudyNotebook(
        params_model=accx.AccParams, plan=accx.make_specs, episode=lambda params: accx.run_acc_episode,
        scorers={"hallucination_drift": lambda run: accm.rate_table(_turns(run)),
                 "footprint_by_domain": lambda run: accm.footprint_table(_turns(run))},
        sweeps=lambda params: params.sweeps, sweep_plan=accs.sweep_specs,
        unplanned="the judge variants' re-scoring calls",
        key_tables=("hallucination_drift", "footprint_by_domain"))},
    prompt_catalogue=_catalogue, differences=_differences, simulator_assumptions=_assumptions)
