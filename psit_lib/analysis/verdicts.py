"""Is a run's rate the paper's (SPEC §9)? "Consistent" within ±m is a positive finding (TOST: the (1 − 2·alpha)
Newcombe interval of run − paper inside (−m, m)) that a small run never earns; else differs, or inconclusive with the run
size that would decide it. Newcombe's method 10 from Wilson bounds in closed form (sizing uses fractional counts)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import norm

DEFAULT_MARGIN = 0.15
"""Default equivalence margin (absolute difference in rate); see the module docstring for why."""
DEFAULT_ALPHA = 0.05
"""Two-sided level of the "differs" test; each one-sided test of the TOST pair runs at it too."""
MAX_EPISODES = 100_000
"""Largest run size :func:`episodes_to_decide` looks at."""

CONSISTENT, DIFFERS, INCONCLUSIVE = "consistent", "differs", "inconclusive"


def _check(k: float, n: float, what: str) -> None:
    if not (n >= 0 and 0 <= k <= n) or math.isnan(k) or math.isnan(n):
        raise ValueError(f"{what}: need 0 <= successes <= n, got successes={k!r}, n={n!r}")


def _check_level(alpha: float, margin: float | None = None) -> None:
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must lie strictly between 0 and 0.5, got {alpha!r}")
    if margin is not None and not 0.0 < margin < 1.0:
        raise ValueError(f"margin must lie strictly between 0 and 1, got {margin!r}")


def wilson(k: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score bounds at normal quantile ``z`` (counts may be fractional); (0, 1) for n = 0."""
    _check(k, n, "wilson")
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half) if k > 0 else 0.0, min(1.0, centre + half) if k < n else 1.0)


