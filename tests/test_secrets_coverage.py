"""How often notebook 07's intervals cover the true value, on known distributions.

The coverage is printed (``pytest -s``) and asserted only where the method can deliver it. The
plug-in entropy of a few dozen samples from a long-tailed distribution is biased low, and no
resampling interval around it covers the true entropy at the nominal rate; the table and the
notebook say so rather than hide it. The assertions pin what the BCa interval does achieve.
"""

from __future__ import annotations

import numpy as np
import pytest

from psit_lib.studies.psit.secrets import bootstrap_ci


def _zipf(k: int, s: float) -> np.ndarray:
    p = 1 / np.arange(1, k + 1) ** s
    return p / p.sum()


def _truth(p: np.ndarray, name: str) -> float:
    h = float(-(p * np.log2(p)).sum())
    return {"entropy": h, "effective_number": 2 ** h}[name]


def coverage(p: np.ndarray, n: int, name: str, method: str, reps: int = 120, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    truth, hits = _truth(p, name), 0
    for r in range(reps):
        sample = rng.choice(len(p), size=n, p=p).tolist()
        interval = bootstrap_ci(sample, name, n_boot=300, seed=r, method=method, domain_size=len(p))
        hits += interval.low - 1e-9 <= truth <= interval.high + 1e-9
    return hits / reps


@pytest.mark.parametrize("name, n, floor", [
    ("entropy", 200, 0.7),            # measured about 0.8 (nominal 0.95)
    ("effective_number", 200, 0.7),
])
@pytest.mark.slow
def test_bca_coverage_on_a_zipf_distribution_over_30_secrets(name, n, floor):
    measured = coverage(_zipf(30, 1.2), n, name, "BCa")
    print(f"\nBCa 95% coverage of {name}, Zipf(1.2) over 30, n={n}: {measured:.2f}")
    assert measured >= floor


@pytest.mark.parametrize("k, s, n", [(30, 1.2, 40), (30, 1.2, 200), (300, 1.0, 40), (49, 0.5, 96)])
def test_wilson_coverage_of_the_largest_share(k, s, n):
    """The top share's interval (Wilson, on the observed top secret's count) covers the true largest
    share near the nominal rate though the top secret is picked from the same reveals: measured 0.95
    to 0.97 over 400 samples each."""
    from collections import Counter

    from psit_lib.studies.psit.secrets import top_share_interval

    p, rng, hits = _zipf(k, s), np.random.default_rng(0), 0
    for _ in range(400):
        top = Counter(rng.choice(k, size=n, p=p).tolist()).most_common(1)[0][1]
        interval = top_share_interval(top, n)
        hits += interval.low <= p.max() <= interval.high
    print(f"\nWilson 95% coverage of the top share, Zipf({s}) over {k}, n={n}: {hits / 400:.2f}")
    assert hits / 400 >= 0.9


def test_small_samples_are_reported_not_hidden():
    """At n=40 from Zipf(1.2) over 30 the entropy intervals miss often (plug-in bias): printed."""
    bca = coverage(_zipf(30, 1.2), 40, "entropy", "BCa")
    percentile = coverage(_zipf(30, 1.2), 40, "entropy", "percentile")
    print(f"\nentropy 95% coverage at n=40: BCa {bca:.2f}, percentile {percentile:.2f}")
    assert bca >= percentile  # BCa's bias correction helps, though not to nominal
