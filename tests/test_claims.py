"""The claims ledger (issue #29 item 2): each claim decided supported / contradicted / inconclusive on
tables built to make it so, the paper's own counts under the same test, the ledger as the report
index's first section, and the figures that go with it."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from psit_lib.analysis.claims import (CONTRADICTED, INCONCLUSIVE, SUPPORTED, Claim, Decision, all_of, ledger,
                                      ledger_lines, merge_tables, trend_z)
from psit_lib.studies.acc import claims as acc
from psit_lib.studies.basis import claims as basis
from psit_lib.studies.psit import claims as psit

PUBLIC, PRIVATE = ["vanilla", "mem0", "amem"], ["private_cot", "workflow_overwrite"]


def _table1(cells: dict[tuple[str, str], dict[str, tuple[int, int]]]) -> pd.DataFrame:
    return pd.DataFrame([{"task": task, "model": model, "agent": agent, "n_scored": n, "n_failed": 0,
                          "successes": k, "rate": k / n if n else float("nan")}
                         for (task, model), agents in cells.items() for agent, (k, n) in agents.items()])


def _cell(public: tuple[int, int], private: tuple[int, int]) -> dict[str, tuple[int, int]]:
    return {**{a: public for a in PUBLIC}, **{a: private for a in PRIVATE}}


def _verdicts(claims: list[Claim], tables) -> dict[str, str]:
    return dict(zip((t := ledger(claims, tables))["id"], t["verdict"]))


def test_psit_claims_supported_on_a_clear_run_with_one_model_size_leaves_scaling_open():
    table = _table1({("hangman", "qwen3-32b"): _cell((0, 50), (45, 50)),
                     ("diagnosis", "qwen3-32b"): _cell((1, 50), (40, 50))})
    got = _verdicts(psit.claims(), {psit.TABLE: table})
    assert got == {"PSIT-1": SUPPORTED, "PSIT-2": SUPPORTED, "PSIT-3": INCONCLUSIVE, "PSIT-4": INCONCLUSIVE}
    assert "two or more model sizes" in psit.claims()[2].decide({psit.TABLE: table}).statistic


def test_psit_claims_contradicted_when_public_agents_pass_and_beat_private_ones():
    table = _table1({("hangman", "gpt-oss-20b"): _cell((45, 50), (2, 50))})
    got = _verdicts(psit.claims(), {psit.TABLE: table})
    assert got["PSIT-1"] == CONTRADICTED and got["PSIT-2"] == CONTRADICTED


def test_psit_claims_inconclusive_on_a_tiny_run():
    table = _table1({("hangman", "psit-sim"): _cell((0, 1), (1, 1))})
    got = _verdicts(psit.claims(), {psit.TABLE: table})
    assert set(got.values()) == {INCONCLUSIVE}


@pytest.mark.parametrize("small, large, verdict", [((10, 50), (45, 50), SUPPORTED), ((45, 50), (5, 50), CONTRADICTED),
                                                   ((25, 50), (25, 50), INCONCLUSIVE)])
def test_the_scaling_claim_reads_the_trend_over_model_sizes(small, large, verdict):
    table = _table1({("hangman", "openai/gpt-oss-20b"): _cell((0, 50), small),
                     ("hangman", "Qwen/Qwen3-235B-A22B"): _cell((0, 50), large)})
    assert psit.claims()[2].decide({psit.TABLE: table}).verdict == verdict


@pytest.mark.parametrize("workflow, autonomous, verdict", [((45, 50), (10, 50), SUPPORTED),
                                                            ((10, 50), (45, 50), CONTRADICTED),
                                                            ((30, 50), (28, 50), INCONCLUSIVE)])
def test_workflow_against_autonomous(workflow, autonomous, verdict):
    table = _table1({("hangman", "qwen3-32b"): {"workflow_overwrite": workflow, "autonomous_overwrite": autonomous}})
    assert psit.claims()[3].decide({psit.TABLE: table}).verdict == verdict


@pytest.mark.parametrize("name, size", [("gemma-3-270m", 0.27), ("llama-3-8b", 8.0), ("qwen2.5-coder-0.5b-instruct", 0.5),
                                        ("Qwen/Qwen3-32B", 32.0), ("gpt-oss-120b", 120.0), ("psit-sim", None)])
def test_model_sizes_are_the_papers_or_the_names_own(name, size):
    assert psit.model_size(name) == size


def test_the_paper_s_own_counts_are_decided_by_the_same_tests():
    assert psit.claims()[2].paper_decision().verdict == SUPPORTED
    assert basis.claims()[0].paper_decision().verdict == SUPPORTED   # 0.42 -> 0.56 of 180 is separated
    assert basis.claims()[1].paper_decision().verdict == INCONCLUSIVE  # stale +0.54 vs premium +0.52
    assert acc.claims()[0].paper_decision() is None


def test_a_claim_whose_table_the_run_did_not_save_is_inconclusive_and_says_which():
    decision = psit.claims()[0].decide({})
    assert decision.verdict == INCONCLUSIVE and psit.TABLE in decision.statistic


def test_a_cell_two_notebooks_cover_is_counted_once_in_the_run_ledger():
    shared = _table1({("hangman", "qwen3-32b"): {"vanilla": (2, 50)}})
    more = _table1({("hangman", "qwen3-32b"): {"vanilla": (2, 50), "mem0": (1, 50)}})
    merged = merge_tables({"02": {psit.TABLE: shared}, "04": {psit.TABLE: more}})[psit.TABLE]
    assert len(merged) == 2 and merged["n_scored"].sum() == 100


def _acc_rates(acc_k: int, base_k: int, n: int = 200) -> pd.DataFrame:
    return pd.DataFrame([{"agent": a, "metric": m, "failures": k, "opportunities": n, "rate": k / n}
                         for m in ("hallucination", "drift")
                         for a, k in (("transcript", base_k), ("retrieval_k5", base_k), ("acc", acc_k))])


@pytest.mark.parametrize("acc_k, base_k, verdict", [(5, 60, SUPPORTED), (60, 5, CONTRADICTED), (10, 12, INCONCLUSIVE)])
def test_acc_rate_claims(acc_k, base_k, verdict):
    got = _verdicts(acc.claims(), {acc.RATES: _acc_rates(acc_k, base_k)})
    assert got["ACC-2"] == verdict and got["ACC-3"] == verdict


def test_acc_bounded_memory_reads_the_last_turn_against_transcript_replay():
    rows = [{"domain": d, "agent": a, "mean_tokens": mean, "last_turn_tokens": last} for d in ("it", "cyber")
            for a, mean, last in (("transcript", 300, 700), ("acc", 250, 300))]
    assert acc.claims()[0].decide({acc.FOOTPRINT: pd.DataFrame(rows)}).verdict == SUPPORTED
    grows = [dict(r, last_turn_tokens=900) if r["agent"] == "acc" else r for r in rows]
    assert acc.claims()[0].decide({acc.FOOTPRINT: pd.DataFrame(grows)}).verdict == CONTRADICTED


def _pooled(gaps: dict[str, tuple[int, int]], n: int = 180) -> pd.DataFrame:
    return pd.DataFrame([{"model": "m", "scenario": s, "system": y, "source": "measured", "n_scored": n,
                          "successes": k, "rate": k / n} for s, (b, a) in gaps.items()
                         for y, k in (("baseline", b), ("basis", a))])


def test_basis_claims():
    clear = _pooled({"premium_bias": (60, 100), "quote_only_vs_book": (70, 100), "stale_locations": (20, 170)})
    assert _verdicts(basis.claims(), {basis.TABLE: clear}) == {"BASIS-1": SUPPORTED, "BASIS-2": SUPPORTED}
    worse = _pooled({"premium_bias": (100, 60), "quote_only_vs_book": (70, 100), "stale_locations": (20, 170)})
    assert _verdicts(basis.claims(), {basis.TABLE: worse})["BASIS-1"] == CONTRADICTED


def test_basis_success_against_the_paper_uses_its_180_runs():
    paper = basis.paper_pooled()
    check = basis.success_against_paper(paper)
    assert (check["paper_n"] == 180).all() and set(check["verdict"]) == {"consistent"}
    small = basis.success_against_paper(paper.assign(n_scored=4, successes=(paper["rate"] * 4).round().astype(int)))
    assert "consistent" not in set(small["verdict"])


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8))
def test_all_of_supports_only_when_every_cell_does_and_any_opposing_cell_contradicts(flags):
    decision = all_of([(str(i), s, o) for i, (s, o) in enumerate(flags)], "cells")
    if any(o for _, o in flags):
        assert decision.verdict == CONTRADICTED
    elif all(s for s, _ in flags):
        assert decision.verdict == SUPPORTED
    else:
        assert decision.verdict == INCONCLUSIVE


def test_trend_z_has_the_sign_of_the_trend():
    assert trend_z([5, 25, 45], [50, 50, 50], [1, 2, 3]) > 3
    assert trend_z([45, 25, 5], [50, 50, 50], [1, 2, 3]) < -3
    assert trend_z([0, 0], [5, 5], [1, 2]) != trend_z([0, 0], [5, 5], [1, 2])  # no spread: nan


def test_a_decision_rejects_an_unknown_verdict():
    with pytest.raises(ValueError):
        Decision("consistent", "")


def test_every_ledger_line_fits_120_columns_and_names_test_and_verdict():
    from psit_lib.report.ledger import all_claims

    table = ledger(all_claims(), {psit.TABLE: _table1({("hangman", "psit-sim"): _cell((1, 10), (9, 10))})})
    lines = ledger_lines(table)
    assert max(map(len, lines)) <= 120
    assert sum(line.lstrip().startswith("test:") for line in lines) == len(table)
    assert len(table) == 9 and set(table["verdict"]) <= {SUPPORTED, CONTRADICTED, INCONCLUSIVE}


def test_the_report_index_opens_with_the_claims_ledger(tmp_path):
    from psit_lib.report.index import index_html
    from psit_lib.runs.folder import RunMetadata, RunStore

    store = RunStore(tmp_path / "02_hangman_fork_tests")
    store.write_metadata(RunMetadata(notebook="02_hangman_fork_tests"))
    store.tables_dir.mkdir(parents=True)
    _table1({("hangman", "psit-sim"): _cell((1, 10), (9, 10))}).to_csv(store.tables_dir / f"{psit.TABLE}.csv", index=False)
    page = index_html(tmp_path, {"backend": "sim"}, [], "abc")
    assert page.index("<h2 id='claims'>Claims ledger</h2>") < page.index("<th>Notebook, key result")
    assert page.count("<td>PSIT-") == 4 and page.count("<td>ACC-") == 3 and page.count("<td>BASIS-") == 2
    assert "this run saved no hallucination_drift table" in page  # ACC not run: inconclusive, said why


def test_the_forest_and_size_figures():
    from psit_lib.analysis.plots import plot_forest, plot_rate_by_size

    table = _table1({("hangman", "qwen3-32b"): _cell((1, 10), (9, 10))})
    gaps = psit.method_gaps(table)
    assert set(gaps["source"]) == {"this run", "paper"} and set(gaps[gaps.source == "paper"]["model"]) == {"Qwen3 32B"}
    fig = plot_forest(gaps, "label")
    assert len(fig.axes[0].get_yticklabels()) == len(gaps[["task", "model", "comparison"]].drop_duplicates())
    one = plot_rate_by_size(psit.rates_by_size(table), "label")  # one size: said in one line, no empty box
    assert not one.axes and "1 known size (the figure needs 2)" in " ".join(t.get_text() for t in one.texts)
    assert one.get_size_inches()[1] <= 0.5
    two = _table1({("hangman", "qwen3-32b"): _cell((1, 10), (5, 10)), ("hangman", "gpt-oss-120b"): _cell((1, 10), (9, 10))})
    rates = psit.rates_by_size(two)
    assert sorted(rates[rates.source == "this run"]["size"].unique()) == [32.0, 120.0]
    assert len(plot_rate_by_size(rates, "label").axes[0].lines) > 0


def test_basis_passk_against_the_paper_counts_the_runs_sets():
    from psit_lib.studies.basis.reference import reference_passk

    ref = reference_passk()
    comparison = ref.assign(model="m", reference_pass_hat_k=ref["pass_hat_k"], reference_pass_at_k=ref["pass_at_k"],
                            study_reported_pass_hat_k=ref["pass_hat_k"], study_reported_pass_at_k=ref["pass_at_k"])
    pooled = basis.paper_pooled().assign(model="m", n_scored=180, n_failed=0)
    check = basis.passk_against_paper(comparison, pooled)
    assert len(check) == 2 * len(ref) and (check["run_n"] == 10).all() and (check["paper_n"] == 10).all()
    assert "differs" not in set(check["verdict"]) and "consistent" not in set(check["verdict"])  # 10 vs 10 sets
    far = basis.passk_against_paper(comparison.assign(reference_pass_hat_k=1.0), pooled.assign(n_scored=1800))
    assert "differs" in set(far[far.measure == "pass^k"]["verdict"]) and (far["run_n"] == 100).all()
