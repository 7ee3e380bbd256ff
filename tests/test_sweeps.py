"""Sweeps of simulator assumptions, generated readings and the differences registry."""

from __future__ import annotations

import pandas as pd
import pytest

from psit_lib.analysis.differences import Difference, differences_table
from psit_lib.analysis.result_sentences import grouped_rate_readings, rate_reading
from psit_lib.analysis.stats import rate_table
from psit_lib.analysis.sweeps import gap_table, gap_verdicts, mean_gap, proportion_gap, sweep_reading
from psit_lib.llm import LLMClient, LLMSettings
from psit_lib.runs import Experiment, RunStore, run_episodes
from psit_lib.sim.profiles import UnknownProfileError, get_profile, with_override
from psit_lib.sim.transport import SimTransport
from psit_lib.studies.psit.protocol.experiment import ForkTestParams, fork_episode_fn, plan_fork_episodes
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.protocol.transcript_view import episode_row


# -- profiles with overrides ------------------------------------------------------------------

def test_a_profile_spec_overrides_knobs_of_its_base_profile():
    profile = get_profile("cautious, prior_exponent=1 ,reasoning=false")
    assert profile.unheld_secret == "deny" and profile.prior_exponent == 1.0 and profile.reasoning is False
    assert profile.family == "cautious" and profile.name == "cautious,prior_exponent=1,reasoning=false"
    assert get_profile("default").family == "default"


@pytest.mark.parametrize("spec, needle", [
    ("nosuch", "unknown simulator profile"),
    ("default,nosuch=1", "knob among"),
    ("default,prior_exponent", "knob=value"),
    ("default,leak_propensity=2", "bad value"),
    ("default,unheld_secret=sometimes", "bad value"),
])
def test_a_bad_profile_spec_is_one_clear_error(spec, needle):
    with pytest.raises(UnknownProfileError, match=needle):
        get_profile(spec)


def test_with_override_adds_or_replaces_one_knob():
    assert with_override("default", "prior_exponent", 0.5) == "default,prior_exponent=0.5"
    assert with_override("default,prior_exponent=0.5,leak_propensity=0", "prior_exponent", 1) == \
        "default,leak_propensity=0,prior_exponent=1"
    with pytest.raises(UnknownProfileError):
        with_override("default", "not_a_knob", 1)


async def _fork_records(tmp_path, profile: str) -> dict[str, tuple]:
    task = HangmanTask()
    params = ForkTestParams(agents=["vanilla", "workflow_overwrite"], n_episodes=3)
    client = LLMClient(LLMSettings(cache="off", sim_profile=profile), transport=SimTransport())
    records = await run_episodes(plan_fork_episodes(task, params, ["psit-sim"]), fork_episode_fn(task, params),
                                 store=RunStore(tmp_path / profile), client=client, run_seed=5, progress=False)
    await client.aclose()
    return {r["episode_id"]: (episode_row(r)["outcome"], r["revealed"] if "revealed" in r else None, r["transcript"]) for r in records}


async def test_a_knob_the_task_never_reads_leaves_its_episodes_identical(tmp_path):
    """Swept profiles share the base profile's random draws, so a sweep compares like with like:
    the BASIS-only knob changes nothing in a Hangman study, the prior exponent does."""
    base = await _fork_records(tmp_path, "default")
    unrelated = await _fork_records(tmp_path, "default,notices_contradictions=0")
    related = await _fork_records(tmp_path, "default,prior_exponent=2")
    assert base == unrelated
    assert base != related


def test_experiment_sweep_models_names_one_simulated_model_per_value(tmp_path):
    exp = Experiment("sweep", {}, settings=LLMSettings(cache="off"), run_dir=tmp_path)
    models = exp.sweep_models("prior_exponent", [0.25, 1])
    assert models == {0.25: "psit-sim:default,prior_exponent=0.25", 1: "psit-sim:default,prior_exponent=1"}
    assert set(models.values()) <= set(exp.clients)
    real = Experiment("sweep", {}, settings=LLMSettings(backend="openai", base_urls=("http://127.0.0.1:9/v1",),
                                                         model="m", cache="off"), run_dir=tmp_path / "real")
    assert real.sweep_models("prior_exponent", [1]) == {}


