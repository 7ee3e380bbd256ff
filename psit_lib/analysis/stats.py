"""Rates, intervals and significance (SPEC §4) as pure functions over counts and episode tables, so every notebook
computes them one way: Wilson 95% intervals, and "A beats B" only by a one-sided Fisher test per (task, model), Holm-corrected."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

SIGNIFICANCE_COLUMNS_AFTER_GROUPS = (
    "method",
    "baseline",
    "n_method",
    "n_baseline",
    "rate_method",
    "rate_baseline",
    "p_value",
    "p_holm",
    "holm_family_size",
    "significant",
    "marker",
)
RATE_COLUMNS_AFTER_GROUPS = ("n_scored", "n_failed", "successes", "rate", "wilson_low", "wilson_high")


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}.")


def _check_count(successes: int, n: int, what: str) -> None:
    if isinstance(n, bool) or isinstance(successes, bool):
        raise ValueError(f"{what}: counts must be integers, not booleans.")
    if int(n) != n or int(successes) != successes:
        raise ValueError(f"{what}: counts must be whole numbers, got successes={successes!r}, n={n!r}.")
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"{what}: need 0 <= successes <= n, got successes={successes!r}, n={n!r}.")


def wilson_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval; (0.0, 1.0) with no trials. Not Wald: at rates near 0 and 1 with 50 episodes, Wald intervals
    collapse to zero width or leave [0, 1]."""
    _check_count(successes, n, "wilson_interval")
    _check_alpha(alpha)
    if n == 0:
        return (0.0, 1.0)
    low, high = proportion_confint(int(successes), int(n), alpha=alpha, method="wilson")
    # The bounds at 0 and n are exactly 0 and 1; snap away floating-point residue (e.g. 3e-17).
    low = 0.0 if successes == 0 else max(0.0, float(low))
    high = 1.0 if successes == n else min(1.0, float(high))
    return (low, high)


def fisher_one_sided(a_success: int, a_n: int, b_success: int, b_n: int) -> float:
    """One-sided Fisher exact p for "A's success rate exceeds B's" (the hypergeometric upper tail, margins fixed);
    1.0 when an arm has no trials (no evidence)."""
    _check_count(a_success, a_n, "fisher_one_sided (method A)")
    _check_count(b_success, b_n, "fisher_one_sided (baseline B)")
    if a_n == 0 or b_n == 0:
        return 1.0
    table = [[int(a_success), int(a_n - a_success)], [int(b_success), int(b_n - b_success)]]
    result = fisher_exact(table, alternative="greater")
    return float(min(1.0, result.pvalue))


def holm(pvalues: Sequence[float], alpha: float = 0.05) -> tuple[list[bool], list[float]]:
    """Holm-Bonferroni step-down: (reject, adjusted p-values) in input order. ``method="holm"`` explicitly: statsmodels
    defaults to Holm-Sidak, not the procedure the protocol names."""
    _check_alpha(alpha)
    values = [float(p) for p in pvalues]
    for p in values:
        if math.isnan(p) or not 0.0 <= p <= 1.0:
            raise ValueError(f"holm: every p-value must lie in [0, 1], got {p!r}.")
    if not values:
        return ([], [])
    reject, adjusted, _, _ = multipletests(values, alpha=alpha, method="holm")
    return ([bool(r) for r in reject], [float(p) for p in adjusted])


def as_columns(cols: str | Sequence[str] | None) -> list[str]:
    if cols is None:
        return []
    return [cols] if isinstance(cols, str) else list(cols)


def require_columns(df: pd.DataFrame, columns: Sequence[str | None], where: str) -> None:
    missing = [c for c in columns if c is not None and c not in df.columns]
    if missing:
        raise ValueError(f"{where}: the table has no column(s) {missing!r}; it has {list(df.columns)!r}.")


def _success_flags(values: pd.Series, success_col: str) -> pd.Series:
    """The success column as booleans; refuses missing or non-binary values instead of guessing."""
    if values.isna().any():
        raise ValueError(
            f"column {success_col!r} has missing values; record failed or unparseable episodes as "
            "False rather than dropping them."
        )
    allowed = {True, False}
    bad = sorted({repr(v) for v in values.unique() if v not in allowed})
    if bad:
        raise ValueError(f"column {success_col!r} must hold booleans (or 0/1), found {bad[:5]}.")
    return values.astype(bool)


def _groups(df: pd.DataFrame, group_cols: list[str]):
    """(key tuple, sub-table) per group in sorted key order; one group when there are no columns."""
    if not group_cols:
        yield (), df
        return
    for key, sub in df.groupby(group_cols, sort=True, dropna=False):
        yield (key if isinstance(key, tuple) else (key,)), sub


