"""Wilson, Fisher, Holm and the rate/significance tables against hand calculations."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from psit_lib.analysis.stats import (
    fisher_one_sided,
    holm,
    rate_table,
    significance_table,
    wilson_interval,
)


def wilson_by_formula(x: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(
    ("x", "n", "expected"),
    [
        (8, 10, (0.4902, 0.9433)),
        (0, 10, (0.0, 0.2775)),
        (10, 10, (0.7225, 1.0)),
        (25, 50, (0.3664, 0.6336)),
    ],
)
def test_wilson_matches_published_values(x, n, expected):
    low, high = wilson_interval(x, n)
    assert low == pytest.approx(expected[0], abs=1e-4)
    assert high == pytest.approx(expected[1], abs=1e-4)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
@settings(max_examples=60, deadline=None)
def test_wilson_matches_closed_form_and_contains_rate(xn):
    x, n = xn
    low, high = wilson_interval(x, n)
    ref_low, ref_high = wilson_by_formula(x, n)
    assert low == pytest.approx(max(0.0, ref_low), abs=1e-9)
    assert high == pytest.approx(min(1.0, ref_high), abs=1e-9)
    assert 0.0 <= low <= x / n <= high <= 1.0


def test_wilson_no_trials_is_the_whole_unit_interval():
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_bounds_are_exact_at_the_extremes():
    assert wilson_interval(0, 7)[0] == 0.0
    assert wilson_interval(7, 7)[1] == 1.0


def test_wilson_wider_at_smaller_alpha():
    low95, high95 = wilson_interval(30, 50)
    low99, high99 = wilson_interval(30, 50, alpha=0.01)
    assert low99 < low95 and high99 > high95


@pytest.mark.parametrize(("x", "n"), [(-1, 10), (11, 10), (3, -1), (2.5, 10), (True, 3)])
def test_wilson_rejects_bad_counts(x, n):
    with pytest.raises(ValueError):
        wilson_interval(x, n)


def hypergeometric_upper_tail(a_s: int, a_n: int, b_s: int, b_n: int) -> Fraction:
    """P(X >= a_s) where X counts successes in arm A with every margin fixed."""
    successes, total = a_s + b_s, a_n + b_n
    top = min(a_n, successes)
    tail = sum(math.comb(successes, x) * math.comb(total - successes, a_n - x) for x in range(a_s, top + 1))
    return Fraction(tail, math.comb(total, a_n))


def test_fisher_matches_hand_computed_tail():
    # A: 8/10, B: 3/10 -> P(X >= 8) with 11 successes among 20, 10 drawn
    # = [C(11,8)C(9,2) + C(11,9)C(9,1) + C(11,10)C(9,0)] / C(20,10) = (5940 + 495 + 11) / 184756
    expected = Fraction(5940 + 495 + 11, 184756)
    assert hypergeometric_upper_tail(8, 10, 3, 10) == expected
    assert fisher_one_sided(8, 10, 3, 10) == pytest.approx(float(expected), rel=1e-12)


@given(
    st.integers(1, 30).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 30).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
)
@settings(max_examples=60, deadline=None)
def test_fisher_is_the_upper_hypergeometric_tail(a, b):
    (a_s, a_n), (b_s, b_n) = a, b
    assert fisher_one_sided(a_s, a_n, b_s, b_n) == pytest.approx(float(hypergeometric_upper_tail(a_s, a_n, b_s, b_n)), rel=1e-9, abs=1e-15)


def test_fisher_direction_is_method_better_than_baseline():
    assert fisher_one_sided(45, 50, 5, 50) < 1e-10
    assert fisher_one_sided(5, 50, 45, 50) > 0.999


def test_fisher_with_an_empty_arm_gives_no_evidence():
    assert fisher_one_sided(0, 0, 3, 10) == 1.0
    assert fisher_one_sided(3, 10, 0, 0) == 1.0


def test_holm_matches_hand_computed_example():
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.06
    reject, adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert reject == [True, False, False, True]


def test_holm_is_not_holm_sidak():
    pvalues = [0.01, 0.04, 0.03, 0.005]
    _, adjusted = holm(pvalues)
    _, sidak, _, _ = multipletests(pvalues, method="hs")
    # Holm-Sidak for the smallest: 1 - (1 - 0.005)^4 = 0.019850... instead of 0.02
    assert sidak[3] == pytest.approx(1 - 0.995**4)
    assert adjusted[3] == pytest.approx(0.02)
    assert not np.allclose(adjusted, sidak)


def test_holm_caps_at_one_and_handles_empty_input():
    assert holm([]) == ([], [])
    reject, adjusted = holm([0.6, 0.9])
    assert adjusted == pytest.approx([1.0, 1.0]) and reject == [False, False]


def test_holm_rejects_values_outside_unit_interval():
    with pytest.raises(ValueError):
        holm([0.2, 1.5])
    with pytest.raises(ValueError):
        holm([float("nan")])


def episodes(task: str, model: str, agent: str, successes: int, n: int) -> list[dict]:
    return [
        {"task": task, "model": model, "agent": agent, "self_consistent": i < successes}
        for i in range(n)
    ]


@pytest.fixture
def results() -> pd.DataFrame:
    rows = []
    rows += episodes("hangman", "m1", "workflow", 45, 50)
    rows += episodes("hangman", "m1", "vanilla", 2, 50)
    rows += episodes("hangman", "m1", "cot", 44, 50)
    rows += episodes("diagnosis", "m1", "workflow", 20, 50)
    rows += episodes("diagnosis", "m1", "vanilla", 18, 50)
    rows += episodes("diagnosis", "m1", "cot", 40, 50)
    return pd.DataFrame(rows)


def test_rate_table_counts_and_intervals(results):
    table = rate_table(results, ["task", "agent"], "self_consistent")
    assert list(table.columns) == ["task", "agent", "n_scored", "n_failed", "successes", "rate", "wilson_low",
                                   "wilson_high"]
    row = table[(table.task == "hangman") & (table.agent == "workflow")].iloc[0]
    assert (row.n_scored, row.n_failed, row.successes, row.rate) == (50, 0, 45, 0.9)
    assert (row.wilson_low, row.wilson_high) == pytest.approx(wilson_interval(45, 50))
    assert len(table) == 6


@pytest.mark.slow
def test_failed_episodes_are_counted_but_never_scored(results):
    failed = results.assign(scored=True)
    extra = failed.iloc[:3].assign(scored=False, self_consistent=None)  # failed runs: no success flag at all
    table = rate_table(pd.concat([failed, extra], ignore_index=True), ["task", "agent"], "self_consistent")
    clean = rate_table(results, ["task", "agent"], "self_consistent")
    first = (extra.iloc[0].task, extra.iloc[0].agent)
    row = table.set_index(["task", "agent"]).loc[first]
    base = clean.set_index(["task", "agent"]).loc[first]
    assert row.n_failed == 3 and (row.n_scored, row.successes, row.rate) == (base.n_scored, base.successes, base.rate)
    sig = significance_table(pd.concat([failed, extra], ignore_index=True), methods=["workflow"], baselines=["vanilla"])
    assert sig["n_method"].tolist() == significance_table(results, methods=["workflow"], baselines=["vanilla"])["n_method"].tolist()


def test_rate_table_refuses_missing_success_flags(results):
    broken = results.astype({"self_consistent": object})
    broken.loc[0, "self_consistent"] = None
    with pytest.raises(ValueError, match="missing"):
        rate_table(broken, "task", "self_consistent")


@pytest.mark.slow
def test_significance_table_runs_fisher_per_group_with_holm_over_family(results):
    table = significance_table(results, methods=["workflow"], baselines=["vanilla", "cot"])
    assert list(table.columns) == [
        "task", "model", "method", "baseline", "n_method", "n_baseline", "rate_method",
        "rate_baseline", "p_value", "p_holm", "holm_family_size", "significant", "marker",
    ]
    assert len(table) == 4
    expected_p = {
        ("hangman", "vanilla"): fisher_one_sided(45, 50, 2, 50),
        ("hangman", "cot"): fisher_one_sided(45, 50, 44, 50),
        ("diagnosis", "vanilla"): fisher_one_sided(20, 50, 18, 50),
        ("diagnosis", "cot"): fisher_one_sided(20, 50, 40, 50),
    }
    for row in table.itertuples():
        assert row.p_value == pytest.approx(expected_p[(row.task, row.baseline)])
    for _, family in table.groupby(["task", "model", "method"]):  # one Holm family per method and group
        reject, adjusted = holm(family["p_value"].tolist())
        assert family["p_holm"].tolist() == pytest.approx(adjusted) and family["significant"].tolist() == reject
        assert (family["holm_family_size"] == 2).all()
    marked = table.set_index(["task", "baseline"])["marker"]
    assert marked[("hangman", "vanilla")] == "*"
    assert marked[("hangman", "cot")] == ""
    assert marked[("diagnosis", "vanilla")] == ""
    assert (table["marker"] == "*").sum() == 1


@pytest.mark.slow
def test_the_holm_family_is_a_parameter(results):
    per_method = significance_table(results, methods=["workflow"], baselines=["vanilla", "cot"])
    whole = significance_table(results, methods=["workflow"], baselines=["vanilla", "cot"], family="table")
    smallest = per_method["p_value"].idxmin()
    assert per_method.at[smallest, "p_holm"] == pytest.approx(min(1.0, 2 * per_method.at[smallest, "p_value"]))
    assert whole.at[smallest, "p_holm"] == pytest.approx(min(1.0, 4 * whole.at[smallest, "p_value"]))
    assert (whole["holm_family_size"] == 4).all()


@pytest.mark.slow
def test_the_studys_table_1_counts_reproduce_every_asterisk():
    """Fed the private-state study's own Table 1 (50 episodes per cell), one Holm family per
    (task, model, method) over its baselines gives exactly the study's asterisks, private CoT
    included; one family for the whole table would remove some."""
    from psit_lib.analysis.reference import reference_table
    from psit_lib.analysis.stats import better_than_all_baselines

    table = reference_table("psit_table1_self_consistency")
    rows = []
    for r in table.itertuples(index=False):
        successes = round(r.self_consistency_pct / 100 * 50)
        rows += [{"task": r.task, "model": r.model, "agent": r.method, "self_consistent": i < successes}
                 for i in range(50)]
    episodes = pd.DataFrame(rows)
    baselines = sorted(set(table.loc[table.group == "baseline", "method"]))
    methods = sorted(set(table.method) - set(baselines))
    assert "private_cot" in methods
    stars = better_than_all_baselines(significance_table(episodes, methods, baselines))
    reported = {(r.task, r.model, r.method): r.significant_vs_all_baselines == "yes"
                for r in table.itertuples(index=False) if r.group != "baseline"}
    measured = {(r.task, r.model, r.method): r.better_than_all for r in stars.itertuples(index=False)}
    assert measured == reported
    whole = better_than_all_baselines(significance_table(episodes, methods, baselines, family="table"))
    assert whole["better_than_all"].sum() < stars["better_than_all"].sum()


def test_significance_table_keeps_missing_comparisons_out_of_the_family(results):
    partial = results[~((results.task == "diagnosis") & (results.agent == "vanilla"))]
    table = significance_table(partial, methods=["workflow"], baselines=["vanilla"])
    missing = table[table.task == "diagnosis"].iloc[0]
    assert missing.n_baseline == 0 and math.isnan(missing.p_value) and math.isnan(missing.p_holm)
    assert not missing.significant and missing.marker == ""
    present = table[table.task == "hangman"].iloc[0]
    assert present.p_holm == pytest.approx(present.p_value)  # a family of one


def test_significance_table_rejects_bad_arguments(results):
    with pytest.raises(ValueError, match="both as method and as baseline"):
        significance_table(results, methods=["cot"], baselines=["cot"])
    with pytest.raises(ValueError, match="no column"):
        significance_table(results, methods=["cot"], baselines=["vanilla"], method_col="method")
    with pytest.raises(ValueError, match="at least one"):
        significance_table(results, methods=[], baselines=["vanilla"])
