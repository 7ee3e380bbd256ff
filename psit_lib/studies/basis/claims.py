"""The BASIS study's headline claims (SPEC §6) and its Table 1 success rates against this run's.

Both read ``success_pooled`` (notebook 06: success pooled over the reference design's runs per
model, scenario and system, measured rows with ``successes`` of ``n_scored``). The paper's Success
column pools 10 sets x (1 + 2 + 5 + 10) = 180 runs per cell (SPEC §6), so its rates are read back
as counts of 180, and its own numbers are decided by the same tests. The gains are absolute
(BASIS − baseline), as the paper's headline "54.4% increase" on stale_locations is 0.744 − 0.200.
"""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import norm

from psit_lib.analysis.claims import INCONCLUSIVE, Claim, ledger, Decision, Tables, all_of
from psit_lib.analysis.verdicts import DEFAULT_ALPHA, DEFAULT_MARGIN, compare_counts, margin_note, newcombe_interval
from psit_lib.studies.basis.reference import reference_success
from psit_lib.studies.basis.results import MEASURED, measured_cells, system_pairs

PAPER = "BASIS"
TABLE = "success_pooled"
PAPER_N = 180
"""Runs per (scenario, system) behind the paper's Success column."""
ALPHA = 0.05
STALE = "stale_locations"


def _gaps(table: pd.DataFrame) -> list[tuple[str, str, int, int, int, int]]:
    """(model, scenario, basis successes, basis n, baseline successes, baseline n) per measured cell."""
    return [(str(model), str(scenario), int(a["successes"]), int(a["n_scored"]), int(b["successes"]),
             int(b["n_scored"])) for model, scenario, a, b in system_pairs(table) if a["n_scored"] and b["n_scored"]]


def _raises(tables: Tables) -> Decision:
    gaps = _gaps(tables[TABLE])
    parts = []
    for model, scenario, ka, na, kb, nb in gaps:
        low, high = newcombe_interval(ka, na, kb, nb, ALPHA)
        below = newcombe_interval(ka, na, kb, nb, ALPHA / max(1, len(gaps)))[1] < 0
        parts.append((f"{scenario}{'' if model == gaps[0][0] else ' · ' + model} {ka / na - kb / nb:+.2f} "
                      f"[{low:+.2f}, {high:+.2f}]", low > 0, below))
    decision = all_of(parts, "scenarios")
    return Decision(decision.verdict, f"{decision.statistic}: " + "; ".join(p[0] for p in parts))


def _most_on_stale(tables: Tables) -> Decision:
    gaps = _gaps(tables[TABLE])
    parts = []
    for model in dict.fromkeys(g[0] for g in gaps):
        mine = {g[1]: g[2:] for g in gaps if g[0] == model}
        if STALE not in mine or len(mine) < 2:
            continue
        stale = mine.pop(STALE)
        z = float(norm.ppf(1 - ALPHA / 2))
        for other, counts in mine.items():
            diff, se = _gap(*stale)[0] - _gap(*counts)[0], math.sqrt(_gap(*stale)[1] + _gap(*counts)[1])
            parts.append((f"stale − {other} gap {diff:+.2f} [{diff - z * se:+.2f}, {diff + z * se:+.2f}]",
                          diff - z * se > 0, diff + float(norm.ppf(1 - ALPHA / 2 / len(mine))) * se < 0))
    if not parts:
        return Decision(INCONCLUSIVE, f"needs {STALE} and another scenario with both systems")
    decision = all_of(parts, "other scenarios")
    return Decision(decision.verdict, f"{decision.statistic}: " + "; ".join(p[0] for p in parts))


def _gap(ka: int, na: int, kb: int, nb: int) -> tuple[float, float]:
    """BASIS − baseline success and its Wald variance."""
    pa, pb = ka / na, kb / nb
    return pa - pb, pa * (1 - pa) / na + pb * (1 - pb) / nb


def paper_pooled() -> pd.DataFrame:
    """The paper's Table 1 success as a run's ``success_pooled`` (rates read back as counts of 180)."""
    rows = [{"model": "paper", "scenario": s, "system": y, "source": MEASURED, "n_scored": PAPER_N,
             "successes": round(rate * PAPER_N), "rate": round(rate * PAPER_N) / PAPER_N}
            for (s, y), rate in reference_success().items()]
    return pd.DataFrame(rows)


def _paper() -> Tables:
    return {TABLE: paper_pooled()}


def _evidence() -> str:
    ref = reference_success()
    scenarios = list(dict.fromkeys(s for s, _ in ref))
    return "Table 1 success, baseline -> BASIS (180 runs per cell): " + "; ".join(
        f"{s} {ref[(s, 'baseline')]:.2f} -> {ref[(s, 'basis')]:.2f} ({ref[(s, 'basis')] - ref[(s, 'baseline')]:+.2f})"
        for s in scenarios if (s, "baseline") in ref and (s, "basis") in ref)


