"""Inaction and degenerate judges are health findings (issue #28, item 2): a BASIS success decided
without the tool call its task needs is counted beside the rate and a cell decided only by such
trials says so in the headline; an ACC judge that scores every answer alike, or parses nothing,
makes the notebook suspect; headlines and index thumbnails name the view they show."""

from __future__ import annotations

from types import SimpleNamespace

import nbformat
import pandas as pd
import pytest

from psit_lib.llm.diagnostics import FLAG_DEGENERATE_JUDGE, EpisodeDiagnostics
from psit_lib.report.index import IndexRow, _row_html, figure_view
from psit_lib.runs.health import assess_health
from psit_lib.studies.acc.judge import judge_is_degenerate
from psit_lib.studies.basis.results import (MAIN_VIEW, POOLED_VIEW, headline_reading, inaction_sentences,
                                             inaction_successes)

# -- ACC: a judge that tells no answers apart ----------------------------------------------------


def verdict(score: float = 7.0, supported: int = 2, unsupported: int = 0) -> dict:
    return {"relevance": score, "answer_quality": score, "instruction_following": score, "coherence": score,
            "supported_claims": supported, "unsupported_claims": unsupported, "active_constraints": 1,
            "violations": 0, "omitted_required": 0}


def turn(evaluations: dict) -> dict:
    return {"judge": {"evaluations": evaluations}}


def test_a_judge_giving_every_answer_the_same_scores_is_degenerate():
    reason = judge_is_degenerate([verdict()] * 4)
    assert reason is not None and "same scores" in reason and "4 answers" in reason


def test_a_judge_that_tells_answers_apart_is_not_degenerate():
    assert judge_is_degenerate([verdict(7), verdict(7), verdict(3)]) is None
    assert judge_is_degenerate([verdict(7), verdict(7), verdict(7, unsupported=2)]) is None


def test_two_answers_alike_may_be_a_tie():
    assert judge_is_degenerate([verdict(), verdict()]) is None


def test_a_judge_that_parses_nothing_is_degenerate():
    assert "parsed into no score in 2" in judge_is_degenerate([], n_judged_turns=2)
    assert judge_is_degenerate([], n_judged_turns=0) is None


def _judge_diagnostics(turns: list[dict], eid: str) -> dict:
    """What the judge scorer keeps in its score's metadata: its diagnostics, flagged as the scorer
    flags them (psit_lib.studies.acc.study.judge)."""
    session = SimpleNamespace(diagnostics=EpisodeDiagnostics())
    verdicts = [dict(v) for t in turns for v in t["judge"]["evaluations"].values()]
    reason = judge_is_degenerate(verdicts, len(turns))
    if reason is not None:
        session.diagnostics.flag(FLAG_DEGENERATE_JUDGE, "acc_judge", reason, reason)
    return {"spec": {"model": "m"}, "diagnostics": session.diagnostics.as_dict()}


def test_a_degenerate_judge_makes_the_notebook_suspect_naming_the_judge():
    same = {name: verdict() for name in ("acc", "vanilla", "rag_k3")}
    records = [{"episode_id": f"e{i}", "status": "ok", "spec": {"model": "m"}, "diagnostics": {}} for i in range(3)]
    scored = [_judge_diagnostics([turn(same), turn(same)], f"e{i}") for i in range(3)]
    assert not assess_health(records).suspect          # the episodes alone carry no judge
    health = assess_health(records, scored=scored)
    assert health.suspect
    assert any("acc_judge" in s and "told no answers apart" in s for s in health.sentences)


def test_a_judge_that_parses_nothing_makes_the_notebook_suspect():
    records = [{"episode_id": f"e{i}", "status": "ok", "spec": {"model": "m"}, "diagnostics": {}} for i in range(2)]
    scored = [_judge_diagnostics([turn({}), turn({})], f"e{i}") for i in range(2)]
    assert FLAG_DEGENERATE_JUDGE in next(iter(scored[0]["diagnostics"]["flags"]))
    assert assess_health(records, scored=scored).suspect


