"""How spread out the revealed secrets are: entropy, effective number, top share (SPEC §4).

A model that "picks a secret" by sampling its most likely word produces a few attractors
("planet", "python") instead of a spread over the domain: mode collapse. These metrics
measure that spread from the secrets revealed at the fork, with bootstrap intervals because
50 episodes per cell is a small sample, and a chi-square test of the observed distribution
against a prior (e.g. word frequency) when the counts allow one.

Every function takes either a sequence of revealed secrets (one per episode) or a mapping
from secret to count (e.g. a ``Counter``).

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
from scipy.stats import chisquare

#: Name of the pooled bucket in :func:`chi_square_vs_prior`. Parenthesised because "other" is
#: itself a common English word and so a plausible Hangman secret.
OTHER_LABEL = "(other)"

Counts = Mapping[Hashable, int] | Iterable[Hashable]


def as_counter(counts: Counts) -> Counter:
    """A Counter from a mapping of counts or from a sequence of observed secrets.

    Zero counts are dropped; negative or fractional counts, missing secrets and a bare
    string (which would otherwise be read as a sequence of letters) are refused.
    """
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


def _ranked(counter: Counter) -> list[tuple[Hashable, int]]:
    """Secrets by count, descending; ties broken by the secret's text so the order is reproducible."""
    return sorted(counter.items(), key=lambda item: (-item[1], str(item[0])))


