"""Tables, figures and readings on what a real model can leave behind: nothing scored, only
failed episodes, one agent or system, no run at all. Each table comes out empty (with its
columns) or NaN, each figure says "no scored data", nothing raises.

Every case here crashed a notebook before: a small model whose judge replies could not be read
(notebook 05: ``KeyError: 'relevance'`` in ``score_table``), an endpoint that refused every call
(notebook 06: ``KeyError: 0`` in ``passk_frame``), and the figure builders fed those tables.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from psit_lib.analysis.labels import figure_provenance, provenance_label
from psit_lib.analysis.plots import NO_DATA, plot_rate_intervals, plot_state_size
from psit_lib.studies.psit.figures import plot_entropy_vs_temperature
from psit_lib.studies.psit.secrets import secret_summary
from psit_lib.runs.records import EpisodeRecord, read_records
from psit_lib.studies.acc import metrics as accm
from acc_turns import recorded_turns
from basis_trials import trials_frame
from psit_lib.studies.acc.figures import plot_footprint_by_domain, plot_outcome, plot_rates_per_turn
from psit_lib.studies.acc.judge import CRITERIA
from psit_lib.studies.acc.records import AccEpisode
from psit_lib.studies.basis import results as br
from psit_lib.studies.basis.records import BasisTrial

LABEL = provenance_label("openai", "tiny-model", None)
USAGE = {"calls": 0, "cache_hits": 0, "prompt_tokens": 0, "completion_tokens": 0, "calls_by_role": {}}
AGENTS = ("transcript", "retrieval_k3", "acc")


def says_no_data(fig: Figure) -> bool:
    """The figure's titles or texts say there is nothing to show, and it keeps its provenance."""
    texts = [fig._suptitle.get_text() if fig._suptitle else ""]
    for ax in fig.axes:
        texts += [ax.get_title(), *(t.get_text() for t in ax.texts)]
    return figure_provenance(fig) == LABEL and any(NO_DATA in t for t in texts)


# -- notebook 05: ACC turns nobody scored --------------------------------------------------------

def acc_record(episode_id: str, *, judged: bool, failed: bool = False) -> dict:
    """A stored ACC episode of two turns; ``judged=False`` is a judge whose replies were unreadable
    (every turn a judge_error), ``failed=True`` an episode lost to the endpoint."""
    envelope = {"episode_id": episode_id, "spec": {"domain": "finance", "model": "tiny-model"}, "calls": [],
                "wall_seconds": 0.0, "usage": USAGE}
    if failed:
        return {**envelope, "status": "error", "error": "ModelCallError: refused"}
    verdict = {"relevance": 7, "answer_quality": 7, "instruction_following": 7, "coherence": 7,
               "supported_claims": 2, "unsupported_claims": 1, "active_constraints": 1, "violations": 0,
               "omitted_required": 0}
    turns = [{"turn": turn, "topic": "t", "query": "q",
              "agents": {n: {"answer": "x", "footprint_tokens": 10 * turn, "details": {"ccs_valid": True}}
                         for n in AGENTS},
              "judge": {"order": list(AGENTS), "memory_error": None, "canonical_memory": {},
                        "scoring_error": None if judged else "JudgeOutputError: no JSON object in the reply",
                        "evaluations": {n: verdict for n in AGENTS} if judged else {}}}
             for turn in (1, 2)]
    return {**envelope, "status": "ok", "error": None, "model": "tiny-model", "domain": "finance",
            "scenario_id": "finance/0", "scenario_seed": 0, "n_turns": 2, "turns": turns, "ccs_failures": 0,
            "judge_failures": 0 if judged else 2, "memory_failures": 0}


ACC_CASES = {
    "unscored turns": [acc_record("e1", judged=False)],
    "only failed episodes": [acc_record("e1", judged=False, failed=True)],
    "unscored and failed": [acc_record("e1", judged=False), acc_record("e2", judged=False, failed=True)],
    "no episode": [],
}


@pytest.fixture(params=list(ACC_CASES), ids=list(ACC_CASES))
def unscored_turns(request) -> pd.DataFrame:
    return recorded_turns(read_records(ACC_CASES[request.param], AccEpisode))


def test_turns_frame_has_every_column_when_nothing_was_scored(unscored_turns):
    assert set(accm.TURN_COLUMNS) <= set(unscored_turns.columns)
    assert unscored_turns[list(accm.SCORE_COLUMNS)].isna().all().all()


def test_score_table_without_scored_turns_is_nan_not_a_key_error(unscored_turns):
    scores = accm.score_table(unscored_turns, n_boot=50)
    assert list(scores.columns) == ["agent", "criterion", "n", "mean", "std", "ci_low", "ci_high"]
    assert (scores["n"] == 0).all() and scores["mean"].isna().all()
    assert len(scores) == len(accm.agents_of(unscored_turns)) * len(CRITERIA)
    assert says_no_data(plot_outcome(scores, LABEL))


def test_rate_table_without_scored_turns(unscored_turns):
    rates = accm.rate_table(unscored_turns)
    assert list(rates.columns) == ["agent", "metric", "failures", "opportunities", "rate", "wilson_low", "wilson_high"]
    assert (rates["opportunities"] == 0).all() and rates["rate"].isna().all()