def claims() -> list[Claim]:
    return [
        Claim("BASIS-1", PAPER, "BASIS raises success on all three confounders", _evidence(), (TABLE,),
              f"per scenario: Newcombe {1 - ALPHA:.0%} interval of BASIS − baseline above 0 in every scenario "
              f"(supported) / below 0 at {ALPHA:g}/scenarios in any (contradicted)", "higher is the claim", _raises,
              _paper),
        Claim("BASIS-2", PAPER, "the gain is largest on stale locations",
              _evidence().replace("Table 1 success", "Table 1 absolute gains") + "; the paper's headline: a 54.4% "
              "increase on stale_locations (0.744 − 0.200)", (TABLE,),
              f"stale_locations' gap minus each other scenario's gap, Wald {1 - ALPHA:.0%} interval above 0 for "
              "each (supported) / below 0 for any at alpha/others (contradicted)", "largest on stale", _most_on_stale,
              _paper),
    ]


def success_against_paper(pooled: pd.DataFrame, margin: float = DEFAULT_MARGIN, alpha: float = DEFAULT_ALPHA
                       ) -> pd.DataFrame:
    """Each measured (model, scenario, system) pooled success against the paper's Table 1 Success
    (a count of 180): difference, Newcombe 95% interval and verdict (``analysis/verdicts``)."""
    reported = reference_success()
    rows = []
    for r in measured_cells(pooled).itertuples(index=False):
        paper = reported.get((str(r.scenario), str(r.system)))
        if paper is None or not r.n_scored:
            continue
        v = compare_counts(int(r.successes), int(r.n_scored), round(paper * PAPER_N), PAPER_N, margin, alpha)
        rows.append({"model": r.model, "scenario": r.scenario, "system": r.system, "run_successes": v.run_successes,
                     "run_n": v.run_n, "run_rate": v.run_rate, "paper_rate": paper, "paper_n": PAPER_N,
                     "difference": v.difference, "diff_low": v.diff_low, "diff_high": v.diff_high, "margin": margin,
                     "verdict": v.verdict, "episodes_to_decide": v.episodes_to_decide})
    columns = ["model", "scenario", "system", "run_successes", "run_n", "run_rate", "paper_rate", "paper_n",
               "difference", "diff_low", "diff_high", "margin", "verdict", "episodes_to_decide"]
    table = pd.DataFrame(rows, columns=columns)
    table["episodes_to_decide"] = table["episodes_to_decide"].astype("Int64")
    return table


def claims_ledger(tables: Tables) -> pd.DataFrame:
    """The study's claims decided on a notebook's (or a run's merged) tables: what a notebook shows."""
    return ledger(claims(), tables)


def verdict_rule(margin: float = DEFAULT_MARGIN) -> str:
    """The verdicts' margin against this paper's count per cell, as a page says it (generated)."""
    return margin_note(PAPER_N, margin, unit="runs")


PAPER_SETS = 10
"""Sets per k behind the paper's pass^k and pass@k (its Table 1: 10 sets of k fresh runs per k)."""
RUNS_PER_SET_ROUND = 1 + 2 + 5 + 10


def passk_against_paper(comparison: pd.DataFrame, pooled: pd.DataFrame, margin: float = DEFAULT_MARGIN,
                        alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
    """This run's set-based pass^k and pass@k (``passk_comparison``'s ``reference_pass_*``, shares of
    its sets) against the paper's (shares of 10 sets): the same verdicts as the Success column. The
    run's sets per k are its pooled runs per cell over 1 + 2 + 5 + 10; at 10 sets the paper's own
    count is too small for a tight margin, which the verdicts say (no run size decides)."""
    sets = {(str(r.model), str(r.scenario), str(r.system)): int((r.n_scored + r.n_failed) // RUNS_PER_SET_ROUND)
            for r in measured_cells(pooled).itertuples(index=False) if r.n_scored == r.n_scored}
    rows = []
    for r in comparison.itertuples(index=False):
        n = sets.get((str(r.model), str(r.scenario), str(r.system)), 0)
        for measure, run_col, paper_col in (("pass^k", "reference_pass_hat_k", "study_reported_pass_hat_k"),
                                            ("pass@k", "reference_pass_at_k", "study_reported_pass_at_k")):
            run_rate, paper_rate = getattr(r, run_col), getattr(r, paper_col)
            if not n or pd.isna(run_rate) or pd.isna(paper_rate):
                continue
            v = compare_counts(round(run_rate * n), n, round(paper_rate * PAPER_SETS), PAPER_SETS, margin, alpha)
            rows.append({"model": r.model, "scenario": r.scenario, "system": r.system, "k": int(r.k),
                         "measure": measure, "run_successes": v.run_successes, "run_n": n, "run_rate": v.run_rate,
                         "paper_rate": paper_rate, "paper_n": PAPER_SETS, "difference": v.difference,
                         "diff_low": v.diff_low, "diff_high": v.diff_high, "margin": margin, "verdict": v.verdict,
                         "episodes_to_decide": v.episodes_to_decide})
    columns = ["model", "scenario", "system", "k", "measure", "run_successes", "run_n", "run_rate", "paper_rate",
               "paper_n", "difference", "diff_low", "diff_high", "margin", "verdict", "episodes_to_decide"]
    table = pd.DataFrame(rows, columns=columns)
    table["episodes_to_decide"] = table["episodes_to_decide"].astype("Int64")
    return table