def rate_table(
    df: pd.DataFrame,
    group_cols: str | Sequence[str],
    success_col: str,
    alpha: float = 0.05,
    scored_col: str = "scored",
) -> pd.DataFrame:
    """Success rate per group with its Wilson interval over the scored episodes (group columns, then
    :data:`RATE_COLUMNS_AFTER_GROUPS`). An episode that failed to run (``scored_col`` False) counts in ``n_failed``, not
    in the rate: it says nothing about the model, and as a failure it would bias every rate down."""
    columns = as_columns(group_cols)
    require_columns(df, [*columns, success_col], "rate_table")
    _check_alpha(alpha)
    scored = df[scored_col].astype(bool) if scored_col in df.columns else pd.Series(True, index=df.index)
    flags = pd.Series(False, index=df.index)
    flags[scored] = _success_flags(df.loc[scored, success_col], success_col)
    rows = []
    for key, sub in _groups(df.assign(**{success_col: flags, "_scored": scored}), columns):
        n = int(sub["_scored"].sum())
        successes = int(sub.loc[sub["_scored"], success_col].sum())
        low, high = wilson_interval(successes, n, alpha)
        rows.append((*key, n, len(sub) - n, successes, successes / n if n else float("nan"), low, high))
    return pd.DataFrame(rows, columns=[*columns, *RATE_COLUMNS_AFTER_GROUPS])


def significance_table(
    df: pd.DataFrame,
    methods: Sequence[str],
    baselines: Sequence[str],
    group_cols: str | Sequence[str] = ("task", "model"),
    method_col: str = "agent",
    success_col: str = "self_consistent",
    alpha: float = 0.05,
    scored_col: str = "scored",
    family: str = "method",
) -> pd.DataFrame:
    """One-sided Fisher of every method against every baseline per group, Holm-corrected, over scored episodes only.
    ``family="method"`` (the studies') corrects each (group, method) together, what "better than every baseline" needs;
    ``"table"`` corrects all at once. A comparison missing an arm stays (NaN: a missing run shows) outside its family."""
    methods, baselines = list(methods), list(baselines)
    if not methods or not baselines:
        raise ValueError("significance_table needs at least one method and at least one baseline.")
    overlap = sorted(set(methods) & set(baselines))
    if overlap:
        raise ValueError(f"significance_table: {overlap!r} listed both as method and as baseline.")
    columns = as_columns(group_cols)
    require_columns(df, [*columns, method_col, success_col], "significance_table")
    _check_alpha(alpha)
    if scored_col in df.columns:
        df = df[df[scored_col].astype(bool)]
    flags = _success_flags(df[success_col], success_col)
    table = df.assign(**{success_col: flags})

    rows = []
    for key, sub in _groups(table, columns):
        counts = sub.groupby(method_col)[success_col].agg(["sum", "count"])
        for method in methods:
            for baseline in baselines:
                a_s, a_n = _count_of(counts, method)
                b_s, b_n = _count_of(counts, baseline)
                runnable = a_n > 0 and b_n > 0
                p = fisher_one_sided(a_s, a_n, b_s, b_n) if runnable else float("nan")
                rows.append(
                    {
                        **dict(zip(columns, key)),
                        "method": method,
                        "baseline": baseline,
                        "n_method": a_n,
                        "n_baseline": b_n,
                        "rate_method": a_s / a_n if a_n else float("nan"),
                        "rate_baseline": b_s / b_n if b_n else float("nan"),
                        "p_value": p,
                    }
                )
    if family not in ("method", "table"):
        raise ValueError(f"significance_table: family must be 'method' or 'table', not {family!r}.")
    out = pd.DataFrame(rows, columns=[*columns, *SIGNIFICANCE_COLUMNS_AFTER_GROUPS[:7]])
    out["p_holm"] = np.nan
    out["holm_family_size"] = 0
    out["significant"] = False
    keys = [*columns, "method"] if family == "method" else []
    for _, part in (out.groupby(keys, sort=False, dropna=False) if keys else [(None, out)]):
        runnable = part[part["p_value"].notna()]
        if runnable.empty:
            continue
        reject, adjusted = holm(runnable["p_value"].tolist(), alpha)
        out.loc[runnable.index, "p_holm"] = adjusted
        out.loc[runnable.index, "significant"] = reject
        out.loc[runnable.index, "holm_family_size"] = len(runnable)
    out["significant"] = out["significant"].astype(bool)
    out["marker"] = np.where(out["significant"], "*", "")
    return out


def better_than_all_baselines(significance: pd.DataFrame, group_cols: str | Sequence[str] = ("task", "model")
                              ) -> pd.DataFrame:
    """Per (group, method): compared with how many baselines, significantly better than all of
    them (a method missing a comparison is not), and the studies' ``*`` marker."""
    columns = as_columns(group_cols)
    rows = []
    for key, part in significance.groupby([*columns, "method"], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        runnable = part[part["p_value"].notna()]
        better = bool(len(runnable) == len(part) and len(part) > 0 and part["significant"].all())
        rows.append((*key, len(runnable), better, "*" if better else ""))
    return pd.DataFrame(rows, columns=[*columns, "method", "baselines_compared", "better_than_all", "marker"])


def _count_of(counts: pd.DataFrame, name: str) -> tuple[int, int]:
    if name not in counts.index:
        return 0, 0
    return int(counts.at[name, "sum"]), int(counts.at[name, "count"])
