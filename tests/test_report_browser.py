"""The rendered report, checked in a real browser (headless Chromium driven by Playwright).

A tiny run of three notebooks is rendered; the index and every page are opened offline at
1400 px: every figure loads, no LaTeX is left raw, no cell shows an error, code is hidden until
asked for, and the index lists every notebook with its status. Each page must also read like a
results section: no table shown twice, a link back to the index, a parameters table, every
figure's panels labelled on both axes (from the metadata each figure carries, see
``analysis.labels.figure_panels``), and no raw Python dict on show. At 1400 and at 800 px every
page is true and readable: the page never scrolls sideways (a wide table scrolls in its own box),
no table cell breaks a word, no heading stands over an empty section, no p-value reads 0, and
each headline of the index is one sentence.

CI installs Chromium from the OS packages and sets PSIT_REQUIRE_BROWSER=1, so there the test
cannot silently skip; elsewhere it skips when no Chromium is installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from psit_lib.cli import main
from report_screenshots import PAGE_WIDTH_JS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None and not os.environ.get("PSIT_REQUIRE_BROWSER"),
                                reason="no Chromium installed (CI installs it)")]

PARAMS = """
01_theorem_illustration: {n_episodes: 200, n_live_episodes: 1, sizes: [2, 5, 20]}
02_hangman_fork_tests: {agents: [vanilla, private_cot], n_episodes: 6, sweep_episodes: 0}
06_basis_cab_scenarios: {n_trials: 2, ks: [1, 2]}
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    saved = {k: os.environ.get(k) for k in ("PSIT_RESULTS_DIR", "PSIT_FIGURES_DIR")}
    os.environ.update(PSIT_RESULTS_DIR=str(tmp / "results"), PSIT_FIGURES_DIR=str(tmp / "figures"))
    try:
        (tmp / "p.yaml").write_text(PARAMS)
        assert main(["run", "01", "02", "06", "-f", str(tmp / "p.yaml"), "--run-id", "tiny", "--no-progress"]) == 0
        assert main(["report", "--run-id", "tiny"]) == 0
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    return tmp / "results" / "tiny" / "report"


VIEWPORT = 1400
WIDTHS = (1400, 800)
RAW_DICT = re.compile(r"^\{'\w+': .*\}$", re.S)
"""An output that is nothing but a Python dict's repr (``exp.finish()``'s return value, say);
a dict quoted inside a text, like a tool call's arguments in a story, is not one."""


def duplicated_tables(texts: list[str]) -> list[str]:
    """Tables (caption and cells) shown more than once on a page."""
    seen: set[str] = set()
    return [t[:80] for t in texts if t in seen or seen.add(t)]  # type: ignore[func-returns-value]


def unlabelled_panels(figures: list[str | None]) -> list[str]:
    """Figures without metadata, or with a panel lacking an axis label (from ``data-psit-figure``)."""
    bad = []
    for i, raw in enumerate(figures):
        meta = json.loads(raw) if raw and raw != "none" else None
        if meta is None:
            bad.append(f"figure {i + 1}: no figure metadata (not labelled with analysis.labels.label_figure)")
            continue
        bad += [f"figure {i + 1}, panel {p.get('title')!r}: x={p.get('xlabel')!r} y={p.get('ylabel')!r}"
                for p in meta.get("panels", []) if not p.get("labelled")]
    return bad




def assert_reads_like_a_results_section(page, name: str) -> None:
    tables = page.evaluate("[...document.querySelectorAll('table')].filter(t => t.rows.length > 1)"
                           ".map(t => t.textContent.replace(/\\s+/g, ' ').trim())")  # folded ones too
    assert not duplicated_tables(tables), f"{name}: a table is shown twice: {duplicated_tables(tables)}"
    assert page.locator("a[href='index.html']").count() > 0, f"{name}: no link back to the index"
    assert page.locator("table.psit-params").count() == 1, f"{name}: no parameters table"
    assert page.locator("nav.psit-toc a").count() > 0, f"{name}: no table of contents"
    figures = page.evaluate("[...document.querySelectorAll('.jp-OutputArea img')].map(i => i.dataset.psitFigure || null)")
    assert not unlabelled_panels(figures), f"{name}: {unlabelled_panels(figures)}"
    outputs = page.evaluate("[...document.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText.trim())")
    raw = [o[:80] for o in outputs if RAW_DICT.match(o)]
    assert not raw, f"{name}: a raw dict is on show: {raw}"


EMPTY_SECTIONS_JS = """() => {
  const shown = n => n.getClientRects().length > 0;
  const media = ['IMG', 'TABLE', 'svg', 'math', 'CANVAS', 'PRE'];
  return [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].filter(shown).filter(h => {
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    walk.currentNode = h;
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      if (h.contains(node)) continue;
      if (node.nodeType === 1 && /^H[1-6]$/.test(node.tagName)) return true;
      if (node.nodeType === 1 && media.includes(node.tagName) && shown(node)) return false;
      if (node.nodeType === 3 && node.textContent.trim() && shown(node.parentElement)) return false;
    }
    return true;
  }).map(h => h.textContent.replace('\u00b6', '').trim());
}"""
"""Headings followed by nothing a reader can see (no text, table or figure) before the next heading."""

