"""The rendered report, checked in a real browser (headless Chromium driven by Playwright).

A tiny run of two notebooks is rendered; the index and every page are opened offline: every
figure loads, no LaTeX is left raw, no cell shows an error, code is hidden until asked for,
and the index lists every notebook with its status.

CI installs Chromium from the OS packages and sets PSIT_REQUIRE_BROWSER=1, so there the test
cannot silently skip; elsewhere it skips when no Chromium is installed.
"""

from __future__ import annotations

import os
import shutil

import pytest

from psit_lib.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("PSIT_REQUIRE_BROWSER"),
                                reason="no Chromium installed (CI installs it)")

PARAMS = """
01_theorem_illustration: {n_episodes: 200, n_live_episodes: 1, sizes: [2, 5, 20]}
06_basis_cab_scenarios: {n_trials: 2, ks: [1, 2]}
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    saved = {k: os.environ.get(k) for k in ("PSIT_RESULTS_DIR", "PSIT_FIGURES_DIR")}
    os.environ.update(PSIT_RESULTS_DIR=str(tmp / "results"), PSIT_FIGURES_DIR=str(tmp / "figures"))
    try:
        (tmp / "p.yaml").write_text(PARAMS)
        assert main(["run", "01", "06", "-f", str(tmp / "p.yaml"), "--run-id", "tiny", "--no-progress"]) == 0
        assert main(["report", "--run-id", "tiny"]) == 0
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    return tmp / "results" / "tiny" / "report"


def test_the_report_renders_offline_in_a_browser(report):
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None, "PSIT_REQUIRE_BROWSER is set but Chromium is not installed"
    pages = sorted(p for p in report.glob("*.html") if p.name != "index.html")
    assert len(pages) == 2
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        page = browser.new_page()
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto((report / "index.html").as_uri())
        index_text = page.inner_text("body")
        assert "Complete run" in index_text and page.locator(".status", has_text="ok").count() == 2
        for html_page in pages:
            assert html_page.stem in page.content()
        assert page.evaluate("[...document.images].every(i => i.complete && i.naturalWidth > 0)")
        for html_page in pages:
            page.goto(html_page.as_uri())
            text = page.inner_text("body")
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
        browser.close()
    assert all(url.startswith("file://") for url in requested), [u for u in requested if not u.startswith("file://")]
