"""The claims ledger (issues #29 and #36): each claim tested as the paper words it (relative where it says relative,
within each model family, both halves of a contrast), decided supported / contradicted / inconclusive on tables built
to make it so, never a verdict for the simulator or a model that is not the paper's, the paper's own counts under the
same test (or the reason there are none), and the ledger as the report index's first section."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from psit_lib.analysis.claims import (CONTRADICTED, FROM_TABLES, INCONCLUSIVE, PAPER_COUNTS, SUPPORTED, Claim, Decision, RunContext,
                                      all_of, any_of, ledger, ledger_lines, merge_tables, trend_z)
from psit_lib.analysis.verdicts import ILLUSTRATES, NOT_COMPARABLE
from psit_lib.studies.acc import claims as acc
from psit_lib.studies.basis import claims as basis
from psit_lib.studies.psit import claims as psit

PUBLIC, PRIVATE = ["vanilla", "mem0", "amem"], ["private_cot", "workflow_overwrite"]
VERDICT_WORDS = re.compile(r"(?<![-\w])(supported|consistent|differs)(?![-\w])", re.IGNORECASE)


def _table1(cells: dict[tuple[str, str], dict[str, tuple[int, int]]]) -> pd.DataFrame:
    return pd.DataFrame([{"task": task, "model": model, "agent": agent, "n_scored": n, "n_failed": 0,
                          "successes": k, "rate": k / n if n else float("nan")}
                         for (task, model), agents in cells.items() for agent, (k, n) in agents.items()])


def _cell(public: tuple[int, int], private: tuple[int, int]) -> dict[str, tuple[int, int]]:
    return {**{a: public for a in PUBLIC}, **{a: private for a in PRIVATE}}


def _verdicts(claims: list[Claim], tables, run: RunContext = FROM_TABLES) -> dict[str, str]:
    return dict(zip((t := ledger(claims, tables, run))["id"], t["verdict"]))


def _claim(claims: list[Claim], claim_id: str) -> Claim:
    return next(c for c in claims if c.id == claim_id)


def test_psit_claims_on_a_clear_run_with_one_model_size_leave_scaling_open():
    table = _table1({("hangman", "qwen3-32b"): _cell((0, 50), (45, 50)),
                     ("diagnosis", "qwen3-32b"): _cell((1, 50), (40, 50))})
    got = _verdicts(psit.claims(), {psit.TABLE: table})
    assert got == {"PSIT-1": SUPPORTED, "PSIT-2": SUPPORTED, "PSIT-3": INCONCLUSIVE, "PSIT-4": INCONCLUSIVE,
                   "PSIT-5": SUPPORTED, "PSIT-6": INCONCLUSIVE, "PSIT-7": INCONCLUSIVE, "PSIT-8": INCONCLUSIVE}
    assert "two or more model sizes within a family" in _claim(psit.claims(), "PSIT-3").decide({psit.TABLE: table}).statistic


def test_psit_claims_contradicted_when_public_agents_pass_and_beat_private_ones():
    table = _table1({("hangman", "gpt-oss-20b"): _cell((45, 50), (2, 50))})
    got = _verdicts(psit.claims(), {psit.TABLE: table})
    assert got["PSIT-1"] == CONTRADICTED and got["PSIT-2"] == CONTRADICTED


def test_psit_claims_inconclusive_on_a_tiny_run():
    table = _table1({("hangman", "qwen3-32b"): _cell((0, 1), (1, 1))})
    got = _verdicts(psit.claims(), {psit.TABLE: table})
    assert set(got.values()) == {INCONCLUSIVE}


def _families(ours: dict[str, int], theirs: dict[str, int], n: int = 100) -> pd.DataFrame:
    """Hangman on the paper's four models: private-state and public agents at the given successes of n."""
    return _table1({("hangman", model): {**{a: (theirs[model], n) for a in PUBLIC},
                                         **{a: (ours[model], n) for a in PRIVATE}} for model in ours})


MODELS = ("openai/gpt-oss-20b", "openai/gpt-oss-120b", "qwen/qwen3-32b", "qwen/qwen3-235b-a22b-thinking-2507")


