"""The generated sentences of the fork-test notebooks (02-04), each on a table built to trip it:
a tie at zero among the memory strategies, a method worse than its baseline, a cell whose raw
p-value is small but whose Holm-corrected one is not, candidate shares that are all zero or tied.

The sentences are those the notebooks display: ``grouped_rate_readings`` over the Table 1 rates
(headline), ``sweep_reading`` over the sweep's gap table, ``reproduction_reading`` over the
reproduction check, and ``candidate_reading`` over notebook 03's candidate sources.
"""

from __future__ import annotations

import pytest

import re

import pandas as pd
from scipy.stats import fisher_exact

from psit_lib.analysis.result_sentences import grouped_rate_readings
from psit_lib.analysis.sweeps import gap_table, sweep_reading
from psit_lib.studies.psit.protocol import experiment as fx
from psit_lib.studies.psit.protocol.reproduction import PAPER_N, reproduction_check, reproduction_reading
from psit_lib.studies.psit.reference import self_consistency_reference

RANKING = re.compile(r"\w >(?!=) \w")
STRATEGIES = ["workflow_overwrite", "workflow_append_delete", "autonomous_overwrite", "autonomous_patch_replace"]


def _episodes(counts: dict[str, tuple[int, int]], task: str = "hangman", model: str = "psit-sim") -> pd.DataFrame:
    """A fork frame (the columns the rate tables read): ``agent -> (self-consistent, episodes)``."""
    return pd.DataFrame([{"task": task, "model": model, "agent": agent, "scored": True,
                          "self_consistent": i < k, "table1_self_consistent": i < k}
                         for agent, (k, n) in counts.items() for i in range(n)])


def _table1(df: pd.DataFrame, agents: list[str]) -> pd.DataFrame:
    return fx.table1_rates(df, agents, [])


def test_a_four_way_tie_at_zero_among_the_strategies_is_a_tie_and_names_no_lowest():
    """04 on a small model: four working-memory agents at 0 of 4 each."""
    df = pd.concat([_episodes({a: (0, 4) for a in STRATEGIES}),
                    _episodes({"vanilla": (0, 4), **{a: (0, 4) for a in STRATEGIES}}, task="diagnosis")])
    text = grouped_rate_readings(_table1(df, ["vanilla", *STRATEGIES]), ["task", "model"], "agent")
    assert text.count("tie at rate 0: nothing to rank") == 2, text
    assert "lowest is" not in text and "worst is" not in text and "autonomous_overwrite has" not in text
    assert not RANKING.search(text)


def test_a_tie_for_the_lowest_under_a_clear_best_is_said_as_a_tie():
    df = _episodes({"private_cot": (10, 10), "autonomous_overwrite": (0, 10), "vanilla": (0, 10),
                    "mem0": (0, 10)})
    text = grouped_rate_readings(_table1(df, ["private_cot", "autonomous_overwrite", "vanilla", "mem0"]),
                                 ["task", "model"], "agent")
    assert "autonomous_overwrite, vanilla, mem0 tie for the lowest rate (0)" in text
    assert "the worst is" not in text and "the lowest is" not in text


def test_the_headline_separates_by_the_gap_test_not_by_overlapping_intervals():
    """9/10 against 4/10: Wilson intervals overlap, the Newcombe interval of the gap excludes zero."""
    df = _episodes({"workflow_overwrite": (9, 10), "vanilla": (4, 10)})
    table = _table1(df, ["workflow_overwrite", "vanilla"])
    assert table.loc[0, "wilson_low"] < table.loc[1, "wilson_high"]
    text = grouped_rate_readings(table, ["task", "model"], "agent")
    assert "workflow_overwrite has the highest rate, 0.9" in text and "excludes zero" in text
    assert "cannot be told apart" not in text and "overlap" not in text


def test_a_close_pair_is_not_ranked():
    df = _episodes({"workflow_overwrite": (6, 10), "vanilla": (5, 10)})
    text = grouped_rate_readings(_table1(df, ["workflow_overwrite", "vanilla"]), ["task", "model"], "agent")
    assert "cannot be told apart" in text and "includes zero" in text and "has the highest" not in text


def _sweep(rows: list[tuple[object, str, int, int]]) -> pd.DataFrame:
    """The sweep's gap table (as ``fx.sweep_gaps`` builds it) from (value, agent, successes, n)."""
    df = pd.DataFrame([{"value": v, "agent": a, "self_consistent": i < k} for v, a, k, n in rows for i in range(n)])
    return gap_table(df, knob="unheld_secret", value_col="value", system_col="agent", a="workflow_overwrite",
                     b="vanilla", outcome_col="self_consistent")


