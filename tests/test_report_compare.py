"""Runs side by side: the compare page (``psit compare A B --html``) and the list of runs.

The numbers are checked on hand-made runs (each series' rate and Wilson interval, each
difference from the first series with Newcombe's interval, configuration differences, two models
of one run as two series); the page is opened in headless Chromium on two real runs of notebook
02 on the simulator under two profile names (two models): it loads offline, shows both models,
the figure is readable and the page does not scroll sideways.
"""

from __future__ import annotations

import html
import json
import os
import shutil

import pytest

from psit_lib.analysis.stats import wilson_interval
from psit_lib.analysis.sweeps import proportion_gap
from psit_lib.cli import main
from psit_lib.report.compare_page import compare_html, config_differences, differences, rate_series, Run
from psit_lib.report.runs_index import runs_index, runs_text

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NB = "02_hangman_fork_tests"


def _run(root, name, model, rows, *, seed=0, complete=True, started="2026-11-20T10:00:00"):
    folder = root / name / NB
    (folder / "tables").mkdir(parents=True)
    (folder / "params.json").write_text(json.dumps({"n_episodes": 2, "seed": seed}))
    (folder / "metadata.json").write_text(json.dumps({"backend": "sim", "model": model, "seed": seed,
                                                      "started": started, "git_commit": "abc1234def",
                                                      "models_run": sorted({r[0] for r in rows}),
                                                      "headline": "**vanilla** fails. More text."}))
    lines = ["task,model,agent,n_scored,successes,rate"] + [f"hangman,{m},{a},{n},{k},{k / n}" for m, a, k, n in rows]
    (folder / "tables" / "self_consistency.csv").write_text("\n".join(lines) + "\n")
    (root / name / "run.json").write_text(json.dumps({"run_id": name, "complete": complete}))
    return root / name


def test_series_differences_and_configuration(tmp_path):
    a = _run(tmp_path, "a", "sim:x", [("sim:x", "vanilla", 1, 4), ("sim:x", "cot", 4, 4)])
    b = _run(tmp_path, "b", "sim:y", [("sim:y", "vanilla", 3, 4), ("sim:y", "cot", 2, 4), ("sim:z", "cot", 0, 4)], seed=1)
    series = rate_series([Run("A", a), Run("B", b)], NB, "self_consistency.csv")
    assert list(series.series) == ["A · sim:x", "A · sim:x", "B · sim:y", "B · sim:y", "B · sim:z"]
    assert list(series.cell) == ["vanilla", "cot"] * 2 + ["cot"]  # the task, one value, names no cell
    assert tuple(series.iloc[0][["low", "high"]]) == pytest.approx(wilson_interval(1, 4))
    diffs = differences(series)
    assert list(diffs.series) == ["B · sim:y", "B · sim:y", "B · sim:z"]
    first = diffs.iloc[0]
    assert (first.difference, first.low, first.high) == pytest.approx(proportion_gap(3, 4, 1, 4))
    assert diffs.iloc[2].difference == pytest.approx(-1.0)
    config = config_differences([a / NB, b / NB])
    assert set(config.setting) >= {"param.seed", "model", "seed"} and "backend" not in set(config.setting)
    page = compare_html([a, b])
    assert page.count("<img class='psit-compare-figure'") == 1 and "Configuration differences" in page
    assert "A: backend=sim · model=sim:x" in page  # the figure's footer
    assert "B · sim:z" in page and "https://" not in page


