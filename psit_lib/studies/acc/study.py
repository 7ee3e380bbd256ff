"""The ACC study (notebook 05) as a :class:`~psit_lib.runs.study.Study`.

Generation: the main episodes (:meth:`Study.run`), the re-judging of every finished episode
under each judge prompt (:func:`~psit_lib.studies.acc.sensitivity.run_rejudge`, judge calls
only) and the sweeps of the study's simulator assumptions (:meth:`Study.run_sweeps`, the
study's :data:`~psit_lib.studies.acc.experiment.SWEEPS` unless ``sweeps`` is given).

Scoring: every table the notebook saves is a scorer over stored records, so the notebook's
tables and ``psit rescore`` are computed by the same functions and re-scoring makes no model
call: the paper's turn-averaged rates (``summary_rates``), the pooled rates
(``hallucination_drift``), the judge scores, the footprint per domain, the CCS serialisations,
the judge-prompt sensitivity (from the stored re-judged turns) and the sweeps (from the stored
swept episodes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pandas as pd

from psit_lib.analysis.sweeps import GAP_COLUMNS
from psit_lib.runs.study import StoredRun, Study, StudyNotebook, imported
from psit_lib.studies.acc import experiment as accx
from psit_lib.studies.acc import metrics as accm
from psit_lib.studies.acc import sensitivity as accs
from psit_lib.studies.acc import summary as accsum
from psit_lib.studies.acc.records import AccEpisode, RejudgedEpisode

SWEEP_METRICS: tuple[str, ...] = ("drift", "hallucination")


def main_records(run: StoredRun) -> list[accx.AccRecord]:
    """The stored records of the notebook's main plan."""
    return run.select(accx.make_specs(run.params, run.models))


def _turns(run: StoredRun) -> pd.DataFrame:
    return accm.turns_frame(main_records(run))


def judge_sensitivity(run: StoredRun) -> pd.DataFrame:
    """The sensitivity table from the stored re-judged turns (no judge call)."""
    specs = accs.rejudge_specs(main_records(run), list(run.params.judge_variants))
    return accs.sensitivity_table(dataclasses.replace(run, result_type=RejudgedEpisode).select(specs))


def sweep_table(run: StoredRun) -> pd.DataFrame:
    """The ACC - replay gap per swept value and metric, from the stored swept episodes (empty
    on a real endpoint, where no sweep ran)."""
    tables = []
    known = list(accx.SWEEPS)
    knobs = sorted(run.params.sweeps, key=lambda k: (known.index(k) if k in known else len(known), k))
    for knob in knobs:  # the study's order (stored parameters come back with their keys sorted)
        values = run.params.sweeps[knob]
        models = run.sweep_models(knob, values)
        if models:
            records = run.select(accs.sweep_specs(run.params, models))
            tables += [accs.sweep_gaps(records, models, knob, m, seed=run.params.seed) for m in SWEEP_METRICS]
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=[*GAP_COLUMNS, "metric"])


def judge_scores(run: StoredRun) -> pd.DataFrame:
    return accm.score_table(_turns(run), n_boot=run.params.n_boot, seed=run.params.seed)


SCORERS: dict[str, Callable[[StoredRun], pd.DataFrame]] = {
    "summary_rates": lambda run: accsum.summary_table(_turns(run)),
    "hallucination_drift": lambda run: accm.rate_table(_turns(run)),
    "judge_scores": judge_scores,
    "footprint_by_domain": lambda run: accm.footprint_table(_turns(run)),
    "ccs_forms": lambda run: accm.ccs_form_table(main_records(run)),
    "judge_sensitivity": judge_sensitivity,
    "sweeps": sweep_table,
}

def scored_tables(exp: Any, params: accx.AccParams) -> dict[str, pd.DataFrame]:
    """Every table of notebook 05, by the study's scorers over ``exp``'s stored records (no
    model call): the tables ``psit rescore`` reproduces, for a notebook run interactively too
    (whose folder is not named after the notebook)."""
    return STUDY.score_experiment(exp, params)


_differences = imported("psit_lib.studies.acc.differences:DIFFERENCES")
_assumptions = imported("psit_lib.studies.acc.assumptions:SIMULATOR_ASSUMPTIONS")
_catalogue = imported("psit_lib.studies.acc.catalogue:prompt_catalogue", call=True)


STUDY = Study(
    name="acc",
    result_type=AccEpisode,
    notebooks={"05_acc_judge_evaluation": StudyNotebook(
        params_model=accx.AccParams, plan=accx.make_specs, episode=lambda params: accx.run_acc_episode,
        scorers=SCORERS,
        sweeps=lambda params: params.sweeps, sweep_plan=accs.sweep_specs,
        unplanned="the judge variants' re-scoring calls",
        key_tables=("summary_rates", "hallucination_drift", "footprint_by_domain"))},
    prompt_catalogue=_catalogue, differences=_differences, simulator_assumptions=_assumptions)
