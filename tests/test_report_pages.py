"""The report's building blocks without a browser: formulas to MathML, widget fallbacks, folded
tables, and an index that never calls an incomplete run complete."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pandas as pd
from bs4 import BeautifulSoup
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from psit_lib.report.index import index_html, index_row
from psit_lib.report.notebook_prep import WIDGET_VIEW, first_result_figure, latex_to_mathml, prepare
from psit_lib.report.page import FOLD_ROWS, _compact_tables, _fold_long_tables, _plain_table_numbers
from psit_lib.report.page_head import PageContext, head_html, link_spec_references, protocol_html


def test_formulas_become_mathml_and_code_and_prices_stay_as_written():
    out = latex_to_mathml("Rate $\\frac{a}{b}$ and\n$$p^k$$\nnot `$x$` nor $5 or $10.")
    assert out.count("<math") == 2 and 'display="block"' in out
    assert "`$x$`" in out and "$5 or $10" in out


def test_a_widget_view_gives_way_to_its_static_html_but_a_bare_widget_is_kept():
    nb = new_notebook(cells=[new_code_cell("w", outputs=[
        new_output("display_data", data={WIDGET_VIEW: {"model_id": "1"}, "text/html": "<p>static</p>"}),
        new_output("display_data", data={WIDGET_VIEW: {"model_id": "2"}})])])
    nb.metadata["widgets"] = {"state": {}}
    prepared = prepare(nb)
    first, second = prepared.cells[0].outputs
    assert WIDGET_VIEW not in first["data"] and WIDGET_VIEW in second["data"]
    assert "widgets" not in prepared.metadata


def test_only_long_tables_are_folded():
    rows = "".join("<tr><td>x</td></tr>" for _ in range(FOLD_ROWS + 5))
    soup = BeautifulSoup(f"<body><table>{rows}</table><table><tr><td>y</td></tr></table></body>", "html.parser")
    _fold_long_tables(soup)
    folded = soup.find_all("details")
    assert len(folded) == 1 and f"{FOLD_ROWS + 4} rows" in folded[0].summary.text


def _nb() -> nbformat.NotebookNode:
    return new_notebook(cells=[new_markdown_cell("# 02 · Fork tests\ntext")])


def test_index_calls_a_run_complete_only_when_every_notebook_is_ok(tmp_path: Path):
    ok = index_row(tmp_path, _nb(), "02_x", {"status": "ok", "seconds": 3.0, "episodes": 4})
    failed = index_row(tmp_path, _nb(), "03_x", {"status": "episodes failed", "failed": 1})
    assert ok.title == "02 · Fork tests"
    complete = index_html(tmp_path, {"complete": True, "backend": "sim"}, [ok], "abc1234")
    assert "Complete run" in complete and "simulated model" in complete and "abc1234" in complete
    assert "Incomplete run" in index_html(tmp_path, {"complete": True}, [ok, failed], "abc1234")
    assert "Incomplete run" in index_html(tmp_path, {}, [ok], "abc1234")  # not recorded by psit run
    assert "Complete run of 1 notebook, 02_x:" in complete and "every notebook" not in complete  # says what ran


def test_a_suspect_notebook_is_marked_with_its_reason_even_when_psit_run_said_ok(tmp_path: Path):
    (tmp_path / "02_x").mkdir()
    reason = "agent vanilla, role hangman_host: 15 of 16 replies (94%) could not be read, e.g. 'The word is apple'."
    (tmp_path / "02_x" / "metadata.json").write_text(json.dumps({"health": {"status": "suspect", "reasons": [reason]}}))
    row = index_row(tmp_path, _nb(), "02_x", {"status": "ok", "episodes": 16})
    assert row.status == "suspect" and row.health_reasons == (reason,)
    page = index_html(tmp_path, {"complete": True, "backend": "openai"}, [row], "abc1234")
    assert "Incomplete run" in page and "Complete run:" not in page
    assert "could not be read, e.g. &#x27;The word is apple&#x27;" in page


def test_the_headline_is_rendered_from_markdown_and_html_in_it_is_escaped(tmp_path: Path):
    (tmp_path / "02_x").mkdir()
    (tmp_path / "02_x" / "metadata.json").write_text(
        '{"headline": "- **hangman**: private_cot highest\\n- **diagnosis**: <script>x</script>"}')
    row = index_row(tmp_path, _nb(), "02_x", {"status": "ok"})
    page = index_html(tmp_path, {"complete": True}, [row], "abc")
    assert "<li><strong>hangman</strong>" in page and "<script>x" not in page


def _png() -> str:
    import base64
    import io

    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    fig.add_subplot().plot([0, 1])
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode()


def test_the_page_leaves_out_output_checks_progress_bars_and_stderr():
    nb = new_notebook(cells=[
        new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(df.to_string())", outputs=[new_output("stream", name="stdout", text="a b\n1 2")]),
        new_code_cell("run()", outputs=[
            new_output("display_data", data={WIDGET_VIEW: {"model_id": "1"},
                                             "text/plain": "Loading weights:   0%|          | 0/103 [00:00<?, ?it/s]"}),
            new_output("stream", name="stderr", text="warning: noisy library\n"),
            new_output("stream", name="stdout", text="80 episodes\n")]),
    ])
    prepare(nb)
    check, run = nb.cells
    assert check.outputs == []
    assert [o.get("text") for o in run.outputs] == ["80 episodes\n"]


def test_a_check_cell_is_shown_when_nothing_else_shows_its_section():
    nb = new_notebook(cells=[
        new_markdown_cell("## Running"),
        new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(note)", outputs=[new_output("stream", name="stdout", text="400 episodes, 0 errors.\n")]),
        new_markdown_cell("## Rates"),
        new_code_cell("label_table(t)", outputs=[new_output("display_data", data={"text/html": "<table></table>"})]),
        new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(t)", outputs=[new_output("stream", name="stdout", text="a  b\n1  2")]),
        new_markdown_cell("## Printed table"),
        new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(t)", outputs=[new_output("stream", name="stdout", text="a  b\n1  2")]),
    ])
    prepare(nb)
    note, rates, checked, printed = (c for c in nb.cells if c.cell_type == "code")
    assert note.outputs[0]["data"] == {"text/markdown": "400 episodes, 0 errors.\n"}  # prose as a paragraph
    assert len(rates.outputs) == 1 and checked.outputs == []  # the section shows its table already
    assert printed.outputs[0]["text"] == "a  b\n1  2"  # the only result of its section, as printed


def test_a_figure_is_an_image_carrying_its_panel_metadata_and_the_thumbnail_is_a_result():
    schematic = new_output("display_data", data={"image/png": _png(), "text/plain": "<Figure>"},
                           metadata={"image/png": {"psit_figure": {"provenance": "p", "panels": []}}})
    result_meta = {"provenance": "p", "panels": [{"title": "rate", "xlabel": "agent", "ylabel": "rate", "labelled": True}]}
    result = new_output("display_data", data={"image/png": _png(), "text/plain": "<Figure>"},
                        metadata={"image/png": {"psit_figure": result_meta}})
    nb = new_notebook(cells=[new_code_cell("a", outputs=[schematic]), new_code_cell("b", outputs=[result])])
    thumb = first_result_figure(nb)
    assert thumb is not None and thumb.endswith("".join(result["data"]["image/png"].split()))
    prepare(nb)
    img = BeautifulSoup(nb.cells[1].outputs[0]["data"]["text/html"], "html.parser").img
    assert json.loads(img["data-psit-figure"]) == result_meta and img["alt"] == "rate"


def test_tables_lose_a_counting_index_and_exponents_and_text_is_left_aligned():
    html = pd.DataFrame({"agent": ["a", "b"], "low": [5.56e-05, 0.1]}).to_html()
    soup = BeautifulSoup(f"<body>{html}</body>", "html.parser")
    _plain_table_numbers(soup)
    _compact_tables(soup)
    rows = [[c.get_text(strip=True) for c in tr.find_all(["th", "td"])] for tr in soup.find_all("tr")]
    assert rows == [["agent", "low"], ["a", "5.6e-05"], ["b", "0.1"]]  # pandas' six decimals, then an exponent
    assert "left" in soup.find("td").get("style", "")
    named = BeautifulSoup(pd.DataFrame({"x": [1]}, index=["vanilla"]).to_html(), "html.parser")
    _compact_tables(named)
    assert "vanilla" in named.get_text()  # a meaningful index stays


def test_spec_references_link_to_the_protocol_and_code_is_left_alone():
    soup = BeautifulSoup("<p>As SPEC §1 step 3 and SPEC §4 say.</p><code>SPEC §2</code>", "html.parser")
    assert link_spec_references(soup, "protocol.html") == 2
    links = [(a["href"], a.text) for a in soup.find_all("a")]
    assert links == [("protocol.html#sec-1", "SPEC §1"), ("protocol.html#sec-4", "SPEC §4")]
    assert soup.p.get_text() == "As SPEC §1 step 3 and SPEC §4 say."
    page = protocol_html("# P\n## §1 The test\ntext\n## §4 Statistics\n")
    assert "id='sec-1'" in page and "id='sec-4'" in page and "index.html" in page


def test_the_page_head_gives_parameters_provenance_run_files_and_contents(tmp_path: Path):
    folder = tmp_path / "02_x"
    (folder / "tables").mkdir(parents=True)
    (folder / "params.json").write_text(json.dumps({"_backend": "sim", "agents": ["vanilla", "mem0"], "n_episodes": 3}))
    (folder / "metadata.json").write_text(json.dumps({"backend": "sim", "simulated": True, "model": "psit-sim",
                                                      "profile": "default", "seed": 0, "git_commit": "abc1234",
                                                      "executions": [{"model_calls": 40, "cache_hits": 2},
                                                                     {"model_calls": 0, "cache_hits": 0}],
                                                      "last_execution": {"model_calls": 0, "episodes_recorded": 8}}))
    (folder / "tables" / "rates.csv").write_text("a\n1\n")
    (folder / "tables" / "rates.parquet").write_bytes(b"")
    (folder / "episodes.jsonl").write_text("")
    soup = BeautifulSoup("<body><h2 id='Run'>Run<a>¶</a></h2><h2>Failure modes (<code>SPEC §1</code>)</h2></body>",
                         "html.parser")
    head = BeautifulSoup(head_html(soup, PageContext(tmp_path, "02_x", {"run_id": "r1"}, "zzz")), "html.parser")
    text = head.get_text(" ")
    assert "n_episodes" in text and "vanilla, mem0" in text and "_backend" not in text
    assert "simulated model" in text and "abc1234" in text and "psit-sim" in text
    assert "8 recorded" in text and "40 model calls (2 from the cache) over 2 executions" in text  # resumed: no new call
    hrefs = [a["href"] for a in head.find_all("a")]
    assert hrefs[0] == "index.html"
    assert "../02_x/tables/rates.csv" in hrefs and "../02_x/tables/rates.parquet" in hrefs
    assert "../02_x/episodes.jsonl" in hrefs and "#Run" in hrefs and "#Failure-modes-SPEC-1" in hrefs
    assert soup.find_all("h2")[1]["id"] == "Failure-modes-SPEC-1"
    assert [a.text for a in head.select("nav a")] == ["Run", "Failure modes (SPEC §1)"]


def test_the_run_summary_table_a_notebook_ends_with_is_folded_on_the_page():
    from psit_lib.runs.experiment import RunSummary

    summary = RunSummary({"started": "2026-01-01", "model_calls": 12, "calls_by_role": {"host": 12}})
    assert "<table class='psit-run-summary'>" in summary._repr_html_() and "calls by role" in summary._repr_html_()
    nb = new_notebook(cells=[new_code_cell("exp.finish()", outputs=[new_output("execute_result", execution_count=1, data={
        "text/plain": repr(dict(summary)), "text/html": summary._repr_html_()})])])
    prepare(nb)
    shown = nb.cells[0].outputs[0]["data"]
    assert set(shown) == {"text/html"} and "<details class='psit-stats'>" in shown["text/html"]
    assert "host: 12" in shown["text/html"]


# -- the index's headlines: one sentence each, generated from the tables -------------------------

SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def _rates(cells: dict[tuple[str, str], tuple[int, int]]) -> pd.DataFrame:
    return pd.DataFrame([{"task": t, "agent": a, "successes": k, "n_scored": n, "rate": k / n}
                         for (t, a), (k, n) in cells.items()])


def test_a_rate_headline_is_one_sentence_naming_best_worst_and_whether_the_gap_separates_them():
    from psit_lib.analysis.result_sentences import rate_headline

    rates = _rates({("hangman", "private_cot"): (10, 10), ("hangman", "vanilla"): (1, 10), ("hangman", "mem0"): (1, 10),
                    ("hangman", "amem"): (1, 10), ("diagnosis", "private_cot"): (2, 4), ("diagnosis", "vanilla"): (1, 4)})
    text = rate_headline(rates, ["task"], "agent", direction="higher")
    assert len(SENTENCE_END.findall(text)) == 1 and text.endswith(".")
    assert "hangman: private_cot highest (1), vanilla, mem0 and 1 more tied lowest (0.1), separated" in text
    assert "diagnosis: private_cot highest (0.5), vanilla lowest (0.25), not separated" in text
    lower = rate_headline(rates[rates["task"] == "hangman"], ["task"], "agent", direction="lower")
    assert "vanilla, mem0 and 1 more tied lowest (0.1), private_cot highest (1)" in lower
    assert rate_headline(_rates({("hangman", "a"): (1, 2), ("hangman", "b"): (1, 2)}), ["task"], "agent") \
        == "hangman: a, b tie at rate 0.5."  # a tie ranks nothing


def test_a_generated_list_becomes_one_sentence():
    from psit_lib.analysis.result_sentences import one_sentence

    text = one_sentence("- **diagnosis · m**: 2 secrets tied at 6 of 96: no single attractor.\n- **hangman · m**: 'apple', 9 of 96.")
    assert text == "diagnosis · m: 2 secrets tied at 6 of 96: no single attractor; hangman · m: 'apple', 9 of 96."


def test_the_study_headlines_of_05_and_06_are_one_sentence():
    from psit_lib.studies.acc import summary as accsum
    from psit_lib.studies.basis.results import headline_reading

    rows = [{"model": "m", "scenario": s, "system": y, "source": "measured", "n_scored": 10, "n_failed": 0,
             "successes": k, "rate": k / 10, "unacted_successes": u}
            for s, y, k, u in [("premium_bias", "basis", 9, 0), ("premium_bias", "baseline", 2, 0),
                               ("quote_only_vs_book", "basis", 5, 5), ("quote_only_vs_book", "baseline", 4, 0)]]
    table = pd.DataFrame(rows)
    short = headline_reading(table, table, short=True).split("\n", 1)[1]
    assert len(SENTENCE_END.findall(short)) == 1
    assert "premium_bias: basis highest (0.9), baseline lowest (0.2), separated" in short
    assert "quote_only_vs_book · basis (m): all 5 successes were decided without the tool call" in short
    assert len(SENTENCE_END.findall(accsum.turn_average_headline(pd.DataFrame()))) == 1
