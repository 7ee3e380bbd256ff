"""Verdicts with power (issues #29 and #36): consistent within ±m (Cohen's h, a margin that means the same at every
rate) only when the run could tell, differs when the difference's interval excludes zero, inconclusive otherwise with
the run size that would decide; one family per cell, so two notebooks covering a cell agree."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint, proportion_effectsize

from psit_lib.analysis.stats import wilson_interval
from psit_lib.analysis.verdicts import (CONSISTENT, DEFAULT_MARGIN, DIFFERS, INCONCLUSIVE, arcsine, band, compare_counts,
                                        decide, episodes_for_margin, episodes_to_decide, h_interval, margin_note,
                                        newcombe_interval, wilson)
from psit_lib.studies.psit.protocol.reproduction import PAPER_N, reproduction_check, reproduction_reading

counts = st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@pytest.mark.parametrize("run, paper, expected", [
    ((200, 400), (200, 400), CONSISTENT),   # 0.50 vs 0.50 at n = 400
    ((200, 400), (25, 50), CONSISTENT),     # 0.50 at n = 400 against the paper's 25 of 50
    ((25, 50), (45, 50), DIFFERS),          # 0.50 vs 0.90 at n = 50
    ((5, 10), (4, 10), INCONCLUSIVE),       # 0.50 vs 0.40 at n = 10
    ((5, 10), (20, 50), INCONCLUSIVE),
])
def test_the_three_verdicts(run, paper, expected):
    assert decide(*run, *paper) == expected
    assert compare_counts(*run, *paper).verdict == expected


def test_an_inconclusive_cell_names_the_run_size_that_decides_it_and_that_size_does():
    v = compare_counts(5, 10, 4, 10)  # the "paper" here at n = 10: a larger run can differ or agree
    assert v.verdict == INCONCLUSIVE
    need = episodes_to_decide(0.5, 20, 50, start=10)
    assert need is None  # 0.50 vs 0.40 of 50: the paper's own interval is wider than both tests need
    need = episodes_to_decide(0.7, 25, 50, start=2)
    assert need is not None and need > 2 and decide(0.7 * need, need, 25, 50) == DIFFERS
    assert decide(0.7 * (need - 1), need - 1, 25, 50) == INCONCLUSIVE
    v = compare_counts(7, 10, 25, 50)
    assert v.verdict == INCONCLUSIVE and v.episodes_to_decide == episodes_to_decide(0.7, 25, 50, start=10)
    assert compare_counts(5, 10, 20, 50).episodes_to_decide is None


def test_newcombe_matches_statsmodels_and_wilson_matches_the_stats_module():
    for k1, n1, k2, n2 in [(5, 10, 20, 50), (0, 12, 7, 9), (50, 50, 1, 50), (3, 4, 0, 1)]:
        low, high = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
        assert newcombe_interval(k1, n1, k2, n2) == pytest.approx((float(low), float(high)), abs=1e-9)
        assert wilson(k1, n1, 1.959963984540054) == pytest.approx(wilson_interval(k1, n1), abs=1e-8)


def test_the_default_margin_is_reachable_at_the_papers_n_and_a_tighter_one_is_not():
    assert episodes_for_margin(0.5, DEFAULT_MARGIN, PAPER_N) is not None
    assert episodes_for_margin(0.5, 0.2, PAPER_N) is None  # the paper's 50 alone carry about h ±0.23 at 90%
    n = episodes_for_margin(0.5, DEFAULT_MARGIN, PAPER_N)
    assert decide(0.5 * n, n, 25, 50) == CONSISTENT and decide(0.5 * (n - 1), n - 1, 25, 50) != CONSISTENT


def test_the_margin_means_the_same_at_every_rate():
    """The issue's case: 45 of 400 (0.11) against the paper's 1 of 50 (0.02) is no longer "consistent" (the absolute
    ±0.15 called it so, though its interval excludes 0); at 0.5 the band is about the old ±0.15."""
    assert decide(45, 400, 1, 50) == DIFFERS
    assert band(0.5) == pytest.approx((0.352, 0.648), abs=0.002)
    low, high = band(0.02)
    assert low == 0.0 and high == pytest.approx(0.083, abs=0.002)
    assert band(0.98)[1] == 1.0 and band(0.98)[0] == pytest.approx(0.917, abs=0.002)
    # the run size at which a cell at the paper's rate reads consistent barely moves with the rate
    needs = [episodes_for_margin(k / 50, DEFAULT_MARGIN, 50) for k in (5, 10, 25, 40, 45)]
    assert all(n is not None for n in needs) and max(needs) < 2.5 * min(needs)
    # at 0 or 1 of 50 (and 49, 50) the paper's own count is too uncertain: never consistent, and the note says so
    assert [k for k in range(51) if episodes_for_margin(k / 50, DEFAULT_MARGIN, 50) is None] == [0, 1, 49, 50]
    assert "At 0, 1, 49, 50 of 50 the paper's own count is too uncertain" in margin_note(50)


def test_the_h_scale_matches_statsmodels_and_its_interval_covers_at_its_level():
    """Cohen's h is statsmodels' proportion effect size; the interval is Newcombe's construction from Wilson bounds
    (statsmodels' Wilson) on the arcsine scale, and its exact coverage (every outcome enumerated) is at least 93% at
    95% over a grid of rates and run sizes."""
    for p1, p2 in [(0.1, 0.5), (0.02, 0.3), (0.9, 0.9)]:
        assert arcsine(p1) - arcsine(p2) == pytest.approx(float(proportion_effectsize(p1, p2)), abs=1e-12)
    for k, n in [(0, 50), (7, 20), (50, 50)]:
        assert wilson(k, n, 1.959963984540054) == pytest.approx(proportion_confint(k, n, 0.05, "wilson"), abs=1e-9)
    worst = 1.0
    for n1, n2 in [(20, 50), (50, 50), (100, 50)]:
        for p1 in (0.02, 0.1, 0.5, 0.9):
            for p2 in (0.02, 0.5, 0.95):
                truth = arcsine(p1) - arcsine(p2)
                w1, w2 = binom.pmf(range(n1 + 1), n1, p1), binom.pmf(range(n2 + 1), n2, p2)
                cover = sum(w1[a] * w2[b] for a in range(n1 + 1) if w1[a] > 1e-10 for b in range(n2 + 1)
                            if w2[b] > 1e-10 and (lambda lo_hi: lo_hi[0] <= truth <= lo_hi[1])(h_interval(a, n1, b, n2)))
                worst = min(worst, cover)
    assert worst >= 0.93


@settings(max_examples=200, deadline=None)
@given(counts, counts)
def test_consistent_never_comes_from_a_small_run(run, paper):
    """A consistent verdict means the 90% interval of h fits inside the margin: so the run's own 90% Wilson
    interval, on the arcsine scale, is narrower than twice the margin (it could have told)."""
    if decide(*run, *paper) == CONSISTENT:
        low, high = wilson(run[0], run[1], 1.6448536269514722)
        assert arcsine(high) - arcsine(low) < 2 * DEFAULT_MARGIN


@settings(max_examples=200, deadline=None)
@given(counts, counts, st.floats(0.05, 1.0))
def test_a_wider_margin_never_turns_consistent_into_anything_else(run, paper, margin):
    if decide(*run, *paper, margin=margin) == CONSISTENT:
        assert decide(*run, *paper, margin=min(3.0, margin * 1.5)) == CONSISTENT


@settings(max_examples=200, deadline=None)
@given(counts, counts)
def test_the_verdict_is_symmetric_in_run_and_paper_and_the_interval_holds_the_difference(run, paper):
    assert decide(*run, *paper) == decide(*paper, *run)
    h_low, h_high = h_interval(*run, *paper)
    assert h_interval(*paper, *run) == pytest.approx((-h_high, -h_low), abs=1e-12)
    low, high = newcombe_interval(*run, *paper)
    assert low <= run[0] / run[1] - paper[0] / paper[1] + 1e-12 and high >= run[0] / run[1] - paper[0] / paper[1] - 1e-12
    assert -1 - 1e-9 <= low <= high <= 1 + 1e-9


def _table1(model: str, cells: dict[str, tuple[int, int]]) -> pd.DataFrame:
    return pd.DataFrame([{"task": "hangman", "model": model, "agent": a, "n_scored": n, "n_failed": 0,
                          "successes": k, "rate": k / n} for a, (k, n) in cells.items()])


def test_one_cell_gets_one_verdict_in_02_and_04():
    """02 covers a few agents, 04 the whole grid; the shared cell's verdict comes from its counts
    alone (Holm over each notebook's cells gave it different verdicts)."""
    shared = {"private_cot": (40, 50)}
    nb02 = _table1("Qwen/Qwen3-32B", {**shared, "vanilla": (2, 50)})
    nb04 = _table1("Qwen/Qwen3-32B", {**shared, "vanilla": (2, 50), "mem0": (30, 50), "amem": (40, 50),
                                      "lightmem": (45, 50), "memoryos": (49, 50), "workflow_overwrite": (0, 50),
                                      "autonomous_overwrite": (50, 50)})
    a = reproduction_check(nb02).set_index("agent").loc["private_cot"]
    b = reproduction_check(nb04).set_index("agent").loc["private_cot"]
    assert a["verdict"] == b["verdict"] and a["diff_low"] == b["diff_low"] and a["diff_high"] == b["diff_high"]


def test_a_run_too_small_to_decide_says_so_and_never_consistent():
    check = reproduction_check(_table1("qwen3-32b", {"vanilla": (0, 3), "private_cot": (3, 3)}))
    assert set(check["verdict"]) == {INCONCLUSIVE}
    text = reproduction_reading(check, ["qwen3-32b"])
    assert text.startswith("This run is too small to decide anything") and "consistent with the paper" not in text


def test_the_reading_counts_consistent_differs_and_inconclusive_cells():
    ref = reproduction_check(_table1("qwen3-32b", {"vanilla": (1, 1), "private_cot": (1, 1)}))
    paper = dict(zip(ref["agent"], ref["paper_rate"]))
    far = 0 if paper["private_cot"] > 0.5 else 50
    check = reproduction_check(_table1("qwen3-32b", {"vanilla": (round(paper["vanilla"] * 400), 400),
                                                      "private_cot": (far, 50), "amem": (0, 4)}))
    verdicts = dict(zip(check["agent"], check["verdict"]))
    assert verdicts == {"vanilla": CONSISTENT, "private_cot": DIFFERS, "amem": INCONCLUSIVE}
    text = reproduction_reading(check, ["qwen3-32b"])
    assert text.startswith(f"1 of 3 tested Table 1 cell(s) are consistent with the paper within h ±{DEFAULT_MARGIN:g}")
    assert "1 differ: hangman/private_cot" in text and "1 are inconclusive" in text
    assert "(of 3 truly equal cells about 0.15 would differ by chance)" in " ".join(text.split())
    assert not math.isnan(check.set_index("agent").at["amem", "difference"])


def test_the_protocol_states_the_margins_reach_as_the_code_computes_it():
    from pathlib import Path

    text = " ".join((Path(__file__).parents[1] / "docs" / "protocol.md").read_text(encoding="utf-8").split())
    assert f"default, Cohen's h ±{DEFAULT_MARGIN:g}, is reachable" in text
    assert f"from about {episodes_for_margin(0.5, DEFAULT_MARGIN, 50)} run episodes at 0.5" in text
    assert f"({episodes_for_margin(0.1, DEFAULT_MARGIN, 50)} at 0.1)" in text
    assert f"for BASIS's 180 runs, from about {episodes_for_margin(0.5, DEFAULT_MARGIN, 180)}" in text
    assert decide(45, 400, 1, 50) == DIFFERS and "45 of 400 (0.11) against the paper's 1 of 50 now reads differs" in text


def test_the_dry_run_sizes_a_run_for_a_margin_and_says_when_it_is_too_small():
    from psit_lib.cli.estimate import _paper_cells, margin_sizing_lines

    values = {"agents": ["vanilla", "private_cot"], "n_episodes": 10}
    rates, paper_n, planned = _paper_cells("02_hangman_fork_tests", values)
    assert paper_n == PAPER_N and planned == 10 and len(rates) == 8  # two agents x four models
    small = margin_sizing_lines({"02": (rates, paper_n, planned)}, DEFAULT_MARGIN)
    assert small[1].endswith("too small to decide anything")
    needs = [episodes_for_margin(r, DEFAULT_MARGIN, PAPER_N) for r in rates]
    need = max(n for n in needs if n is not None)
    assert f"needs up to {need}" in small[1]
    enough = margin_sizing_lines({"02": (rates, paper_n, need)}, DEFAULT_MARGIN)
    decidable = sum(n is not None for n in needs)  # the paper's 1 of 50 cells no run size confirms
    assert f"decides {decidable}" in enough[1] and "too small" not in enough[1]
    if decidable < len(rates):
        assert f"{len(rates) - decidable} cell(s) no run size confirms at this margin" in enough[1]
    tight = margin_sizing_lines({"02": (rates, paper_n, 100_000)}, 0.1)
    assert "no run size confirms at this margin" in tight[1]
    assert _paper_cells("05_acc_judge_evaluation", {"n_turns": 10}) is None
    assert _paper_cells("06_basis_cab_scenarios", {"reference_sets": 10})[1:] == (180, 180)
