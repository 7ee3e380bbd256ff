"""Entropy, effective number, top share, bootstrap and the chi-square pooling rule."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from psit_lib.studies.psit.secrets import (
    OTHER_LABEL,
    attainable_range,
    bootstrap_ci,
    chi_square_vs_prior,
    effective_number,
    normalised_entropy,
    secret_summary,
    shannon_entropy,
    top_share,
)


@given(st.integers(1, 64), st.integers(1, 5))
@settings(max_examples=40, deadline=None)
def test_uniform_entropy_is_log2_n_and_effective_number_is_n(n, repeat):
    counts = {f"w{i}": repeat for i in range(n)}
    assert shannon_entropy(counts) == pytest.approx(math.log2(n), abs=1e-12)
    assert effective_number(counts) == pytest.approx(n, rel=1e-12)


def test_one_hot_has_zero_entropy_and_one_effective_secret():
    assert shannon_entropy(["planet"] * 50) == 0.0
    assert effective_number(Counter(planet=50)) == pytest.approx(1.0)
    assert top_share(["planet"] * 50) == 1.0


def test_known_distribution():
    secrets = ["a", "a", "b", "c"]  # p = 1/2, 1/4, 1/4
    assert shannon_entropy(secrets) == pytest.approx(1.5)
    assert shannon_entropy(secrets, base=math.e) == pytest.approx(1.5 * math.log(2))
    assert effective_number(secrets) == pytest.approx(2 ** 1.5)
    assert top_share(secrets) == 0.5


def test_zero_counts_are_ignored_and_bad_inputs_refused():
    assert shannon_entropy({"a": 3, "b": 0}) == 0.0
    with pytest.raises(ValueError, match="single string"):
        shannon_entropy("planet")
    with pytest.raises(ValueError, match="non-negative integer"):
        shannon_entropy({"a": -1})
    with pytest.raises(ValueError, match="empty"):
        shannon_entropy([])
    with pytest.raises(ValueError, match="missing"):
        shannon_entropy(["a", None])


def test_normalised_entropy():
    assert normalised_entropy({"a": 1, "b": 1, "c": 1, "d": 1}, 4) == pytest.approx(1.0)
    assert normalised_entropy({"a": 1, "b": 1}, 4) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="domain_size"):
        normalised_entropy({"a": 1, "b": 1, "c": 1}, 2)
    with pytest.raises(ValueError, match="at least 2"):
        normalised_entropy({"a": 1}, 1)


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(1)
    samples = rng.choice(["planet", "python", "apple", "zebra", "river"], size=200, p=[0.4, 0.3, 0.1, 0.1, 0.1]).tolist()
    first = bootstrap_ci(samples, "entropy", n_boot=300, seed=7)
    again = bootstrap_ci(samples, "entropy", n_boot=300, seed=7)
    other = bootstrap_ci(samples, "entropy", n_boot=300, seed=8)
    assert first == again and first != other and first.method == "BCa"
    assert first.low < shannon_entropy(samples) < first.high
    assert 0 < first.high - first.low < 0.5


def test_bootstrap_of_a_constant_sample_is_a_point():
    interval = bootstrap_ci(["x"] * 20, "entropy", n_boot=50)
    assert (interval.low, interval.high) == (0.0, 0.0) and interval.method.startswith("none")


def test_bootstrap_accepts_a_counter_and_a_generator():
    interval = bootstrap_ci(Counter(a=10, b=10, c=5), "entropy", n_boot=200, seed=np.random.default_rng(3))
    assert 0.0 <= interval.low <= interval.high <= np.log2(3)
    with pytest.raises(ValueError, match="method"):
        bootstrap_ci(Counter(a=10, b=10), "entropy", method="basic")
    with pytest.raises(ValueError, match="statistic"):
        bootstrap_ci(Counter(a=10, b=10), "top_share")  # a maximum: its interval is Wilson's, below


def test_the_top_share_interval_has_width_even_where_a_bootstrap_of_the_maximum_had_none():
    """The reference run's 07 showed 0.075 [0.075, 0.075] (BCa of a maximum, three secrets tied at 3 of
    40); the Wilson interval of the top secret's count has width, and one secret alone is not a point."""
    from psit_lib.studies.psit.secrets import top_share_interval

    tied = top_share_interval(3, 40)
    assert tied.method == "Wilson" and tied.low < 0.075 < tied.high and tied.high - tied.low > 0.1
    alone = top_share_interval(20, 20)
    assert alone.low < 1.0 == alone.high


