"""The report's building blocks without a browser: formulas to MathML, widget fallbacks, folded
tables, and an index that never calls an incomplete run complete."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from bs4 import BeautifulSoup
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from psit_lib.report.index import index_html, index_row
from psit_lib.report.notebook_prep import WIDGET_VIEW, latex_to_mathml, prepare
from psit_lib.report.page import FOLD_ROWS, _fold_long_tables


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
