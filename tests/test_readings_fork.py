"""The generated sentences of the fork-test notebooks (02-04), each on a table built to trip it:
a tie at zero among the memory strategies, a method worse than its baseline, a reproduction check
too small to decide anything, candidate shares that are all zero or tied.

The sentences are those the notebooks display: ``grouped_rate_readings`` over the Table 1 rates
(headline), ``sweep_reading`` over the sweep's gap table, ``reproduction_reading`` over the
reproduction check, and ``candidate_reading`` over notebook 03's candidate sources.
"""

from __future__ import annotations


import re

import pandas as pd

from psit_lib.analysis.result_sentences import grouped_rate_readings
from psit_lib.analysis.sweeps import gap_table, sweep_reading
from psit_lib.studies.psit.protocol import experiment as fx
from psit_lib.studies.psit.protocol.reproduction import reproduction_check, reproduction_reading

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


def test_the_reproduction_reading_never_says_equal_or_reproduced():
    check = reproduction_check(pd.DataFrame([{"task": "hangman", "model": "qwen3-32b", "agent": "vanilla",
                                              "n_scored": 3, "n_failed": 0, "successes": 0, "rate": 0.0}]))
    text = reproduction_reading(check, ["qwen3-32b"])
    assert "inconclusive" in text and "equal" not in text and "reproduce" not in text


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


def test_a_clear_best_over_three_agents_tied_at_the_lowest_names_all_three_never_one():
    """02 on a small model: the best is compared with the whole tie below it, not with one member."""
    df = _episodes({"private_cot": (10, 10), "autonomous_overwrite": (0, 10), "vanilla": (0, 10),
                    "mem0": (0, 10)})
    text = grouped_rate_readings(_table1(df, ["private_cot", "autonomous_overwrite", "vanilla", "mem0"]),
                                 ["task", "model"], "agent")
    assert "better than autonomous_overwrite, vanilla, mem0 (tied at 0)" in text
    assert "better than autonomous_overwrite by" not in text


def test_a_unique_worst_under_a_tie_names_the_whole_tie_above_it():
    df = _episodes({"private_cot": (10, 10), "vanilla": (5, 10), "mem0": (5, 10), "amem": (0, 10)})
    text = grouped_rate_readings(_table1(df, ["private_cot", "vanilla", "mem0", "amem"]), ["task", "model"], "agent")
    assert "vanilla, mem0 (tied at 0.5)" in text
    assert "from vanilla's" not in text and "from mem0's" not in text


def test_a_tie_in_rate_with_different_n_is_separated_only_when_every_member_is():
    # 6 of 10 is separated from 0 of 30 but not from 0 of 2: the tied group is not separated
    df = _episodes({"private_cot": (6, 10), "vanilla": (0, 30), "mem0": (0, 2)})
    text = grouped_rate_readings(_table1(df, ["private_cot", "vanilla", "mem0"]), ["task", "model"], "agent")
    assert "cannot be told apart from vanilla, mem0 (tied at 0)" in text and "better than" not in text
