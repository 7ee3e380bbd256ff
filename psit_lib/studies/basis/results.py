"""Tables for notebook 06: trial outcomes, success rates, pass@k / pass^k.

Failed episodes stay in every table, counted in their own column, so a crash can never raise a
success rate; the reference study's numbers (SPEC §7) are separate, labelled rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd

from psit_lib.studies.basis.passk import passk_table, reference_sets_passk
from psit_lib.studies.basis.reference import PAPER_HEADLINE, reference_mean, reference_passk, reference_success
from psit_lib.analysis.reference import REFERENCE_SOURCE
from psit_lib.analysis.result_sentences import Direction, grouped_rate_readings, one_sentence, rate_headline
from psit_lib.analysis.stats import rate_table
from psit_lib.analysis.sweeps import proportion_gap, sweep_reading

MEASURED = "measured"
REFERENCE = REFERENCE_SOURCE
REFERENCE_MODEL = "reference study"
MEAN_ROW = "mean over scenarios"
GROUP_SEPARATOR = " · "
CELL = ["model", "scenario", "system"]
RATES_HIGHER_IS_BETTER = {"rate": True, "wilson_low": True, "wilson_high": True}
"""Which way is better for a success table's rates (the study's success metrics declare these)."""
SWEEPS_HIGHER_IS_BETTER = {"a": True, "b": True}
"""Which way is better for the swept success rates (the ``sweeps`` metric declares these)."""


def measured_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The measured per-scenario rows of a success table (no reference rows, no mean row)."""
    if table.empty or "source" not in table.columns:
        return table.iloc[0:0]
    return table[(table["source"] == MEASURED) & (table["scenario"] != MEAN_ROW)]


TRIAL_COLUMNS = [*CELL, "trial", "status", "scored", "success", "final_state_success", "outcome", "delegations",
                 "ingest_fallbacks", "recorded_errors", "decided_without_tool_calls", "error"]
REFERENCE_COLUMNS = ["ref_k", "ref_set", "ref_run"]
"""A reference-design trial's place in its design: its k, its set and its run within the set."""


def system_pairs(table: pd.DataFrame) -> Iterator[tuple[Any, Any, pd.Series, pd.Series]]:
    """(model, scenario, basis row, baseline row) per measured cell of a success table that ran both systems."""
    for (model, scenario), part in measured_cells(table).groupby(["model", "scenario"], sort=False):
        by = part.set_index("system")
        if {"baseline", "basis"} <= set(by.index):
            yield model, scenario, by.loc["basis"], by.loc["baseline"]


