"""The fork test (SPEC §1) on the idealised hosts of :mod:`psit_lib.studies.psit.theory.policies`, exactly and by simulation.

The fork protocol, made explicit so that probabilities are well defined:

1. The public history so far leaves the compatible set C (n words). The host's
   :meth:`~psit_lib.studies.psit.theory.policies.HostPolicy.belief` p over C is the distribution of the
   word it answers for.
2. **Reveal branch**: the host reveals r. A public-only host draws r ~ p afresh; a host with
   private state reveals its one committed word (also distributed as p for an observer).
3. **Candidates**: r plus m = min(k, n) - 1 distinct other words of C. The others are drawn
   uniformly without replacement from C minus r (the protocol's reference order takes the most
   frequent instead: for a uniform belief the order does not matter). When n < k the list is
   short, as in the protocol when no further compatible word exists.
4. **Yes/no branches**: each candidate c gets its own branch. A public-only host draws a word
   w ~ p afresh in each branch (independently of the reveal branch and of the other branches)
   and answers yes iff w = c. A host with private state answers yes iff c is its word.
5. The outcome follows :func:`psit_lib.studies.psit.protocol.outcomes.classify_fork` (no leakage: these
   hosts never write their word before the reveal).

Exact results. Write Q = prod over the other candidates of (1 - p_c). Given r and the others,
P(yes to r) = p_r independently of Q, so for a public-only host

    P(self-consistent)    = E[p_r Q]
    P(over-confirmation)  = E[p_r] - E[p_r Q]
    P(all denial)         = E[Q] - E[p_r Q]
    P(state substitution) = 1 - E[p_r] - E[Q] + E[p_r Q]

with r ~ p, E[p_r] = sum_r p_r^2, and E[. | r] over the candidate draw. For uniform p = 1/n
every Q equals (1 - 1/n)^m whatever the draw, which gives the closed form
P(self-consistent) = (1/n) (1 - 1/n)^(min(k, n) - 1) of :func:`p_self_consistent_uniform`.
For general p and a uniform draw, E[Q | r] is an elementary symmetric mean computed by a
stable dynamic programme (any n). A host with
private state is self-consistent with probability 1. :func:`enumerate_outcomes` recomputes
everything by brute force over every draw and every answer pattern, as an independent check.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from psit_lib.studies.psit.protocol.outcomes import Outcome, classify_fork
from psit_lib.analysis.stats import wilson_interval
from psit_lib.studies.psit.theory.policies import HostPolicy, PolicyInputError, ReimaginingPoca, check_compatible

FORK_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.SELF_CONSISTENT,
    Outcome.OVER_CONFIRMATION,
    Outcome.STATE_SUBSTITUTION,
    Outcome.ALL_DENIAL,
)
"""The four answer patterns an idealised host can produce (it never leaks and never garbles)."""

class ExactComputationTooLargeError(ValueError):
    """An enumeration would visit more cases than allowed; use a smaller set or the simulation."""


# --------------------------------------------------------------------------------------------
# Closed forms for the uniform stochastic POCA
# --------------------------------------------------------------------------------------------


def _check_positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")


def p_self_consistent_uniform(n: int, k: int) -> float:
    """P(self-consistent) of the uniform re-imagining POCA: (1/n)(1 - 1/n)^(min(k, n) - 1).

    The reveal is some r; the branch asking about r says yes with probability 1/n; each of the
    m other candidates is a different word and gets no with probability 1 - 1/n, independently.
    """
    _check_positive("n", n)
    _check_positive("k", k)
    return (1.0 / n) * (1.0 - 1.0 / n) ** (min(k, n) - 1)


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def _belief_vector(policy: HostPolicy, words: list[str]) -> np.ndarray:
    belief = policy.belief(words)
    unknown = set(belief) - set(words)
    if unknown:
        raise PolicyInputError(f"Policy {policy.name!r} put weight on words outside C: {sorted(unknown)[:3]}.")
    p = np.array([float(belief.get(word, 0.0)) for word in words])
    if np.any(p < 0) or not math.isclose(float(p.sum()), 1.0, abs_tol=1e-9):
        raise PolicyInputError(f"Policy {policy.name!r} returned a belief that is not a distribution.")
    return p


# --------------------------------------------------------------------------------------------
# Exact computation
# --------------------------------------------------------------------------------------------


def _prefix_subset_means(x: np.ndarray, m: int) -> np.ndarray:
    """means[i, j] = mean of prod(x over S) over the j-subsets S of x[:i] (0 where j > i).

    Averages instead of sums (elementary symmetric polynomials) keep every number in [0, 1],
    so the programme is stable for thousands of words.
    """
    n = len(x)
    means = np.zeros((n + 1, m + 1))
    means[0, 0] = 1.0
    j = np.arange(m + 1)
    for i in range(n):
        current = means[i]
        shifted = np.concatenate(([0.0], current[:-1]))
        # Entries with j > i + 1 stay 0 by induction (both terms read zeros).
        means[i + 1] = ((i + 1 - j) * current + j * x[i] * shifted) / (i + 1)
    return means


def _hypergeometric_shares(total: int, m: int) -> np.ndarray:
    """shares[r, j] = P(j of a uniform m-subset of ``total`` items lie among the first r), r = 0..total.

    Built from ratios of falling factorials, each at most about 1, so it neither overflows nor
    loses precision for large ``total`` (scipy's generic pmf is far slower here).
    """
    r = np.arange(total + 1, dtype=float)
    rest = total - r
    shares = np.empty((total + 1, m + 1))
    for j in range(m + 1):
        column = np.full(total + 1, float(math.comb(m, j)))
        for i in range(j):
            column *= np.maximum(r - i, 0.0) / (total - i)
        for i in range(m - j):
            column *= np.maximum(rest - i, 0.0) / (total - j - i)
        shares[:, j] = column
    return shares


def _mean_product_uniform_draw(x: np.ndarray, m: int) -> np.ndarray:
    """E[prod of x over m others | r] for each r, the others a uniform m-subset of C minus r."""
    n = len(x)
    if m == 0:
        return np.ones(n)
    prefix = _prefix_subset_means(x, m)  # prefix[r] covers words 0..r-1
    suffix = _prefix_subset_means(x[::-1], m)[::-1]  # suffix[r + 1] covers words r+1..n-1
    r = np.arange(n)[:, None]
    j = np.arange(m + 1)[None, :]
    # How many of the m others fall among the r earlier words is hypergeometric; given that
    # count, the two parts are uniform subsets of their sides and their products independent.
    share = _hypergeometric_shares(n - 1, m)
    valid = (j <= r) & (m - j <= n - 1 - r)
    left = prefix[r, np.minimum(j, r)]
    right = suffix[r + 1, np.clip(m - j, 0, None)]
    return np.where(valid, share * left * right, 0.0).sum(axis=1)


def exact_outcomes(
    policy: HostPolicy,
    compatible: Sequence[str],
    k: int,
) -> dict[Outcome, float]:
    """Exact fork-test outcome distribution of ``policy`` at a compatible set, with k candidates
    (the other candidates drawn uniformly; exact for any n). See the module docstring."""
    _check_positive("k (number of candidates)", k)
    words = check_compatible(compatible)
    p = _belief_vector(policy, words)
    if policy.keeps_private_state:  # every branch answers for the one committed word, the revealed one
        return {outcome: float(outcome is Outcome.SELF_CONSISTENT) for outcome in FORK_OUTCOMES}
    m = min(k, len(words)) - 1
    expected_q = _mean_product_uniform_draw(1.0 - p, m)
    e_pr_q = float(np.sum(p * p * expected_q))
    e_q = float(np.sum(p * expected_q))
    e_pr = float(np.sum(p * p))
    raw = {
        Outcome.SELF_CONSISTENT: e_pr_q,
        Outcome.OVER_CONFIRMATION: e_pr - e_pr_q,
        Outcome.STATE_SUBSTITUTION: 1.0 - e_pr - e_q + e_pr_q,
        Outcome.ALL_DENIAL: e_q - e_pr_q,
    }
    if min(raw.values()) < -1e-9:
        raise ArithmeticError(f"Exact fork probabilities went negative: {raw}.")
    return {outcome: min(1.0, max(0.0, value)) for outcome, value in raw.items()}


def _ordered_draws(others: list[int], m: int) -> Iterable[tuple[tuple[int, ...], float]]:
    """Every ordered draw of m of ``others`` with its probability (uniform, without replacement)."""
    for sequence in itertools.permutations(others, m):
        probability = 1.0
        remaining = len(others)
        for _ in sequence:
            probability /= remaining
            remaining -= 1
        yield sequence, probability


def enumerate_outcomes(
    policy: HostPolicy,
    compatible: Sequence[str],
    k: int,
    max_enumerated: int = 200_000,
) -> dict[Outcome, float]:
    """The same distribution as :func:`exact_outcomes`, by brute force (a check, small n only).

    Walks every revealed word, every ordered candidate draw and every yes/no answer pattern,
    and classifies each with :func:`classify_fork`; no formula is used.
    """
    _check_positive("k (number of candidates)", k)
    words = check_compatible(compatible)
    p = _belief_vector(policy, words)
    n = len(words)
    m = min(k, n) - 1
    cases = n * math.perm(n - 1, m) * (1 if policy.keeps_private_state else 2 ** (m + 1))
    if cases > max_enumerated:
        raise ExactComputationTooLargeError(
            f"Brute force over {n} words and {m + 1} candidates visits {cases:,} cases (limit {max_enumerated:,})."
        )
    totals = {outcome: 0.0 for outcome in FORK_OUTCOMES}
    for r in range(n):
        if p[r] == 0.0:
            continue
        others = [i for i in range(n) if i != r]
        for draw, p_draw in _ordered_draws(others, m):
            candidates = (r, *draw)
            if policy.keeps_private_state:
                answers = {words[c]: c == r for c in candidates}
                totals[classify_fork(words[r], "", answers)] += p[r] * p_draw
                continue
            for pattern in itertools.product((True, False), repeat=len(candidates)):
                p_answers = 1.0
                for c, yes in zip(candidates, pattern):
                    p_answers *= p[c] if yes else 1.0 - p[c]
                if p_answers == 0.0:
                    continue
                answers = {words[c]: yes for c, yes in zip(candidates, pattern)}
                totals[classify_fork(words[r], "", answers)] += p[r] * p_draw * p_answers
    return totals


# --------------------------------------------------------------------------------------------
# Simulation
# --------------------------------------------------------------------------------------------


def simulate_outcomes(
    policy: HostPolicy,
    compatible: Sequence[str],
    k: int,
    n: int,
    seed: int,
) -> dict[Outcome, int]:
    """Counts of each outcome over ``n`` simulated fork episodes (seeded; same protocol as
    :func:`exact_outcomes`, every branch played out and classified by :func:`classify_fork`)."""
    _check_positive("k (number of candidates)", k)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n (episodes) must be a non-negative integer, got {n!r}.")
    words = check_compatible(compatible)
    rng, indices = random.Random(seed), range(len(words))
    cumulative = list(itertools.accumulate(float(v) for v in _belief_vector(policy, words)))

    def word_in_mind() -> int:
        return rng.choices(indices, cum_weights=cumulative)[0]

    m = min(k, len(words)) - 1
    counts = {outcome: 0 for outcome in FORK_OUTCOMES}
    for _ in range(n):
        committed = word_in_mind() if policy.keeps_private_state else None
        revealed = committed if committed is not None else word_in_mind()
        others = [i for i in rng.sample(indices, m + 1) if i != revealed][:m] if m else []  # uniform, without r
        candidates = [revealed, *others]
        answers = {}
        for candidate in candidates:
            in_mind = committed if committed is not None else word_in_mind()
            answers[words[candidate]] = in_mind == candidate
        counts[classify_fork(words[revealed], "", answers)] += 1
    return counts


# --------------------------------------------------------------------------------------------
# Tables for the notebook
# --------------------------------------------------------------------------------------------

def policy_table(
    policies: Sequence[HostPolicy],
    compatible: Sequence[str],
    k: int = 5,
    n_episodes: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Exact and simulated (Wilson 1 - alpha interval) outcome rates, one row per (policy, outcome);
    policy i is simulated with seed ``seed + i`` so adding a policy leaves the others' rows alone."""
    rows = []
    for offset, policy in enumerate(policies):
        exact = exact_outcomes(policy, compatible, k)
        counts = simulate_outcomes(policy, compatible, k, n_episodes, seed + offset)
        for outcome in FORK_OUTCOMES:
            low, high = wilson_interval(counts[outcome], n_episodes, alpha)
            rows.append(
                (policy.name, outcome.value, exact[outcome],
                 counts[outcome] / n_episodes if n_episodes else float("nan"),
                 counts[outcome], n_episodes, low, high)
            )  # fmt: skip
    return pd.DataFrame(rows, columns=["policy", "outcome", "exact", "simulated", "count", "episodes", "wilson_low",
                                       "wilson_high"])


def synthetic_compatible_set(size: int) -> list[str]:
    """``size`` distinct placeholder words; for uniform policies only |C_t| matters."""
    _check_positive("size", size)
    return [f"word{i}" for i in range(size)]


def self_consistency_points(
    sizes: Iterable[int],
    k: int = 5,
    n_episodes: int = 400,
    seed: int = 0,
    alpha: float = 0.05,
    policy: HostPolicy | None = None,
) -> pd.DataFrame:
    """Simulated P(self-consistent) of ``policy`` (default uniform re-imagining) at each |C_t| with
    Wilson intervals, next to the exact value; size i of the list is simulated with seed ``seed + i``."""
    host = policy if policy is not None else ReimaginingPoca()
    return pd.DataFrame([{"size": int(size), "k": k, **consistency_point(host, synthetic_compatible_set(int(size)), k,
                                                                         n_episodes, seed + offset, alpha)}
                         for offset, size in enumerate(sizes)])


def consistency_point(policy: HostPolicy, words: Sequence[str], k: int, n_episodes: int, seed: int,
                      alpha: float) -> dict[str, float]:
    """Simulated P(self-consistent) on ``words`` with its Wilson interval, beside the exact value."""
    successes = simulate_outcomes(policy, words, k, n_episodes, seed)[Outcome.SELF_CONSISTENT]
    low, high = wilson_interval(successes, n_episodes, alpha)
    return {"episodes": n_episodes, "successes": successes,
            "rate": successes / n_episodes if n_episodes else float("nan"), "wilson_low": low, "wilson_high": high,
            "exact": exact_outcomes(policy, words, k)[Outcome.SELF_CONSISTENT]}


def closed_form_check(sizes: Sequence[int], k: int, enumerate_up_to: int = 7) -> pd.DataFrame:
    """P(self-consistent) of the uniform re-imagining POCA three ways: the closed form, the exact
    computation and (for small sets) brute-force enumeration; they must agree."""
    poca = ReimaginingPoca()
    return pd.DataFrame({
        "n": list(sizes),
        "closed_form": [p_self_consistent_uniform(n, k) for n in sizes],
        "exact": [exact_outcomes(poca, synthetic_compatible_set(n), k)[Outcome.SELF_CONSISTENT] for n in sizes],
        "enumeration": [enumerate_outcomes(poca, synthetic_compatible_set(n), k)[Outcome.SELF_CONSISTENT]
                        if n <= enumerate_up_to else float("nan") for n in sizes],
    })


def exact_mix_table(policies: pd.DataFrame, hosts: Sequence[HostPolicy]) -> pd.DataFrame:
    """Host x outcome table of the exact outcome probabilities, in host and outcome order."""
    return policies.pivot(index="policy", columns="outcome", values="exact").reindex(
        index=[h.name for h in hosts], columns=[o.value for o in FORK_OUTCOMES])
