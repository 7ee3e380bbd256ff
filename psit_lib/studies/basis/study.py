"""The BASIS study (notebook 06) as a :class:`~psit_lib.runs.study.Study`: task -> trial -> scores -> metrics.

Both scorers are pure functions of the stored calls and rides, so ``psit rescore`` recomputes every
table without a model.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from psit_lib.runs.records import EpisodeRecord
from psit_lib.runs.scores import Metric, Score, ScoreContext, Scored, Scorer, metric, scorer
from psit_lib.runs.study import MAIN, Part, Study, StudyNotebook, imported
from psit_lib.studies.basis import experiment as bx
from psit_lib.studies.basis.records import BasisTrial
from psit_lib.studies.basis import results as br
from psit_lib.studies.basis.results import RATES_HIGHER_IS_BETTER, SWEEPS_HIGHER_IS_BETTER
from psit_lib.studies.basis.scenarios import SCENARIOS

NOTEBOOK = "06_basis_cab_scenarios"
REFERENCE_PART = "reference:"
"""The prefix of the reference design's parts (``reference:k=<k>``)."""

_differences = imported("psit_lib.studies.basis.differences:DIFFERENCES")
_assumptions = imported("psit_lib.studies.basis.assumptions:SIMULATOR_ASSUMPTIONS")
_catalogue = imported("psit_lib.studies.basis.prompts:prompt_catalogue", call=True)


# -- scorers -----------------------------------------------------------------------------------------

def _trial(record: EpisodeRecord[Any]) -> BasisTrial:
    result = record.require_result()
    assert isinstance(result, BasisTrial)
    return result


@scorer("success", version=1)
def success(record: EpisodeRecord[Any], ctx: ScoreContext) -> Score:
    """The reference ``validate()`` on the calls that reached the app, with what the tables show beside."""
    trial = _trial(record)
    return Score(value=bool(SCENARIOS[trial.scenario].validate(trial.tool_calls)),
                 explanation="the reference scenario's validate() on the calls that reached the app",
                 metadata={"delegations": len(trial.delegations), "ingest_fallbacks": trial.ingest_fallbacks,
                           "recorded_errors": len(trial.errors),
                           "decided_without_tool_calls": bool(trial.decided_without_tool_calls)})


@scorer("final_state_success", version=1)
def final_state_success(record: EpisodeRecord[Any], ctx: ScoreContext) -> Score:
    """The workbench's final-state check (a labelled second view)."""
    trial = _trial(record)
    return Score(value=bool(SCENARIOS[trial.scenario].final_state(trial.tool_calls, trial.rides)),
                 explanation="the rides standing at the end and the calls made (this workbench's check)")


SCORERS: tuple[Scorer, ...] = (success, final_state_success)


# -- parts -------------------------------------------------------------------------------------------

def reference_parts(params: bx.BasisParams, models: list[str]) -> list[Part]:
    """The reference code's design, one part per k: ``reference_sets`` sets of k fresh trials per
    (model, scenario, system), each part with its k and number of sets."""
    specs = bx.reference_set_specs(params, models)
    return [Part(f"{REFERENCE_PART}k={k}", [s for s in specs if s.params["ref_k"] == k],
                 {"k": k, "sets": params.reference_sets})
            for k in params.effective_ks if params.reference_sets]


# -- metrics -----------------------------------------------------------------------------------------

def main_trials(scored: Scored) -> pd.DataFrame:
    """The main part's trials (the notebook's counts line reads it)."""
    return br.trials_frame_of(scored.part(MAIN))


def reference_trials(scored: Scored) -> pd.DataFrame:
    """Every trial of the reference design's parts, in plan order."""
    frames = [scored.part(p) for p in scored.part_names(REFERENCE_PART)]
    return br.trials_frame_of(pd.concat(frames, ignore_index=True) if frames else scored.scores.iloc[0:0])