@pytest.mark.parametrize("ours, theirs, verdict", [
    ((40, 80, 30, 90), (5, 6, 5, 6), SUPPORTED),        # ours rise in both families, the baselines stay flat
    ((80, 40, 90, 30), (5, 6, 5, 6), CONTRADICTED),     # ours fall in both families
    ((40, 80, 30, 90), (5, 40, 5, 45), CONTRADICTED),   # the baselines rise in both families too
    ((55, 50, 10, 90), (5, 6, 5, 6), INCONCLUSIVE),     # GPT-OSS falls (not significantly), Qwen3 rises
])
def test_the_scaling_claim_reads_each_family_and_the_baselines_contrast(ours, theirs, verdict):
    table = _families(dict(zip(MODELS, ours)), dict(zip(MODELS, theirs)))
    decision = _claim(psit.claims(), "PSIT-3").decide({psit.TABLE: table})
    assert decision.verdict == verdict, decision.statistic
    assert "GPT-OSS" in decision.statistic and "Qwen3" in decision.statistic


def test_a_fall_within_one_family_is_not_hidden_by_the_other_on_one_size_axis():
    """Pooled on one size axis (20B, 32B, 120B, 235B) the trend rises, as the old test read it; within GPT-OSS it
    falls (20B 0.55 -> 120B 0.50), so the claim that every family improves is not supported."""
    ours = dict(zip(MODELS, (55, 50, 10, 95)))
    by_size = sorted(zip((20, 120, 32, 235), ours.values()))
    assert trend_z([k for _, k in by_size], [len(PRIVATE) * 100] * 4, [math.log10(s) for s, _ in by_size]) > 1.645
    table = _families(ours, dict(zip(MODELS, (5, 6, 5, 6))))
    decision = _claim(psit.claims(), "PSIT-3").decide({psit.TABLE: table})
    assert decision.verdict == INCONCLUSIVE and "hangman GPT-OSS 0.55 -> 0.50" in decision.statistic


@pytest.mark.parametrize("workflow, autonomous, verdict", [((45, 50), (10, 50), SUPPORTED),
                                                            ((10, 50), (45, 50), CONTRADICTED),
                                                            ((30, 50), (28, 50), INCONCLUSIVE)])
def test_workflow_against_autonomous(workflow, autonomous, verdict):
    table = _table1({("hangman", "qwen3-32b"): {"workflow_overwrite": workflow, "autonomous_overwrite": autonomous}})
    assert _claim(psit.claims(), "PSIT-4").decide({psit.TABLE: table}).verdict == verdict


@pytest.mark.parametrize("workflow, cot, verdict", [((170, 200), (85, 100), SUPPORTED), ((20, 100), (90, 100), CONTRADICTED),
                                                     ((4, 5), (4, 5), INCONCLUSIVE)])
def test_workflow_agents_effectively_match_private_cot_is_an_equivalence(workflow, cot, verdict):
    table = _table1({("hangman", "qwen3-32b"): {"workflow_overwrite": workflow, "private_cot": cot}})
    assert _claim(psit.claims(), "PSIT-5").decide({psit.TABLE: table}).verdict == verdict


@pytest.mark.parametrize("name, size, family", [
    ("gemma-3-270m", 0.27, "gemma-3"), ("llama-3-8b", 8.0, "llama-3"), ("Qwen/Qwen3-32B", 32.0, "Qwen3"),
    ("gpt-oss-120b", 120.0, "GPT-OSS"), ("qwen/qwen3-235b-a22b-thinking-2507", 235.0, "Qwen3"),
    ("psit-sim", None, "psit-sim")])
def test_model_sizes_and_families_are_the_papers_or_the_names_own(name, size, family):
    assert psit.model_size(name) == size and psit.model_family(name) == family


