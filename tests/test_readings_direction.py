"""Generated readings must not say more than their tables: each test builds a table made to
trip a sentence function (a lower-is-better metric, a gap clear of zero inside overlapping Wilson
intervals, a tie at zero, two reveals, a notifier reply, an empty table, one task only)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from psit_lib.analysis.result_sentences import gap_separates, grouped_rate_readings, rate_reading
from psit_lib.studies.psit.secrets import entropy_gap, secret_summary
from psit_lib.analysis.stats import fisher_one_sided, rate_table, wilson_interval
from psit_lib.analysis.sweeps import GAP_COLUMNS, gap_table, gap_verdicts, proportion_gap, sweep_reading
from psit_lib.studies.acc import sensitivity as accs
from psit_lib.studies.acc.judge import CRITERIA
from psit_lib.studies.basis import results as br
from basis_trials import trials_frame
from psit_lib.studies.psit.protocol import secret_choice as sc

RANKING = re.compile(r"\w >(?!=) \w")  # "a > b": an order between two names


def _rates(counts: dict[str, tuple[int, int]], col: str = "agent") -> pd.DataFrame:
    df = pd.DataFrame([{col: a, "ok": i < w} for a, (w, n) in counts.items() for i in range(n)])
    return rate_table(df, col, "ok")


def _acc_rates(metric: str, counts: dict[str, tuple[int, int]]) -> pd.DataFrame:
    """An ACC pooled-rate table (failures / opportunities, as accm.rate_table makes it)."""
    rows = []
    for agent, (k, n) in counts.items():
        low, high = wilson_interval(k, n)
        rows.append({"agent": agent, "metric": metric, "failures": k, "opportunities": n,
                     "rate": k / n if n else float("nan"), "wilson_low": low, "wilson_high": high})
    return pd.DataFrame(rows)


def test_gap_separates_only_a_gap_clear_of_zero():
    assert gap_separates(0.08, 0.75) and not gap_separates(-0.1, 0.3) and gap_separates(float("nan"), 1) is None


# -- rate_reading / grouped_rate_readings -------------------------------------------------------------

def test_lower_is_better_rate_calls_the_higher_system_worse():
    text = rate_reading(_acc_rates("hallucination", {"transcript": (15, 20), "acc": (1, 20)}), "agent",
                        measure="hallucination rate", direction="lower")
    assert text.startswith("acc has the lowest hallucination rate, 0.05") and "better than transcript" in text
    assert "ahead" not in text and "transcript has" not in text and "better than acc" not in text
    three = rate_reading(_acc_rates("drift", {"retrieval_k3": (30, 40), "acc": (0, 40), "transcript": (14, 40)}),
                         "agent", measure="drift rate", direction="lower")
    assert three.startswith("acc has the lowest drift rate") and "the worst is retrieval_k3, highest drift rate" in three
    assert "ahead" not in three


def test_a_gap_clear_of_zero_is_separated_even_when_wilson_intervals_overlap():
    """06 premium_bias: 9/10 vs 4/10. The Wilson intervals overlap, the Newcombe interval of the
    gap is [0.08, 0.75] and one-sided Fisher p = 0.029: the run separates them."""
    low_a, _ = wilson_interval(9, 10)
    _, high_b = wilson_interval(4, 10)
    assert low_a < high_b                                              # the intervals overlap
    gap, low, high = proportion_gap(9, 10, 4, 10)
    assert (round(low, 2), round(high, 2)) == (0.08, 0.75)
    assert fisher_one_sided(9, 10, 4, 10) == pytest.approx(0.029, abs=1e-3)
    text = rate_reading(_rates({"basis": (9, 10), "baseline": (4, 10)}, "system"), "system", measure="success rate")
    assert "basis has the highest success rate, 0.9" in text and "better than baseline by 0.5" in text
    assert "excludes zero" in text
    assert "does not separate" not in text and "cannot be told apart" not in text and "overlap" not in text


def test_a_four_way_tie_at_zero_is_a_tie_with_no_ranking_and_no_lowest():
    counts = {a: (0, 26) for a in ("acc", "retrieval_k3", "retrieval_k5", "transcript")}
    for text in (rate_reading(_acc_rates("hallucination", counts), "agent", measure="hallucination rate", direction="lower"),
                 rate_reading(_rates({a: (0, 10) for a in counts}), "agent")):
        assert "tie at" in text and "nothing to rank" in text
        assert "lowest is" not in text and "worst is" not in text and "highest" not in text
        assert not RANKING.search(text)


def test_rows_the_gap_test_cannot_separate_are_not_ranked():
    text = rate_reading(_rates({"a": (6, 10), "b": (5, 10), "c": (4, 10)}), "agent")
    assert "cannot be told apart from b's 0.5" in text and "too small to rank" in text
    assert "has the highest" not in text and "the worst is" not in text
    tied_bottom = rate_reading(_rates({"a": (10, 10), "b": (0, 10), "c": (0, 10)}), "agent")
    assert "b, c tie for the lowest rate (0)" in tied_bottom and "worst is" not in tied_bottom
    unique = rate_reading(_rates({"a": (20, 20), "b": (19, 20), "c": (0, 20)}), "agent")
    assert "the worst is c, lowest rate 0" in unique and "separated from b" in unique


def test_rate_readings_of_empty_and_one_sided_tables_say_so():
    empty = rate_table(pd.DataFrame({"agent": [], "ok": []}), "agent", "ok")
    assert rate_reading(empty, "agent").startswith("No scored episodes")
    no_claims = _acc_rates("hallucination", {a: (0, 0) for a in ("acc", "retrieval_k3", "retrieval_k5", "transcript")})
    text = rate_reading(no_claims, "agent", measure="hallucination rate", unit="claims", direction="lower")
    assert "had any claims to score" in text and "No scored episodes" not in text
    one = rate_reading(_acc_rates("drift", {"acc": (1, 9), "transcript": (0, 0)}), "agent", measure="drift rate", direction="lower",
                       unit="constraint checks")
    assert one.startswith("Only acc was scored") and "transcript had no constraint checks" in one
    assert grouped_rate_readings(empty, ["task"], "agent").startswith("No scored rows")
    assert grouped_rate_readings(pd.DataFrame(), ["task", "model"], "agent").startswith("No scored rows")


def test_grouped_rate_readings_use_the_gap_test_per_group():
    df = pd.DataFrame([{"scenario": s, "system": y, "ok": i < w}
                       for s, counts in (("premium_bias", {"basis": 9, "baseline": 4}),
                                         ("tie", {"basis": 0, "baseline": 0}))
                       for y, w in counts.items() for i in range(10)])
    text = grouped_rate_readings(rate_table(df, ["scenario", "system"], "ok"), ["scenario"], "system",
                                 measure="success rate")
    first, second = text.splitlines()
    assert first.startswith("- **premium_bias**") and "excludes zero" in first
    assert second.startswith("- **tie**") and "tie at success rate 0" in second


# -- sweeps -------------------------------------------------------------------------------------------

def _gaps(rows, metric=None) -> pd.DataFrame:
    table = pd.DataFrame([dict(zip(GAP_COLUMNS, r)) for r in rows], columns=GAP_COLUMNS)
    return table.assign(metric=metric) if metric else table


def test_sweep_reading_on_a_lower_is_better_metric_calls_the_lower_system_better():
    rows = [("attention_tokens", v, "acc", "transcript", 3, 3, 0.05, 0.4, -0.35, -0.5, -0.2) for v in (500, 2000)]
    text = sweep_reading(_gaps(rows), measure="drift", direction="lower")
    assert "acc stays better than transcript at every swept value (lower drift is better)" in text
    assert "ahead" not in text and "(transcript better)" not in text and "(acc better)" in text
    worse = [("attention_tokens", 500, "acc", "transcript", 3, 3, 0.5, 0.1, 0.4, 0.2, 0.6)]
    text = sweep_reading(_gaps(worse), measure="hallucination", direction="lower")
    assert "transcript stays better than acc" in text and "(transcript better)" in text and "ahead" not in text


def test_sweep_reading_higher_is_better_and_neutral_measures():
    rows = [("notices", 0.9, "basis", "baseline", 10, 10, 1.0, 0.2, 0.8, 0.4, 0.95)]
    assert "basis stays ahead at every swept value (higher success is better)" in sweep_reading(_gaps(rows),
                                                                                                measure="success")
    neutral = sweep_reading(_gaps(rows), measure="entropy", direction=None)
    assert "stays higher than baseline" in neutral and "better" not in neutral and "ahead" not in neutral


def test_sweep_reading_never_separates_on_zero_width_intervals_or_no_episodes():
    df = pd.DataFrame({"value": [1, 1, 2, 2, 2], "agent": ["acc", "transcript", "acc", "acc", "transcript"],
                       "drift": [0.0, 0.5, 0.0, 0.1, 0.6]})
    table = gap_table(df, knob="k", value_col="value", system_col="agent", a="acc", b="transcript",
                      outcome_col="drift", kind="mean")
    assert table.loc[0, "ci_low"] == table.loc[0, "ci_high"]          # one episode each: zero width
    assert gap_verdicts(table).tolist() == ["too small", "too small"]
    text = sweep_reading(table, measure="drift", direction="lower")
    assert "too few episodes to test" in text and "better" not in text and "cannot tell acc from transcript" in text
    empty_n = _gaps([("k", 1, "a", "b", 0, 0, float("nan"), float("nan"), float("nan"), float("nan"), float("nan"))])
    assert gap_verdicts(empty_n).tolist() == ["too small"]
    assert "cannot tell a from b" in sweep_reading(empty_n)
    assert sweep_reading(_gaps([])).startswith("No swept episodes")
    assert gap_verdicts(_gaps([])).empty
    mixed = _gaps([("k", 1, "a", "b", 10, 10, 0.9, 0.1, 0.8, 0.5, 0.95),
                   ("k", 2, "a", "b", 0, 10, float("nan"), 0.1, float("nan"), float("nan"), float("nan"))])
    assert "at every swept value that could be tested" in sweep_reading(mixed)
    tie = _gaps([("k", 1, "a", "b", 10, 10, 0.5, 0.5, 0.0, -0.3, 0.3)])
    assert "(tie)" in sweep_reading(tie) and "cannot tell" in sweep_reading(tie)


def test_study_sweep_readings_pass_the_metric_direction():
    acc = pd.concat([_gaps([("attention_tokens", 500, "acc", "transcript", 3, 3, 0.0, 0.3, -0.3, -0.4, -0.2)], m)
                     for m in ("drift", "hallucination")], ignore_index=True)
    text = accs.sweeps_reading(acc)
    assert text.count("acc stays better than transcript") == 2 and "ahead" not in text
    assert accs.sweeps_reading(pd.DataFrame(columns=[*GAP_COLUMNS, "metric"])).startswith("No sweep ran")
    basis = _gaps([("notices", 0.9, "basis", "baseline", 10, 10, 0.9, 0.4, 0.5, 0.08, 0.75)])
    assert "basis stays ahead" in br.sweeps_reading(basis)
    assert br.sweeps_reading(_gaps([])).startswith("No sweep ran")


# -- ACC readings ---------------------------------------------------------------------------------------

def _sensitivity(scores: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    rejudged = [(variant, [{"turn": t, "agent": agent, "error": None, **dict.fromkeys(CRITERIA, s)}
                           for t, s in enumerate(values)])
                for (agent, variant), values in scores.items()]
    return accs.sensitivity_table(rejudged)


def test_sensitivity_reading_does_not_rank_a_four_way_tie_at_zero():
    agents = ("transcript", "retrieval_k3", "retrieval_k5", "acc")
    table = _sensitivity({(a, v): [0.0] * 8 for a in agents for v in ("standard", "strict_rubric", "five_point")})
    text = accs.sensitivity_reading(table)
    assert "a tie, so no prompt ranks them" in text and "no agent's mean score moves" in text
    assert ">" not in text and "ranks the agents the same way" not in text


def test_sensitivity_reading_ranks_only_separated_agents():
    rng = np.random.default_rng(0)
    noisy = lambda centre: list(np.clip(rng.normal(centre, 2.0, 12).round(), 0, 10))  # noqa: E731
    table = _sensitivity({("acc", "standard"): [9.0, 10.0] * 10, ("transcript", "standard"): [2.0, 3.0] * 10,
                          ("retrieval_k3", "standard"): noisy(5.6), ("retrieval_k5", "standard"): noisy(5.4)})
    text = accs.sensitivity_reading(table)
    assert text.startswith("Only the standard judge prompt was run")
    assert "acc >" in text and "> transcript" in text and "retrieval_k3 ≈ retrieval_k5" in text.replace(
        "retrieval_k5 ≈ retrieval_k3", "retrieval_k3 ≈ retrieval_k5")
    within = _sensitivity({(a, v): noisy(5.1) for a in ("acc", "transcript") for v in ("standard", "five_point")})
    text = accs.sensitivity_reading(within)
    assert "No judge prompt separates any two agents" in text and " > " not in text
    flipped = _sensitivity({("acc", "standard"): [9.0, 10.0] * 6, ("transcript", "standard"): [1.0, 2.0] * 6,
                            ("acc", "five_point"): [1.0, 2.0] * 6, ("transcript", "five_point"): [9.0, 10.0] * 6})
    assert "depends on the judge's prompt" in accs.sensitivity_reading(flipped)
    same = _sensitivity({(a, v): ([9.0, 10.0] if a == "acc" else [1.0, 2.0]) * 6
                         for a in ("acc", "transcript") for v in ("standard", "five_point")})
    text = accs.sensitivity_reading(same)
    assert "Every judge prompt separates the same pairs of agents (acc above transcript)" in text
    assert "no agent's mean score moves across the 2 prompts" in text
    assert accs.sensitivity_reading(accs.sensitivity_table([])) == "No episode was re-judged."


def test_sensitivity_reading_without_turn_scores_ranks_nothing():
    table = _sensitivity({("acc", v): [9.0, 10.0] * 10 for v in ("standard", "five_point")}
                         | {("transcript", v): [2.0, 3.0] * 10 for v in ("standard", "five_point")})
    table.attrs.clear()                                          # e.g. read back from a CSV
    text = accs.sensitivity_reading(table)
    assert "not at hand" in text and " > " not in text


# -- BASIS readings ---------------------------------------------------------------------------------------

def test_success_reading_copes_with_an_empty_table():
    rates = br.success_table(trials_frame([]))
    assert br.success_reading(rates).startswith("No scored rows")


def test_success_reading_separates_premium_bias_nine_of_ten_against_four():
    rows = [{"model": "m", "scenario": "premium_bias", "system": y, "trial": i, "status": "ok", "scored": True,
             "success": i < w, "outcome": "pass" if i < w else "fail", "decided_without_tool_calls": False}
            for y, w in (("basis", 9), ("baseline", 4)) for i in range(10)]
    rates = br.success_table(pd.DataFrame(rows))
    text = br.success_reading(rates)
    assert "basis has the highest success rate, 0.9" in text and "excludes zero" in text
    assert "does not separate" not in text


# -- secret spread (notebook 07) -------------------------------------------------------------------------

def _summary(rows) -> pd.DataFrame:
    return sc.metrics_table(pd.DataFrame(rows), ["task", "model", "temperature"], n_boot=200)


def test_two_reveals_per_temperature_are_too_small_and_the_flag_agrees():
    rows = [{"task": "hangman", "model": "m", "temperature": t, "secret": s}
            for t, secrets in ((0.1, ["planet", "planet"]), (1.5, ["stone", "apple"])) for s in secrets]
    summary = _summary(rows)
    assert (summary["entropy_low"] == summary["entropy_high"]).all()   # zero width by construction
    text = sc.spread_reading(summary, pd.DataFrame(rows), n_boot=200)
    assert "too small to compare entropies" in text
    assert "do not overlap" not in text and "rises" not in text and "excludes zero" not in text
    assert text.count("- **") == 1 and "cannot tell them apart" not in text and "a tie" not in text


def test_entropy_separation_is_the_bootstrap_of_the_gap_and_the_flag_follows_it():
    rng = np.random.default_rng(3)
    rows = ([{"task": "hangman", "model": "m", "temperature": 0.1, "secret": "planet" if i % 8 else "stone"}
             for i in range(40)]
            + [{"task": "hangman", "model": "m", "temperature": 1.5, "secret": f"w{rng.integers(0, 8)}"}
               for i in range(40)])
    summary = _summary(rows)
    text = sc.spread_reading(summary, pd.DataFrame(rows), n_boot=200)
    assert "excludes zero: entropy rises with temperature" in text and "better" not in text
    # with 25 words the hot end's own bootstrap interval misses its estimate: the gap is not decided by it
    rng = np.random.default_rng(3)
    wide = rows[:40] + [{"task": "hangman", "model": "m", "temperature": 1.5, "secret": f"w{rng.integers(0, 25)}"}
                        for i in range(40)]
    undecided = sc.spread_reading(_summary(wide), pd.DataFrame(wide), n_boot=200)
    assert "cannot say whether entropy rises or falls" in undecided and "excludes zero" not in undecided
    same = [{"task": "diagnosis", "model": "m", "temperature": t, "secret": f"c{i % 5}"}
            for t in (0.1, 1.0) for i in range(20)]
    summary = _summary(same)
    tie = sc.spread_reading(summary, pd.DataFrame(same), n_boot=200)
    assert "a tie" in tie and "rises" not in tie
    close = [{"task": "diagnosis", "model": "m", "temperature": t, "secret": f"c{rng.integers(0, k)}"}
             for t, k in ((0.1, 6), (1.0, 7)) for i in range(30)]
    summary = _summary(close)
    close_text = sc.spread_reading(summary, pd.DataFrame(close), n_boot=200)
    assert "the bootstrap 95% interval of the gap" in close_text  # decided by the gap's interval, whichever way
    gap, low, high = entropy_gap(["a"] * 2, ["a", "b"])
    assert np.isnan(low) and np.isnan(high)                         # two reveals: no interval at all


def test_entropy_readings_without_any_readable_secret_or_with_one_temperature_do_not_crash():
    rows = [{"task": task, "model": "m", "temperature": t, "secret": None}
            for task in ("hangman", "diagnosis") for t in (0.1, 1.0)]
    summary = _summary(rows)
    assert sc.spread_reading(summary, pd.DataFrame(rows), n_boot=200).count("no readable secret") == 2
    one = [{"task": "hangman", "model": "m", "temperature": 0.3, "secret": f"w{i}"} for i in range(12)]
    assert "nothing to compare" in sc.spread_reading(_summary(one), pd.DataFrame(one))
    none = pd.DataFrame(columns=["task", "model", "temperature", "secret"])
    empty = secret_summary(none, ["task", "model", "temperature"], "secret")
    assert sc.spread_reading(empty, none).startswith("No reveals")


def test_attractor_rows_with_one_task_only_or_no_reveals():
    one_task = pd.DataFrame({"task": ["hangman"] * 3, "model": "m", "secret": ["planet", "planet", "stone"]})
    rows = sc.attractor_rows(one_task).set_index("attractor")
    assert rows.loc["planet", "revealed here"] == 2 and rows.loc["planet", "rank here"] == 1
    sarcoidosis = rows.loc[["Sarcoidosis"]]          # reported for two models: two rows
    assert (sarcoidosis["of"] == 0).all() and sarcoidosis["rank here"].isna().all()
    none = sc.attractor_rows(pd.DataFrame({"task": ["hangman", "diagnosis"], "secret": [None, None]}))
    assert (none["of"] == 0).all() and (none["revealed here"] == 0).all()
    assert (sc.attractor_rows(pd.DataFrame())["of"] == 0).all()
