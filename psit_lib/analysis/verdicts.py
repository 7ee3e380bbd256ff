"""Is a run's rate the paper's (SPEC §9)? "Consistent" within ±m is a positive finding that a small run never earns;
else differs, or inconclusive with the run size that would decide it.

The margin is on the arcsine scale, Cohen's h = 2·asin√p_run − 2·asin√p_paper, where a rate's sampling spread is the
same at every rate (its variance is about 1/n wherever p lies), so a margin asks the same of a cell at 0.02 as of one
at 0.5: ±0.3 is about ±0.15 at a rate of 0.5 and [0, 0.08] around 0.02, where an absolute ±0.15 would call 0.16
"consistent" with 0.02. *Consistent*: both one-sided tests of a TOST place h inside (−m, m), i.e. the (1 − 2·alpha)
interval of h lies inside; that interval is Newcombe's construction (the MOVER: each rate's Wilson bounds, here mapped
to the arcsine scale, combined in closed form), exact coverage >= 94% at 95% over the grid the tests check.
*Differs*: Newcombe's hybrid score 95% interval of the absolute difference run − paper (method 10, from Wilson bounds)
excludes 0; that difference and its interval are what the tables show. Sizing uses fractional counts."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from scipy.stats import norm

DEFAULT_MARGIN = 0.3
"""Default equivalence margin in Cohen's h (about ±0.15 in rate at 0.5; see the module docstring)."""
DEFAULT_ALPHA = 0.05
"""Two-sided level of the "differs" test; each one-sided test of the TOST pair runs at it too."""
MAX_EPISODES = 100_000
"""Largest run size :func:`episodes_to_decide` looks at."""
MAX_MARGIN = math.pi
"""h ranges over [−π, π]."""

CONSISTENT, DIFFERS, INCONCLUSIVE = "consistent", "differs", "inconclusive"
ILLUSTRATES = "illustrates the protocol"
"""No verdict against the paper: the run's model is the simulator or not the paper's (SPEC §9)."""
NOT_COMPARABLE = "not comparable"
"""No verdict against the paper: the cell ran under a smaller budget than the paper's, or its replies were cut."""


def _check(k: float, n: float, what: str) -> None:
    if not (n >= 0 and 0 <= k <= n) or math.isnan(k) or math.isnan(n):
        raise ValueError(f"{what}: need 0 <= successes <= n, got successes={k!r}, n={n!r}")


def _check_level(alpha: float, margin: float | None = None) -> None:
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must lie strictly between 0 and 0.5, got {alpha!r}")
    if margin is not None and not 0.0 < margin < MAX_MARGIN:
        raise ValueError(f"margin (Cohen's h) must lie strictly between 0 and pi, got {margin!r}")