def trials_frame_of(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per planned trial of a selection of the scored view: design cell, outcome (pass /
    fail / error) and a few counts. A failed trial (never scored) is an ``error`` row, kept and
    counted apart from every rate."""
    rows = []
    for row in scores.to_dict("records"):
        scored = row.get("status") == "ok" and row.get("success") is not None and pd.notna(row.get("success"))
        passed = scored and bool(row.get("success"))
        facts = {key: row.get(f"success.{key}") if scored else None
                 for key in ("delegations", "ingest_fallbacks", "recorded_errors", "decided_without_tool_calls")}
        rows.append({
            "model": row.get("model") or "unknown", "scenario": row["scenario"], "system": row["system"],
            "trial": int(row["trial"]), "status": row.get("status"), "scored": scored, "success": passed,
            "final_state_success": bool(scored and row.get("final_state_success")),
            "outcome": "error" if not scored else ("pass" if passed else "fail"),
            "delegations": int(facts["delegations"] or 0), "ingest_fallbacks": int(facts["ingest_fallbacks"] or 0),
            "recorded_errors": int(facts["recorded_errors"] or 0),
            "decided_without_tool_calls": bool(facts["decided_without_tool_calls"]),
            "error": row.get("error"),
            **{c: int(row[c]) for c in REFERENCE_COLUMNS if c in row and pd.notna(row[c])}})
    columns = [*TRIAL_COLUMNS, *(c for c in REFERENCE_COLUMNS if any(c in r for r in rows))]
    return pd.DataFrame(rows, columns=columns).sort_values([*CELL, "trial"], kind="stable", ignore_index=True)


def trial_counts_text(trials: pd.DataFrame) -> str:
    """One line: how many trials passed, failed and ended in an error."""
    counts = trials["outcome"].value_counts()
    return (f"{len(trials)} trials: " + ", ".join(f"{counts.get(o, 0)} {o}" for o in ("pass", "fail", "error"))
            + " (errors are kept, counted as n_failed, and left out of every rate)")


def success_table(trials: pd.DataFrame, *, outcome: str = "success") -> pd.DataFrame:
    """Success rate with a Wilson 95% interval per cell, a "mean over scenarios" row (the headline
    reliability) and the published rates as "reference study" rows."""
    rates = rate_table(trials, CELL, outcome).merge(_unacted_successes(trials, outcome), on=CELL, how="left")
    rates.insert(3, "source", MEASURED)
    scenarios = list(dict.fromkeys(trials["scenario"]))
    systems = list(dict.fromkeys(trials["system"]))
    models = list(dict.fromkeys(trials["model"]))
    means = rates.groupby(["model", "system"], sort=False)["rate"].mean().reset_index()
    reported, mean = reference_success(), reference_mean()
    ref = [{"model": REFERENCE_MODEL, "scenario": s, "system": y, "source": REFERENCE, "rate": rate}
           for (s, y), rate in reported.items() if s in scenarios and y in systems]
    if set(scenarios) == {s for s, _ in reported}:
        ref += [{"model": REFERENCE_MODEL, "scenario": MEAN_ROW, "system": y, "source": REFERENCE,
                 "rate": mean[y]} for y in systems if y in mean]
    parts = [rates, means.assign(scenario=MEAN_ROW, source=MEASURED), pd.DataFrame(ref)]
    columns = [*CELL, "source", "n_scored", "n_failed", "successes", "rate", "wilson_low", "wilson_high",
               "unacted_successes"]
    if all(p.empty for p in parts):  # no trial at all: an empty table with the usual columns
        return pd.DataFrame(columns=columns).astype({c: "Int64" for c in COUNT_COLUMNS})
    table = pd.concat([p for p in parts if not p.empty], ignore_index=True)
    order = {"model": [*models, REFERENCE_MODEL], "scenario": [*scenarios, MEAN_ROW], "system": systems}
    table = table.sort_values(CELL, kind="stable",  # measured rows first, the paper's after
                              key=lambda col: col.map({name: i for i, name in enumerate(order[str(col.name)])}))
    table = table[columns].reset_index(drop=True)
    for col in COUNT_COLUMNS:
        table[col] = table[col].astype("Int64")
    return table


COUNT_COLUMNS = ("n_scored", "n_failed", "successes", "unacted_successes")


def _unacted_successes(trials: pd.DataFrame, outcome: str = "success") -> pd.DataFrame:
    """Per cell: scored successes decided without any CabApp call the scenario needs."""
    unacted = trials["scored"] & trials[outcome] & trials["decided_without_tool_calls"]
    return (trials.assign(unacted_successes=unacted.astype(int))
            .groupby(CELL, sort=False)["unacted_successes"].sum().reset_index())


def compact_success_table(table: pd.DataFrame, digits: int = 2, *, reference: bool = True) -> pd.DataFrame:
    """The success table with rounded numbers and blanks for what a row does not have (for printing);
    without ``reference``, the measured rows only (the paper's rows are shown once, beside the pooled runs)."""
    out = table.copy() if reference else table[table["source"] == MEASURED].copy()
    for col in ("rate", "wilson_low", "wilson_high"):
        out[col] = out[col].map(lambda v: "" if pd.isna(v) else f"{v:.{digits}f}")
    for col in COUNT_COLUMNS:
        out[col] = out[col].map(lambda v: "" if pd.isna(v) else str(int(v)))
    return out


def passk_frame(trials: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """pass@k, pass^k (unbiased) and the first-k variant per model x scenario x system and k, over
    the scored trials in trial order; ``group`` is ``scenario · system`` (prefixed by the model when several ran)."""
    scored = trials[trials["scored"]]
    cells = {key: sub.sort_values("trial")["success"].astype(bool).tolist()
             for key, sub in scored.groupby(CELL, sort=False)}
    first = 1 if scored["model"].nunique() == 1 else 0
    table = passk_table({GROUP_SEPARATOR.join(map(str, key[first:])): runs for key, runs in cells.items()}, ks)
    for i, col in enumerate(CELL):
        table.insert(i, col, pd.Series([str(key[i]) for key in cells for _ in ks], dtype=object))
    return table


# -- the reference code's pass^k design, the study's reported values, sweeps ---------------------

def reference_design_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (model, scenario, system, k): pass^k and pass@k as the reference code computes them from
    the reference design's trials (failed trials count as failures, as a crashed run does there)."""
    columns = ["model", "scenario", "system", "k", "sets", "reference_pass_hat_k", "reference_pass_at_k"]
    if len(trials) == 0 or "ref_k" not in trials:
        return pd.DataFrame(columns=columns)
    rows = []
    ordered = trials.sort_values(["ref_k", "ref_set", "ref_run"], kind="stable")
    for (model, scenario, system, k), cell in ordered.groupby([*CELL, "ref_k"], sort=False):
        runs = [part["success"].astype(bool).tolist() for _, part in cell.groupby("ref_set", sort=True)]
        hat, at = reference_sets_passk(runs, int(k))
        rows.append({"model": model, "scenario": scenario, "system": system, "k": int(k), "sets": len(runs),
                     "reference_pass_hat_k": hat, "reference_pass_at_k": at})
    return pd.DataFrame(rows, columns=columns)


def passk_comparison(passk: pd.DataFrame, reference_design: pd.DataFrame) -> pd.DataFrame:
    """Side by side per (scenario, system, k): this run's unbiased pass^k and pass@k, this run's
    reference-design values, and the study's reported Table 1 values (labelled, not results)."""
    measured = passk[["model", "scenario", "system", "k", "pass_hat_k", "pass_at_k"]]
    table = measured.merge(reference_design.drop(columns=["sets"]), on=["model", "scenario", "system", "k"], how="left")
    study = reference_passk().rename(columns={"pass_hat_k": "study_reported_pass_hat_k",
                                              "pass_at_k": "study_reported_pass_at_k"})
    return table.merge(study, on=["scenario", "system", "k"], how="left")


def sweeps_reading(gaps: pd.DataFrame) -> str:
    """One generated sentence per swept assumption, as a Markdown list; which way is better is
    what the ``sweeps`` metric declares for success (higher)."""
    if gaps.empty:
        return "No sweep ran (the simulator's assumptions are swept only on the simulated backend)."
    better = "higher" if SWEEPS_HIGHER_IS_BETTER["a"] else "lower"
    return "\n".join(f"- **{knob}**: {sweep_reading(part, measure='success', direction=better)}"
                     for knob, part in gaps.groupby("knob", sort=False))


#: Which way a success rate is better: what the success-rate metrics declare (higher).
SUCCESS_DIRECTION: Direction = "higher" if RATES_HIGHER_IS_BETTER["rate"] else "lower"


def success_reading(rates: pd.DataFrame) -> str:
    """Generated sentences on the measured success rates, per scenario (systems compared)."""
    return grouped_rate_readings(measured_cells(rates), ["model", "scenario"], "system", measure="success rate",
                                 direction=SUCCESS_DIRECTION)


# -- the paper's Success column and headline gain (from the reference-design runs) --------------

GAIN_COLUMNS = ["model", "scenario", "n_baseline", "baseline", "n_basis", "basis", "absolute_gain", "relative_gain",
                "gap_low", "gap_high", "paper_baseline", "paper_basis", "paper_absolute_gain", "paper_relative_gain"]


def absolute_gain(baseline: float, basis: float) -> float:
    """The rule that gives the paper's headline number: BASIS - baseline of the success rate (its "54.4% increase"
    on stale_locations is numerically the absolute gap 0.744 - 0.200, though its sentence calls it the highest
    *relative* improvement); NaN when either is missing."""
    if pd.isna(baseline) or pd.isna(basis):
        return float("nan")
    return basis - baseline


def relative_gain(baseline: float, basis: float) -> float:
    """The gain relative to the baseline, shown beside the paper's absolute one: (BASIS - baseline) /
    baseline (0.200 -> 0.744 is +272%); NaN when the baseline is 0 or missing."""
    if pd.isna(baseline) or pd.isna(basis) or baseline == 0:
        return float("nan")
    return (basis - baseline) / baseline


def relative_gain_table(pooled: pd.DataFrame) -> pd.DataFrame:
    """Per (model, scenario) of a pooled success table: both rates, the absolute gain (the rule that gives the
    paper's headline number) and the relative gain (what its sentence calls it) beside it, the Newcombe 95%
    interval of the gap, and the paper's own numbers by the same rules (stale_locations at the headline's three
    decimals)."""
    reported = {**reference_success(), **PAPER_HEADLINE}
    rows = []
    for model, scenario, a, b in system_pairs(pooled):
        n_a, n_b = int(a["n_scored"]), int(b["n_scored"])
        _, low, high = (proportion_gap(int(a["successes"]), n_a, int(b["successes"]), n_b)
                        if n_a and n_b else (float("nan"),) * 3)
        pb, pa = reported.get((scenario, "baseline"), float("nan")), reported.get((scenario, "basis"), float("nan"))
        rows.append({"model": model, "scenario": scenario, "n_baseline": n_b, "baseline": b["rate"], "n_basis": n_a,
                     "basis": a["rate"], "absolute_gain": absolute_gain(b["rate"], a["rate"]),
                     "relative_gain": relative_gain(b["rate"], a["rate"]), "gap_low": low,
                     "gap_high": high, "paper_baseline": pb, "paper_basis": pa,
                     "paper_absolute_gain": absolute_gain(pb, pa), "paper_relative_gain": relative_gain(pb, pa)})
    return pd.DataFrame(rows, columns=GAIN_COLUMNS)


PAPER_HEADLINE_TEXT = ("its \"54.4% increase\" is numerically 0.744 - 0.200, though its sentence calls it the highest "
                      "relative improvement")


def _percent(value: float) -> str:
    return f"{value:+.0%}"


def _points(value: float) -> str:
    return f"{value * 100:+.1f} points"


def _paper_gain(row: Any) -> str:
    """The paper's own gain on the row's scenario, by the same rules as the run's."""
    if pd.isna(row.paper_absolute_gain):
        return "the paper reports no rate for this scenario"
    relative = f", {_percent(row.paper_relative_gain)} relative" if pd.notna(row.paper_relative_gain) else ""
    return (f"the paper's own rates ({row.paper_baseline:.3f} -> {row.paper_basis:.3f}) give "
            f"{_points(row.paper_absolute_gain)}{relative}")


def relative_gain_reading(gains: pd.DataFrame, scenario: str = "stale_locations") -> str:
    """One sentence per model on ``scenario``'s pooled success: the absolute gain (the rule that gives the paper's
    headline number), the relative gain (what the paper's sentence calls it) beside it, the paper's own numbers by
    the same rules, and whether the Newcombe interval of the gap (alone) separates the two systems."""
    part = gains[gains.scenario == scenario]
    if part.empty:
        return f"No pooled reference-design runs of both systems on {scenario}, so no gain to compute."
    lines = []
    for row in part.itertuples(index=False):
        paper = _paper_gain(row)
        rates = (f"{scenario} · {row.model}: pooled success {row.baseline:.2f} (baseline, n={row.n_baseline}) "
                 f"and {row.basis:.2f} (basis, n={row.n_basis})")
        relative = ("no relative gain (baseline 0)" if pd.isna(row.relative_gain)
                    else f"{_percent(row.relative_gain)} relative to the baseline")
        change = (f"an absolute change of {_points(row.absolute_gain)}, (basis - baseline) as the paper's headline "
                  f"number is computed ({PAPER_HEADLINE_TEXT}), and {relative}")
        if pd.isna(row.gap_low):
            verdict = "too few runs to test the gap"
        elif row.gap_low > 0 or row.gap_high < 0:
            verdict = (f"basis is {'higher' if row.gap_low > 0 else 'lower'}: the Newcombe 95% interval of the gap, "
                       f"[{row.gap_low:.2f}, {row.gap_high:.2f}], excludes zero")
        else:
            verdict = (f"the Newcombe 95% interval of the gap, [{row.gap_low:.2f}, {row.gap_high:.2f}], includes zero, "
                       "so this run does not separate the systems")
        lines.append(f"- {rates}: {change}; {verdict}; {paper}.")
    return "\n".join(lines)


# -- inaction beside the rates (issue #28): successes decided without the tool call the task needs --

POOLED_VIEW = "Success pooled over the reference-design runs (the paper's Success column)"
MAIN_VIEW = "Success over the main trials (reference validate; this run has no reference-design runs)"


def inaction_successes(table: pd.DataFrame) -> pd.DataFrame:
    """Per measured cell of a success table (model, scenario, system): its successes, how many
    of them were decided without the tool call the task needs, and whether all were
    (``only_inaction``: the cell's rate rests on trials where nothing happened)."""
    cells = measured_cells(table)
    if cells.empty or "unacted_successes" not in cells.columns:
        return pd.DataFrame(columns=["model", "scenario", "system", "successes", "unacted_successes", "only_inaction"])
    out = cells[["model", "scenario", "system", "successes", "unacted_successes"]].copy()
    out["successes"] = out["successes"].fillna(0).astype(int)
    out["unacted_successes"] = out["unacted_successes"].fillna(0).astype(int)
    out["only_inaction"] = (out["successes"] > 0) & (out["unacted_successes"] == out["successes"])
    return out.reset_index(drop=True)


def inaction_sentences(table: pd.DataFrame) -> list[str]:
    """One sentence per cell with successes that did nothing; a cell decided only by them is
    named as no result."""
    lines = []
    for row in inaction_successes(table).itertuples(index=False):
        if not row.unacted_successes:
            continue
        cell = f"{row.scenario} · {row.system} ({row.model})"
        if row.only_inaction:
            lines.append(f"- **{cell}**: all {row.successes} successes were decided without the tool call the task "
                         "needs, so this cell is not a result (the rate keeps the paper's rule).")
        else:
            lines.append(f"- **{cell}**: {row.unacted_successes} of {row.successes} successes were decided without "
                         "the tool call the task needs.")
    return lines


def has_scored_cells(table: pd.DataFrame) -> bool:
    """Whether a success table has a measured cell with at least one scored trial."""
    cells = measured_cells(table)
    return bool(not cells.empty and (cells["n_scored"].fillna(0) > 0).any())


def headline_reading(pooled: pd.DataFrame, main: pd.DataFrame, *, short: bool = False) -> str:
    """Notebook 06's headline: the view it reads named first (the pooled reference-design runs,
    or the main trials when there are none), its rate sentences, then the inaction sentences;
    ``short``: one sentence for the report's index."""
    view, table = (POOLED_VIEW, pooled) if has_scored_cells(pooled) or not has_scored_cells(main) else (MAIN_VIEW, main)
    if short:
        rates = rate_headline(measured_cells(table), ["model", "scenario"], "system", measure="success rate",
                              direction=SUCCESS_DIRECTION)
        return f"*{view}:*\n" + one_sentence("\n".join(["- " + rates, *inaction_sentences(table)]))
    return "\n".join([f"*{view}:*", success_reading(table), *inaction_sentences(table)])
