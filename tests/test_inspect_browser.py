"""The Inspect export of a small 02 run, opened in Inspect's own viewer (``inspect view``, driven by
Playwright in headless Chromium): a fork test shows as a fork. In the messages view the branch's
marker stands on its own messages, after the dialogue played before the checkpoint; in the
transcript the checkpoint carries Inspect's branch marker, which opens each branch as its own row.

Screenshots of both views are written to the test's folder (``PSIT_SCREENSHOTS`` names another).
CI installs Chromium and sets PSIT_REQUIRE_BROWSER=1, so there the test cannot silently skip.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from psit_lib.cli import main
from psit_lib.runs.folder import RunFolder

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None and not os.environ.get("PSIT_REQUIRE_BROWSER"),
                                                   reason="no Chromium installed (CI installs it)")]

PARAMS = "02_hangman_fork_tests: {agents: [vanilla, workflow_overwrite], n_episodes: 1, sweep_episodes: 0}\n"
EPISODE = "hangman/psit-sim/workflow_overwrite/0000"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def viewer(tmp_path):
    """``inspect view`` over the export of a small 02 run: (its URL, the run's folder)."""
    (tmp_path / "p.yaml").write_text(PARAMS)
    assert main(["run", "02", "-f", str(tmp_path / "p.yaml"), "--run-id", "small", "--no-progress",
                 "--no-report"]) == 0
    assert main(["export", "small", "02", "--inspect"]) == 0
    run = tmp_path / "results" / "small"
    port = _free_port()
    inspect = Path(sys.executable).with_name("inspect")
    server = subprocess.Popen([str(inspect), "view", "--log-dir", str(run / "export" / "inspect"), "--port", str(port),
                               "--host", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise AssertionError("inspect view did not start") from None
                time.sleep(0.3)
        yield url, run
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_inspect_view_shows_a_fork_branch_as_a_branch(viewer, tmp_path):
    from playwright.sync_api import sync_playwright

    url, run = viewer
    result = RunFolder(run / "02_hangman_fork_tests").records()[EPISODE]["result"]
    played = result["transcript"][-1]["content"].splitlines()[0]  # the last reply before the checkpoint
    shots = Path(os.environ.get("PSIT_SCREENSHOTS") or tmp_path)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        log = page.get_by_text("02_hangman_fork_tests-psit-sim.eval")
        page.get_by_text(EPISODE).or_(log).first.wait_for()
        if not page.get_by_text(EPISODE).count():  # a folder of logs: open the log first
            log.first.click()
        page.get_by_text(EPISODE).first.click()

        page.get_by_role("tab", name="Messages").click()
        marker = page.get_by_text(f"branch 1 of {1 + len(result['candidates'])} · reveal", exact=False).first
        marker.scroll_into_view_if_needed()
        assert marker.is_visible(), "the reveal branch's marker is not shown in the messages view"
        question = page.get_by_text(result["reveal"]["question"], exact=True).first
        before = page.get_by_text(played, exact=False).last
        assert before.bounding_box()["y"] < question.bounding_box()["y"] < marker.bounding_box()["y"], \
            "the branch does not follow the dialogue played before the checkpoint"
        page.screenshot(path=str(shots / "inspect-messages.png"))

        page.get_by_role("tab", name="Transcript").click()
        toggle = page.locator("button[aria-label='Toggle branches']")
        toggle.first.wait_for(state="attached")
        assert toggle.count() == 1 + len(result["candidates"]), "the checkpoint carries no branch marker per branch"
        toggle.first.evaluate("button => button.click()")  # the swim lane's marker: shows the branches
        lane = page.get_by_text("branch 1: reveal", exact=True).first
        lane.wait_for()
        assert lane.is_visible(), "the reveal branch has no row of its own in the timeline"
        page.screenshot(path=str(shots / "inspect-branches.png"))
        browser.close()
