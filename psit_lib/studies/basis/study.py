"""The BASIS study (notebook 06) as a :class:`~psit_lib.runs.study.Study` over its existing functions.

Scorer: ``success_rates``, from the main trials' stored records. The pass^k comparison and the
sweeps rest on further runs (reference sets, swept models) and are not rescored yet.
"""

from __future__ import annotations


from psit_lib.runs.study import Study, StudyNotebook, imported
from psit_lib.studies.basis import experiment as bx
from psit_lib.studies.basis import results as br
from psit_lib.studies.basis.records import BasisTrial


_differences = imported("psit_lib.studies.basis.differences:DIFFERENCES")
_assumptions = imported("psit_lib.studies.basis.assumptions:SIMULATOR_ASSUMPTIONS")
_catalogue = imported("psit_lib.studies.basis.prompts:prompt_catalogue", call=True)


STUDY = Study(
    name="basis",
    result_type=BasisTrial,
    notebooks={"06_basis_cab_scenarios": StudyNotebook(
        params_model=bx.BasisParams, plan=bx.make_specs, episode=lambda params: bx.run_basis_trial,
        scorers={"success_rates": lambda run: br.success_table(
            br.trials_frame(run.select(bx.make_specs(run.params, run.models))))},
        sweeps=lambda params: params.sweeps, sweep_plan=bx.sweep_specs, further_plans=(bx.reference_set_specs,),
        key_tables=("success_rates", "passk_comparison"))},
    prompt_catalogue=_catalogue, differences=_differences, simulator_assumptions=_assumptions)
