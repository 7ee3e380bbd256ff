"""``psit export RUN --inspect`` on every study's records (a tiny run of 02, 05, 06, 07 and 90 on the
simulator, in process), read back with inspect_ai's own reader: a fork test is its dialogue up to
the checkpoint, then each branch from the checkpoint (marked in the messages, a branch of the
timeline); ACC is turn by turn with each agent its own lane; BASIS is the exchange of user,
orchestrator and cab agent with the app's calls; every sample has its usage, its time, every
stored score with an explanation, and agent, model, part and private state as metadata."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections import Counter

import pytest

from psit_lib.cli import main
from psit_lib.runs.folder import RunFolder

TINY = {
    "02_hangman_fork_tests": {"agents": ["vanilla", "workflow_overwrite"], "n_episodes": 1, "sweep_episodes": 0},
    "05_acc_judge_evaluation": {"domains": ["cybersecurity"], "n_turns": 3, "judge_variants": ["standard"],
                                "sweeps": {}, "n_boot": 100},
    "06_basis_cab_scenarios": {"scenarios": ["premium_bias"], "n_trials": 1, "ks": [1], "reference_sets": 1,
                               "sweep_trials": 0, "sweeps": {}},
    "07_secret_distribution_mode_collapse": {"tasks": ["hangman"], "temperatures": [0.7], "n_samples": 2,
                                             "n_boot": 100},
    "90_example_reveal_probe": {"n_episodes": 1, "lengths": [4]},
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from psit_lib.runs import Experiment
    from psit_lib.studies.registry import params_model, study_of

    root = tmp_path_factory.mktemp("inspect") / "tiny"
    for notebook, values in TINY.items():
        params = params_model(notebook)(**values)
        exp = Experiment(notebook, params.model_dump(), seed=params.seed, run_dir=root)
        asyncio.run(study_of(notebook).run(exp, params))
    return root


def _read(path):
    """A log as Inspect reads it, long texts (stored once, as attachments) put back in place."""
    from inspect_ai.log import read_eval_log, resolve_sample_attachments

    log = read_eval_log(str(path))
    log.samples = [resolve_sample_attachments(s, "full") for s in log.samples or []]
    return log


@pytest.fixture(scope="module")
def logs(run):
    assert main(["export", str(run), "--inspect"]) == 0
    return {path.name: _read(path) for path in sorted((run / "export" / "inspect").glob("*.eval"))}


def _lines(run, notebook):
    found: dict[str, dict[str, dict]] = {}
    for (eid, scorer), line in RunFolder(run / notebook).score_lines().items():
        found.setdefault(eid, {})[scorer] = line
    return found


def _spans(sample):
    """The timeline's agent spans by name."""
    return {node.name: node for node in sample.timelines[0].root.content if hasattr(node, "branches")}


def test_one_log_per_model_and_part(logs):
    assert sorted(logs) == ["02_hangman_fork_tests-psit-sim.eval", "05_acc_judge_evaluation-psit-sim.eval",
                            "06_basis_cab_scenarios-psit-sim-reference_k=1.eval", "06_basis_cab_scenarios-psit-sim.eval",
                            "07_secret_distribution_mode_collapse-psit-sim.eval", "90_example_reveal_probe-psit-sim.eval"]
    reference = logs["06_basis_cab_scenarios-psit-sim-reference_k=1.eval"]
    assert reference.eval.task_display_name == "06_basis_cab_scenarios · reference:k=1"
    assert {s.metadata["part"] for s in reference.samples} == {"reference:k=1"}


def test_every_sample_has_its_usage_time_scores_and_metadata(run, logs):
    for name, log in logs.items():
        notebook = log.eval.task
        records, lines = RunFolder(run / notebook).records(), _lines(run, notebook)
        assert log.stats.model_usage and log.stats.started_at, name  # no "NaN days" in the header
        for sample in log.samples:
            record = records[sample.id]
            usage = record["usage"]
            assert sample.model_usage["psit-sim"].total_tokens == usage["prompt_tokens"] + usage["completion_tokens"]
            assert sum(u.total_tokens for u in sample.role_usage.values()) == sum(
                c["prompt_tokens"] + c["completion_tokens"] for c in record["calls"])
            assert sample.total_time == record["wall_seconds"] > 0
            stored = {k: v for k, v in lines[sample.id].items() if v.get("value") is not None}
            assert set(sample.scores) == set(stored), name
            for scorer, line in stored.items():
                assert sample.scores[scorer].value == line["value"]
                assert sample.scores[scorer].explanation  # never "(No Explanation)"
                assert sample.scores[scorer].metadata["version"] == line["version"]
            assert sample.metadata["model"] == "psit-sim" and sample.metadata["part"]
            assert sample.metadata["agent"], name
            assert sample.messages and sample.events, name


