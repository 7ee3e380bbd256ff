"""The BASIS study (notebook 06) as a :class:`~psit_lib.runs.study.Study`.

Generation: the main trials (:func:`experiment.make_specs`), the reference design's sets of k
fresh trials (:func:`experiment.reference_set_specs`) and the sweeps; :func:`run_all` runs the
three through the Study API. Scoring: every table of the notebook is a scorer over the stored
records (:data:`TABLES`), so ``psit rescore`` and :func:`score` recompute them without a model:
the verdicts themselves are recomputed from each record's calls and rides (``results.trials_frame``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from psit_lib.runs.study import StoredRun, Study, StudyNotebook, imported
from psit_lib.studies.basis import experiment as bx
from psit_lib.studies.basis.records import BasisTrial

if TYPE_CHECKING:
    import pandas as pd

    from psit_lib.runs import Experiment
    from psit_lib.runs.records import EpisodeRecord

NOTEBOOK = "06_basis_cab_scenarios"

_differences = imported("psit_lib.studies.basis.differences:DIFFERENCES")
_assumptions = imported("psit_lib.studies.basis.assumptions:SIMULATOR_ASSUMPTIONS")
_catalogue = imported("psit_lib.studies.basis.prompts:prompt_catalogue", call=True)


def _main(run: StoredRun) -> pd.DataFrame:
    from psit_lib.studies.basis import results as br

    return br.trials_frame(run.select(bx.make_specs(run.params, run.models)))


def _reference_records(run: StoredRun) -> list[Any]:
    return run.select(bx.reference_set_specs(run.params, run.models))


def _success_rates(run: StoredRun) -> pd.DataFrame:
    from psit_lib.studies.basis import results as br

    return br.success_table(_main(run))


def _success_final_state(run: StoredRun) -> pd.DataFrame:
    from psit_lib.studies.basis import results as br

    return br.success_table(_main(run), outcome="final_state_success")


def _success_pooled(run: StoredRun) -> pd.DataFrame:
    from psit_lib.studies.basis import results as br

    return br.pooled_success_table(_reference_records(run))


def _relative_gain(run: StoredRun) -> pd.DataFrame:
    from psit_lib.studies.basis import results as br

    return br.relative_gain_table(_success_pooled(run))


def _passk(run: StoredRun) -> pd.DataFrame:
    from psit_lib.studies.basis import results as br

    return br.passk_frame(_main(run), run.params.effective_ks)


def _passk_comparison(run: StoredRun) -> pd.DataFrame:
    from psit_lib.studies.basis import results as br

    return br.passk_comparison(_passk(run), br.reference_design_table(_reference_records(run)))


def _sweeps(run: StoredRun) -> pd.DataFrame:
    import pandas as pd

    from psit_lib.analysis.sweeps import GAP_COLUMNS
    from psit_lib.studies.basis import results as br

    tables = []
    for knob, values in sorted(run.params.sweeps.items()):  # stored parameters come back with sorted keys
        models = run.sweep_models(knob, values)
        if models and run.params.sweep_trials:
            tables.append(br.sweep_gaps(run.select(bx.sweep_specs(run.params, models)), models, knob))
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=GAP_COLUMNS)


TABLES: dict[str, Callable[[StoredRun], pd.DataFrame]] = {
    "success_rates": _success_rates,
    "success_final_state": _success_final_state,
    "success_pooled": _success_pooled,
    "relative_gain": _relative_gain,
    "passk": _passk,
    "passk_comparison": _passk_comparison,
    "sweeps": _sweeps,
}
"""Table name -> scorer: every table notebook 06 saves, each a pure function of stored records."""


STUDY = Study(
    name="basis",
    result_type=BasisTrial,
    notebooks={NOTEBOOK: StudyNotebook(
        params_model=bx.BasisParams, plan=bx.make_specs, episode=lambda params: bx.run_basis_trial,
        scorers=TABLES, sweeps=lambda params: params.sweeps, sweep_plan=bx.sweep_specs,
        further_plans=(bx.reference_set_specs,),
        key_tables=("success_pooled", "success_rates", "relative_gain", "passk_comparison"))},
    prompt_catalogue=_catalogue, differences=_differences, simulator_assumptions=_assumptions)


@dataclass(frozen=True)
class BasisRun:
    """What notebook 06 ran: the main trials, the reference design's runs and the sweeps' runs."""

    main: list[EpisodeRecord[Any]]
    reference: list[EpisodeRecord[Any]]
    sweeps: list[EpisodeRecord[Any]]

    @property
    def records(self) -> list[EpisodeRecord[Any]]:
        return [*self.main, *self.reference, *self.sweeps]


async def run_all(exp: Experiment, params: bx.BasisParams) -> BasisRun:
    """Run notebook 06's three designs through the Study API (finished episodes are never redone)."""
    main = await STUDY.run(exp, params)
    reference = await exp.run(bx.reference_set_specs(params, exp.models), bx.run_basis_trial,
                              concurrency=params.concurrency)
    sweeps = await STUDY.run_sweeps(exp, params)
    return BasisRun(main, reference, sweeps)


def score(exp: Experiment, params: bx.BasisParams, run: BasisRun) -> dict[str, pd.DataFrame]:
    """Every table of notebook 06 from the run's records (no model call), named as saved."""
    return STUDY.score_experiment(exp, params, run.records)