def newcombe_interval(k1: float, n1: float, k2: float, n2: float, alpha: float = DEFAULT_ALPHA
                      ) -> tuple[float, float]:
    """Newcombe's hybrid score interval (1 − alpha) for p1 − p2 (method 10, Newcombe 1998)."""
    _check(k1, n1, "newcombe_interval (first)")
    _check(k2, n2, "newcombe_interval (second)")
    z = float(norm.ppf(1 - alpha / 2))
    p1, p2 = (k1 / n1 if n1 else 0.5), (k2 / n2 if n2 else 0.5)
    l1, u1 = wilson(k1, n1, z)
    l2, u2 = wilson(k2, n2, z)
    d = p1 - p2
    return (d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def decide(k1: float, n1: float, k2: float, n2: float, margin: float = DEFAULT_MARGIN,
           alpha: float = DEFAULT_ALPHA) -> str:
    """The verdict on p1 − p2 (see the module docstring): consistent, differs or inconclusive."""
    _check_level(alpha, margin)
    if n1 == 0 or n2 == 0:
        return INCONCLUSIVE
    low, high = newcombe_interval(k1, n1, k2, n2, 2 * alpha)
    if -margin < low and high < margin:
        return CONSISTENT
    low, high = newcombe_interval(k1, n1, k2, n2, alpha)
    return DIFFERS if low > 0 or high < 0 else INCONCLUSIVE


def episodes_to_decide(run_rate: float, paper_k: float, paper_n: float, margin: float = DEFAULT_MARGIN,
                       alpha: float = DEFAULT_ALPHA, start: int = 1) -> int | None:
    """Smallest run size n >= ``start`` at which a run at ``run_rate`` gets a decided verdict
    (consistent or differs) against the paper's count; None when none up to MAX_EPISODES does
    (e.g. the run rate equals the paper's and the paper's own interval is wider than the margin)."""
    if not 0.0 <= run_rate <= 1.0:
        raise ValueError(f"run_rate must lie in [0, 1], got {run_rate!r}")

    def decided(n: int) -> bool:
        return decide(run_rate * n, n, paper_k, paper_n, margin, alpha) != INCONCLUSIVE

    start = max(1, int(start))
    if decided(start):
        return start
    high = start
    while not decided(high):
        if high >= MAX_EPISODES:
            return None
        high = min(MAX_EPISODES, high * 2)
    low = high // 2 if high > start else start
    while high - low > 1:  # decided(high) and not decided(low)
        mid = (low + high) // 2
        low, high = (low, mid) if decided(mid) else (mid, high)
    return high


def episodes_for_margin(paper_rate: float, margin: float = DEFAULT_MARGIN, paper_n: int = 50,
                        alpha: float = DEFAULT_ALPHA) -> int | None:
    """Run episodes per cell needed for a cell whose run rate equals the paper's to read
    *consistent within ±margin*; None when the paper's own count rules it out."""
    _check_level(alpha, margin)
    k = paper_rate * paper_n

    def consistent(n: int) -> bool:
        return decide(paper_rate * n, n, k, paper_n, margin, alpha) == CONSISTENT

    if not consistent(MAX_EPISODES):
        return None
    low, high = 0, MAX_EPISODES
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if consistent(mid) else (mid, high)
    return high


@dataclass(frozen=True)
class Verdict:
    """One comparison of a run's count with a paper's."""

    run_successes: int
    run_n: int
    paper_successes: int
    paper_n: int
    difference: float
    diff_low: float
    diff_high: float
    margin: float
    verdict: str
    episodes_to_decide: int | None

    @property
    def run_rate(self) -> float:
        return self.run_successes / self.run_n if self.run_n else float("nan")


def compare_counts(run_successes: int, run_n: int, paper_successes: int, paper_n: int,
                   margin: float = DEFAULT_MARGIN, alpha: float = DEFAULT_ALPHA) -> Verdict:
    """The run's count against the paper's: difference (run − paper), its (1 − alpha) Newcombe
    interval, the verdict and, when inconclusive, the run size that would decide it."""
    _check(run_successes, run_n, "run")
    _check(paper_successes, paper_n, "paper")
    verdict = decide(run_successes, run_n, paper_successes, paper_n, margin, alpha)
    if run_n and paper_n:
        low, high = newcombe_interval(run_successes, run_n, paper_successes, paper_n, alpha)
        diff = run_successes / run_n - paper_successes / paper_n
    else:
        low, high, diff = -1.0, 1.0, float("nan")
    need = None
    if verdict == INCONCLUSIVE and run_n and paper_n:
        need = episodes_to_decide(run_successes / run_n, paper_successes, paper_n, margin, alpha, start=run_n)
    return Verdict(int(run_successes), int(run_n), int(paper_successes), int(paper_n), diff, low, high,
                   margin, verdict, need)


def margin_note(paper_n: int, margin: float = DEFAULT_MARGIN, alpha: float = DEFAULT_ALPHA,
                unit: str = "episodes") -> str:
    """What the margin means for a paper with ``paper_n`` per cell, generated (a page's sentence): the
    paper's own 90% half-width at a rate of 0.5, and the run size at which a cell at the paper's rate
    reads consistent (at 0.5 and at 0.1)."""
    z = float(norm.ppf(1 - alpha))
    low, high = wilson(paper_n / 2, paper_n, z)
    mid, tail = episodes_for_margin(0.5, margin, paper_n, alpha), episodes_for_margin(0.1, margin, paper_n, alpha)
    head = (f"Margin ±{margin:g} (the default is ±{DEFAULT_MARGIN:g}; `psit compare RUN --paper --margin M`). The "
            f"paper's own {paper_n} {unit} per cell carry about ±{(high - low) / 2:.3f} at {1 - 2 * alpha:.0%} "
            "around a rate of 0.5, so no run confirms a margin at or below that at mid rates. ")
    if mid is None:
        return head + (f"At ±{margin:g} a cell at a rate of 0.5 can never read consistent, whatever the run's size: "
                       "widen the margin.")
    return head + (f"At ±{margin:g} a cell whose run rate equals the paper's reads consistent from {mid} {unit} per cell "
                   f"at a rate of 0.5 ({tail if tail is not None else 'never'} at 0.1); a smaller run leaves it "
                   "inconclusive, never consistent.")