def test_a_fork_test_is_its_dialogue_then_each_branch_from_the_checkpoint(run, logs):
    from inspect_ai.event import AnchorEvent, InfoEvent, ModelEvent

    records = RunFolder(run / "02_hangman_fork_tests").records()
    for sample in logs["02_hangman_fork_tests-psit-sim.eval"].samples:
        result = records[sample.id]["result"]
        transcript, candidates = result["transcript"], result["candidates"]
        questions = [result["reveal"], *candidates]
        assert sample.metadata["agent"] == result["agent"]
        assert sample.metadata["private state at the checkpoint"] == result["private_state_at_fork"]
        # the messages: the dialogue as played, then each branch's question (marked) and answer
        played = sample.messages[:len(transcript)]
        assert [(m.role, m.text) for m in played] == [(m["role"], m["content"]) for m in transcript]
        assert all(not (m.metadata or {}).get("branch") for m in played)
        branches = sample.messages[len(transcript):]
        assert len(branches) == 2 * len(questions)
        for n, (question, answer, asked) in enumerate(zip(branches[::2], branches[1::2], questions), 1):
            assert question.text == asked["question"] and answer.text == asked["answer"]
            assert question.metadata["branch"].startswith(f"branch {n} of {len(questions)}")
            assert f"after message {len(transcript)}" in question.metadata["branch"]
        # the timeline: each branch hangs off the checkpoint's anchor, in the agent's span
        agent = _spans(sample)[result["agent"]]
        anchors = [e.event.anchor_id for e in agent.content if hasattr(e, "event") and isinstance(e.event, AnchorEvent)]
        assert len(anchors) == 1 and [b.branched_from for b in agent.branches] == anchors * len(questions)
        assert [b.name for b in agent.branches][:2] == ["branch 1: reveal", f"branch 2: yes/no: {candidates[0]['secret']}"]
        # each branch is a model call given the dialogue and its question, nothing of the other branches
        reveal = [e for e in sample.events if isinstance(e, ModelEvent) and e.span_id == agent.branches[0].id]
        assert len(reveal) == 1 and [m.text for m in reveal[0].input] == [*(m["content"] for m in transcript),
                                                                          result["reveal"]["question"]]
        assert reveal[0].output.completion == result["reveal"]["answer"]
        call = next(c for c in records[sample.id]["calls"] if c["path"] == "main/reveal")
        assert reveal[0].output.usage.total_tokens == call["prompt_tokens"] + call["completion_tokens"]
        states = [e for e in sample.events if isinstance(e, InfoEvent) and "at the checkpoint" in (e.source or "")]
        assert len(states) == 1 and (result["private_state_at_fork"] or "empty") in str(states[0].data)


def test_acc_reads_turn_by_turn_each_agent_its_own_lane(run, logs):
    from inspect_ai.event import ModelEvent

    (sample,) = logs["05_acc_judge_evaluation-psit-sim.eval"].samples
    turns = RunFolder(run / "05_acc_judge_evaluation").records()[sample.id]["result"]["turns"]
    agents = list(turns[0]["agents"])
    shown = [(m.text, (m.metadata or {}).get("agent")) for m in sample.messages]
    assert shown == [row for t in turns for row in [(t["query"], None), *((t["agents"][a]["answer"], a) for a in agents)]]
    assert len(turns) == 3
    assert any("judge" in (m.metadata or {}) for m in sample.messages if m.role == "assistant")
    lanes = _spans(sample)
    assert set(lanes) == set(agents)
    starts = {lane.start_time() for lane in lanes.values()}
    assert len(starts) == 1  # side by side: every agent starts at the episode's start
    for agent, lane in lanes.items():
        calls = [e for e in sample.events if isinstance(e, ModelEvent) and e.span_id == lane.id]
        assert [c.output.completion for c in calls] == [t["agents"][agent]["answer"] for t in turns]
        assert all(c.output.usage and c.output.usage.total_tokens for c in calls)  # each answer's own call
    ccs = [e for e in sample.events if e.span_id == lanes["acc"].id and getattr(e, "source", None) == "acc · turn 2: "
           "what it answered from"]
    assert len(ccs) == 1 and "ccs" in ccs[0].data


