"""Run health (psit_lib.runs.health): shares of unreadable replies and flagged episodes per agent
and role, the suspect verdict, the columns beside every rate, and the command line's summary and
exit status when a notebook is suspect."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, strategies as st

from psit_lib.cli.summary import NotebookSummary
from psit_lib.llm.diagnostics import (FLAG_TOOL_CALL_AS_TEXT, READ_FORK_ANSWER, READ_REPLY,
                                      EpisodeDiagnostics)
from psit_lib.llm.reply_readers import tool_call_in_text
from psit_lib.runs.health import assess_health, beside_rates, health_table, read_shares


def record(agent: str, reads=(), flags=(), status: str = "ok", eid: str | None = None) -> dict:
    diag = EpisodeDiagnostics()
    for what, role, ok, reply in reads:
        diag.read(what, role, ok, reply, "reason")
    for kind, role, example in flags:
        diag.flag(kind, role, example, "detail")
    return {"episode_id": eid or f"{agent}/{id(diag)}", "status": status, "error": None if status == "ok" else "X: y",
            "spec": {"agent": agent, "model": "m"}, "diagnostics": diag.as_dict()}


def test_readable_replies_are_ok_and_an_unreadable_majority_is_suspect_with_agent_role_and_example():
    clean = [record("vanilla", [(READ_REPLY, "hangman_host", True, "_ _ _")] * 3) for _ in range(4)]
    assert assess_health(clean).status == "ok"
    bad = [record("vanilla", [(READ_REPLY, "hangman_host", False, 'The word is "apple"')]) for _ in range(15)]
    bad.append(record("vanilla", [(READ_REPLY, "hangman_host", True, "_ _ _ _ _")]))
    verdict = assess_health(bad)
    assert verdict.suspect and len(verdict.sentences) == 1
    sentence = verdict.sentences[0]
    assert sentence.startswith("agent vanilla, role hangman_host: 15 of 16 replies (94%) could not be read")
    assert "The word is \"apple\"" in sentence and sentence.count(".") >= 1
    assert "SUSPECT" in verdict.markdown()


def test_the_threshold_is_a_strict_bound_and_a_parameter():
    records = [record("a", [(READ_FORK_ANSWER, "host", i < 1, "x")]) for i in range(5)]  # 4 of 5 unreadable
    assert assess_health(records, threshold=0.8).status == "ok"  # 0.8 is not above 0.8
    assert assess_health(records, threshold=0.79).status == "suspect"
    one = [record("a", [(READ_FORK_ANSWER, "host", i != 0, "x")]) for i in range(5)]  # 1 of 5
    assert assess_health(one, threshold=0.2).status == "ok" and assess_health(one, threshold=0.1).suspect


def test_flags_count_episodes_per_agent_and_carry_the_servers_hint():
    records = [record("basis", flags=[(FLAG_TOOL_CALL_AS_TEXT, "basis_orchestrator", '{"name": "order_ride"}')] * 3)
               for _ in range(2)] + [record("basis") for _ in range(2)]
    table = health_table(records)
    row = table[table.kind == FLAG_TOOL_CALL_AS_TEXT].iloc[0]
    assert (row["count"], row["out_of"]) == (2, 4)  # episodes flagged, not flags raised
    (sentence,) = assess_health(records).sentences
    assert "2 of 4 episodes (50%) wrote a tool call as text" in sentence and "tool-call parser" in sentence


def test_reasons_come_most_severe_first():
    records = [record("x", [(READ_REPLY, "host", False, "?")], [("no_reasoning", "host", "r")])]
    sentences = assess_health(records).sentences
    assert "could not be read" in sentences[0] and "no reasoning" in sentences[1]


def test_read_shares_sit_beside_the_rates_per_agent():
    records = [record("vanilla", [(READ_REPLY, "h", False, "?"), (READ_REPLY, "h", True, "ok"),
                                  (READ_FORK_ANSWER, "h", True, "yes")]),
               record("cot", [(READ_REPLY, "h", True, "ok")])]
    rates = pd.DataFrame({"model": ["m", "m"], "agent": ["vanilla", "cot"], "rate": [0.5, 1.0]})
    merged = beside_rates(rates, records, ["model", "agent"])
    assert list(merged.agent) == ["vanilla", "cot"]
    assert merged.unreadable_replies.tolist() == [0.5, 0.0]
    assert merged.unreadable_fork_answers.iloc[0] == 0.0 and pd.isna(merged.unreadable_fork_answers.iloc[1])
    assert read_shares([], ["agent"]).empty


@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.booleans()), max_size=30),
       st.floats(min_value=0, max_value=1))
def test_suspect_exactly_when_some_agents_unreadable_share_passes_the_threshold(reads, threshold):
    records = [record(agent, [(READ_REPLY, "host", ok, "r")]) for agent, ok in reads]
    shares = {}
    for agent, ok in reads:
        bad, total = shares.get(agent, (0, 0))
        shares[agent] = (bad + (not ok), total + 1)
    expected = any(bad and bad / total > threshold for bad, total in shares.values())
    assert assess_health(records, threshold).suspect == expected


@pytest.mark.parametrize("text, name", [
    ('{"name": "order_ride", "arguments": {"x": 1}}', "order_ride"),
    ('```json\n{"name": "delegate_to_cab_agent", "arguments": {}}\n```', "delegate_to_cab_agent"),
    ('Sure: {"function": {"name": "order_ride", "arguments": "{}"}} done', "order_ride"),
    ('[{"name": "list_rides", "arguments": {}}]', "list_rides"),
    ('{"name": "Alice", "age": 3}', None),  # a JSON answer with a name field is no tool call
    ("I will book the ride now.", None),
])
def test_tool_calls_written_as_text_are_recognised_only_for_known_tools(text, name):
    assert tool_call_in_text(text, {"order_ride", "delegate_to_cab_agent", "list_rides"}) == name


def test_the_summary_counts_every_recorded_episode_even_when_the_notebook_never_finished(tmp_path):
    folder = tmp_path / "07_x"
    folder.mkdir()
    lines = [record("vanilla", [(READ_FORK_ANSWER, "host", False, "<|im_end|>")], status="error", eid=f"e{i}")
             for i in range(6)]
    for r in lines:
        r["usage"] = {"calls": 2, "cache_hits": 0}
    (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    summary = NotebookSummary.from_folder(folder, notebook="07_x", status="failed", seconds=1.0)
    assert (summary.episodes, summary.failed, summary.model_calls) == (6, 6, 12)
    assert summary.health == "suspect" and summary.status == "failed"


@pytest.mark.slow
def test_an_all_garbage_endpoint_makes_psit_run_exit_3_with_one_suspect_sentence(tmp_path):
    import os

    from loopback import GarbageServer

    root = Path(__file__).resolve().parents[1]

    server = GarbageServer()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PSIT_")}
        env.update(PSIT_RESULTS_DIR=str(tmp_path / "results"), PSIT_FIGURES_DIR=str(tmp_path / "figures"),
                   PSIT_BACKEND="openai", PSIT_BASE_URLS=server.url, PSIT_MODEL=server.model, MPLBACKEND="Agg")
        done = subprocess.run([sys.executable, "-m", "psit_lib.cli", "run", "02", "-p", "agents=[vanilla]",
                               "-p", "n_episodes=2", "-p", "sweep_episodes=0", "--run-id", "g"],
                              capture_output=True, text=True, env=env, cwd=root, timeout=300)
    finally:
        server.close()
    assert done.returncode == 3, done.stderr[-2000:]
    suspect = [line for line in done.stderr.splitlines() if "is SUSPECT:" in line]
    assert len(suspect) == 1 and "02_hangman_fork_tests is SUSPECT: agent vanilla, role hangman_host" in suspect[0]
    assert "could not be read" in suspect[0]
    run = json.loads((tmp_path / "results" / "g" / "run.json").read_text())
    assert run["complete"] is False and run["notebooks"][0]["status"] == "suspect"
    assert not (tmp_path / "results" / "latest").exists()
