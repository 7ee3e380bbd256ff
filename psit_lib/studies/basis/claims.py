"""The BASIS study's headline claims (``claims.toml``) and its Table 1 success rates against this run's.

The claims read ``success_pooled`` (notebook 06: success pooled over the reference design's runs per
model, scenario and system, measured rows with ``successes`` of ``n_scored``). The paper's Success
column pools 10 sets x (1 + 2 + 5 + 10) = 180 runs per cell (SPEC §6), so its rates are read back
as counts of 180 (stale_locations at its headline's 0.744 and 0.200), and its own numbers are
decided by the same tests. BASIS-2 is tested as the sentence words it, relative (risk ratios), with the
absolute gaps beside: the paper's "54.4% increase" is numerically the absolute gap 0.744 − 0.200.

The paper's model is not recorded (``data/reference/paper_models.csv``), so a run gets verdicts against the paper
only when the user names its model as BASIS's (``PSIT_PAPER_MODELS="served-name=BASIS"``); otherwise every claim and
every Table 1 cell illustrates the protocol, the simulator's always.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from scipy.stats import norm

from psit_lib.analysis.claims import (FROM_TABLES, INCONCLUSIVE, Claim, Decision, Rule, RunContext, Tables, all_of, ledger,
                                      load_claims)
from psit_lib.analysis.claims import verdict_rule as shared_verdict_rule
from psit_lib.analysis.paper_models import paper_models
from psit_lib.analysis.verdicts import (CONSISTENT, DEFAULT_ALPHA, DEFAULT_MARGIN, DIFFERS, ILLUSTRATES,
                                        VERDICT_COLUMNS, decide, newcombe_interval, verdict_row)
from psit_lib.studies.basis.reference import PAPER_HEADLINE, reference_success
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
    decision = all_of(parts, "scenarios", name_open=False)
    return Decision(decision.verdict, f"{decision.statistic}: " + "; ".join(p[0] for p in parts))


def log_risk_ratio(ka: int, na: int, kb: int, nb: int) -> tuple[float, float]:
    """log(pa / pb) and its Wald variance (1/ka − 1/na + 1/kb − 1/nb); a zero count gets half a success (the usual
    correction), so a ratio with no success on one side stays finite."""
    ka_, kb_ = (ka or 0.5), (kb or 0.5)
    return math.log((ka_ / na) / (kb_ / nb)), 1 / ka_ - 1 / na + 1 / kb_ - 1 / nb


def _most_on_stale(tables: Tables) -> Decision:
    gaps = _gaps(tables[TABLE])
    parts = []
    for model in dict.fromkeys(g[0] for g in gaps):
        mine = {g[1]: g[2:] for g in gaps if g[0] == model}
        if STALE not in mine or len(mine) < 2:
            continue
        stale = mine.pop(STALE)
        z = float(norm.ppf(1 - ALPHA / 2))
        zc = float(norm.ppf(1 - ALPHA / 2 / len(mine)))
        (ls, vs), gap_s = log_risk_ratio(*stale), stale[0] / stale[1] - stale[2] / stale[3]
        for other, counts in mine.items():
            lo_, vo = log_risk_ratio(*counts)
            diff, se = ls - lo_, math.sqrt(vs + vo)
            gap_o = counts[0] / counts[1] - counts[2] / counts[3]
            parts.append((f"risk ratio stale {math.exp(ls):.2f} vs {other} {math.exp(lo_):.2f} (z {diff / se:+.2f}); "
                          f"absolute gaps {gap_s:+.2f} vs {gap_o:+.2f}", diff - z * se > 0, diff + zc * se < 0))
    if not parts:
        return Decision(INCONCLUSIVE, f"needs {STALE} and another scenario with both systems")
    decision = all_of(parts, "other scenarios", name_open=False)
    return Decision(decision.verdict, f"{decision.statistic}: " + "; ".join(p[0] for p in parts))


def _mean_reliability(tables: Tables) -> Decision:
    cells = measured_cells(tables[TABLE])
    pooled = cells.groupby("system")[["successes", "n_scored"]].sum()
    if not {"basis", "baseline"} <= set(pooled.index) or cells["scenario"].nunique() < 3:
        return Decision(INCONCLUSIVE, "needs both systems on the three scenarios")
    (ka, na), (kb, nb) = (pooled.loc[s].astype(int) for s in ("basis", "baseline"))
    low, high = newcombe_interval(ka, na, kb, nb, ALPHA)
    paper = paper_means()
    levels = {s: decide(k, n, round(paper[s] * 3 * PAPER_N), 3 * PAPER_N) for s, k, n in
              (("baseline", kb, nb), ("basis", ka, na))}
    said = {CONSISTENT: f"within h ±{DEFAULT_MARGIN:g} of it", DIFFERS: "apart from it", INCONCLUSIVE: "undecided"}
    text = (f"baseline {kb}/{nb} ({kb / nb:.2f}) -> BASIS {ka}/{na} ({ka / na:.2f}), gap [{low:+.2f}, {high:+.2f}]; "
            f"against the paper's {paper['baseline']:.2f} and {paper['basis']:.2f}: "
            + ", ".join(f"{s} {said[v]}" for s, v in levels.items()))
    if high < 0 or DIFFERS in levels.values():
        return Decision("contradicted", text)
    if low > 0 and set(levels.values()) == {CONSISTENT}:
        return Decision("supported", text)
    return Decision(INCONCLUSIVE, text)


def paper_counts() -> dict[tuple[str, str], int]:
    """(scenario, system) -> the paper's successes of 180 (its headline's 0.744 and 0.200 where it gives them)."""
    return {cell: round(PAPER_HEADLINE.get(cell, rate) * PAPER_N) for cell, rate in reference_success().items()}


def paper_means() -> dict[str, float]:
    """system -> the paper's mean success over the three scenarios (its "roughly 32% to more than 72%")."""
    counts = paper_counts()
    return {system: sum(k for (_, s), k in counts.items() if s == system) / (3 * PAPER_N)
            for system in ("baseline", "basis")}