def test_the_paper_s_own_counts_give_the_papers_conclusions_or_say_which_cells_cannot():
    own = {c.id: c.paper_decision() for c in [*psit.claims(), *acc.claims(), *basis.claims()]}
    assert {k: v.verdict for k, v in own.items() if v is not None} == {
        "PSIT-1": INCONCLUSIVE, "PSIT-2": INCONCLUSIVE, "PSIT-3": SUPPORTED, "PSIT-4": INCONCLUSIVE,
        "PSIT-5": SUPPORTED, "BASIS-1": SUPPORTED, "BASIS-2": SUPPORTED, "BASIS-3": SUPPORTED}
    # where the paper's counts cannot decide, the statistic names the cells that leave it open
    assert "undecided: diagnosis/mem0 on GPT-OSS 120B 25/50" in own["PSIT-1"].statistic
    assert "undecided: diagnosis on Qwen3 32B" in own["PSIT-2"].statistic
    assert "undecided: diagnosis on Qwen3 32B" in own["PSIT-4"].statistic
    # both halves of RQ1, within each family
    assert "ours scale: holds" in own["PSIT-3"].statistic and "baselines do not: holds" in own["PSIT-3"].statistic
    # BASIS-2 relative, as the sentence says: risk ratios 3.72 vs 2.49, z 2.14, with the absolute gaps beside
    assert "risk ratio stale 3.72 vs premium_bias 2.49 (z +2.14)" in own["BASIS-2"].statistic
    assert "absolute gaps +0.54 vs +0.52" in own["BASIS-2"].statistic
    # a claim the paper gives no counts for says why
    for claim in [*psit.claims(), *acc.claims()]:
        if own[claim.id] is None:
            assert claim.no_counts, claim.id


def test_every_claim_quotes_the_paper_or_says_where_its_words_are_not_at_hand():
    for claim in [*psit.claims(), *acc.claims(), *basis.claims()]:
        assert claim.where and (claim.quote or "not quoted" in claim.where or "Appendix E" in claim.where), claim.id
        assert not VERDICT_WORDS.search(claim.test), (claim.id, claim.test)  # a test says for / against, not verdicts
    quotes = {c.id: c.quote for c in [*psit.claims(), *basis.claims()]}
    assert "no such consistent scaling trend" in quotes["PSIT-3"]
    assert "highest relative improvement" in quotes["BASIS-2"] and "roughly 32%" in quotes["BASIS-3"]


def test_a_claim_whose_table_the_run_did_not_save_is_inconclusive_and_says_which():
    decision = psit.claims()[0].decide({})
    assert decision.verdict == INCONCLUSIVE and psit.TABLE in decision.statistic


def test_a_cell_two_notebooks_cover_is_counted_once_in_the_run_ledger():
    shared = _table1({("hangman", "qwen3-32b"): {"vanilla": (2, 50)}})
    more = _table1({("hangman", "qwen3-32b"): {"vanilla": (2, 50), "mem0": (1, 50)}})
    merged = merge_tables({"02": {psit.TABLE: shared}, "04": {psit.TABLE: more}})[psit.TABLE]
    assert len(merged) == 2 and merged["n_scored"].sum() == 100


# -- the model rule: no verdict for the simulator or a model that is not the paper's -------------------------

def test_a_simulated_run_illustrates_the_protocol_and_shows_its_statistic():
    table = _table1({("hangman", "qwen3-32b"): _cell((0, 50), (45, 50))})  # a simulator serving a paper name
    decided = ledger(psit.claims(), {psit.TABLE: table}, RunContext(simulated=True, models=("qwen3-32b",)))
    assert set(decided["verdict"][:5]) == {ILLUSTRATES} and set(decided["verdict"]) == {ILLUSTRATES, INCONCLUSIVE}
    row = decided.set_index("id").loc["PSIT-1"]
    assert "public cells" in row["run_evidence"] and "simulated model" in row["run_evidence"]


def test_cells_of_other_models_are_left_out_and_a_run_of_none_of_the_papers_illustrates(monkeypatch):
    monkeypatch.delenv("PSIT_PAPER_MODELS", raising=False)
    other = _table1({("hangman", "llama-3-8b"): _cell((45, 50), (2, 50))})
    assert _verdicts(psit.claims()[:2], {psit.TABLE: other}) == {"PSIT-1": ILLUSTRATES, "PSIT-2": ILLUSTRATES}
    mixed = pd.concat([other, _table1({("hangman", "qwen3-32b"): _cell((0, 50), (45, 50))})])
    decision = psit.claims()[0].decide({psit.TABLE: mixed})
    assert decision.verdict == SUPPORTED and "of other models left out" in decision.statistic
    assert "llama-3-8b is not one of the PSIT paper's models" in decision.statistic