@metric("success_rates", higher_is_better=RATES_HIGHER_IS_BETTER, parts=[MAIN])
def success_rates(scored: Scored) -> pd.DataFrame:
    """Success (reference ``validate()``) over the main trials, Wilson 95%, the paper's rates beside."""
    return br.success_table(main_trials(scored))


@metric("success_final_state", higher_is_better=RATES_HIGHER_IS_BETTER, parts=[MAIN])
def success_final_state(scored: Scored) -> pd.DataFrame:
    """The final-state view of the main trials."""
    return br.success_table(main_trials(scored), outcome="final_state_success")


@metric("success_pooled", higher_is_better=RATES_HIGHER_IS_BETTER, parts=[REFERENCE_PART])
def success_pooled(scored: Scored) -> pd.DataFrame:
    """The paper's Success column: every run of the reference design pooled per cell."""
    return br.success_table(reference_trials(scored))


@metric("relative_gain", higher_is_better={"relative_gain": True, "gap_low": True, "gap_high": True},
        parts=[REFERENCE_PART])
def relative_gain(scored: Scored) -> pd.DataFrame:
    """The paper's headline rule, (BASIS - baseline) / baseline, on the pooled success."""
    return br.relative_gain_table(success_pooled(scored))


@metric("passk", higher_is_better={"pass_at_k": True, "pass_hat_k": True, "first_k_all_succeed": True}, parts=[MAIN])
def passk(scored: Scored) -> pd.DataFrame:
    """Unbiased pass@k and pass^k (and the first-k variant) over the main trials per cell and k."""
    return br.passk_frame(main_trials(scored), scored.params.effective_ks)


@metric("passk_comparison", higher_is_better={"pass_hat_k": True, "pass_at_k": True, "reference_pass_hat_k": True,
                                              "reference_pass_at_k": True},
        parts=[MAIN, REFERENCE_PART])
def passk_comparison(scored: Scored) -> pd.DataFrame:
    """Unbiased, set-based (the paper's design) and reported pass^k / pass@k side by side."""
    return br.passk_comparison(passk(scored), br.reference_design_table(reference_trials(scored)))


@metric("sweeps", higher_is_better=SWEEPS_HIGHER_IS_BETTER, parts=["sweep:"])
def sweeps(scored: Scored) -> pd.DataFrame:
    """The BASIS - baseline success gap over all scenarios at each swept value, Newcombe 95% (success
    is higher-is-better, so a positive gap favours BASIS)."""
    from psit_lib.analysis.sweeps import GAP_COLUMNS, gap_table

    parts = scored.part_names("sweep:") if scored.params.sweep_trials else []
    tables = []
    for knob in sorted({str(scored.parts[p]["knob"]) for p in parts}):
        trials = pd.concat([br.trials_frame_of(scored.part(p)).assign(value=scored.parts[p]["value"])
                            for p in parts if str(scored.parts[p]["knob"]) == knob], ignore_index=True)
        tables.append(gap_table(trials[trials["scored"]], knob=knob, value_col="value", system_col="system",
                                a="basis", b="baseline", outcome_col="success"))
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=GAP_COLUMNS)


METRICS: tuple[Metric, ...] = (success_rates, success_final_state, success_pooled, relative_gain, passk,
                               passk_comparison, sweeps)
"""Every table notebook 06 saves, each a metric over the stored per-trial scores."""


STUDY = Study(
    name="basis",
    result_type=BasisTrial,
    notebooks={NOTEBOOK: StudyNotebook(
        params_model=bx.BasisParams, plan=bx.make_specs, episode=lambda params: bx.run_basis_trial,
        scorers=SCORERS, metrics=METRICS, sweeps=lambda params: params.sweeps, sweep_plan=bx.sweep_specs,
        parts=reference_parts, key_table="success_pooled")},
    prompt_catalogue=_catalogue, differences=_differences, simulator_assumptions=_assumptions,
    episode_view=imported("psit_lib.studies.basis.conversation_view:VIEW"))

