"""The episode explorer: every episode in one table, each opening its transcript.

The data layer is checked on hand-made records (columns, scores from ``scores.jsonl``, the leak
marked in the turn where it happened, a memory agent's memory turn by turn with its diff); the
page is checked in headless Chromium on a default run of notebook 02 (two episodes per agent):
the table filtered to one agent and one outcome shows exactly those episodes, and a row opens
the transcript with the fork's answers.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from psit_lib.report.explorer import episodes_table, explorer_html, transcript_html
from psit_lib.runs.folder import RunFolder

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _record(eid: str, agent: str, *, secret: str = "apple", leak: bool = False, states: list[str] | None = None,
            outcome: str = "self_consistent") -> dict:
    host = ["_ _ _ _ _", f"no e; the word is {secret}" if leak else "no e: _ _ _ _ _"]
    transcript = [m for pair in zip(["start", "e?"], host) for m in
                  ({"role": "user", "content": pair[0]}, {"role": "assistant", "content": pair[1]})]
    result = {
        "schema_version": 3, "task": "hangman", "agent": agent, "model": "m", "outcome": outcome, "failure": None,
        "transcript": transcript, "turns_played": 2, "constraints": {}, "private_state_at_fork": (states or [""])[-1],
        "state_size_per_turn": [len(s.split()) for s in states or []], "memory_edits": [], "hidden_calls": [],
        "reveal": {"question": "what was it?", "answer": secret, "parsed": secret, "compatible": True},
        "candidates": [{"secret": secret, "source": "revealed", "question": f"is it {secret}?", "answer": "yes",
                        "parsed": True},
                       {"secret": "angle", "source": "dataset", "question": "is it angle?", "answer": "no",
                        "parsed": False}],
        "candidate_search": None, "branch_hidden_calls": [], "private_state_per_turn": states or []}
    return {"format": 2, "episode_id": eid, "status": "ok", "error": None,
            "spec": {"task": "hangman", "model": "m", "agent": agent, "index": 0},
            "usage": {"calls": 4, "cache_hits": 0, "prompt_tokens": 100, "completion_tokens": 20, "calls_by_role": {}},
            "calls": [], "wall_seconds": 0.1, "diagnostics": {"reads": {}, "flags": {"tool_call_as_text": 2}, "notes": []},
            "result": result}


def _folder(tmp_path, records: list[dict], notebook: str = "02_hangman_fork_tests") -> RunFolder:
    """A notebook folder of hand-made records (named as ``psit run`` names it: the explorer finds its study by it)."""
    (tmp_path / notebook).mkdir(exist_ok=True)
    (tmp_path / notebook / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return RunFolder(tmp_path / notebook)


def test_every_episode_is_a_row_with_its_views_flags_and_scores(tmp_path):
    folder = _folder(tmp_path, [_record("e1", "vanilla", leak=True, outcome="leakage"), _record("e2", "workflow")])
    (folder.dir / "scores.jsonl").write_text(json.dumps({"episode_id": "e1", "scorer": "sct", "value": 0}) + "\n"
                                             + json.dumps({"episode_id": "e2", "scorer": "sct", "value": 1}) + "\n")
    table = episodes_table(folder)
    assert list(table["episode"]) == ["e1", "e2"] and list(table["agent"]) == ["vanilla", "workflow"]
    assert list(table["outcome"]) == ["leakage", "self_consistent"]
    assert list(table["table1"]) == ["leak", "self_consistent"]  # Table 1's rule: the secret named publicly
    assert list(table["leak_turns"]) == ["2", ""] and list(table["secret"]) == ["apple", "apple"]
    assert list(table["score: sct"]) == [0, 1] and list(table["tokens"]) == [120, 120]
    assert list(table["flags"]) == ["tool_call_as_text×2"] * 2


def test_the_transcript_marks_the_leak_and_diffs_memory_turn_by_turn(tmp_path):
    from bs4 import BeautifulSoup

    states = ["secret: apple\nguessed:", "secret: apple\nguessed: e"]
    leaked = transcript_html(_record("e1", "workflow", leak=True, states=states))
    soup = BeautifulSoup(leaked, "html.parser")
    assert leaked.count("<mark class='psit-leak'") == 1 and "psit-leak-turn" in leaked
    assert "the secret is named here" in leaked
    assert len(soup.select("details.psit-memory")) == 2
    assert "+ guessed: e" in leaked and "- guessed:" in leaked  # turn 2's diff
    assert len(soup.select("details.psit-private")) == 1  # the private state at the fork, folded
    assert not soup.select("details.psit-memory[open]")  # no memory edits (kept reasoning, say): folded
    edited = _record("e3", "workflow", states=states)
    edited["result"]["memory_edits"] = [[{"name": "overwrite_memory", "ok": True}], [{"name": "overwrite_memory", "ok": True}]]
    assert len(BeautifulSoup(transcript_html(edited), "html.parser").select("details.psit-memory[open]")) == 2
    clean = transcript_html(_record("e2", "vanilla"))
    assert "psit-leak-turn" not in clean and "<mark" not in clean and "psit-memory" not in clean.split("</style>")[1]
    # the view counts what the table's turns column counts: the opening, then each move
    text = " ".join(soup.get_text(" ").split())
    assert "turn 1 (the opening)" in text and "turn 2" in text and "turn 3" not in text


def test_the_explorer_is_one_offline_page_fragment(tmp_path):
    page = explorer_html(_folder(tmp_path, [_record("e1", "vanilla"), _record("e2", "mem0")]))
    assert "https://" not in page.replace("https://itables.org", "")
    assert page.count("window.psitEpisodeChunks") >= 2 and "_itables_" in page  # the views inline, compressed
    assert "Fork branches" not in page  # ... so no view is in the page as text


def _side_file_views(report: Path, notebook: str) -> dict[str, str]:
    """Every view a report folder's side files hold for ``notebook`` (decoded as the viewer decodes them)."""
    views: dict[str, str] = {}
    for path in sorted((report / "episodes").glob(f"{notebook}-*.js")):
        payload = json.loads(path.read_text().split("]=", 1)[1].rstrip(";\n"))
        views.update(json.loads(gzip.decompress(base64.b64decode(payload))))
    return views