def test_a_top_secret_leads_only_when_the_test_separates_it_from_the_next():
    from psit_lib.studies.psit.secrets import lead_is_separated, lead_test

    assert lead_test(2, 1) == pytest.approx(0.5) and not lead_is_separated(2, 1)   # 07's "fucking", 2 against 1
    assert lead_test(5, 0) == pytest.approx(1 / 32) and lead_is_separated(5, 0)
    assert not lead_is_separated(6, 5) and lead_is_separated(20, 6)
    with pytest.raises(ValueError):
        lead_test(1, 2)


def test_chi_square_pools_small_in_prior_cells_and_counts_out_of_prior_reveals_apart():
    counts = {"planet": 30, "river": 10, "apple": 5, "zebra": 3, "qwerty": 2}
    prior = {"planet": 0.5, "river": 0.3, "apple": 0.1, "zebra": 0.06, "yacht": 0.04}
    # in prior: n = 48 -> expected planet 24, river 14.4, apple 4.8, zebra 2.88, yacht 1.92; qwerty outside
    result = chi_square_vs_prior(counts, prior, min_expected=5)
    assert result is not None and result.out_of_prior == 2
    assert result.categories == ("planet", "river", OTHER_LABEL)
    assert result.observed == (30, 10, 5 + 3)  # apple + zebra + yacht; never qwerty
    assert result.expected == pytest.approx((24, 14.4, 4.8 + 2.88 + 1.92))
    assert set(result.pooled) == {"apple", "zebra", "yacht"}
    reference = chisquare([30, 10, 8], [24, 14.4, 9.6])
    assert result.statistic == pytest.approx(reference.statistic)
    assert result.p_value == pytest.approx(reference.pvalue)
    assert result.dof == 2


def test_out_of_prior_reveals_cannot_hide_in_the_pooled_cell():
    """Every reveal outside the prior used to be pooled with the unrevealed in-prior secrets, so a
    sample made only of off-dataset conditions looked like a perfect fit (p = 1)."""
    prior = dict.fromkeys([f"c{i}" for i in range(49)], 1.0)
    outside = {"lyme disease": 120, "celiac disease": 125}
    assert chi_square_vs_prior(outside, prior) is None  # nothing in the prior to test
    mixed = chi_square_vs_prior({**outside, "c0": 250}, prior)
    assert mixed.out_of_prior == 245 and mixed.p_value < 1e-6


def test_chi_square_merges_the_smallest_kept_cell_when_the_pool_stays_small():
    counts = {"a": 20, "b": 10, "c": 10}
    prior = {"a": 0.5, "b": 0.3, "c": 0.15, "d": 0.05}  # n=40 -> 20, 12, 6, 2 ; pool {d}=2 < 5
    result = chi_square_vs_prior(counts, prior)
    assert result.categories == ("a", "b", OTHER_LABEL)
    assert result.observed == (20, 10, 10)
    assert result.expected == pytest.approx((20, 12, 8))


def test_chi_square_is_none_when_counts_do_not_allow_a_test():
    assert chi_square_vs_prior({}, {"a": 0.5, "b": 0.5}) is None
    assert chi_square_vs_prior({"a": 3, "b": 1}, {"a": 0.5, "b": 0.5}) is None  # everything pools
    assert chi_square_vs_prior({"a": 50}, {"a": 1.0}) is None  # a single cell


def test_chi_square_renormalises_prior_weights():
    by_weights = chi_square_vs_prior({"a": 30, "b": 20}, {"a": 3, "b": 2})
    by_probabilities = chi_square_vs_prior({"a": 30, "b": 20}, {"a": 0.6, "b": 0.4})
    assert by_weights.statistic == pytest.approx(0.0) and by_weights == by_probabilities


