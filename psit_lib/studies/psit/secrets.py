"""How spread out the revealed secrets are: entropy, effective number, top share (SPEC §4).

A model that "picks a secret" by sampling its most likely word produces a few attractors
("planet", "python") instead of a spread over the domain: mode collapse. These metrics
measure that spread from the secrets revealed at the fork, with bootstrap intervals for entropy
and effective number because 50 episodes per cell is a small sample, a Wilson interval for the
top share (the share of the most frequent secret is a proportion; a bootstrap of a maximum
collapses to zero width when the top is tied or nearly so), a test of whether the top secret
leads the next one at all, and a chi-square test of the observed distribution against a prior
(e.g. word frequency) when the counts allow one.

Caveat worth stating next to every number: the plug-in entropy of ``n`` samples is at most
``log n`` and is biased downwards, so with 50 episodes a normalised entropy over a domain of
thousands of words cannot approach 1 even for a perfectly uniform chooser. Compare cells
with the same ``n``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import binomtest, chisquare

from psit_lib.analysis.stats import wilson_interval

#: Name of the pooled bucket in :func:`chi_square_vs_prior`. Parenthesised because "other" is
#: itself a common English word and so a plausible Hangman secret.
OTHER_LABEL = "(other)"

Counts = Mapping[Hashable, int] | Iterable[Hashable]


def as_counter(counts: Counts) -> Counter:
    """A Counter from a mapping of counts or a sequence of observed secrets; a bare string (it would
    be read as letters), missing secrets and counts that are not non-negative integers are refused."""
    if isinstance(counts, str):
        raise ValueError(f"expected secrets or counts, got the single string {counts!r}; wrap it in a list.")
    if isinstance(counts, Mapping):
        counter: Counter = Counter()
        for secret, count in counts.items():
            if isinstance(count, bool) or int(count) != count or count < 0:
                raise ValueError(f"count for secret {secret!r} must be a non-negative integer, got {count!r}.")
            if count:
                counter[secret] = int(count)
    else:
        counter = Counter(counts)
    missing = [s for s in counter if s is None or (isinstance(s, float) and math.isnan(s))]
    if missing:
        raise ValueError("secrets contain missing values (None/NaN); drop unparseable reveals before counting.")
    return counter


def _probabilities(counts: Counts) -> np.ndarray:
    counter = as_counter(counts)
    total = sum(counter.values())
    if total == 0:
        raise ValueError("the secret distribution is empty; it needs at least one observed secret.")
    return np.array(list(counter.values()), dtype=float) / total


def shannon_entropy(counts: Counts, base: float = 2) -> float:
    """Plug-in Shannon entropy of the observed secret distribution (bits by default)."""
    if base <= 0 or base == 1:
        raise ValueError(f"the logarithm base must be positive and not 1, got {base!r}.")
    p = _probabilities(counts)
    entropy = float(-(p * np.log(p)).sum() / math.log(base))
    return max(0.0, entropy)


def normalised_entropy(counts: Counts, domain_size: int) -> float:
    """Entropy divided by its maximum ``log(domain_size)``: 1 is uniform over the whole domain."""
    if isinstance(domain_size, bool) or not isinstance(domain_size, int) or domain_size < 2:
        raise ValueError(f"domain_size must be an int of at least 2, got {domain_size!r}.")
    distinct = len(as_counter(counts))
    if distinct > domain_size:
        raise ValueError(f"{distinct} distinct secrets were observed but domain_size is only {domain_size}.")
    return shannon_entropy(counts, base=math.e) / math.log(domain_size)


def effective_number(counts: Counts) -> float:
    """Effective number of secrets, exp(entropy in nats): k for a uniform choice among k secrets."""
    return math.exp(shannon_entropy(counts, base=math.e))


def top_share(counts: Counts) -> float:
    """Share of episodes that revealed the single most frequent secret."""
    return float(_probabilities(counts).max())


#: One-sided significance level of :func:`lead_is_separated`.
LEAD_ALPHA = 0.05


def lead_test(top_count: int, runner_up: int) -> float:
    """The p-value that the most frequent secret is chosen more often than the next one: of the
    reveals that were one of the two, how surprising ``top_count`` is if each was as likely (an exact
    one-sided binomial test at 1/2, conditional on their sum). 2 against 1 gives 0.5; 5 against 0, 0.031."""
    if top_count < runner_up or runner_up < 0:
        raise ValueError(f"the top count {top_count} must be at least the runner-up's {runner_up}, both non-negative.")
    if top_count == 0:
        return 1.0
    return float(binomtest(top_count, top_count + runner_up, 0.5, alternative="greater").pvalue)


def lead_is_separated(top_count: int, runner_up: int, alpha: float = LEAD_ALPHA) -> bool:
    """Whether a single most revealed secret stands apart from the next (:func:`lead_test` below
    ``alpha``); a lead the test cannot separate is no single attractor."""
    return lead_test(top_count, runner_up) < alpha


def top_of(counter: Counter) -> tuple[Hashable, int]:
    """The most frequent secret and its count; secrets tied at that count are ties, never one of
    them picked by its text: ``("(N secrets tied)", count)``."""
    ranked = _ranked(counter)
    top, count = ranked[0]
    tied = sum(c == count for _, c in ranked)
    return (top if tied == 1 else f"({tied} secrets tied)"), count


def _ranked(counter: Counter) -> list[tuple[Hashable, int]]:
    """Secrets by count, descending; ties broken by the secret's text so the order is reproducible."""
    return sorted(counter.items(), key=lambda item: (-item[1], str(item[0])))