def test_the_sweep_reading_calls_the_baseline_better_when_the_method_is_lower():
    gaps = _sweep([("deny", "workflow_overwrite", 0, 10), ("deny", "vanilla", 9, 10),
                   ("reimagine", "workflow_overwrite", 1, 10), ("reimagine", "vanilla", 10, 10)])
    text = sweep_reading(gaps)
    assert "(vanilla better)" in text and "(workflow_overwrite better)" not in text
    assert "vanilla stays ahead at every swept value (higher rate is better)" in text
    assert "workflow_overwrite stays ahead" not in text


def test_the_sweep_reading_calls_a_zero_gap_a_tie_and_separates_nothing():
    gaps = _sweep([("deny", "workflow_overwrite", 3, 6), ("deny", "vanilla", 3, 6)])
    text = sweep_reading(gaps)
    assert "(tie)" in text and "better" not in text and "cannot tell" in text


def _reference_rate(agent: str, model: str, task: str = "hangman") -> float:
    ref = self_consistency_reference(task, [agent])
    return float(ref.set_index("model").at[model, "rate"])


@pytest.mark.slow
def test_the_reproduction_reading_follows_the_holm_corrected_verdict_not_the_raw_p_value():
    """Cells whose raw two-sided p is below 0.05 but whose Holm-corrected p is not are consistent."""
    agents = ["vanilla", "private_cot", "workflow_overwrite", "autonomous_overwrite", "mem0", "amem"]
    rows = []
    for agent in agents:
        paper = round(_reference_rate(agent, "Qwen3 32B") * PAPER_N)
        # a run rate whose raw two-sided p-value against the paper's is in [0.01, 0.045]: each cell
        # alone would reject at 0.05, none survives Holm over six cells
        shifted = next(k for k in sorted(range(PAPER_N + 1), key=lambda k: abs(k - paper))
                       if 0.01 <= fisher_exact([[k, PAPER_N - k], [paper, PAPER_N - paper]])[1] <= 0.045)
        rows.append({"task": "hangman", "model": "Qwen/Qwen3-32B", "agent": agent, "n_scored": PAPER_N,
                     "n_failed": 0, "successes": shifted, "rate": shifted / PAPER_N})
    check = reproduction_check(pd.DataFrame(rows))
    raw_only = check[(check["p_two_sided"] < 0.05) & (check["verdict"] == "consistent")]
    differs = check[check["verdict"] == "differs"]
    text = reproduction_reading(check, ["Qwen/Qwen3-32B"])
    assert len(raw_only) == len(agents) and differs.empty, check
    for row in raw_only.itertuples(index=False):
        assert f"hangman/{row.agent} on" not in text
    assert text.startswith(f"All {len(check)} covered Table 1 cell(s) are consistent") and "differ" not in text


@pytest.mark.slow
def test_the_reproduction_reading_never_says_equal():
    check = reproduction_check(pd.DataFrame([{"task": "hangman", "model": "qwen3-32b", "agent": "vanilla",
                                              "n_scored": 3, "n_failed": 0, "successes": 0, "rate": 0.0}]))
    text = reproduction_reading(check, ["qwen3-32b"])
    assert "cannot tell them apart" in text and "equal" not in text and "reproduces" not in text


def _sources(shares: dict[str, float], candidates: int = 10) -> pd.DataFrame:
    return pd.DataFrame([{"candidates": candidates, "revealed": 0.2, "stored": 0.0, "dataset": 0.8 - m, "model": m,
                          "unchecked": 0.0} for m in shares.values()], index=pd.Index(list(shares), name="agent"))


def test_the_candidate_reading_names_no_agent_when_no_fork_needed_model_candidates():
    text = fx.candidate_reading(_sources({"vanilla": 0.0, "private_cot": 0.0}))
    assert "no agent's forks needed any" in text and "most for" not in text and "vanilla" not in text


def test_the_candidate_reading_says_a_tie_for_the_most():
    tied = fx.candidate_reading(_sources({"vanilla": 0.3, "private_cot": 0.3, "mem0": 0.1}))
    assert "most for vanilla, private_cot, tied at 30.0%" in tied
    same = fx.candidate_reading(_sources({"vanilla": 0.3, "private_cot": 0.3}))
    assert "the same share, 30.0%, for every agent" in same and "most for" not in same
    one = fx.candidate_reading(_sources({"vanilla": 0.1, "private_cot": 0.3}))
    assert "most for private_cot: 30.0%" in one
    assert fx.candidate_reading(pd.DataFrame()) == "No fork reached its candidates in this run."