def test_a_fork_episode_shows_the_system_prompts_its_roles_were_sent(tmp_path):
    """The prompts the record keeps, folded per role, in the report's side files as in a notebook; a long
    one by its head, length and hash; a record from before they were kept shows none."""
    from bs4 import BeautifulSoup

    from psit_lib.report.assets import ReportAssets
    from psit_lib.runs.runner import shown_prompt

    memory = "You have a private working memory, shown below.\n<memory>secret: apple</memory>"
    told = _record("e1", "workflow_overwrite")
    told["system_prompts"] = {"hangman_host": memory, "memory_updater": shown_prompt("Update the memory. " * 300)}
    before = _record("e2", "vanilla")  # no system_prompts: made before records kept them
    folder = _folder(tmp_path, [told, before])
    explorer_html(folder, assets=ReportAssets(tmp_path / "report"))
    views = _side_file_views(tmp_path / "report", "02_hangman_fork_tests")
    soup = BeautifulSoup(views["e1"], "html.parser")
    group = soup.select_one("details.psit-prompts")
    assert group is not None and not group.has_attr("open")  # folded under the episode's head
    roles = {" ".join(d.summary.get_text(" ").split()): d for d in group.select("details.ep-prompt")}
    host = roles[f"hangman_host {len(memory):,} characters"]
    assert not host.has_attr("open") and host.pre.get_text() == memory  # the whole prompt, as sent
    updater = next(d for line, d in roles.items() if line.startswith("memory_updater 5,700 characters, sha256 "))
    assert "the record keeps its first 500" in updater.summary.get_text(" ")
    assert updater.pre.get_text() == ("Update the memory. " * 300)[:500] + " …"
    assert "psit-prompts" not in views["e2"].split("</style>")[1]
    inline = explorer_html(folder)  # a notebook's explorer (JupyterLab): the same views, inline
    payload = json.loads(inline.split("window.psitEpisodeChunks||{})[", 1)[1].split("]=", 1)[1].split(";", 1)[0])
    assert json.loads(gzip.decompress(base64.b64decode(payload)))["e1"] == views["e1"] == transcript_html(told)


@pytest.fixture(scope="module")
def run_02(tmp_path_factory):
    from psit_lib.cli import main

    tmp = tmp_path_factory.mktemp("explorer")
    saved = {k: os.environ.get(k) for k in ("PSIT_RESULTS_DIR", "PSIT_FIGURES_DIR")}
    os.environ.update(PSIT_RESULTS_DIR=str(tmp / "results"), PSIT_FIGURES_DIR=str(tmp / "figures"))
    try:
        assert main(["run", "02", "-p", "n_episodes=2", "--run-id", "default", "--no-progress"]) == 0
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    return tmp / "results" / "default"


@pytest.mark.slow  # runs psit run or a notebook's kernel (the fast tier: -m 'not slow')
@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("PSIT_REQUIRE_BROWSER"), reason="no Chromium installed")
def test_a_run_page_filters_episodes_and_opens_a_transcript(run_02):
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None
    folder = RunFolder(run_02 / "02_hangman_fork_tests")
    table = episodes_table(folder)
    agent = "vanilla"
    outcome = table[table.agent == agent].outcome.iloc[0]
    expected = table[(table.agent == agent) & table.outcome.str.contains(outcome, regex=False)]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto((run_02 / "report" / "02_hangman_fork_tests.html").as_uri())
        page.wait_for_selector(".psit-explorer table.dataTable tbody tr")
        for column, value in (("agent", agent), ("outcome", outcome)):  # the column filters in the header
            page.locator(f".psit-explorer thead input[placeholder='{column}']").press_sequentially(value)
        page.select_option(".psit-explorer .dt-length select", "-1")
        rows = page.locator(".psit-explorer table.dataTable tbody tr")
        page.wait_for_function(f"document.querySelectorAll('.psit-explorer table.dataTable tbody tr').length == {len(expected)}")
        shown = [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())]
        assert sorted(shown) == sorted(expected.episode), "the filtered table shows exactly those episodes"
        rows.first.click()
        viewer = page.locator(".psit-explorer .psit-transcript")
        viewer.get_by_text("Fork branches").first.wait_for()  # the episode's chunk loads on demand
        record = folder.records()[shown[0]]
        for candidate in record["result"]["candidates"]:  # every fork answer, as the model gave it
            assert candidate["secret"] in viewer.inner_text()
            assert viewer.locator("pre", has_text=candidate["answer"].strip()[:40]).count() >= 1
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        browser.close()
    assert all(url.startswith(("file://", "blob:", "data:")) for url in requested), requested