@pytest.mark.parametrize("n_series", [2, 4])
def test_the_compare_figure_reads_at_a_glance(tmp_path, n_series):
    """Two and four series over eight cells, models with long names: no text over text (the check every
    notebook figure goes through), nothing cut at the figure's edge, the legend off the axes."""
    from figure_overlap import overlapping_text
    from psit_lib.analysis.labels import text_boxes
    from psit_lib.report.compare_page import dot_plot, dot_plot_figure, series_label

    agents = ["vanilla", "private_cot", "workflow_overwrite", "autonomous_overwrite", "mem0", "amem", "lightmem",
              "memoryos"]
    names = ["openai/gpt-oss-20b", "openai/gpt-oss-120b", "qwen/qwen3-32b", "qwen/qwen3-235b-a22b-thinking-2507"]
    runs = [Run(label, _run(tmp_path, label.lower(), names[i], [(names[i], a, j % 3, 3) for j, a in enumerate(agents)]))
            for i, label in enumerate("ABCD"[:n_series])]
    series = rate_series(runs, NB, "self_consistency.csv")
    assert series.series.nunique() == n_series
    label = series_label(runs)
    assert all(name in label for name in names[:n_series])  # the footer names every model
    fig = dot_plot_figure(series, differences(series), label)
    boxes = text_boxes(fig)
    assert not overlapping_text(boxes), overlapping_text(boxes)
    width, height = fig.get_size_inches() * fig.dpi
    outside = [b["text"] for b in boxes if any(not (-1 <= x <= width + 1 and -1 <= y <= height + 1)
                                                for x, y in b["corners"])]
    assert not outside, f"cut at the figure's edge: {outside}"
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    assert len(fig.legends[0].get_texts()) == n_series
    for axis in fig.get_axes():
        assert not legend.overlaps(axis.get_window_extent(renderer)) and axis.get_xlabel()
    img = dot_plot(series, differences(series), label, "alt")
    meta = json.loads(html.unescape(img.split("data-psit-figure='")[1].split("'")[0]))
    assert meta["text"] and not overlapping_text(meta["text"])  # the page's image carries its text boxes