def paper_pooled() -> pd.DataFrame:
    """The paper's Table 1 success as a run's ``success_pooled`` (rates read back as counts of 180)."""
    rows = [{"model": "paper", "scenario": s, "system": y, "source": MEASURED, "n_scored": PAPER_N,
             "successes": k, "rate": k / PAPER_N} for (s, y), k in paper_counts().items()]
    return pd.DataFrame(rows)


def _paper() -> Tables:
    return {TABLE: paper_pooled()}


def _evidence() -> str:
    ref = reference_success()
    scenarios = list(dict.fromkeys(s for s, _ in ref))
    return "Table 1 success, baseline -> BASIS (180 runs per cell): " + "; ".join(
        f"{s} {ref[(s, 'baseline')]:.2f} -> {ref[(s, 'basis')]:.2f} ({ref[(s, 'basis')] - ref[(s, 'baseline')]:+.2f})"
        for s in scenarios if (s, "baseline") in ref and (s, "basis") in ref)


def _evidence_relative() -> str:
    counts = paper_counts()
    parts = []
    for scenario in dict.fromkeys(s for s, _ in counts):
        a, b = counts[(scenario, "basis")] / PAPER_N, counts[(scenario, "baseline")] / PAPER_N
        parts.append(f"{scenario} x{a / b:.2f} ({a - b:+.3f} absolute)")
    return ("Table 1 success, BASIS / baseline: " + "; ".join(parts) + ". The headline's \"54.4% increase\" is the "
            "absolute gap 0.744 − 0.200; the relative gain of those rates is +272%")


def _evidence_mean() -> str:
    means = paper_means()
    return (f"Table 1: mean success over the three scenarios {means['baseline']:.3f} -> {means['basis']:.3f} "
            "(540 runs per system)")


def claims() -> list[Claim]:
    """The study's headline claims (``claims.toml``)."""
    rules = {"BASIS-1": Rule(_raises, _evidence, _paper), "BASIS-2": Rule(_most_on_stale, _evidence_relative, _paper),
             "BASIS-3": Rule(_mean_reliability, _evidence_mean, _paper)}
    return load_claims(Path(__file__).with_name("claims.toml"), rules,
                       {"alpha": ALPHA, "confidence": f"{1 - ALPHA:.0%}", "margin": DEFAULT_MARGIN})