def test_cells_under_a_smaller_budget_than_the_papers_are_not_comparable():
    table = _table1({("hangman", "qwen3-32b"): _cell((0, 50), (45, 50))}).assign(host_max_tokens=512, cut_share=0.0)
    decision = psit.claims()[0].decide({psit.TABLE: table})
    assert decision.verdict == NOT_COMPARABLE and "capped at 512 tokens, below the paper's 2,048" in decision.statistic
    half = pd.concat([table, _table1({("diagnosis", "qwen3-32b"): _cell((0, 50), (45, 50))})
                      .assign(host_max_tokens=2048, cut_share=0.3)])
    assert psit.claims()[0].decide({psit.TABLE: half}).verdict == NOT_COMPARABLE  # cut in 30% of episodes
    fine = table.assign(host_max_tokens=2048, cut_share=0.02)
    assert psit.claims()[0].decide({psit.TABLE: fine}).verdict == SUPPORTED


# -- ACC: per-episode turn averages, paired by scenario --------------------------------------------------------

def _episodes(acc_value: float, base_value: float, n: int = 6, column: str = "H_u",
              base_scores: float = 8.0, acc_scores: float = 8.0) -> pd.DataFrame:
    rows = []
    for e in range(n):
        for agent, value, score in (("transcript", base_value, base_scores), ("retrieval_k5", base_value, base_scores),
                                    ("acc", acc_value, acc_scores)):
            rows.append({"episode_id": f"e{e}", "domain": "it_operations", "agent": agent, "turns": 10,
                         "H_u": value + 0.01 * e, "D_r": value + 0.01 * e, "relevance": score + 0.1 * e,
                         "answer_quality": score, "instruction_following": score, "coherence": score + 0.1 * e})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("acc_value, base_value, n, verdict", [(0.05, 0.3, 6, SUPPORTED), (0.3, 0.05, 6, CONTRADICTED),
                                                               (0.2, 0.2, 6, INCONCLUSIVE), (0.05, 0.3, 3, INCONCLUSIVE)])
def test_acc_rate_claims_pair_episodes_by_scenario(acc_value, base_value, n, verdict, monkeypatch):
    monkeypatch.setenv("PSIT_PAPER_MODELS", "m=ACC")
    run = RunContext(models=("m",))
    got = _verdicts(acc.claims(), {acc.EPISODES: _episodes(acc_value, base_value, n)}, run)
    assert got["ACC-2"] == verdict and got["ACC-3"] == verdict
    if n == 3:  # three scenarios cannot reach 0.05 with an exact sign-flip test, and the statistic says so
        assert "smallest p is 0.125" in _claim(acc.claims(), "ACC-2").decide({acc.EPISODES: _episodes(0.05, 0.3, 3)},
                                                                            run).statistic


def test_acc_claims_illustrate_the_protocol_without_the_papers_model(monkeypatch):
    monkeypatch.delenv("PSIT_PAPER_MODELS", raising=False)
    decision = _claim(acc.claims(), "ACC-2").decide({acc.EPISODES: _episodes(0.05, 0.3)}, RunContext(models=("m",)))
    assert decision.verdict == ILLUSTRATES and "ACC paper's model is not named" in decision.statistic


@pytest.mark.parametrize("acc_scores, verdict", [(9.0, SUPPORTED), (3.0, CONTRADICTED)])
def test_acc_judge_claim(acc_scores, verdict, monkeypatch):
    monkeypatch.setenv("PSIT_PAPER_MODELS", "m=ACC")
    table = _episodes(0.1, 0.1, n=8, acc_scores=acc_scores)
    scores = pd.DataFrame([{"agent": "acc", "criterion": "relevance", "n": 60, "mean": acc_scores, "std": 0.5}])
    decision = _claim(acc.claims(), "ACC-4").decide({acc.EPISODES: table, acc.SCORES: scores}, RunContext(models=("m",)))
    assert decision.verdict == verdict, decision.statistic
    assert f"acc relevance {acc_scores:.1f} ± 0.5" in decision.statistic