def _executed(root, name, notebook, injected: str | None) -> None:
    """An executed notebook as papermill leaves it: the parameters a run gave in its injected cell."""
    cells = [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": ["n_episodes = 10\n"]}]
    if injected is not None:
        cells.append({"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "source": [injected]})
    (root / name / "notebooks").mkdir(parents=True, exist_ok=True)
    (root / name / "notebooks" / f"{notebook}.ipynb").write_text(json.dumps({"cells": cells}))


def test_the_runs_list_is_newest_first_with_status_and_headline(tmp_path, monkeypatch):
    from psit_lib.report.runs_index import runs_html, series

    _run(tmp_path, "old", "m1", [("m1", "v", 1, 2)], started="2026-11-01T09:00:00")
    _run(tmp_path, "new", "m2", [("m2", "v", 1, 2)], complete=False, started="2026-11-25T09:00:00")
    _executed(tmp_path, "old", NB, "# Parameters\nn_episodes = 2\nagents = [\"vanilla\", \"mem0\"]\n")
    entries = runs_index(tmp_path)
    assert [e.run_id for e in entries] == ["new", "old"]
    # a run of one notebook of the series is never "complete", however well it went
    assert [e.status for e in entries] == ["incomplete", f"partial 1/{len(series())}"] and entries[0].models == ("m2",)
    assert entries[0].headline == "vanilla fails." and entries[0].commit == "abc1234def"
    assert entries[1].overrides == ((NB, 'n_episodes=2, agents=["vanilla", "mem0"]'),)
    assert entries[1].headlines == ((NB, "vanilla fails. More text."),)  # whole, without its markdown
    text = runs_text(entries)
    assert "2026-11-25 09:00" in text and "incomplete" in text
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    assert main(["runs", "--html"]) == 0
    page = (tmp_path / "runs.html").read_text()
    assert "partial: 1 of" in page and "n_episodes=2" in page and "vanilla fails. More text." in page
    assert page.count("<input type='checkbox' class='pick'") == 2 and "psit compare ' + order[0]" in page
    # every notebook of the series, each finished: complete; a comparison rendered already is linked
    for notebook in series() - {NB}:
        folder = tmp_path / "old" / notebook
        folder.mkdir()
        (folder / "metadata.json").write_text(json.dumps({"backend": "sim", "model": "m1", "started": "2026-11-01T09:00:00"}))
    (tmp_path / "compare-new-old.html").write_text("<p>page</p>")
    entries = runs_index(tmp_path)
    assert entries[1].status == "complete"
    assert '"new old": "compare-new-old.html"' in runs_html(entries, tmp_path)


def test_one_run_compares_its_models_and_more_than_two_runs_need_the_page(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    _run(tmp_path, "a", "m", [("m", "v", 1, 2), ("n", "v", 2, 2)])
    assert main(["compare", "a", "--html"]) == 0
    page = (tmp_path / "compare-a.html").read_text()
    assert "A · m" in page and "A · n" in page and page.count("class='psit-compare-figure'") == 1
    assert "<td>m, n</td>" in page  # the run's summary names both models
    assert main(["compare", "a", "a", "a"]) == 2 and "add --html" in capsys.readouterr().err


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    saved = {k: os.environ.get(k) for k in ("PSIT_RESULTS_DIR", "PSIT_FIGURES_DIR", "PSIT_MODEL")}
    os.environ.update(PSIT_RESULTS_DIR=str(tmp / "results"), PSIT_FIGURES_DIR=str(tmp / "figures"))
    try:
        for run_id, model in (("plain", "psit-sim:default"), ("cautious", "psit-sim:cautious")):
            os.environ["PSIT_MODEL"] = model
            assert main(["run", "02", "-p", "n_episodes=2", "-p", "sweep_episodes=0", "--run-id", run_id,
                         "--no-progress", "--no-report"]) == 0
        assert main(["compare", "plain", "cautious", "--html", "--out", str(tmp / "compare.html")]) == 0
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    return tmp / "compare.html"


@pytest.mark.slow  # runs psit run or a notebook's kernel (the fast tier: -m 'not slow')
@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("PSIT_REQUIRE_BROWSER"), reason="no Chromium installed")
def test_the_compare_page_of_two_models_opens_in_a_browser(two_models):
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto(two_models.as_uri())
        text = page.inner_text("body")
        assert "A · psit-sim:default" in text and "B · psit-sim:cautious" in text
        assert "Configuration differences" in text and "profile" in text or "model" in text
        figures = page.evaluate("[...document.querySelectorAll('img.psit-compare-figure')]"
                                ".map(i => [i.complete && i.naturalWidth > 0, i.getBoundingClientRect().width])")
        assert figures and all(ok and width >= 800 for ok, width in figures), figures
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        browser.close()
    assert all(url.startswith(("file://", "data:")) for url in requested), requested


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("PSIT_REQUIRE_BROWSER"), reason="no Chromium installed")
def test_the_runs_page_chooses_two_runs_to_compare(two_models, monkeypatch):
    """The runs page of the two runs above, at 1400 and 800 px: no header broken inside a word, every
    headline whole, and ticking two runs gives the command that compares them (here rendered already: linked)."""
    from playwright.sync_api import sync_playwright

    results = two_models.parent / "results"
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(results))
    (results / "compare-plain-cautious.html").write_text(two_models.read_text())
    assert main(["runs", "--html"]) == 0
    page_path = results / "runs.html"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for width in (1400, 800):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(page_path.as_uri())
            heads = page.evaluate("[...document.querySelectorAll('th')].map(h => [h.innerText, h.getClientRects().length,"
                                  " h.getBoundingClientRect().height])")
            line = min(height for _, _, height in heads)
            assert all(height < 1.5 * line for _, _, height in heads), f"a header wraps at {width} px: {heads}"
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            text = page.inner_text("body")
            assert text.count("partial: 1 of") == 2 and "n_episodes=2, sweep_episodes=0" in text
            assert "…" not in text  # headlines whole
            page.locator("input.pick[value='plain']").check()
            assert "Tick two runs" in page.inner_text("#pick")
            page.locator("input.pick[value='cautious']").check()
            assert page.inner_text("#pick-command") == "psit compare plain cautious --html"
            assert page.locator("#pick a[href='compare-plain-cautious.html']").count() == 1
            page.close()
        browser.close()
