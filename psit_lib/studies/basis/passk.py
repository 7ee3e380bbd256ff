"""Reliability over repeated trials: pass@k, pass^k and the "first k succeed" variant (SPEC §6).

With ``c`` successes in ``n`` trials, ``1 - C(n-c, k) / C(n, k)`` and ``C(c, k) / C(n, k)`` are the
unbiased pass@k and pass^k (the share of k-subsets with a success, or only successes). The
reference code looked at whether the *first* k trials all succeeded: also unbiased for
exchangeable trials, but one k-subset out of C(n, k), so far noisier; the table shows both,
labelled. Arithmetic is exact (integers, divided once as a Fraction).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import pandas as pd

DEFAULT_KS: tuple[int, ...] = (1, 2, 5, 10)

#: Display names for the columns of :func:`passk_table` (for plots and rendered tables).
PASSK_COLUMN_LABELS: dict[str, str] = {
    "group": "group",
    "k": "k",
    "n": "trials n",
    "successes": "successes c",
    "pass_at_k": "pass@k (unbiased)",
    "pass_hat_k": "pass^k (unbiased)",
    "first_k_all_succeed": "first k all succeed (reference code)",
}


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int of at least 1, got {k!r}.")


def _check_nck(n: int, c: int, k: int) -> None:
    for name, value in (("n", n), ("c", c)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an int, got {value!r}.")
    _check_k(k)
    if n < 0 or not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}.")
    if k > n:
        raise ValueError(f"k={k} exceeds the number of trials n={n}; pass@k and pass^k need k <= n.")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``c`` successes in ``n`` trials: 1 - C(n-c, k) / C(n, k)."""
    _check_nck(n, c, k)
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k from ``c`` successes in ``n`` trials: C(c, k) / C(n, k)."""
    _check_nck(n, c, k)
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


def first_k_all_succeed(outcomes: Sequence[bool], k: int) -> bool | float:
    """Whether the first ``k`` trials (in the order run) all succeeded, the reference code's
    estimator of pass^k; NaN when fewer than k exist."""
    _check_k(k)
    trials = list(outcomes)
    if len(trials) < k:
        return float("nan")
    return all(bool(trial) for trial in trials[:k])


def reference_sets_passk(sets: Sequence[Sequence[bool]], k: int) -> tuple[float, float]:
    """(pass^k, pass@k) as the BASIS reference code computes them from *independent sets* of fresh
    runs made for this k: the shares of sets whose first k runs all succeed / have a success (a set
    with fewer than k runs counts as a failure, as in the reference). Each k gets its own sets,
    which is why the study's Table 1 is not monotone in k and its pass^1 differs from its success
    rate; sets [T,T,F], [T,T,T], [F,T,T] give pass^2 = 2/3, the unbiased estimate 21/36."""
    _check_k(k)
    if not sets:
        return float("nan"), float("nan")
    firsts = [[bool(run) for run in runs][:k] for runs in sets]
    full = [runs for runs in firsts if len(runs) == k]
    all_ok = sum(all(runs) for runs in full)
    any_ok = sum(any(runs) for runs in full)
    return all_ok / len(sets), any_ok / len(sets)


def passk_table(
    outcomes_by_group: Mapping[str, Sequence[bool]],
    ks: Sequence[int] = DEFAULT_KS,
) -> pd.DataFrame:
    """pass@k, pass^k and the first-k variant per (group, k), side by side; NaN where ``k`` exceeds
    a group's trials, so one table holds groups of different sizes (labels in ``df.attrs``)."""
    ks = list(ks)
    for k in ks:
        _check_k(k)
    rows = []
    for group, outcomes in outcomes_by_group.items():
        trials = [bool(trial) for trial in outcomes]
        n, c = len(trials), sum(trials)
        for k in ks:
            estimable = k <= n
            rows.append(
                {
                    "group": group,
                    "k": k,
                    "n": n,
                    "successes": c,
                    "pass_at_k": pass_at_k(n, c, k) if estimable else float("nan"),
                    "pass_hat_k": pass_hat_k(n, c, k) if estimable else float("nan"),
                    "first_k_all_succeed": float(first_k_all_succeed(trials, k)),
                }
            )
    table = pd.DataFrame(rows, columns=list(PASSK_COLUMN_LABELS))
    table.attrs["labels"] = dict(PASSK_COLUMN_LABELS)
    return table