def test_the_sign_flip_test_is_exact():
    assert acc.sign_flip_p([-1.0] * 5, "less") == 1 / 32
    assert acc.sign_flip_p([1.0, -1.0], "less") == 0.75
    assert acc.sign_flip_p([0.0, 0.0], "greater") == 1.0


def test_acc_bounded_memory_reads_the_last_turn_against_transcript_replay():
    rows = [{"domain": d, "agent": a, "mean_tokens": mean, "last_turn_tokens": last} for d in ("it", "cyber")
            for a, mean, last in (("transcript", 300, 700), ("acc", 250, 300))]
    bounded = _claim(acc.claims(), "ACC-1").rule.decide
    assert bounded({acc.FOOTPRINT: pd.DataFrame(rows)}).verdict == SUPPORTED
    grows = [dict(r, last_turn_tokens=900) if r["agent"] == "acc" else r for r in rows]
    assert bounded({acc.FOOTPRINT: pd.DataFrame(grows)}).verdict == CONTRADICTED


# -- BASIS -------------------------------------------------------------------------------------------------------

def _pooled(gaps: dict[str, tuple[int, int]], n: int = 180, model: str = "m") -> pd.DataFrame:
    return pd.DataFrame([{"model": model, "scenario": s, "system": y, "source": "measured", "n_scored": n,
                          "n_failed": 0, "successes": k, "rate": k / n} for s, (b, a) in gaps.items()
                         for y, k in (("baseline", b), ("basis", a))])


def test_basis_claims_on_its_model(monkeypatch):
    monkeypatch.setenv("PSIT_PAPER_MODELS", "m=BASIS")
    clear = _pooled({"premium_bias": (60, 100), "quote_only_vs_book": (70, 100), "stale_locations": (20, 170)})
    got = _verdicts(basis.claims(), {basis.TABLE: clear})
    assert got["BASIS-1"] == SUPPORTED and got["BASIS-2"] == SUPPORTED
    worse = _pooled({"premium_bias": (100, 60), "quote_only_vs_book": (70, 100), "stale_locations": (20, 170)})
    assert _verdicts(basis.claims(), {basis.TABLE: worse})["BASIS-1"] == CONTRADICTED
    at_the_papers = basis.paper_pooled().assign(model="m", n_failed=0)
    assert _verdicts(basis.claims(), {basis.TABLE: at_the_papers})["BASIS-3"] == SUPPORTED


def test_basis_2_is_relative_not_absolute(monkeypatch):
    """stale_locations has the largest absolute gap (+0.40) but not the largest relative one (x1.8 vs x4)."""
    monkeypatch.setenv("PSIT_PAPER_MODELS", "m=BASIS")
    table = _pooled({"premium_bias": (10, 40), "quote_only_vs_book": (30, 45), "stale_locations": (50, 90)}, n=100)
    decision = _claim(basis.claims(), "BASIS-2").decide({basis.TABLE: table})
    assert decision.verdict == CONTRADICTED and "absolute gaps +0.40 vs +0.30" in decision.statistic


def test_basis_claims_illustrate_the_protocol_without_the_papers_model(monkeypatch):
    monkeypatch.delenv("PSIT_PAPER_MODELS", raising=False)
    clear = _pooled({"premium_bias": (60, 100), "quote_only_vs_book": (70, 100), "stale_locations": (20, 170)})
    assert set(_verdicts(basis.claims(), {basis.TABLE: clear}).values()) == {ILLUSTRATES}


def test_basis_success_against_the_paper_follows_the_model_rule(monkeypatch):
    monkeypatch.delenv("PSIT_PAPER_MODELS", raising=False)
    paper = basis.paper_pooled().assign(model="m")
    check = basis.success_against_paper(paper)
    assert (check["paper_n"] == 180).all() and set(check["verdict"]) == {ILLUSTRATES}
    assert "BASIS paper's model is not recorded" in check["note"].iloc[0]
    monkeypatch.setenv("PSIT_PAPER_MODELS", "m=BASIS")
    assert set(basis.success_against_paper(paper)["verdict"]) == {"consistent"}
    assert set(basis.success_against_paper(paper, simulated=True)["verdict"]) == {ILLUSTRATES}
    small = basis.success_against_paper(paper.assign(n_scored=4, successes=(paper["rate"] * 4).round().astype(int)))
    assert "consistent" not in set(small["verdict"])