def test_basis_is_the_exchange_of_user_orchestrator_and_cab_agent(run, logs):
    from inspect_ai.event import ModelEvent

    log = logs["06_basis_cab_scenarios-psit-sim.eval"]
    records = RunFolder(run / "06_basis_cab_scenarios").records()
    for sample in log.samples:
        result = records[sample.id]["result"]
        assert sample.messages[0].role == "user" and "Airport" in sample.messages[0].text
        called = [c.function for m in sample.messages if m.role == "assistant" for c in (m.tool_calls or [])]
        app = [c["name"] for c in result["tool_calls"]]
        assert [f for f in called if f in app] == app  # every call that reached the app, in order
        assert called[0].startswith("delegate_to_")
        results = [m.text for m in sample.messages if m.role == "tool"]
        assert all(any(r.startswith(c["result"].rstrip("…")[:40]) for r in results) for c in result["tool_calls"])
        finals = [m for m in sample.messages if m.role == "assistant" and not m.tool_calls]
        assert finals[-1].text == result["final_answer"]
        made = [e for e in sample.events if isinstance(e, ModelEvent)]
        assert made and all(e.output.usage for e in made)  # each step its recorded call
        rides = [e for e in sample.events if (getattr(e, "source", None) or "").startswith("what reached the app")]
        assert rides and rides[0].data == {"rides": result["rides"]}
        assert sample.metadata["agent"] == result["system"]


def test_the_secret_choice_and_the_example_read_as_their_records(run, logs):
    records = RunFolder(run / "07_secret_distribution_mode_collapse").records()
    for sample in logs["07_secret_distribution_mode_collapse-psit-sim.eval"].samples:
        result = records[sample.id]["result"]
        assert [m.text for m in sample.messages] == [result["opening"]["question"], result["opening"]["answer"],
                                                     result["reveal"]["question"], result["reveal"]["answer"]]
        assert [b.name for b in _spans(sample)["vanilla"].branches] == ["branch 1: reveal"]
        assert sample.metadata["spec"]["temperature"] == 0.7
    (probe,) = logs["90_example_reveal_probe-psit-sim.eval"].samples
    result = RunFolder(run / "90_example_reveal_probe").records()[probe.id]["result"]
    assert [(m.text, m.metadata["field"]) for m in probe.messages] == [(result["opening"], "opening"),
                                                                      (result["reveal"], "reveal")]


def test_results_are_means_per_agent_and_shares_of_labels(run, logs):
    log = logs["02_hangman_fork_tests-psit-sim.eval"]
    by_name = {s.name: s.metrics for s in log.results.scores}
    values = {s.metadata["agent"]: s.scores["table1"].value for s in log.samples}
    assert by_name["table1"]["all"].value == sum(values.values()) / len(values)
    assert {k: m.value for k, m in by_name["table1"].items() if k != "all"} == {a: float(v) for a, v in values.items()}
    assert sum(m.value for m in by_name["outcome"].values()) == pytest.approx(1.0)
    secrets = logs["07_secret_distribution_mode_collapse-psit-sim.eval"]
    shares = {m.name: m.value for s in secrets.results.scores for m in s.metrics.values()}
    counts = Counter(s.scores["secret"].value for s in secrets.samples)
    assert shares == {secret: n / len(secrets.samples) for secret, n in counts.items()}


def test_a_failed_episode_is_a_sample_with_its_error_and_no_score(run, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run / "02_hangman_fork_tests", copy / "02_hangman_fork_tests")
    folder = RunFolder(copy / "02_hangman_fork_tests")
    failed = dict(next(iter(folder.records().values())), status="error", error="ModelCallError: HTTP 400", result=None)
    with folder.records_source.open("a") as out:
        out.write(json.dumps(failed) + "\n")
    assert main(["export", str(copy), "--inspect"]) == 0
    log = _read(copy / "export" / "inspect" / "02_hangman_fork_tests-psit-sim.eval")
    sample = next(s for s in log.samples if s.id == failed["episode_id"])
    assert sample.error.message == "ModelCallError: HTTP 400" and not sample.scores
    assert sample.metadata["part"] == "main"  # the run's plan says where a failed episode belongs
    assert log.results.completed_samples == log.results.total_samples - 1
