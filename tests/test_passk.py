"""pass@k and pass^k against brute-force enumeration of k-subsets and orderings."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psit_lib.studies.basis.passk import (
    PASSK_COLUMN_LABELS,
    first_k_all_succeed,
    pass_at_k,
    pass_hat_k,
    passk_table,
)

small_nck = st.integers(1, 10).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
)


@pytest.mark.slow
@given(small_nck)
@settings(max_examples=150, deadline=None)
def test_estimators_equal_brute_force_over_all_k_subsets(nck):
    n, c, k = nck
    trials = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    any_success = sum(any(trials[i] for i in s) for s in subsets) / len(subsets)
    all_success = sum(all(trials[i] for i in s) for s in subsets) / len(subsets)
    assert pass_at_k(n, c, k) == pytest.approx(any_success, abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(all_success, abs=1e-12)


@given(st.integers(1, 6).flatmap(lambda n: st.tuples(st.lists(st.booleans(), min_size=n, max_size=n), st.integers(1, n))))
@settings(max_examples=60, deadline=None)
def test_first_k_averaged_over_all_orderings_is_pass_hat_k(case):
    trials, k = case
    orderings = list(itertools.permutations(trials))
    mean_first_k = sum(first_k_all_succeed(order, k) for order in orderings) / len(orderings)
    assert mean_first_k == pytest.approx(pass_hat_k(len(trials), sum(trials), k), abs=1e-12)


def test_known_values():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_hat_k(10, 3, 2) == pytest.approx(3 / 45)
    assert pass_at_k(10, 3, 2) == pytest.approx(1 - 21 / 45)
    assert pass_at_k(10, 0, 10) == 0.0 and pass_hat_k(10, 10, 10) == 1.0
    assert pass_at_k(10, 1, 10) == 1.0 and pass_hat_k(10, 9, 10) == 0.0


def test_exact_for_large_n():
    assert pass_hat_k(2000, 1999, 1000) == pytest.approx(0.5)  # C(1999,1000)/C(2000,1000) = 1000/2000
    assert 0.0 <= pass_at_k(3000, 7, 1500) <= 1.0


def test_k_larger_than_n_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="k=5 exceeds the number of trials n=3"):
        pass_at_k(3, 1, 5)
    with pytest.raises(ValueError, match="k=5 exceeds"):
        pass_hat_k(3, 1, 5)


@pytest.mark.parametrize(("n", "c", "k"), [(5, 6, 1), (5, -1, 1), (5, 2, 0), (5.0, 2, 1)])
def test_bad_inputs_are_refused(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_first_k_uses_recorded_order():
    assert first_k_all_succeed([True, True, False], 2) is True
    assert first_k_all_succeed([False, True, True], 2) is False
    assert math.isnan(first_k_all_succeed([True], 2))


def test_passk_table_layout_and_values():
    table = passk_table({"basis": [True, True, False, True], "plain": [False, True]}, ks=(1, 2, 4))
    assert list(table.columns) == list(PASSK_COLUMN_LABELS)
    assert table.attrs["labels"]["pass_hat_k"].startswith("pass^k")
    assert len(table) == 6
    row = table[(table.group == "basis") & (table.k == 2)].iloc[0]
    assert (row.n, row.successes) == (4, 3)
    assert row.pass_at_k == pytest.approx(pass_at_k(4, 3, 2))
    assert row.pass_hat_k == pytest.approx(pass_hat_k(4, 3, 2))
    assert row.first_k_all_succeed == 1.0
    too_big = table[(table.group == "plain") & (table.k == 4)].iloc[0]
    assert math.isnan(too_big.pass_at_k) and math.isnan(too_big.pass_hat_k) and math.isnan(too_big.first_k_all_succeed)
    plain_1 = table[(table.group == "plain") & (table.k == 1)].iloc[0]
    assert plain_1.first_k_all_succeed == 0.0 and plain_1.pass_at_k == pytest.approx(0.5)


def test_reference_code_pass_hat_k_on_independent_sets_beside_the_unbiased_estimate():
    from psit_lib.studies.basis.passk import pass_hat_k, reference_sets_passk

    T, F = True, False
    sets = [[T, T, F], [T, T, T], [F, T, T]]
    hat, at = reference_sets_passk(sets, 2)
    assert hat == pytest.approx(2 / 3, abs=1e-3) and round(hat, 3) == 0.667
    assert at == 1.0
    runs = [r for s in sets for r in s]
    assert round(pass_hat_k(len(runs), sum(runs), 2), 3) == 0.583
    assert reference_sets_passk([[T], [T, T]], 2) == (0.5, 0.5)  # a short set counts as a failure
    with pytest.raises(ValueError):
        reference_sets_passk(sets, 0)