def test_secret_summary_per_group():
    df = pd.DataFrame(
        {
            "task": ["hangman"] * 6 + ["diagnosis"] * 4,
            "secret": ["planet"] * 4 + ["river", None, "Sarcoidosis", "Sarcoidosis", "Sarcoidosis", "Sarcoidosis"],
        }
    )
    table = secret_summary(df, "task", "secret", domain_size={"hangman": 1000, "diagnosis": 49}, n_boot=100)
    hangman = table.set_index("task").loc["hangman"]
    assert (hangman.n, hangman.n_missing, hangman.distinct) == (5, 1, 2)
    assert hangman.entropy == pytest.approx(shannon_entropy(["planet"] * 4 + ["river"]))
    assert hangman.entropy_low <= hangman.entropy <= hangman.entropy_high
    assert hangman.normalised_entropy == pytest.approx(hangman.entropy * math.log(2) / math.log(1000))
    assert hangman.top_secret == "planet" and hangman.top_count == 4 and hangman.top_share == 0.8
    diagnosis = table.set_index("task").loc["diagnosis"]
    assert diagnosis.entropy == 0.0 and diagnosis.effective_number == pytest.approx(1.0)
    assert diagnosis.top_share_low < 1.0 == diagnosis.top_share_high        # Wilson: 4 of 4 is not certainty
    assert "top share: Wilson 95%" in diagnosis.interval


def test_a_top_secret_tied_with_others_is_named_as_a_tie():
    df = pd.DataFrame({"task": ["hangman"] * 5, "secret": ["apple", "zebra", "planet", "planet", "apple"]})
    row = secret_summary(df, "task", "secret", n_boot=50).iloc[0]
    assert (row.top_secret, row.top_count) == ("(2 secrets tied)", 2)
    assert row.top_share == pytest.approx(0.4) and row.top_share_low < 0.4 < row.top_share_high


def test_secret_summary_without_domain_size_or_secrets():
    df = pd.DataFrame({"model": ["m1", "m1", "m2"], "secret": ["a", "b", None]})
    table = secret_summary(df, ["model"], "secret", n_boot=50).set_index("model")
    assert math.isnan(table.loc["m1", "normalised_entropy"])
    assert table.loc["m2", "n"] == 0 and math.isnan(table.loc["m2", "entropy"])
    assert pd.isna(table.loc["m2", "top_secret"])


def test_intervals_are_clipped_to_what_n_samples_can_show():
    samples = [f"w{i}" for i in range(36)] + ["a", "a", "b", "b"]
    for name in ("entropy", "effective_number"):
        low, high = attainable_range(name, len(samples), 50_000)
        for method in ("BCa", "percentile"):
            interval = bootstrap_ci(samples, name, n_boot=400, seed=1, method=method, domain_size=50_000)
            assert low <= interval.low <= interval.high <= high
    assert attainable_range("entropy", 40, 49)[1] == pytest.approx(np.log2(40))
    assert attainable_range("effective_number", 400, 49) == (1.0, 49.0)


def test_an_interval_that_misses_its_estimate_is_flagged_and_never_compared():
    """Forty reveals, nearly all distinct: resampling cannot show unseen secrets, so the entropy
    interval misses the plug-in estimate; the table says so and the reading refuses to compare."""
    from psit_lib.studies.psit.protocol.secret_choice import spread_reading

    rows = [{"task": "hangman", "model": "m", "temperature": t, "secret": f"w{i}"}
            for t in (0.1, 1.0) for i in range(40)]
    summary = secret_summary(pd.DataFrame(rows), ["task", "model", "temperature"], "secret", n_boot=300)
    assert summary["interval"].str.contains("excludes the estimate of entropy").all()
    reading = spread_reading(summary, pd.DataFrame(rows), n_boot=300)
    assert summary["entropy_low"].isna().all() and summary["interval"].str.contains("no interval is given").all()
    assert "no entropy interval at T=0.1 and T=1" in reading and "do not overlap" not in reading