P_COLUMN = re.compile(r"^(p|p[ _-]?value|p[ _-]holm|p[ _-]adj\w*)$", re.I)
ZERO = re.compile(r"^[-−]?0(\.0*)?$")
P_IN_TEXT = re.compile(r"\bp\s*[=<≤]\s*0(\.0*)?(?![.\d])")
TABLES_JS = """() => [...document.querySelectorAll('table')].map(t => [...t.rows].map(r => [...r.cells].map(c => c.innerText.trim())))"""
SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
WORD_BREAKS_JS = """() => [...document.querySelectorAll('td, th')].map(c => getComputedStyle(c))
  .filter(s => s.overflowWrap !== 'normal' || !['normal', 'keep-all'].includes(s.wordBreak)).length"""
SPILLS_JS = """() => [...document.querySelectorAll('td, th')].filter(c => c.getClientRects().length
  && c.scrollWidth > c.clientWidth + 1).map(c => c.innerText.slice(0, 40))"""
"""Table cells whose text runs out of them over the next cell (a word wider than its column)."""


def zero_p_values(tables: list[list[list[str]]], text: str) -> list[str]:
    """p-values printed as a bare 0 (in a p-value column of a table, or "p = 0" in a sentence)."""
    bad = [m.group() for m in P_IN_TEXT.finditer(text)]
    for rows in tables:
        head = next((i for i, row in enumerate(rows) if any(P_COLUMN.match(c) for c in row)), None)
        if head is None:
            continue
        columns = [j for j, c in enumerate(rows[head]) if P_COLUMN.match(c)]
        bad += [f"{rows[head][j]} = {row[j]}" for row in rows[head + 1:] for j in columns
                if j < len(row) and ZERO.match(row[j])]
    return bad


def long_headlines(headlines: list[str]) -> list[str]:
    """Index headlines that are more than one sentence."""
    return [h[:80] for h in headlines if h.strip() and len(SENTENCE_END.findall(h.strip())) != 1]


def assert_true_and_readable(page, name: str, width: int) -> None:
    """What every page must be at every width: no sideways scroll, no broken words, no empty
    section, no p-value printed as 0."""
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{name} at {width} px: the page scrolls sideways ({scroll} px wide)"
    reach = page.evaluate(PAGE_WIDTH_JS)
    assert reach <= width, f"{name} at {width} px: an element reaches {reach} px outside any scroll box"
    assert page.evaluate(WORD_BREAKS_JS) == 0, f"{name}: table cells may break a word mid-way"
    spills = page.evaluate(SPILLS_JS)
    assert not spills, f"{name} at {width} px: text runs out of its cell over the next: {spills[:5]}"
    empty = page.evaluate(EMPTY_SECTIONS_JS)
    assert not empty, f"{name} at {width} px: a heading over an empty section: {empty}"
    zeros = zero_p_values(page.evaluate(TABLES_JS), page.inner_text("body"))
    assert not zeros, f"{name}: p-values printed as 0: {zeros}"


def test_the_checks_catch_what_they_are_for():
    assert zero_p_values([[["method", "p_value", "p_holm"], ["a", "0", "5.4e-06"]]], "") == ["p_value = 0"]
    assert zero_p_values([[["p_value"], ["0.0001"], ["5.43e-06"]]], "p = 0.03, n = 0") == []
    assert zero_p_values([], "one-sided Fisher p = 0.000 here") == ["p = 0.000"]
    assert long_headlines(["View: a highest (0.9), b lowest (0.1).", ""]) == []
    assert long_headlines(["First. Second sentence.", "no end"]) == ["First. Second sentence.", "no end"]

    assert duplicated_tables(["a", "b", "a"]) == ["a"] and not duplicated_tables(["a", "b"])
    labelled = json.dumps({"panels": [{"title": "t", "xlabel": "x", "ylabel": "y", "labelled": True}]})
    bare = json.dumps({"panels": [{"title": "t", "xlabel": "", "ylabel": "y", "labelled": False}]})
    assert not unlabelled_panels([labelled]) and len(unlabelled_panels([labelled, bare, None])) == 2
    assert RAW_DICT.match("{'started': '2026',\n 'model_calls': 3}")
    assert not RAW_DICT.match("app call: list_rides {'end_location': 'Airport'}")


