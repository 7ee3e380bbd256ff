"""Runs side by side: the compare page (``psit compare A B --html``) and the list of runs.

The numbers are checked on hand-made runs (each series' rate and Wilson interval, each
difference from the first series with Newcombe's interval, configuration differences, two models
of one run as two series); the page is opened in headless Chromium on two real runs of notebook
02 on the simulator under two profile names (two models): it loads offline, shows both models,
the figure is readable and the page does not scroll sideways.
"""

from __future__ import annotations

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
    assert "B · sim:z" in page and "https://" not in page


def test_four_models_stay_readable(tmp_path):
    """Four series over eight cells: no legend over the axes, no tick labels on top of each other."""
    from psit_lib.report.compare_page import dot_plot_figure

    agents = ["vanilla", "private_cot", "workflow_overwrite", "autonomous_overwrite", "mem0", "amem", "lightmem",
              "memoryos"]
    runs = [Run(label, _run(tmp_path, label.lower(), f"model-{label}", [(f"model-{label}", a, i % 3, 3)
                                                                         for i, a in enumerate(agents)]))
            for label in "ABCD"]
    series = rate_series(runs, NB, "self_consistency.csv")
    assert series.series.nunique() == 4
    fig = dot_plot_figure(series, differences(series))
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    assert len(fig.legends[0].get_texts()) == 4
    for axis in fig.get_axes():
        assert not legend.overlaps(axis.get_window_extent(renderer))
        labels = [t.get_window_extent(renderer) for t in axis.get_yticklabels() if t.get_text()]
        assert all(not a.overlaps(b) for i, a in enumerate(labels) for b in labels[i + 1:])
        assert axis.get_xlabel()


def test_the_runs_list_is_newest_first_with_status_and_headline(tmp_path, monkeypatch):
    _run(tmp_path, "old", "m1", [("m1", "v", 1, 2)], started="2026-11-01T09:00:00")
    _run(tmp_path, "new", "m2", [("m2", "v", 1, 2)], complete=False, started="2026-11-25T09:00:00")
    entries = runs_index(tmp_path)
    assert [e.run_id for e in entries] == ["new", "old"]
    assert [e.status for e in entries] == ["incomplete", "complete"] and entries[0].models == ("m2",)
    assert entries[0].headline == "vanilla fails." and entries[0].commit == "abc1234def"
    text = runs_text(entries)
    assert "2026-11-25 09:00" in text and "incomplete" in text
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    assert main(["runs", "--html"]) == 0
    assert "<td class='complete'>complete</td>" in (tmp_path / "runs.html").read_text()


def test_one_run_compares_its_models_and_more_than_two_runs_need_the_page(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    _run(tmp_path, "a", "m", [("m", "v", 1, 2), ("n", "v", 2, 2)])
    assert main(["compare", "a", "--html"]) == 0
    page = (tmp_path / "compare-a.html").read_text()
    assert "A · m" in page and "A · n" in page and page.count("psit-compare-figure'") == 1
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