def test_each_swept_value_is_its_own_part_named_in_one_place():
    """A fork-test notebook's sweep is one part per value; the part carries its knob, value and
    model (built by ``sweep_model_name``, the one place), so no table maps a model name back to a
    value; on a real endpoint (no sweep models) there is no sweep part."""
    from psit_lib.runs.sweeps import sweep_model_name, sweep_model_names
    from psit_lib.studies.psit.study import STUDY

    notebook = "02_hangman_fork_tests"
    params = ForkTestParams(agents=["vanilla", "workflow_overwrite"], n_episodes=10, sweep_episodes=2,
                            sweep_agents=["workflow_overwrite", "vanilla"])
    swept = params.swept
    parts = STUDY.parts(notebook, params, ["psit-sim"],
                        lambda knob, values: sweep_model_names("default", knob, values))
    assert [p.name for p in parts] == ["main", *(f"sweep:{swept.knob}={v}" for v in swept.values)]
    for part, value in zip(parts[1:], swept.values):
        model = sweep_model_name("default", swept.knob, value)
        assert part.metadata == {"knob": swept.knob, "value": value, "model": model}
        assert {s.params["model"] for s in part.specs} == {model} and len(part.specs) == 4
    assert [p.name for p in STUDY.parts(notebook, params, ["m"], None)] == ["main"]


# -- gaps and their intervals -------------------------------------------------------------------

def test_proportion_gap_uses_newcombe_and_stays_inside_minus_one_to_one():
    gap, low, high = proportion_gap(8, 10, 2, 10)
    assert gap == pytest.approx(0.6) and low == pytest.approx(0.1618, abs=1e-3) and high == pytest.approx(0.8027, abs=1e-3)
    gap, low, high = proportion_gap(10, 10, 0, 10)
    assert gap == 1 and -1 <= low <= high <= 1
    assert all(x != x for x in proportion_gap(1, 0, 1, 3))  # no episodes: NaN, not an error


def test_mean_gap_brackets_the_observed_gap_and_is_seeded():
    a, b = [3.0, 4.0, 5.0, 4.5, 3.5], [1.0, 2.0, 1.5, 2.5, 2.0]
    gap, low, high = mean_gap(a, b, seed=1)
    assert gap == pytest.approx(2.2) and low < gap < high and low > 0
    assert mean_gap(a, b, seed=1) == (gap, low, high)
    assert mean_gap([1.0, 1.0], [1.0, 1.0]) == (0.0, 0.0, 0.0)


def _swept(rows):
    return pd.DataFrame([{"value": v, "system": s, "ok": i < wins}
                         for v, s, wins, n in rows for i in range(n)])


def test_gap_table_and_its_reading_say_when_an_assumption_decides_the_result():
    df = _swept([(0.0, "basis", 5, 10), (0.0, "baseline", 5, 10), (0.9, "basis", 10, 10), (0.9, "baseline", 2, 10)])
    table = gap_table(df, knob="notices", value_col="value", system_col="system", a="basis", b="baseline",
                      outcome_col="ok")
    assert table["gap"].tolist() == pytest.approx([0.0, 0.8])
    assert gap_verdicts(table).tolist() == ["within noise", "a ahead"]
    reading = sweep_reading(table)
    assert "decided by this simulator assumption" in reading and "notices=0.9" in reading
    robust = table.iloc[[1]]
    assert "stays ahead at every swept value" in sweep_reading(robust)
    assert "cannot tell" in sweep_reading(table.iloc[[0]])
    with pytest.raises(ValueError):
        gap_table(df, knob="k", value_col="value", system_col="system", a="basis", b="baseline",
                  outcome_col="ok", kind="median")


# -- readings -----------------------------------------------------------------------------------

def _rates(counts):
    df = pd.DataFrame([{"agent": a, "ok": i < w} for a, (w, n) in counts.items() for i in range(n)])
    return rate_table(df, "agent", "ok")


def test_rate_reading_names_the_leader_margin_and_whether_the_gap_test_separates():
    # (was: "...whether_intervals_overlap", asserting "do not overlap" / "overlap, so this run does
    # not separate them": separation is now the Newcombe interval of the gap, see test_readings_direction)
    clear = rate_reading(_rates({"cot": (19, 20), "vanilla": (1, 20)}), "agent")
    assert clear.startswith("cot has the highest rate, 0.95") and "by 0.9;" in clear and "excludes zero" in clear
    close = rate_reading(_rates({"a": (6, 10), "b": (5, 10), "c": (4, 10)}), "agent")
    assert "cannot be told apart" in close and "too small to rank" in close
    tie = rate_reading(_rates({"a": (5, 10), "b": (5, 10), "c": (0, 10)}), "agent")
    assert tie.startswith("a, b tie for the highest rate (0.5)")
    assert rate_reading(_rates({"a": (1, 2)}), "agent").startswith("Only a was scored")


