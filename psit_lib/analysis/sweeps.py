"""Sweeps of one simulator assumption: the gap between two systems at each value, its interval, and a generated reading.
A comparison is a result only if it survives the simulator's assumptions: where the gap's interval reaches zero at a
plausible value, the conclusion is the assumption's, not the systems'."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from psit_lib.analysis.labels import format_number

GAP_COLUMNS = ["knob", "value", "system_a", "system_b", "n_a", "n_b", "a", "b", "gap", "ci_low", "ci_high"]


def proportion_gap(successes_a: int, n_a: int, successes_b: int, n_b: int, alpha: float = 0.05
                   ) -> tuple[float, float, float]:
    """(rate_a - rate_b, low, high): Newcombe's hybrid-score interval for a difference of two
    independent proportions (well behaved at 0 and 1, unlike the Wald interval)."""
    from statsmodels.stats.proportion import confint_proportions_2indep

    if n_a == 0 or n_b == 0:
        return float("nan"), float("nan"), float("nan")
    low, high = confint_proportions_2indep(successes_a, n_a, successes_b, n_b, method="newcomb",
                                           compare="diff", alpha=alpha)
    return successes_a / n_a - successes_b / n_b, float(low), float(high)


def mean_gap(values_a: Sequence[float], values_b: Sequence[float], *, seed: int = 0, alpha: float = 0.05,
             n_resamples: int = 2000, batch: int | None = None) -> tuple[float, float, float]:
    """(mean_a - mean_b, low, high): percentile bootstrap over each system's episodes (``scipy.stats.bootstrap``). With
    under two values on a side or no variation, the interval is the observed gap (nothing to resample: :func:`gap_verdicts`
    says "too small" unless it is 0). ``batch`` caps the resamples held in memory."""
    from scipy.stats import bootstrap

    a, b = np.asarray(values_a, dtype=float), np.asarray(values_b, dtype=float)
    if len(a) == 0 or len(b) == 0:
        return float("nan"), float("nan"), float("nan")
    gap = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return gap, gap, gap  # nothing to resample: the gap is what was observed
    res = bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
                    method="percentile", confidence_level=1 - alpha, n_resamples=n_resamples,
                    random_state=np.random.default_rng(seed), vectorized=True, batch=batch)
    return gap, float(res.confidence_interval.low), float(res.confidence_interval.high)


def gap_table(df: pd.DataFrame, *, knob: str, value_col: str, system_col: str, a: str, b: str,
              outcome_col: str, kind: str = "proportion", seed: int = 0) -> pd.DataFrame:
    """One row per knob value: both systems' n and rate (or mean), the gap a - b and its 95%
    interval. ``kind`` is ``"proportion"`` (outcome is a success flag) or ``"mean"``."""
    if kind not in ("proportion", "mean"):
        raise ValueError(f"gap_table: kind must be 'proportion' or 'mean', not {kind!r}")
    rows: list[dict[str, Any]] = []
    for value, part in df.groupby(value_col, sort=True):
        xa = part.loc[part[system_col] == a, outcome_col].astype(float)
        xb = part.loc[part[system_col] == b, outcome_col].astype(float)
        if kind == "proportion":
            gap, low, high = proportion_gap(int(xa.sum()), len(xa), int(xb.sum()), len(xb))
        else:
            gap, low, high = mean_gap(xa.to_numpy(), xb.to_numpy(), seed=seed)
        rows.append({"knob": knob, "value": value, "system_a": a, "system_b": b, "n_a": len(xa), "n_b": len(xb),
                     "a": xa.mean() if len(xa) else float("nan"), "b": xb.mean() if len(xb) else float("nan"),
                     "gap": gap, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=GAP_COLUMNS)


def gap_verdicts(table: pd.DataFrame) -> pd.Series:
    """Per row, what the 95% interval of a - b decides: "a ahead" (above zero: a higher, whichever way is better),
    "b ahead", "within noise" (includes zero) or "too small" (no interval, or zero width: nothing was resampled)."""
    if table.empty:
        return pd.Series([], index=table.index, dtype=object)
    low, high, gap = (table[c].astype(float) for c in ("ci_low", "ci_high", "gap"))
    n_a = table["n_a"] if "n_a" in table else pd.Series(2, index=table.index)
    n_b = table["n_b"] if "n_b" in table else pd.Series(2, index=table.index)
    missing = low.isna() | high.isna() | gap.isna() | (n_a == 0) | (n_b == 0)
    degenerate = (low == high) & ((gap != 0) | (n_a < 2) | (n_b < 2))
    return pd.Series(np.select([missing | degenerate, low > 0, high < 0], ["too small", "a ahead", "b ahead"],
                               "within noise"), index=table.index)


def _higher_word(direction: str | None, higher: str, lower: str) -> str:
    """How to say "``higher`` has the higher value than ``lower``" for a measure's direction."""
    if direction == "higher":
        return f"{higher} better"
    if direction == "lower":
        return f"{lower} better"
    return f"{higher} higher"