def _withheld(model: str, simulated: bool) -> tuple[str, str]:
    """(verdict withheld, why) for a run model: no verdict unless it is the paper's model (SPEC §9)."""
    models = paper_models(PAPER)
    if simulated or models.model_of(model) is None:
        return ILLUSTRATES, models.why_not(model, simulated)
    return "", ""


def success_against_paper(pooled: pd.DataFrame, margin: float = DEFAULT_MARGIN, alpha: float = DEFAULT_ALPHA,
                          simulated: bool = False) -> pd.DataFrame:
    """Each measured (model, scenario, system) pooled success against the paper's Table 1 Success
    (a count of 180): difference, Newcombe 95% interval, Cohen's h and verdict (``analysis/verdicts``); a cell of
    the simulator, or of a model not named the paper's, illustrates the protocol (its numbers, no verdict)."""
    counts = paper_counts()
    rows = []
    for r in measured_cells(pooled).itertuples(index=False):
        paper = counts.get((str(r.scenario), str(r.system)))
        if paper is None or not r.n_scored:
            continue
        withheld, why = _withheld(str(r.model), simulated)
        rows.append({"model": r.model, "scenario": r.scenario, "system": r.system,
                     **verdict_row(int(r.successes), int(r.n_scored), paper, PAPER_N, paper / PAPER_N, margin, alpha,
                                   withheld, why)})
    table = pd.DataFrame(rows, columns=["model", "scenario", "system", *VERDICT_COLUMNS])
    table["episodes_to_decide"] = table["episodes_to_decide"].astype("Int64")
    return table


def claims_ledger(tables: Tables, run: RunContext = FROM_TABLES) -> pd.DataFrame:
    """The study's claims decided on a notebook's (or a run's merged) tables: what a notebook shows."""
    return ledger(claims(), tables, run)


def verdict_rule(margin: float = DEFAULT_MARGIN, run: RunContext = FROM_TABLES) -> str:
    """The verdicts' margin against this paper's count per cell, as a page says it (generated)."""
    return shared_verdict_rule(PAPER_N, run, margin, unit="runs")


PAPER_SETS = 10
"""Sets per k behind the paper's pass^k and pass@k (its Table 1: 10 sets of k fresh runs per k)."""
RUNS_PER_SET_ROUND = 1 + 2 + 5 + 10


def passk_against_paper(comparison: pd.DataFrame, pooled: pd.DataFrame, margin: float = DEFAULT_MARGIN,
                        alpha: float = DEFAULT_ALPHA, simulated: bool = False) -> pd.DataFrame:
    """This run's set-based pass^k and pass@k (``passk_comparison``'s ``reference_pass_*``, shares of
    its sets) against the paper's (shares of 10 sets): the same verdicts and model rule as the Success column. The
    run's sets per k are its pooled runs per cell over 1 + 2 + 5 + 10; at 10 sets the paper's own
    count is too small for a tight margin, which the verdicts say (no run size decides)."""
    sets = {(str(r.model), str(r.scenario), str(r.system)): int((r.n_scored + r.n_failed) // RUNS_PER_SET_ROUND)
            for r in measured_cells(pooled).itertuples(index=False) if r.n_scored == r.n_scored}
    rows = []
    for r in comparison.itertuples(index=False):
        n = sets.get((str(r.model), str(r.scenario), str(r.system)), 0)
        withheld, why = _withheld(str(r.model), simulated)
        for measure, run_col, paper_col in (("pass^k", "reference_pass_hat_k", "study_reported_pass_hat_k"),
                                            ("pass@k", "reference_pass_at_k", "study_reported_pass_at_k")):
            run_rate, paper_rate = getattr(r, run_col), getattr(r, paper_col)
            if not n or pd.isna(run_rate) or pd.isna(paper_rate):
                continue
            rows.append({"model": r.model, "scenario": r.scenario, "system": r.system, "k": int(r.k),
                         "measure": measure, **verdict_row(round(run_rate * n), n, round(paper_rate * PAPER_SETS),
                                                           PAPER_SETS, paper_rate, margin, alpha, withheld, why)})
    table = pd.DataFrame(rows, columns=["model", "scenario", "system", "k", "measure", *VERDICT_COLUMNS])
    table["episodes_to_decide"] = table["episodes_to_decide"].astype("Int64")
    return table
