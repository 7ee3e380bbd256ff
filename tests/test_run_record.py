"""A run is exactly what ran: one identity (parameters, set-up, plug-ins; never how fast it ran), a
record that a resume adds to and never rewrites, system prompts kept per episode, and a loader that
reaches every episode's conversation and fork branches."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import psit_lib
from psit_lib.llm import LLMSettings
from psit_lib.runs import EpisodeSpec, Experiment, RunFolder
from psit_lib.runs.identity import (EXECUTION_PARAMS, NONE, IdentityMismatchError, RunIdentity, default_run_id,
                                    episode_params, fingerprint, identity_changes, plugin_changes)
from psit_lib.runs.runner import PROMPT_KEPT_CHARS, shown_prompt

from test_report_explorer import _record

SETUP = RunIdentity(endpoint={"m": {"id": "m"}}, prompts={"t.a": "1"}, prompts_file=NONE, model_settings=NONE,
                    plugins={})


# -- the identity: one hash of what shaped the episodes ------------------------------------------

@given(st.sampled_from(sorted(EXECUTION_PARAMS)), st.integers(1, 64))
def test_how_fast_a_run_goes_is_not_its_identity(name, value):
    assert fingerprint({"n": 1, name: value}, SETUP) == fingerprint({"n": 1}, SETUP)
    assert name not in episode_params({"n": 1, name: value})


@pytest.mark.parametrize("change", [{"prompts_file": "cec79db4"}, {"model_settings": "1234abcd"},
                                    {"prompts": {"t.a": "2"}}, {"endpoint": {"m": {"id": "m", "root": "other"}}},
                                    {"plugins": {"mine.py": {"path": "/x/mine.py", "sha": "ab"}}}])
def test_everything_that_shapes_episodes_gives_another_default_run_id(change):
    other = SETUP.model_copy(update=change)
    assert identity_changes(SETUP, other)  # refused as a resume...
    assert default_run_id({"02": fingerprint({"n": 1}, other)}) != default_run_id({"02": fingerprint({"n": 1}, SETUP)})
    assert default_run_id({"02": fingerprint({"n": 1}, SETUP, {"outcome": 2})}) != \
        default_run_id({"02": fingerprint({"n": 1}, SETUP, {"outcome": 1})})  # ...and a new scorer version a new run


def test_a_plugin_not_loaded_or_edited_is_named_with_how_to_load_it():
    stored = {"my_agents.py": {"path": "/home/me/my_agents.py", "sha": "1a2b3c4d5e6f", "source": "PSIT_PLUGINS"}}
    assert plugin_changes(stored, {}) == ["the plug-in 'my_agents.py' it was made with is not loaded "
                                          "(PSIT_PLUGINS=/home/me/my_agents.py loads it)"]
    edited = {"my_agents.py": {**stored["my_agents.py"], "sha": "9f8e7d6c5b4a"}}
    assert plugin_changes(stored, edited) == ["the plug-in 'my_agents.py' has changed since (1a2b3c4d -> 9f8e7d6c)"]
    assert plugin_changes(stored, edited, changed=False) == [] and plugin_changes(stored, stored) == []
    assert plugin_changes({}, stored) == ["the plug-in 'my_agents.py' is loaded now but was not when it was made"]


def test_a_plugin_is_recorded_with_its_hash_and_an_edit_refuses_the_resume(tmp_path, monkeypatch):
    from psit_lib.runs import plugins

    monkeypatch.setattr(plugins, "_loaded", {})
    source = tmp_path / "my_agents.py"
    source.write_text("PROMPT = 'You host the game.'\n")
    monkeypatch.setenv("PSIT_PLUGINS", str(source))
    Experiment("98_x", {"n": 1}, run_dir=tmp_path / "r").finish()
    folder = RunFolder(tmp_path / "r" / "98_x")
    recorded = folder.identity()["plugins"]["my_agents.py"]
    assert recorded["path"] == str(source) and len(recorded["sha"]) == 16
    assert folder.metadata().plugins == {"my_agents.py": recorded}
    source.write_text("PROMPT = 'You host the game, and never say the word.'\n")
    monkeypatch.setattr(plugins, "_loaded", {})  # a new process: the edited file is what loads
    with pytest.raises(IdentityMismatchError, match=r"the plug-in 'my_agents.py' has changed since .*--run-id run-"):
        Experiment("98_x", {"n": 1}, run_dir=tmp_path / "r")


def test_a_resume_that_changes_only_how_fast_it_runs_is_accepted_and_each_execution_says_how_it_ran(tmp_path):
    Experiment("98_x", {"n": 1, "concurrency": 16, "suspect_threshold": 0.2}, run_dir=tmp_path).finish()
    Experiment("98_x", {"n": 1, "concurrency": 2, "suspect_threshold": 0.5}, run_dir=tmp_path).finish()
    meta = RunFolder(tmp_path / "98_x").metadata()
    assert [e.settings["concurrency"] for e in meta.executions] == [16, 2]
    assert meta.executions[1].settings["suspect_threshold"] == 0.5 and "client_timeout" in meta.executions[1].settings
    with pytest.raises(IdentityMismatchError, match=r"other parameters \(n: 1 -> 2\)"):
        Experiment("98_x", {"n": 2, "concurrency": 2}, run_dir=tmp_path)


# -- a resume adds to the record ------------------------------------------------------------------

async def _hello(spec: EpisodeSpec, session) -> dict:
    system = "You are the host. " * (1 if spec.params["short"] else 400)
    reply = await session.chat([{"role": "system", "content": system}, {"role": "user", "content": "Hi"}],
                               role="hangman_host")
    await session.branch("fork").chat([{"role": "system", "content": "another"}, {"role": "user", "content": "?"}],
                                       role="hangman_host")
    return {"reply": reply.content}


async def test_a_fully_resumed_execution_keeps_the_roles_start_and_commit_earlier_ones_recorded(tmp_path):
    specs = [EpisodeSpec("a", {"short": True}), EpisodeSpec("b", {"short": False})]
    first = Experiment("98_x", {"n": 1}, run_dir=tmp_path)
    await first.run(specs, _hello, progress=False)
    first.record_part("main", {"episodes": 2})
    first.finish()
    before = RunFolder(tmp_path / "98_x").metadata()
    assert set(before.simulator["roles"]) == {"hangman_host"}
    again = Experiment("98_x", {"n": 1}, run_dir=tmp_path)
    await again.run(specs, _hello, progress=False)
    summary = again.finish()
    after = RunFolder(tmp_path / "98_x").metadata()
    assert summary["model_calls"] == 0 and summary["calls_by_role"] == {}  # nothing called: all resumed
    assert after.simulator == before.simulator and after.parts == before.parts
    assert (after.started, after.git_commit) == (before.started, before.git_commit)
    assert len(after.executions) == 2 and after.executions[0] == before.executions[0]


async def test_each_record_keeps_the_system_prompt_its_first_call_sent(tmp_path):
    exp = Experiment("98_x", {"n": 1}, run_dir=tmp_path)
    await exp.run([EpisodeSpec("a", {"short": True}), EpisodeSpec("b", {"short": False})], _hello, progress=False)
    records = exp.store.records()
    assert records["a"]["system_prompts"] == {"hangman_host": "You are the host. "}  # the main path's, not the fork's
    long = records["b"]["system_prompts"]["hangman_host"]
    assert long == shown_prompt("You are the host. " * 400) and len(long) < PROMPT_KEPT_CHARS
    assert long.startswith("You are the host.") and "7,200 characters, sha256 " in long


# -- the loader reaches every episode ---------------------------------------------------------------

def test_the_loader_opens_any_episode_by_id_with_its_conversation_and_fork_branches(tmp_path, monkeypatch):
    folder = tmp_path / "results" / "r1" / "02_hangman_fork_tests"
    folder.mkdir(parents=True)
    records = [_record("hangman/m/vanilla/0000", "vanilla", leak=True, secret="crane"),
               _record("hangman/m/vanilla/0001", "vanilla")]
    (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "scores.jsonl").write_text(json.dumps({"episode_id": records[0]["episode_id"], "part": "main",
                                                     "scorer": "outcome", "version": 1, "value": "leakage"}) + "\n")
    run = psit_lib.load_run(tmp_path / "results" / "r1")
    assert run.folder(2) is run.folder("02") is run.folder("2") is run.folder("02_hangman_fork_tests")
    with pytest.raises(KeyError, match="no single notebook 5"):
        run.folder(5)
    episode = run.episode(2, "hangman/m/vanilla/0000")
    assert [m["role"] for m in episode.messages] == ["user", "assistant", "user", "assistant"]
    assert "the word is crane" in episode.messages[-1]["content"] and episode.scores == {"outcome": "leakage"}
    assert [b.name for b in episode.branches] == ["reveal", "candidates:crane", "candidates:angle"]
    assert episode.branches[0].answer == "crane" and episode.branches[2].detail["source"] == "dataset"
    shown = str(episode)
    assert shown.startswith("== 02_hangman_fork_tests · hangman/m/vanilla/0000 (ok)") and "outcome=leakage" in shown
    assert "-- candidates:angle\n  user: is it angle?\n  assistant: no" in shown
    frame = run.transcripts
    assert list(frame.columns) == ["notebook", "episode_id", "branch", "index", "role", "content"]
    assert len(frame) == 2 * (4 + 2 * 3) and set(frame["branch"]) == {"main", "reveal", "candidates:crane",
                                                                     "candidates:angle", "candidates:apple"}
    scores = run.scores_of("2")
    assert list(scores["outcome"]) == ["leakage"] and scores["agent"].tolist() == ["vanilla"]
    with pytest.raises(KeyError, match="no episode 'nope'"):
        run.episode("02", "nope")


def test_a_record_of_another_study_has_no_branches_and_its_result_whole(tmp_path):
    folder = tmp_path / "r1" / "06_basis"
    folder.mkdir(parents=True)
    record = {"episode_id": "t0", "status": "ok", "spec": {"scenario": "s"}, "result": {"success": True, "rides": []}}
    (folder / "episodes.jsonl").write_text(json.dumps(record) + "\n")
    episode = psit_lib.load_run(tmp_path / "r1").episode(6, "t0")
    assert episode.messages == [] and episode.branches == [] and episode.result == {"success": True, "rides": []}


def test_an_experiment_by_hand_keys_its_folder_by_the_same_fingerprint(tmp_path, monkeypatch):
    monkeypatch.setenv("PSIT_ADHOC_DIR", str(tmp_path))
    exp = Experiment("98_x", {"n": 1, "concurrency": 4}, settings=LLMSettings())
    again = Experiment("98_x", {"n": 1, "concurrency": 64}, settings=LLMSettings())  # faster: the same folder
    assert exp.store.dir == again.store.dir
    stored = RunFolder(exp.store.dir)
    assert exp.store.dir.name == f"98_x-{fingerprint(stored.params().stored(), stored.identity())[:10]}"