def test_grouped_readings_give_one_line_per_group():
    df = pd.DataFrame([{"task": t, "agent": a, "ok": i < 3} for t in ("x", "y") for a in ("p", "q") for i in range(5)])
    text = grouped_rate_readings(rate_table(df, ["task", "agent"], "ok"), ["task"], "agent")
    assert text.count("\n- ") == 1 and text.startswith("- **x**")


# -- differences registry -------------------------------------------------------------------------

def test_differences_table_selects_a_notebooks_entries_and_rejects_empty_fields():
    entries = [Difference("a", "s", "h", "w", "e", ("02", "03")), Difference("b", "s", "h", "w", "e", ("05",))]
    assert differences_table(entries, "02_hangman_fork_tests")["point"].tolist() == ["a"]
    assert differences_table(entries, "04").empty
    with pytest.raises(ValueError, match="why is empty"):
        Difference("c", "s", "h", " ", "e", ("02",))


def test_the_fork_test_readings_take_their_direction_from_the_metrics():
    """02-04 hand their readings the direction their tables' metrics declare (no registry): a higher
    self-consistency rate, and so a higher swept rate, is better; 07's spread has no better or worse."""
    from psit_lib.studies.psit.study import STUDY

    for notebook in ("02_hangman_fork_tests", "03_diagnosis_ddxplus", "04_memory_strategy_ablations"):
        assert STUDY.direction(notebook, "table1_self_consistency", "rate") == "higher"
        assert STUDY.direction(notebook, "self_consistency", "unreadable_replies") == "lower"
        assert STUDY.direction(notebook, "sweep", "a") == "higher"
    assert STUDY.direction("07_secret_distribution_mode_collapse", "secret_spread", "entropy") is None
    gaps = gap_table(pd.DataFrame({"value": [1] * 8, "agent": ["m"] * 4 + ["b"] * 4,
                                   "ok": [True] * 4 + [False] * 4}),
                     knob="k", value_col="value", system_col="agent", a="m", b="b", outcome_col="ok")
    text = sweep_reading(gaps, direction=STUDY.direction("02_hangman_fork_tests", "sweep", "a"))
    assert "(m better)" in text and text == sweep_reading(gaps, direction="higher")
def test_a_gap_that_keeps_its_sign_and_only_loses_significance_is_not_a_changed_verdict():
    """03's sweep: the gap stays positive at every value and only its interval reaches zero at the
    smallest n; the reading must not say the verdict changes with the knob."""
    df = _swept([(0.5, "basis", 10, 10), (0.5, "baseline", 0, 10), (1.0, "basis", 4, 6), (1.0, "baseline", 1, 6)])
    table = gap_table(df, knob="prior_exponent", value_col="value", system_col="system", a="basis", b="baseline",
                      outcome_col="ok")
    assert gap_verdicts(table).tolist() == ["a ahead", "within noise"] and (table["gap"] > 0).all()
    reading = sweep_reading(table, direction="higher")
    assert "verdict changes" not in reading and "decided by this simulator assumption" not in reading
    assert "keeps the same sign" in reading and "never reverses" in reading and "prior_exponent=1" in reading


def test_a_gap_that_flips_sign_within_noise_is_undecided_and_a_significant_flip_is_a_changed_verdict():
    flip = _swept([(0.5, "basis", 10, 10), (0.5, "baseline", 0, 10), (1.0, "basis", 2, 6), (1.0, "baseline", 3, 6)])
    table = gap_table(flip, knob="k", value_col="value", system_col="system", a="basis", b="baseline", outcome_col="ok")
    reading = sweep_reading(table, direction="higher")
    assert "points the other way" in reading and "cannot say whether" in reading and "verdict changes" not in reading
    both = _swept([(0.5, "basis", 10, 10), (0.5, "baseline", 0, 10), (1.0, "basis", 0, 10), (1.0, "baseline", 10, 10)])
    table = gap_table(both, knob="k", value_col="value", system_col="system", a="basis", b="baseline", outcome_col="ok")
    assert "The verdict changes with `k`" in sweep_reading(table, direction="higher")