def test_basis_passk_against_the_paper_counts_the_runs_sets(monkeypatch):
    from psit_lib.studies.basis.reference import reference_passk

    monkeypatch.setenv("PSIT_PAPER_MODELS", "m=BASIS")
    ref = reference_passk()
    comparison = ref.assign(model="m", reference_pass_hat_k=ref["pass_hat_k"], reference_pass_at_k=ref["pass_at_k"],
                            study_reported_pass_hat_k=ref["pass_hat_k"], study_reported_pass_at_k=ref["pass_at_k"])
    pooled = basis.paper_pooled().assign(model="m", n_scored=180, n_failed=0)
    check = basis.passk_against_paper(comparison, pooled)
    assert len(check) == 2 * len(ref) and (check["run_n"] == 10).all() and (check["paper_n"] == 10).all()
    assert "differs" not in set(check["verdict"]) and "consistent" not in set(check["verdict"])  # 10 vs 10 sets
    far = basis.passk_against_paper(comparison.assign(reference_pass_hat_k=1.0), pooled.assign(n_scored=1800))
    assert "differs" in set(far[far.measure == "pass^k"]["verdict"]) and (far["run_n"] == 100).all()
    monkeypatch.delenv("PSIT_PAPER_MODELS")
    assert set(basis.passk_against_paper(comparison, pooled)["verdict"]) == {ILLUSTRATES}


# -- the rules of the ledger -------------------------------------------------------------------------------------

@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8))
def test_all_of_supports_only_when_every_cell_does_and_any_opposing_cell_contradicts(flags):
    decision = all_of([(str(i), s, o) for i, (s, o) in enumerate(flags)], "cells")
    if any(o for _, o in flags):
        assert decision.verdict == CONTRADICTED
    elif all(s for s, _ in flags):
        assert decision.verdict == SUPPORTED
    else:
        assert decision.verdict == INCONCLUSIVE


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8))
def test_any_of_supports_when_one_cell_breaks_the_pattern_and_contradicts_when_all_show_it(flags):
    decision = any_of([(str(i), b, s) for i, (b, s) in enumerate(flags)], "cells")
    if any(b for b, _ in flags):
        assert decision.verdict == SUPPORTED
    elif all(s for _, s in flags):
        assert decision.verdict == CONTRADICTED
    else:
        assert decision.verdict == INCONCLUSIVE


def test_trend_z_has_the_sign_of_the_trend():
    assert trend_z([5, 25, 45], [50, 50, 50], [1, 2, 3]) > 3
    assert trend_z([45, 25, 5], [50, 50, 50], [1, 2, 3]) < -3
    assert trend_z([0, 0], [5, 5], [1, 2]) != trend_z([0, 0], [5, 5], [1, 2])  # no spread: nan


def test_a_decision_rejects_an_unknown_verdict():
    with pytest.raises(ValueError):
        Decision("consistent", "")


def test_the_paper_counts_context_is_the_paper_itself():
    assert PAPER_COUNTS.paper and not PAPER_COUNTS.simulated


def test_every_ledger_line_fits_120_columns_and_names_test_and_verdict():
    from psit_lib.report.ledger import all_claims

    table = ledger(all_claims(), {psit.TABLE: _table1({("hangman", "psit-sim"): _cell((1, 10), (9, 10))})},
                   RunContext(simulated=True, models=("psit-sim",)))
    lines = ledger_lines(table)
    assert max(map(len, lines)) <= 120
    assert sum(line.lstrip().startswith("test:") for line in lines) == len(table)
    assert len(table) == 15 and set(table["verdict"]) <= {ILLUSTRATES, INCONCLUSIVE}
    assert [c.id for c in all_claims()][:1] == ["PSIT-1"]  # the private-state study first (its notebooks come first)