def top_k(counts: Counts, k: int = 10) -> pd.DataFrame:
    """The ``k`` most frequent secrets with columns ``rank``, ``secret``, ``count``, ``share``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int of at least 1, got {k!r}.")
    counter = as_counter(counts)
    total = sum(counter.values())
    rows = [
        {"rank": rank, "secret": secret, "count": count, "share": count / total}
        for rank, (secret, count) in enumerate(_ranked(counter)[:k], start=1)
    ]
    return pd.DataFrame(rows, columns=["rank", "secret", "count", "share"])


def _as_samples(samples: Counts) -> list:
    if isinstance(samples, Mapping):
        return [secret for secret, count in _ranked(as_counter(samples)) for _ in range(count)]
    if isinstance(samples, str):
        raise ValueError(f"expected a sequence of samples, got the single string {samples!r}.")
    return list(samples)


def bootstrap_ci(
    samples: Counts,
    statistic: Callable[[list], float],
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    alpha: float = 0.05,
    centred: bool = False,
    bounds: tuple[float, float] = (-np.inf, np.inf),
) -> tuple[float, float]:
    """Bootstrap interval of ``statistic`` over resamples (with replacement) of ``samples``.

    ``statistic`` receives each resample as a list of the original items. Resampling uses a
    numpy ``Generator`` built from ``seed`` so the interval is reproducible.

    The plain percentile interval inherits the downward bias of plug-in entropy: resamples
    repeat items, so they look less diverse, and when most secrets are distinct the interval
    can lie wholly below the estimate. ``centred=True`` shifts the bootstrap distribution so
    its mean sits on the estimate (then clips to ``bounds``): the interval shows the sampling
    spread *around* the estimate. Neither removes the estimator's own bias (entropy of n
    samples can never exceed log2 n).
    """
    items = _as_samples(samples)
    if not items:
        raise ValueError("bootstrap_ci needs at least one sample.")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive int, got {n_boot!r}.")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}.")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    indices = rng.integers(0, len(items), size=(n_boot, len(items)))
    values = np.array([statistic([items[i] for i in row]) for row in indices], dtype=float)
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    if centred:
        shift = float(statistic(items)) - float(values.mean())
        low, high = low + shift, high + shift
    return (float(np.clip(low, *bounds)), float(np.clip(high, *bounds)))


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


def chi_square_vs_prior(
    counts: Counts,
    prior: Mapping[str, float],
    min_expected: float = 5,
) -> ChiSquareResult | None:
    """Chi-square test of the revealed secrets against ``prior``; None when the counts do not allow one.

    The prior's weights are renormalised to sum to 1 over its keys. Cells whose expected count
    is below ``min_expected`` (Cochran's rule for the chi-square approximation) are pooled into
    one :data:`OTHER_LABEL` cell, together with observed secrets the prior does not list (the
    prior's "something else"). If that pooled cell is still below ``min_expected``, the kept
    cell with the smallest expectation is merged into it, repeatedly. The test needs at least
    two cells; with fewer (or no observations) the answer is None.
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
    n = sum(observed.values())
    if n == 0:
        return None

    expected = {secret: n * w / total_weight for secret, w in weights.items()}
    kept = {s: e for s, e in expected.items() if e >= min_expected}
    pooled = sorted((s for s in expected if s not in kept), key=str)
    pooled += sorted((s for s in observed if s not in expected), key=str)
    pooled_expected = sum(expected.get(s, 0.0) for s in pooled)
    pooled_observed = sum(observed.get(s, 0) for s in pooled)
    if pooled:
        while pooled_expected < min_expected and kept:
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
    )


def _domain_size_for(
    key: dict[str, Hashable], domain_size: int | Mapping[Hashable, int] | None, domain_key: str
) -> int | None:
    if domain_size is None or isinstance(domain_size, int):
        return domain_size
    if domain_key not in key:
        raise ValueError(f"domain sizes are keyed by {domain_key!r}, which is not a group column.")
    return domain_size.get(key[domain_key])


_STATISTIC_BOUNDS = {"entropy": (0.0, np.inf), "effective_number": (1.0, np.inf), "top_share": (0.0, 1.0)}


def secret_summary(
    df: pd.DataFrame,
    group_cols: str | Sequence[str],
    secret_col: str,
    *,
    domain_size: int | Mapping[Hashable, int] | None = None,
    domain_key: str = "task",
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Spread of the revealed secrets per group, with bootstrap intervals.

    Rows with no revealed secret (unparseable reveals) are counted in ``n_missing`` and left
    out of the distribution. ``domain_size`` is one int for all groups, or a mapping keyed by
    the value of the ``domain_key`` group column (e.g. ``{"hangman": 30_000, "diagnosis": 49}``);
    without it ``normalised_entropy`` is NaN. Each group is bootstrapped with the same
    ``seed``, so adding a group does not change the others' intervals.

    Intervals are centred bootstrap intervals (see :func:`bootstrap_ci`), clipped to each
    statistic's range; ``entropy_ceiling`` is log2(n), the most n samples can show.

    Columns: group columns, ``n``, ``n_missing``, ``distinct``, ``entropy`` (bits),
    ``entropy_low``, ``entropy_high``, ``normalised_entropy``, ``effective_number``,
    ``effective_number_low``, ``effective_number_high``, ``top_share``, ``top_share_low``,
    ``top_share_high``, ``top_secret``, ``top_count``.
    """
    columns = [group_cols] if isinstance(group_cols, str) else list(group_cols)
    missing_cols = [c for c in [*columns, secret_col] if c not in df.columns]
    if missing_cols:
        raise ValueError(f"secret_summary: the table has no column(s) {missing_cols!r}.")
    statistics: dict[str, Callable[[list], float]] = {
        "entropy": shannon_entropy,
        "effective_number": effective_number,
        "top_share": top_share,
    }
    rows = []
    grouped = df.groupby(columns, sort=True, dropna=False) if columns else [((), df)]
    for key, sub in grouped:
        key = key if isinstance(key, tuple) else (key,)
        key_map = dict(zip(columns, key))
        secrets = [s for s in sub[secret_col].tolist() if not _is_missing(s)]
        row: dict = {**key_map, "n": len(secrets), "n_missing": len(sub) - len(secrets)}
        row["distinct"] = len(set(secrets))
        row["entropy_ceiling"] = math.log2(len(secrets)) if secrets else float("nan")
        size = _domain_size_for(key_map, domain_size, domain_key)
        if secrets:
            for name, statistic in statistics.items():
                row[name] = statistic(secrets)
                row[f"{name}_low"], row[f"{name}_high"] = bootstrap_ci(
                    secrets, statistic, n_boot=n_boot, seed=seed, alpha=alpha, centred=True,
                    bounds=_STATISTIC_BOUNDS[name])
            row["normalised_entropy"] = normalised_entropy(secrets, size) if size else float("nan")
            row["top_secret"], row["top_count"] = _ranked(Counter(secrets))[0]
        else:
            for name in statistics:
                row[name] = row[f"{name}_low"] = row[f"{name}_high"] = float("nan")
            row["normalised_entropy"] = float("nan")
            row["top_secret"], row["top_count"] = float("nan"), 0
        rows.append(row)
    order = [
        *columns, "n", "n_missing", "distinct", "entropy", "entropy_low", "entropy_high", "entropy_ceiling",
        "normalised_entropy", "effective_number", "effective_number_low", "effective_number_high",
        "top_share", "top_share_low", "top_share_high", "top_secret", "top_count",
    ]
    return pd.DataFrame(rows, columns=order)


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