def test_a_judge_that_discriminates_keeps_the_notebook_ok():
    varied = {"acc": verdict(8), "vanilla": verdict(4), "rag_k3": verdict(6)}
    records = [{"episode_id": f"e{i}", "status": "ok", "spec": {"model": "m"}, "diagnostics": {}} for i in range(3)]
    scored = [_judge_diagnostics([turn(varied)], f"e{i}") for i in range(3)]
    assert assess_health(records, scored=scored).status == "ok"


# -- BASIS: successes where nothing happened -----------------------------------------------------


def success_rows(rows: list[tuple]) -> pd.DataFrame:
    """A success table (results.success_table's columns) from (scenario, system, n, successes, unacted)."""
    return pd.DataFrame([{"model": "m", "scenario": s, "system": y, "source": "measured", "n_scored": n,
                          "n_failed": 0, "successes": k, "rate": k / n if n else float("nan"),
                          "wilson_low": 0.0, "wilson_high": 1.0, "unacted_successes": u}
                         for s, y, n, k, u in rows])


def test_inaction_successes_are_counted_and_a_cell_of_only_inaction_is_marked():
    table = success_rows([("quote_only_vs_book", "basis", 2, 2, 2), ("quote_only_vs_book", "baseline", 2, 2, 1),
                          ("stale_locations", "basis", 2, 1, 0)])
    counted = inaction_successes(table)
    assert counted["unacted_successes"].tolist() == [2, 1, 0]
    assert counted["only_inaction"].tolist() == [True, False, False]


def test_the_headline_says_when_a_cell_is_decided_only_by_inaction():
    table = success_rows([("quote_only_vs_book", "basis", 2, 2, 2), ("quote_only_vs_book", "baseline", 2, 2, 1)])
    text = headline_reading(table, table)
    assert text.startswith(f"*{POOLED_VIEW}:*")
    assert "quote_only_vs_book · basis (m)**: all 2 successes were decided without the tool call" in text
    assert "not a result" in text
    assert "1 of 2 successes were decided without" in text
    assert inaction_sentences(success_rows([("premium_bias", "basis", 2, 1, 0)])) == []


def test_the_headline_never_says_no_scored_rows_above_scored_trials():
    pooled = success_rows([])                                  # no reference-design runs (reference_sets=0)
    main = success_rows([("quote_only_vs_book", "basis", 6, 6, 6)])
    text = headline_reading(pooled, main)
    assert "No scored rows" not in text and text.startswith(f"*{MAIN_VIEW}:*")
    assert "not a result" in text
    assert "No scored rows" in headline_reading(pooled, success_rows([]))   # nothing scored anywhere: it says so


# -- headlines and thumbnails name their view ----------------------------------------------------


def test_an_experiment_headline_names_its_view(tmp_path, monkeypatch):
    from psit_lib.runs import Experiment

    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    exp = Experiment("99_view_test", {"models": ["sim"]}, seed=0)
    exp.headline("- **hangman · m**: vanilla 0.50", view="Self-consistency by Table 1's rule")
    assert exp.metadata.headline.splitlines()[0] == "*Self-consistency by Table 1's rule:*"


def _notebook_with_figure(titles: list[str]) -> object:
    nb = nbformat.v4.new_notebook()
    output = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="},
                                    metadata={"image/png": {"psit_figure": {"panels": [
                                        {"title": t, "xlabel": "x", "ylabel": "y", "labelled": True}
                                        for t in titles]}}})
    cell = nbformat.v4.new_code_cell("fig", outputs=[output])
    nb.cells.append(cell)
    return nb


@pytest.mark.parametrize(("titles", "expected"), [
    (["Self-consistency, strict view"], "Self-consistency, strict view"),
    (["A", "B", "A"], "A; B"),
    ([""], "untitled figure"),
])
def test_the_index_thumbnail_names_the_view_it_shows(titles, expected):
    nb = _notebook_with_figure(titles)
    uri = "data:image/png;base64,iVBORw0KGgo="
    assert figure_view(nb, uri) == expected
    row = IndexRow(stem="02_x", title="t", status="ok", seconds=1.0, episodes=1, failed=0, calls=1,
                   cache_hits=0, headline="*Table 1's rule:*", figure=uri, figure_view=figure_view(nb, uri))
    assert f"Figure: {expected}" in _row_html(row)