def test_the_page_checks_fail_on_a_page_that_breaks_them():
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None, "PSIT_REQUIRE_BROWSER is set but Chromium is not installed"
    bad = ("<h2>Key results</h2><h2>Rates</h2><p>text</p><table><tr><th>p_value</th></tr><tr><td>0</td></tr></table>"
           "<div style='width:1200px'>wide</div><h2>Code only</h2><pre style='display:none'>x</pre>")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 800, "height": 600})
        page.set_content(bad)
        assert page.evaluate(EMPTY_SECTIONS_JS) == ["Key results", "Code only"]
        with pytest.raises(AssertionError, match="scrolls sideways"):
            assert_true_and_readable(page, "bad", 800)
        page.set_content(bad.replace("width:1200px", "width:700px").replace("<h2>Key results</h2>", ""))
        with pytest.raises(AssertionError, match="empty section"):
            assert_true_and_readable(page, "bad", 800)
        page.set_content("<table><tr><td style='max-width:3em'>premium_bias</td><td>x</td></tr></table>")
        assert page.evaluate(SPILLS_JS) == ["premium_bias"]
        page.set_content("<h2>Rates</h2><div style='overflow-x:auto'><table><tr><td style='white-space:nowrap'>"
                         + "premium_bias " * 200 + "</td></tr></table></div>")
        assert_true_and_readable(page, "a wide table in its own scroll box", 800)
        browser.close()


def test_the_report_renders_offline_in_a_browser(report):
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None, "PSIT_REQUIRE_BROWSER is set but Chromium is not installed"
    pages = sorted(p for p in report.glob("*.html") if p.name not in ("index.html", "protocol.html"))
    assert len(pages) == 3
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": VIEWPORT, "height": 900})
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto((report / "index.html").as_uri())
        index_text = page.inner_text("body")
        assert "Complete run of the 3 notebooks below" in index_text and page.locator(".status", has_text="ok").count() == 3
        for html_page in pages:
            assert html_page.stem in page.content()
        assert page.evaluate("[...document.images].every(i => i.complete && i.naturalWidth > 0)")
        thumbs = page.evaluate("[...document.querySelectorAll('img.thumb')].map(i => i.getBoundingClientRect().width)")
        assert thumbs and min(thumbs) >= 400, f"index thumbnails too small to read: {thumbs}"
        headlines = page.evaluate("[...document.querySelectorAll('td.nb .headline')].map(h => h.innerText)")
        assert sum(bool(h.strip()) for h in headlines) >= 2 and not long_headlines(headlines), long_headlines(headlines)
        for html_page in pages:
            page.goto(html_page.as_uri())
            text = page.inner_text("body")
            assert_reads_like_a_results_section(page, html_page.name)
            images = page.evaluate("[...document.images].map(i => i.complete && i.naturalWidth > 0)")
            assert images and all(images), f"{html_page.name}: a figure did not load"
            assert "$$" not in text and "\\\\frac" not in text, f"{html_page.name}: raw LaTeX"
            assert "Traceback" not in text and "Error:" not in text, f"{html_page.name}: an error cell"
            code = page.locator(".jp-CodeCell .jp-InputArea").first
            assert not code.is_visible()
            page.click("#psit-code-toggle")
            assert code.is_visible()
        if html_page.stem.startswith("01"):
            assert page.locator("math").count() > 0  # formulas as MathML
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            for html_page in [report / "index.html", *pages]:
                page.goto(html_page.as_uri())
                assert_true_and_readable(page, html_page.name, width)
        browser.close()
    local = ("file://", "blob:", "data:")  # blob: the explorer's table library, embedded in the page
    assert all(url.startswith(local) for url in requested), [u for u in requested if not u.startswith(local)]


def test_screenshots_are_small_pngs_of_each_page_at_1400_px(report, tmp_path):
    from PIL import Image

    from report_screenshots import HEIGHT, WIDTH, shoot

    shots = shoot(report, tmp_path)
    assert [image.stem for image, _ in shots][:4] == ["index", "01_theorem_illustration", "02_hangman_fork_tests",
                                                      "06_basis_cab_scenarios"]
    for image, page_width in shots:
        assert page_width <= WIDTH, f"{image.name}: {page_width} px wide"
        with Image.open(image) as png:
            assert png.width == WIDTH and png.height <= HEIGHT
        assert image.stat().st_size < 700_000


def test_no_figure_on_any_page_draws_text_over_text(report):
    """Each figure's text boxes (titles, legends, labels: ``analysis.labels.text_boxes``, carried in
    ``data-psit-figure``) overlap nowhere, on every page at 1400 and 800 px."""
    from playwright.sync_api import sync_playwright

    from figure_overlap import overlapping_text

    assert CHROMIUM is not None, "PSIT_REQUIRE_BROWSER is set but Chromium is not installed"
    checked = 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for width in (VIEWPORT, 800):
            page = browser.new_page(viewport={"width": width, "height": 900})
            for html_page in sorted(report.glob("*.html")):
                page.goto(html_page.as_uri())
                figures = page.evaluate("[...document.querySelectorAll('img[data-psit-figure]')]"
                                        ".map(i => i.dataset.psitFigure)")
                for i, raw in enumerate(figures):
                    meta = json.loads(raw) if raw != "none" else {}
                    assert meta.get("text"), f"{html_page.name} at {width} px, figure {i + 1}: no text boxes"
                    clash = overlapping_text(meta["text"])
                    assert not clash, f"{html_page.name} at {width} px, figure {i + 1}: {clash}"
                    checked += 1
            page.close()
        browser.close()
    assert checked >= 2 * 6, f"only {checked} figures checked"  # 01's six figures and 06's two, at two widths