def _simulated_folder(tmp_path):
    from psit_lib.runs.folder import RunMetadata, RunStore

    store = RunStore(tmp_path / "02_hangman_fork_tests")
    store.write_metadata(RunMetadata(notebook="02_hangman_fork_tests", backend="sim", simulated=True, model="psit-sim"))
    store.tables_dir.mkdir(parents=True)
    _table1({("hangman", "psit-sim"): _cell((1, 10), (9, 10))}).to_csv(store.tables_dir / f"{psit.TABLE}.csv", index=False)
    return store


def test_the_report_index_opens_with_the_claims_ledger_and_a_simulated_run_gets_no_verdict(tmp_path):
    from psit_lib.report.index import index_html

    _simulated_folder(tmp_path)
    page = index_html(tmp_path, {"backend": "sim"}, [], "abc")
    assert page.index("<h2 id='claims'>Claims ledger</h2>") < page.index("<th>Notebook, key result")
    assert page.count("<td>PSIT-") == 8 and page.count("<td>ACC-") == 4 and page.count("<td>BASIS-") == 3
    assert "this run saved no episode_rates table" in page  # ACC not run: inconclusive, said why
    assert page.count("class='status illustrates'>illustrates the protocol<") == 5  # the claims on Table 1
    assert "This run is the simulated model" in page
    rows = re.findall(r"<tr><td>(?:PSIT|ACC|BASIS)-.*?</tr>", page)
    assert rows and not any(re.search(r"class='status (ok|bad)'", row) for row in rows)


def test_the_forest_and_size_figures_keep_families_apart():
    from psit_lib.analysis.plots import plot_forest, plot_rate_by_size

    table = _table1({("hangman", "qwen3-32b"): _cell((1, 10), (9, 10))})
    gaps = psit.method_gaps(table)
    assert set(gaps["source"]) == {"this run", "paper"} and set(gaps[gaps.source == "paper"]["model"]) == {"Qwen3 32B"}
    fig = plot_forest(gaps, "label")
    assert len(fig.axes[0].get_yticklabels()) == len(gaps[["task", "model", "comparison"]].drop_duplicates())
    one = plot_rate_by_size(psit.rates_by_size(table), "label")  # one size: said in one line, no empty box
    assert not one.axes and "1 known size (the figure needs 2)" in " ".join(t.get_text() for t in one.texts)
    assert one.get_size_inches()[1] <= 0.5
    two = _table1({("hangman", "qwen3-32b"): _cell((1, 10), (5, 10)), ("hangman", "gpt-oss-120b"): _cell((1, 10), (9, 10)),
                   ("hangman", "gpt-oss-20b"): _cell((1, 10), (7, 10))})
    rates = psit.rates_by_size(two)
    assert sorted(rates[rates.source == "this run"]["size"].unique()) == [20.0, 32.0, 120.0]
    fig = plot_rate_by_size(rates, "label")
    families = {20.0: "GPT-OSS", 120.0: "GPT-OSS", 32.0: "Qwen3", 235.0: "Qwen3"}
    drawn = [line for line in fig.axes[0].lines if len(line.get_xdata()) > 1]
    assert drawn and all(len({families[float(x)] for x in line.get_xdata()}) == 1 for line in drawn)


def test_the_papers_reference_rows_beside_a_run_are_neither_its_cells_nor_other_models(monkeypatch):
    monkeypatch.setenv("PSIT_PAPER_MODELS", "m=BASIS")
    measured = _pooled({"premium_bias": (60, 100), "quote_only_vs_book": (70, 100), "stale_locations": (20, 170)})
    shown = measured.assign(model="reference study", source="reference study (reported)", successes=None)
    decision = _claim(basis.claims(), "BASIS-1").decide({basis.TABLE: pd.concat([measured, shown])})
    assert decision.verdict == SUPPORTED and "other models" not in decision.statistic
    only_shown = _claim(basis.claims(), "BASIS-1").decide({basis.TABLE: shown.assign(successes=1)})
    assert only_shown.verdict == ILLUSTRATES
