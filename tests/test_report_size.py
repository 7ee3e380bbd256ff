"""The report stays light: the default run's report weighs under 5 MB, its size model estimates it, and its
episodes open from the side files in a real browser.

One run of the whole series at default parameters on the simulator (``psit run``, which renders the report)
serves every test here. In headless Chromium at 800 px, the explorer of 02, 05 and 06 is filtered in its
column headers and a row opened: the episode comes from the side file (a ``<script src>`` loaded on the click,
never inlined in the page), in its study's view (the fork's branches; ACC's turns folded, the judge's verdict
and the CCS diff inside; BASIS's exchange with masks and rides), and each page answers within 2 s.
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

from psit_lib.cli import main
from psit_lib.report.size import MB, estimate_bytes, load_model, measure, measured_model, planned
from psit_lib.runs.folder import RunFolder

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LIMIT = 5 * MB
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("default")
    saved = {k: os.environ.get(k) for k in ("PSIT_RESULTS_DIR", "PSIT_FIGURES_DIR")}
    os.environ.update(PSIT_RESULTS_DIR=str(tmp / "results"), PSIT_FIGURES_DIR=str(tmp / "figures"))
    try:
        assert main(["run", "--run-id", "default", "--no-progress"]) == 0
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    return tmp / "results" / "default"


def test_the_default_report_weighs_under_5_mb(default_run):
    report = default_run / "report"
    files = [p for p in report.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    biggest = sorted(((p.stat().st_size, str(p.relative_to(report))) for p in files), reverse=True)[:5]
    assert total < LIMIT, f"the default report is {total / MB:.2f} MB (limit 5 MB); biggest files: {biggest}"
    assert len(list(report.glob("assets/itables-*.js"))) == 1  # the table library once, not once per page
    pages = [p for p in report.glob("*.html") if p.stem[:1].isdigit()]
    assert all(p.stat().st_size < 0.6 * MB for p in pages), [(p.name, p.stat().st_size) for p in pages]


def test_the_size_model_estimates_the_report_it_was_measured_on(default_run):
    shared, parts = measure(default_run)
    actual = shared + sum(p.page + p.episodes for p in parts)
    values = {p.notebook: {k: v for k, v in RunFolder(default_run / p.notebook).params().stored().items()
                           if not k.startswith("_")} for p in parts}
    plans = planned(values, ["psit-sim"], True)
    own = estimate_bytes(plans, measured_model(default_run))
    assert own.total == pytest.approx(actual, rel=0.02) and not own.unmeasured
    committed = load_model()  # data/report_size.json, which the dry-run estimates from
    assert committed is not None
    assert estimate_bytes(plans, committed).total == pytest.approx(actual, rel=0.25), \
        "data/report_size.json no longer describes the report: remeasure it (benchmarks/report_bytes.py --write)"


EXPECTED = {
    # notebook: (column filters, what the opened episode shows)
    "02_hangman_fork_tests": ({"part": "main", "agent": "workflow_overwrite"},
                              ["Fork branches", "turn 1 (the opening)", "private state after"]),
    "05_acc_judge_evaluation": ({"part": "main", "task": "cybersecurity"},
                                ["turn 1", "judge:", "the ACC's committed state (CCS)"]),
    "06_basis_cab_scenarios": ({"part": "main", "agent": "basis"},
                               ["The exchange", "mask", "Rides in the app at the end", "app call"]),
}


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("PSIT_REQUIRE_BROWSER"), reason="no Chromium installed")
@pytest.mark.parametrize("notebook", list(EXPECTED))
def test_an_episode_opens_from_the_side_file_at_800_px(default_run, notebook):
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None
    filters, shown = EXPECTED[notebook]
    page_path = default_run / "report" / f"{notebook}.html"
    assert "psitEpisodeChunks||{})[" not in page_path.read_text()  # no view is in the page: a chunk is a side file
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": 800, "height": 900})
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))
        started = time.monotonic()
        page.goto(page_path.as_uri())
        page.wait_for_selector(".psit-explorer table.dataTable tbody tr td")
        ready = time.monotonic() - started
        assert ready < 2.0, f"{notebook}: the explorer took {ready:.1f} s to answer"
        for column, value in filters.items():
            page.locator(f".psit-explorer thead input[placeholder='{column}']").press_sequentially(value)
        page.wait_for_timeout(300)
        rows = page.locator(".psit-explorer table.dataTable tbody tr")
        cells = [rows.nth(i).locator("td").all_inner_texts() for i in range(rows.count())]
        assert cells and all(value in " ".join(row) for row in cells for value in filters.values()), cells
        assert not any(url.endswith(".js") and "/episodes/" in url for url in requested)  # nothing loaded yet
        rows.first.click()
        viewer = page.locator(".psit-explorer .psit-transcript")
        page.wait_for_function("!document.querySelector('.psit-explorer .psit-transcript').innerText.startsWith('Loading')")
        if notebook.startswith("05"):
            assert "judge:" not in viewer.inner_text()  # every turn folded behind its line ...
            viewer.locator("details.ep-turn > summary").first.click()  # ... until it is opened
        text = viewer.inner_text()
        for expected in shown:
            assert expected in text, f"{notebook}: {expected!r} is not in the opened episode"
        assert cells[0][0] in text  # the row's episode
        assert any("/episodes/" in url and url.endswith(".js") for url in requested)  # from its side file
        assert page.evaluate("document.documentElement.scrollWidth") <= 800
        browser.close()
    assert all(url.startswith(("file://", "blob:", "data:")) for url in requested), requested


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("PSIT_REQUIRE_BROWSER"), reason="no Chromium installed")
def test_every_page_of_the_default_report_answers_within_2_s(default_run):
    """From navigation to a page whose figures have loaded and whose explorer (if it has one) lists its episodes."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None
    pages = sorted((default_run / "report").glob("*.html"))
    slow = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        for html_page in pages:
            started = time.monotonic()
            page.goto(html_page.as_uri())
            if page.locator(".psit-explorer").count():
                page.wait_for_selector(".psit-explorer table.dataTable tbody tr td")
            page.wait_for_function("[...document.images].every(i => i.complete)")
            seconds = time.monotonic() - started
            if seconds >= 2.0:
                slow.append((html_page.name, round(seconds, 2)))
        browser.close()
    assert not slow, f"pages slower than 2 s: {slow}"