def _as_samples(samples: Counts) -> list:
    if isinstance(samples, Mapping):
        return [secret for secret, count in _ranked(as_counter(samples)) for _ in range(count)]
    if isinstance(samples, str):
        raise ValueError(f"expected a sequence of samples, got the single string {samples!r}.")
    return list(samples)


def _codes(samples: Counts) -> np.ndarray:
    items = _as_samples(samples)
    index: dict = {}
    return np.array([index.setdefault(item, len(index)) for item in items], dtype=int)


def _counts_along(codes: np.ndarray) -> np.ndarray:
    """Per resample (last axis = the sample), the count of every category: shape (..., K)."""
    k = int(codes.max()) + 1 if codes.size else 1
    return (codes[..., None] == np.arange(k)).sum(axis=-2)


def _entropy_v(codes: np.ndarray, axis: int = -1) -> np.ndarray:
    counts = _counts_along(np.moveaxis(codes, axis, -1)).astype(float)
    p = counts / counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.nansum(np.where(p > 0, p * np.log2(p), 0.0), axis=-1)


def _effective_v(codes: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.exp2(_entropy_v(codes, axis))


#: Vectorised statistics on integer-coded samples, for ``scipy.stats.bootstrap``. The top share is
#: not among them: its interval is :func:`top_share_interval`.
VECTOR_STATISTICS: dict[str, Callable[..., np.ndarray]] = {"entropy": _entropy_v, "effective_number": _effective_v}


def attainable_range(name: str, n: int, domain_size: int | None = None) -> tuple[float, float]:
    """The values a statistic can take on ``n`` samples from a domain of ``domain_size`` secrets:
    entropy in [0, log2 min(n, K)], effective number in [1, min(n, K)]."""
    m = max(1, min(n, domain_size) if domain_size else n)
    return {"entropy": (0.0, math.log2(m)), "effective_number": (1.0, float(m))}[name]


@dataclass(frozen=True)
class Interval:
    """A 95% interval and the method that produced it."""

    low: float
    high: float
    method: str


def top_share_interval(top_count: int, n: int) -> Interval:
    """The Wilson 95% interval of the top share: the most frequent secret's count out of ``n`` reveals.
    Its identity is read from the same reveals, which pulls the estimate up a little; on Zipf-shaped
    choices (30 to 300 secrets, 40 to 200 reveals) it still covered the true largest share about 95%
    of the time (tests/test_secrets_coverage.py)."""
    low, high = wilson_interval(top_count, n)
    return Interval(low, high, "Wilson")


def bootstrap_ci(
    samples: Counts,
    statistic: str,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    method: str = "BCa",
    domain_size: int | None = None,
) -> Interval:
    """Bootstrap interval of a spread statistic (``entropy``, ``effective_number``),
    clipped to what it can attain on ``n`` samples (:func:`attainable_range`). BCa by default: it
    corrects the downward bias of plug-in entropy on resamples; where BCa is undefined the
    percentile interval is used and ``method`` says so.
    """
    from scipy.stats import bootstrap

    if statistic not in VECTOR_STATISTICS:
        raise ValueError(f"statistic must be one of {sorted(VECTOR_STATISTICS)}, got {statistic!r}.")
    if method not in ("BCa", "percentile"):
        raise ValueError(f"method must be 'BCa' or 'percentile', got {method!r}.")
    codes = _codes(samples)
    if codes.size == 0:
        raise ValueError("bootstrap_ci needs at least one sample.")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive int, got {n_boot!r}.")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    lo_b, hi_b = attainable_range(statistic, len(codes), domain_size)
    estimate = float(VECTOR_STATISTICS[statistic](codes))
    if len(set(codes.tolist())) == 1 or len(codes) < 3:
        return Interval(estimate, estimate, "none (no variation to resample)")
    used = method
    ci = None
    if method == "BCa":
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = bootstrap((codes,), VECTOR_STATISTICS[statistic], vectorized=True, n_resamples=n_boot,
                                confidence_level=0.95, method="BCa", random_state=rng)
        ci = res.confidence_interval
        if not (np.isfinite(ci.low) and np.isfinite(ci.high)):
            ci, used = None, "percentile (BCa undefined)"
    if ci is None:
        res = bootstrap((codes,), VECTOR_STATISTICS[statistic], vectorized=True, n_resamples=n_boot,
                        confidence_level=0.95, method="percentile", random_state=rng)
        ci = res.confidence_interval
    return Interval(float(np.clip(ci.low, lo_b, hi_b)), float(np.clip(ci.high, lo_b, hi_b)), used)


#: Fewest reveals per group for :func:`entropy_gap` to compare two groups' entropies. Below it a
#: bootstrap has (almost) nothing to resample: with 2 reveals every interval has zero width by
#: construction, which says nothing about the model.
MIN_SAMPLES_TO_COMPARE = 10


def entropy_gap(samples_a: Counts, samples_b: Counts, *, n_boot: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """(H(a) - H(b), low, high) in bits: the percentile bootstrap interval of the gap in plug-in
    entropy between two groups of reveals, each resampled independently (the entropy analogue of
    :func:`psit_lib.analysis.sweeps.mean_gap`). NaN interval when a group has fewer than
    :data:`MIN_SAMPLES_TO_COMPARE` reveals. Plug-in entropy is biased low on resamples, more so
    for the more spread group, which pulls the interval toward zero: a separated gap is a
    conservative verdict."""
    counts_a, counts_b = as_counter(samples_a), as_counter(samples_b)
    n_a, n_b = sum(counts_a.values()), sum(counts_b.values())
    if n_a == 0 or n_b == 0:
        return float("nan"), float("nan"), float("nan")
    gap = shannon_entropy(counts_a) - shannon_entropy(counts_b)
    if min(n_a, n_b) < MIN_SAMPLES_TO_COMPARE:
        return gap, float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    resampled = _resampled_entropy(counts_a, n_boot, rng) - _resampled_entropy(counts_b, n_boot, rng)
    low, high = np.quantile(resampled, [0.025, 0.975])
    return gap, float(low), float(high)


def _resampled_entropy(counts: Counter, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Plug-in entropy (bits) of ``n_boot`` resamples of the reveals: a multinomial draw of the
    counts, which is resampling the n reveals with replacement."""
    weights = np.array([c for _, c in _ranked(counts)], dtype=float)  # in a fixed order: same seed, same draw
    n = int(weights.sum())
    drawn = rng.multinomial(n, weights / n, size=n_boot).astype(float) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(drawn > 0, drawn * np.log2(drawn), 0.0).sum(axis=1)


@dataclass(frozen=True)
class ChiSquareResult:
    """A chi-square goodness-of-fit test of observed secrets against a prior, after pooling.

    ``categories``, ``observed`` and ``expected`` are the cells actually tested (the pooled
    cell is :data:`OTHER_LABEL`); ``pooled`` lists the secrets merged into it.
    """

    statistic: float
    p_value: float
    dof: int
    categories: tuple[str, ...]
    observed: tuple[int, ...]
    expected: tuple[float, ...]
    pooled: tuple[str, ...]
    out_of_prior: int = 0  # reveals the prior does not list: reported, never pooled into a tested cell


def chi_square_vs_prior(
    counts: Counts,
    prior: Mapping[str, float],
    min_expected: float = 5,
) -> ChiSquareResult | None:
    """Chi-square test of the revealed secrets against ``prior``; None when the counts do not allow one.

    Only in-prior reveals are tested: the others are counted in ``out_of_prior``, never pooled with
    unrevealed in-prior secrets (that can make any sample look like a perfect fit). Cells expected
    below ``min_expected`` (Cochran's rule) are pooled into :data:`OTHER_LABEL` until it reaches it.
    """
    if min_expected <= 0:
        raise ValueError(f"min_expected must be positive, got {min_expected!r}.")
    observed = as_counter(counts)
    weights = {secret: float(w) for secret, w in prior.items()}
    if any(math.isnan(w) or w < 0 for w in weights.values()):
        raise ValueError("prior weights must be non-negative numbers.")
    total_weight = sum(weights.values())
    if total_weight <= 0:
        raise ValueError("prior weights must have a positive sum.")
    outside = sum(c for s, c in observed.items() if s not in weights)
    observed = Counter({s: c for s, c in observed.items() if s in weights})
    n = sum(observed.values())
    if n == 0:
        return None

    expected = {secret: n * w / total_weight for secret, w in weights.items()}
    floor = min_expected * (1 - 1e-9)  # sums of expectations carry rounding: 1/60+2/60+22/60+5/60 of 2 < 1.0
    kept = {s: e for s, e in expected.items() if e >= floor}
    pooled = sorted((s for s in expected if s not in kept), key=str)
    pooled_expected = sum(expected.get(s, 0.0) for s in pooled)
    pooled_observed = sum(observed.get(s, 0) for s in pooled)
    if pooled:
        while pooled_expected < floor and kept:
            smallest = min(kept, key=lambda s: (kept[s], str(s)))
            pooled_expected += kept.pop(smallest)
            pooled_observed += observed.get(smallest, 0)
            pooled.append(smallest)

    categories = sorted(kept, key=lambda s: (-kept[s], str(s)))
    f_obs = [observed.get(s, 0) for s in categories]
    f_exp = [kept[s] for s in categories]
    if pooled and pooled_expected > 0:
        categories.append(OTHER_LABEL)
        f_obs.append(pooled_observed)
        f_exp.append(pooled_expected)
    if len(categories) < 2:
        return None
    result = chisquare(f_obs, f_exp)
    return ChiSquareResult(
        statistic=float(result.statistic),
        p_value=float(result.pvalue),
        dof=len(categories) - 1,
        categories=tuple(str(c) for c in categories),
        observed=tuple(int(o) for o in f_obs),
        expected=tuple(float(e) for e in f_exp),
        pooled=tuple(str(s) for s in pooled),
        out_of_prior=outside,
    )


def secret_summary(
    df: pd.DataFrame,
    group_cols: str | Sequence[str],
    secret_col: str,
    *,
    domain_size: Mapping[Hashable, int] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Spread of the revealed secrets per group: entropy and effective number with the intervals of
    :func:`bootstrap_ci`, the top share with :func:`top_share_interval`.

    Unparseable reveals count in ``n_missing``, never in the distribution; ``domain_size`` maps a
    ``task`` to its number of secrets (else ``normalised_entropy`` is NaN); every group uses the same
    ``seed``, so adding a group leaves the others' intervals alone. An interval that excludes its own
    estimate (a few dozen mostly distinct reveals cannot show unseen secrets) is not given.
    """
    columns = [group_cols] if isinstance(group_cols, str) else list(group_cols)
    missing_cols = [c for c in [*columns, secret_col] if c not in df.columns]
    if missing_cols:
        raise ValueError(f"secret_summary: the table has no column(s) {missing_cols!r}.")
    statistics: dict[str, Callable[[list], float]] = {
        "entropy": shannon_entropy,
        "effective_number": effective_number,
    }
    rows = []
    grouped = df.groupby(columns, sort=True, dropna=False) if columns else [((), df)]
    for key, sub in grouped:
        key = key if isinstance(key, tuple) else (key,)
        key_map = dict(zip(columns, key))
        secrets = sub[secret_col].dropna().tolist()
        row: dict = {**key_map, "n": len(secrets), "n_missing": len(sub) - len(secrets)}
        row["distinct"] = len(set(secrets))
        size = domain_size.get(key_map.get("task")) if domain_size else None
        row["entropy_ceiling"] = attainable_range("entropy", len(secrets), size)[1] if secrets else float("nan")
        methods = set()
        if secrets:
            for name, statistic in statistics.items():
                row[name] = statistic(secrets)
                interval = bootstrap_ci(secrets, name, n_boot=n_boot, seed=seed, domain_size=size)
                row[f"{name}_low"], row[f"{name}_high"] = interval.low, interval.high
                methods.add(interval.method)
            row["interval"] = f"{' / '.join(sorted(methods))} 95%, clipped to the attainable range"
            outside = [name for name in statistics if not row[f"{name}_low"] <= row[name] <= row[f"{name}_high"]]
            if outside:  # resampling n reveals cannot show unseen secrets: the interval is unusable,
                # so none is given (an interval beside an estimate it excludes reads as a result)
                row["interval"] += f"; excludes the estimate of {', '.join(outside)} (too few reveals), so no interval is given"
                for name in outside:
                    row[f"{name}_low"] = row[f"{name}_high"] = float("nan")
            row["normalised_entropy"] = normalised_entropy(secrets, size) if size else float("nan")
            row["top_secret"], row["top_count"] = top_of(Counter(secrets))
            row["top_share"] = top_share(secrets)
            top = top_share_interval(int(row["top_count"]), len(secrets))
            row["top_share_low"], row["top_share_high"] = top.low, top.high
            row["interval"] += f"; top share: {top.method} 95% of the top secret's count"
        else:
            for name in (*statistics, "top_share"):
                row[name] = row[f"{name}_low"] = row[f"{name}_high"] = float("nan")
            row["normalised_entropy"] = float("nan")
            row["top_secret"], row["top_count"] = float("nan"), 0
            row["interval"] = "none (no reveals)"
        rows.append(row)
    order = [
        *columns, "n", "n_missing", "distinct", "entropy", "entropy_low", "entropy_high", "entropy_ceiling",
        "normalised_entropy", "effective_number", "effective_number_low", "effective_number_high",
        "top_share", "top_share_low", "top_share_high", "top_secret", "top_count", "interval",
    ]
    return pd.DataFrame(rows, columns=order)