def _partly_separated(table: pd.DataFrame, verdicts: pd.Series, knob: str, a: str, b: str, ahead: str,
                      measure: str, direction: str | None) -> str:
    """One side is ahead (its interval excludes zero) at some values and the interval includes zero
    at the others: the direction changes only if a within-noise gap points the other way; otherwise
    the sweep changes only whether this run's size can show the gap."""
    sign = 1 if ahead == "a ahead" else -1
    leader, other = (a, b) if sign > 0 else (b, a)
    clear = [str(format_number(v)) for v, verdict in zip(table["value"], verdicts) if verdict == ahead]
    noisy = [(v, g) for v, g, verdict in zip(table["value"], table["gap"], verdicts) if verdict == "within noise"]
    same = [str(format_number(v)) for v, g in noisy if g * sign > 0]
    reverse = [str(format_number(v)) for v, g in noisy if g * sign < 0]
    even = [str(format_number(v)) for v, g in noisy if g == 0]
    text = f"{_higher_word(direction, leader, other)} at {knob}={', '.join(clear)} (the interval excludes zero)"
    if same:
        text += (f"; at {knob}={', '.join(same)} the gap keeps the same sign but its interval includes zero "
                 "(too few episodes there to show it)")
    if reverse:
        return (text + f"; at {knob}={', '.join(reverse)} the gap points the other way, within noise: this run "
                f"cannot say whether the comparison of {a} and {b} hinges on `{knob}`.")
    if even:
        return (text + f"; at {knob}={', '.join(even)} the two tie exactly: whether {leader} is ahead is decided "
                "by this simulator assumption, not by the systems alone.")
    return (text + f". The direction never reverses in this range: `{knob}` changes how clearly this run "
            f"separates {a} and {b}, not which is ahead.")


def sweep_reading(table: pd.DataFrame, *, measure: str = "rate", direction: str | None = "higher") -> str:
    """A generated sentence on whether the comparison survives the swept assumption, every number from ``table``
    (:func:`gap_table`) so it cannot contradict it; "better" follows ``direction`` (lower for hallucination or drift)."""
    if table.empty:
        return "No swept episodes in this run (the sweep runs on the simulator only)."
    knob, a, b = table["knob"].iat[0], table["system_a"].iat[0], table["system_b"].iat[0]
    verdicts = gap_verdicts(table)
    words = {"a ahead": _higher_word(direction, a, b), "b ahead": _higher_word(direction, b, a),
             "within noise": "interval includes zero", "too small": "too few episodes to test"}

    def word(verdict: str, gap: float) -> str:
        return "tie" if verdict == "within noise" and gap == 0 else words[verdict]

    parts = [f"{knob}={format_number(v)}: {a} − {b} {measure} gap {format_number(g)} "
             f"[{format_number(lo)}, {format_number(hi)}] ({word(verdict, g)})"
             for v, g, lo, hi, verdict in zip(table["value"], table["gap"], table["ci_low"], table["ci_high"], verdicts)]
    tested = [v for v in verdicts if v != "too small"]
    untested = [format_number(v) for v, verdict in zip(table["value"], verdicts) if verdict == "too small"]
    kinds = set(tested)
    if not tested:
        verdict = (f"At every swept value a system had too few episodes to test the gap: this run cannot tell "
                   f"{a} from {b}.")
    elif kinds in ({"a ahead"}, {"b ahead"}):
        higher, lower = (a, b) if kinds == {"a ahead"} else (b, a)
        where = "at every swept value" if not untested else "at every swept value that could be tested"
        if direction is None:
            claim = f"{higher} stays higher than {lower} {where}"
        elif direction == "higher":
            claim = f"{higher} stays ahead {where} (higher {measure} is better)"
        else:
            claim = f"{lower} stays better than {higher} {where} (lower {measure} is better)"
        verdict = f"{claim}: this comparison does not hinge on `{knob}` in this range."
    elif kinds == {"within noise"}:
        verdict = f"The gap's interval includes zero at every tested value: this run cannot tell {a} from {b}."
    elif {"a ahead", "b ahead"} <= kinds:
        verdict = (f"The verdict changes with `{knob}`: {a} is ahead at some values and {b} at others, each "
                   f"excluding zero, so the comparison of {a} and {b} is decided by this simulator assumption, "
                   f"not by the systems alone.")
    else:
        verdict = _partly_separated(table, verdicts, knob, a, b, "a ahead" if "a ahead" in kinds else "b ahead",
                                    measure, direction)
    if untested and tested:
        verdict += f" (At {knob}={', '.join(map(str, untested))} there were too few episodes to test the gap.)"
    return "; ".join(parts) + ". " + verdict