def test_acc_figures_say_no_scored_data(unscored_turns):
    per_turn = accm.per_turn_table(unscored_turns, by=("domain",))
    assert says_no_data(plot_rates_per_turn(per_turn, LABEL, facet="domain"))
    answered = unscored_turns[unscored_turns["agent"].notna()].astype({"turn": int})
    footprints = accm.footprint_table(unscored_turns)
    if answered.empty:  # nothing answered at all: the footprint figures have nothing either
        assert says_no_data(plot_state_size(answered, x="turn", y="footprint_tokens", hue="agent", label=LABEL,
                                            n_boot=50))
        assert says_no_data(plot_footprint_by_domain(footprints, LABEL))
    else:  # answers were given (and have a footprint) even though no judge reply could be read
        assert not says_no_data(plot_footprint_by_domain(footprints, LABEL))


def test_rates_per_turn_marks_the_panel_of_a_rate_with_no_scored_turn():
    df = recorded_turns(read_records([acc_record("e1", judged=True)], AccEpisode))
    per_turn = accm.per_turn_table(df)  # drift is defined from turn 2 on: one scored turn per agent
    per_turn.loc[:, "drift"] = np.nan
    fig = plot_rates_per_turn(per_turn, LABEL)
    titles = [ax.get_title() for ax in fig.axes]
    assert any(NO_DATA in t and "drift" in t for t in titles)
    assert any(t == "hallucination per turn" for t in titles)


# -- notebook 06: trials that all failed, one system only -----------------------------------------

def failed_trial(scenario: str, system: str, trial: int) -> EpisodeRecord[BasisTrial]:
    return EpisodeRecord[BasisTrial](episode_id=f"tiny-model/{scenario}/{system}/{trial}", status="error",
                                     error="ModelCallError: refused", usage=USAGE, calls=[], wall_seconds=0.0,
                                     spec={"model": "tiny-model", "scenario": scenario, "system": system,
                                           "trial": trial})


@pytest.mark.parametrize("systems", [("baseline", "basis"), ("basis",)])
def test_passk_frame_of_only_failed_trials_is_empty_with_its_columns(systems):
    trials = trials_frame([failed_trial("quote_only_vs_book", s, i) for s in systems for i in range(2)])
    passk = br.passk_frame(trials, [1, 2])
    assert passk.empty
    assert {"model", "scenario", "system", "group", "k", "n", "successes", "pass_at_k", "pass_hat_k",
            "first_k_all_succeed"} <= set(passk.columns)
    shown = passk.drop(columns=["group"])  # what the notebook displays and prints
    assert shown[["scenario", "system", "k", "n", "successes", "pass_at_k", "pass_hat_k"]].round(3).empty
    comparison = br.passk_comparison(passk, br.reference_design_table(trials))
    assert comparison.empty and "study_reported_pass_hat_k" in comparison.columns
    rates = br.success_table(trials)
    measured = rates[(rates.source == br.MEASURED) & (rates.scenario != br.MEAN_ROW)]
    assert says_no_data(plot_rate_intervals(measured, "scenario", LABEL, hue="system"))


# -- shared figure builders -----------------------------------------------------------------------

RATE_COLUMNS = ["task", "agent", "n_scored", "n_failed", "successes", "rate", "wilson_low", "wilson_high"]


def test_rate_intervals_empty_or_all_nan_say_no_scored_data():
    empty = pd.DataFrame(columns=RATE_COLUMNS)
    assert says_no_data(plot_rate_intervals(empty, "agent", LABEL, hue="task"))
    unscored = pd.DataFrame([["hangman", "vanilla", 0, 2, 0, math.nan, math.nan, math.nan]], columns=RATE_COLUMNS)
    assert says_no_data(plot_rate_intervals(unscored, "agent", LABEL))


def test_rate_intervals_draw_one_agent_with_a_zero_width_interval():
    one = pd.DataFrame([["hangman", "vanilla", 3, 0, 3, 1.0, 1.0, 1.0]], columns=RATE_COLUMNS)
    fig = plot_rate_intervals(one, "agent", LABEL, hue="task")
    assert not says_no_data(fig) and figure_provenance(fig) == LABEL


def test_state_size_without_rows_says_no_scored_data():
    empty = pd.DataFrame(columns=["agent", "model", "turn", "tokens"])
    assert says_no_data(plot_state_size(empty, label=LABEL))


SECRET_COLUMNS = ["task", "model", "agent", "temperature", "secret", "status", "episode_id", "source_notebook"]


def secrets_frame(secrets: list) -> pd.DataFrame:
    return pd.DataFrame([["hangman", "tiny-model", "vanilla", 0.3, s, "ok" if s else "unparseable", f"e{i}", "07"]
                         for i, s in enumerate(secrets)], columns=SECRET_COLUMNS)


def test_entropy_figure_without_a_readable_secret_says_no_scored_data():
    for secrets in ([None, None], []):
        summary = secret_summary(secrets_frame(secrets), ["task", "temperature"], "secret", n_boot=50)
        assert says_no_data(plot_entropy_vs_temperature(summary, label=LABEL, hue="task"))


def test_one_sided_trials_basis_failed_baseline_scored():
    """basis lost every trial, baseline scored fewer trials than the largest k: no crash, no 'nan'."""
    trials = pd.DataFrame([{"model": "tiny-model", "scenario": "premium_bias", "system": system, "trial": i,
                            "status": "ok" if system == "baseline" else "error", "scored": system == "baseline",
                            "success": system == "baseline" and i == 0, "outcome": "x", "delegations": 0,
                            "ingest_fallbacks": 0, "recorded_errors": 0, "decided_without_tool_calls": False,
                            "error": None} for system in ("baseline", "basis") for i in range(3)])
    rates, passk = br.success_table(trials), br.passk_frame(trials, [1, 5])
    assert set(passk["system"]) == {"baseline"} and passk.loc[passk["k"] == 5, "pass_hat_k"].isna().all()
    assert "nothing to compare" in br.success_reading(rates)