def wilson(k: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score bounds at normal quantile ``z`` (counts may be fractional); (0, 1) for n = 0."""
    _check(k, n, "wilson")
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half) if k > 0 else 0.0, min(1.0, centre + half) if k < n else 1.0)


def arcsine(p: float) -> float:
    """2·asin√p, the scale of Cohen's h."""
    return 2 * math.asin(math.sqrt(min(1.0, max(0.0, p))))


@lru_cache(maxsize=64)
def _z(alpha: float) -> float:
    """The two-sided normal quantile of level ``alpha`` (a handful of levels recur thousands of times in sizing)."""
    return float(norm.ppf(1 - alpha / 2))


def _mover(k1: float, n1: float, k2: float, n2: float, alpha: float, scale) -> tuple[float, float]:
    """Newcombe's construction for scale(p1) − scale(p2) from the Wilson (1 − alpha) bounds of each rate."""
    z = _z(alpha)
    p1, p2 = (k1 / n1 if n1 else 0.5), (k2 / n2 if n2 else 0.5)
    l1, u1 = (scale(b) for b in wilson(k1, n1, z))
    l2, u2 = (scale(b) for b in wilson(k2, n2, z))
    s1, s2 = scale(p1), scale(p2)
    d = s1 - s2
    return (d - math.sqrt((s1 - l1) ** 2 + (u2 - s2) ** 2), d + math.sqrt((u1 - s1) ** 2 + (s2 - l2) ** 2))


def newcombe_interval(k1: float, n1: float, k2: float, n2: float, alpha: float = DEFAULT_ALPHA
                      ) -> tuple[float, float]:
    """Newcombe's hybrid score interval (1 − alpha) for p1 − p2 (method 10, Newcombe 1998)."""
    _check(k1, n1, "newcombe_interval (first)")
    _check(k2, n2, "newcombe_interval (second)")
    return _mover(k1, n1, k2, n2, alpha, lambda p: p)


def h_interval(k1: float, n1: float, k2: float, n2: float, alpha: float = DEFAULT_ALPHA) -> tuple[float, float]:
    """The (1 − alpha) interval of Cohen's h = arcsine(p1) − arcsine(p2) (Newcombe's construction on that scale)."""
    _check(k1, n1, "h_interval (first)")
    _check(k2, n2, "h_interval (second)")
    return _mover(k1, n1, k2, n2, alpha, arcsine)


def decide(k1: float, n1: float, k2: float, n2: float, margin: float = DEFAULT_MARGIN,
           alpha: float = DEFAULT_ALPHA) -> str:
    """The verdict on rate 1 against rate 2 (see the module docstring): consistent, differs or inconclusive."""
    _check_level(alpha, margin)
    if n1 == 0 or n2 == 0:
        return INCONCLUSIVE
    low, high = h_interval(k1, n1, k2, n2, 2 * alpha)
    if -margin < low and high < margin:
        return CONSISTENT
    low, high = newcombe_interval(k1, n1, k2, n2, alpha)
    return DIFFERS if low > 0 or high < 0 else INCONCLUSIVE


def band(rate: float, margin: float = DEFAULT_MARGIN) -> tuple[float, float]:
    """The rates within ±margin (Cohen's h) of ``rate``: what "consistent" can mean around it."""
    centre = arcsine(rate) / 2
    low, high = max(0.0, centre - margin / 2), min(math.pi / 2, centre + margin / 2)
    return (math.sin(low) ** 2, math.sin(high) ** 2)


def chance_differs(cells: int, alpha: float = DEFAULT_ALPHA) -> float:
    """How many of ``cells`` truly equal cells read "differs" by chance, on average (each is tested at alpha)."""
    return cells * alpha


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
    h: float
    margin: float
    verdict: str
    episodes_to_decide: int | None

    @property
    def run_rate(self) -> float:
        return self.run_successes / self.run_n if self.run_n else float("nan")


def compare_counts(run_successes: int, run_n: int, paper_successes: int, paper_n: int,
                   margin: float = DEFAULT_MARGIN, alpha: float = DEFAULT_ALPHA) -> Verdict:
    """The run's count against the paper's: difference (run − paper), its (1 − alpha) Newcombe
    interval, Cohen's h, the verdict and, when inconclusive, the run size that would decide it."""
    _check(run_successes, run_n, "run")
    _check(paper_successes, paper_n, "paper")
    verdict = decide(run_successes, run_n, paper_successes, paper_n, margin, alpha)
    if run_n and paper_n:
        low, high = newcombe_interval(run_successes, run_n, paper_successes, paper_n, alpha)
        diff = run_successes / run_n - paper_successes / paper_n
        h = arcsine(run_successes / run_n) - arcsine(paper_successes / paper_n)
    else:
        low, high, diff, h = -1.0, 1.0, float("nan"), float("nan")
    need = None
    if verdict == INCONCLUSIVE and run_n and paper_n:
        need = episodes_to_decide(run_successes / run_n, paper_successes, paper_n, margin, alpha, start=run_n)
    return Verdict(int(run_successes), int(run_n), int(paper_successes), int(paper_n), diff, low, high, h,
                   margin, verdict, need)


VERDICT_COLUMNS = ["run_successes", "run_n", "run_rate", "paper_rate", "paper_n", "difference", "diff_low",
                   "diff_high", "h", "margin_h", "verdict", "episodes_to_decide", "note"]
"""The columns every reproduction table shares after its keys (``note``: why a cell has no verdict)."""


def verdict_row(run_successes: int, run_n: int, paper_successes: int, paper_n: int, paper_rate: float,
                margin: float = DEFAULT_MARGIN, alpha: float = DEFAULT_ALPHA, withheld: str = "",
                why: str = "") -> dict[str, object]:
    """One row of a reproduction table: the comparison's numbers always (they illustrate the protocol
    when no verdict is given), the verdict unless ``withheld`` names the reason there is none
    (:data:`ILLUSTRATES` or :data:`NOT_COMPARABLE`), and ``why`` in ``note``."""
    v = compare_counts(run_successes, run_n, paper_successes, paper_n, margin, alpha)
    return {"run_successes": v.run_successes, "run_n": v.run_n, "run_rate": v.run_rate, "paper_rate": paper_rate,
            "paper_n": paper_n, "difference": v.difference, "diff_low": v.diff_low, "diff_high": v.diff_high,
            "h": v.h, "margin_h": margin, "verdict": withheld or v.verdict,
            "episodes_to_decide": None if withheld else v.episodes_to_decide, "note": why}


def _fmt(rate: float) -> str:
    return f"{rate:.2f}".rstrip("0").rstrip(".") if rate not in (0.0, 1.0) else f"{rate:g}"


def margin_note(paper_n: int, margin: float = DEFAULT_MARGIN, alpha: float = DEFAULT_ALPHA,
                unit: str = "episodes") -> str:
    """What the margin means for a paper with ``paper_n`` per cell, generated (a page's sentence): the band of run
    rates "consistent" allows at a few paper rates, the run size at which a cell at the paper's rate reads consistent,
    and the paper counts no run can confirm."""
    bands = "; ".join(f"{_fmt(p)}: {_fmt(band(p, margin)[0])}-{_fmt(band(p, margin)[1])}"
                      for p in (0.02, 0.1, 0.5, 0.9, 0.98))
    head = (f"Margin: Cohen's h within ±{margin:g} (h = 2·asin√run − 2·asin√paper; the default is ±{DEFAULT_MARGIN:g}; "
            f"`psit compare RUN --paper --margin H`), a band that is about ±{(band(0.5, margin)[1] - 0.5):.2f} at a rate "
            f"of 0.5 and narrower towards 0 and 1, where the paper's rates say more. \"Consistent\" means the run's rate "
            f"is shown to lie in that band around the paper's (paper rate: band) — {bands}. ")
    mid, tail = episodes_for_margin(0.5, margin, paper_n, alpha), episodes_for_margin(0.1, margin, paper_n, alpha)
    never = [k for k in range(paper_n + 1) if episodes_for_margin(k / paper_n, margin, paper_n, alpha) is None]
    if mid is None:
        return head + (f"With the paper's {paper_n} {unit} per cell a cell at a rate of 0.5 can never read consistent at "
                       f"±{margin:g}, whatever the run's size: widen the margin.")
    out = head + (f"A cell whose run rate equals the paper's reads consistent from {mid} {unit} per cell at a rate of "
                  f"0.5 ({tail if tail is not None else 'never'} at 0.1); a smaller run leaves it inconclusive, never "
                  "consistent.")
    if never:
        shown = ", ".join(str(k) for k in never)
        out += (f" At {shown} of {paper_n} the paper's own count is too uncertain for this margin: such a cell reads "
                "differs or inconclusive, never consistent.")
    return out + (f" \"Differs\" is tested per cell at {alpha:g}: of N truly equal cells about {alpha:g}·N read differs "
                  "by chance.")
