"""Typed, versioned episode records (psit_lib.runs.records and each study's result model).

What must hold: every study's real episode function writes a record that reads back with
every field typed; a record missing a field, or from a newer schema, fails with one error
naming the file and the episode (never a silent "error" outcome); a failed episode stays a
failed episode, without a result, and is never scored.
"""

from __future__ import annotations

import json

import pytest

from psit_lib.llm import LLMSettings
from psit_lib.runs import RunStore, make_client, run_episodes
from psit_lib.runs.records import EpisodeRecord, RecordError, read_records
from psit_lib.studies.acc.experiment import AccParams, make_specs as acc_specs, run_acc_episode
from psit_lib.studies.acc.records import AccEpisode
from psit_lib.studies.basis.experiment import BasisParams, make_specs as basis_specs, run_basis_trial
from psit_lib.studies.basis.records import BasisTrial
from psit_lib.studies.psit.protocol import secret_choice as sc
from psit_lib.studies.psit.protocol.experiment import ForkTestParams, fork_episode_fn, plan_fork_episodes
from psit_lib.studies.psit.protocol.records import ForkEpisode, SecretChoiceEpisode
from psit_lib.studies.psit.tasks.hangman import HangmanTask


async def _stored(tmp_path, specs, fn):
    store = RunStore(tmp_path)
    client = make_client(LLMSettings(cache="off"))
    await run_episodes(specs, fn, store=store, client=client, run_seed=0, progress=False)
    await client.aclose()
    return store, [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]


def _studies():
    task = HangmanTask()
    fork = ForkTestParams(agents=["vanilla", "workflow_overwrite"], n_episodes=1)
    choice = sc.SecretChoiceParams(temperatures=[0.3], n_samples=1, tasks=["hangman"])
    return [
        (ForkEpisode, plan_fork_episodes(task, fork, ["psit-sim"]), fork_episode_fn(task, fork)),
        (SecretChoiceEpisode, sc.plan_secret_choice(choice, ["psit-sim"]), sc.secret_choice_episode_fn(choice)),
        (AccEpisode, acc_specs(AccParams(n_turns=2, domains=("it_operations",))), run_acc_episode),
        (BasisTrial, basis_specs(BasisParams(scenarios=("premium_bias",), n_trials=1)), run_basis_trial),
    ]


@pytest.mark.parametrize("index", range(4), ids=["fork", "secret_choice", "acc", "basis"])
async def test_every_study_writes_records_that_read_back_typed(tmp_path, index):
    model, specs, fn = _studies()[index]
    assert fn.result_type is model
    _, raw = await _stored(tmp_path, specs, fn)
    typed = read_records(raw, model, source=tmp_path / "episodes.jsonl")
    assert len(typed) == len(specs) and all(r.ok and isinstance(r.result, model) for r in typed)
    assert [r.stored() for r in typed] == raw  # reading and writing back changes nothing
    assert all(r["schema_version"] == model.model_fields["schema_version"].default for r in raw)


async def test_a_missing_field_or_a_newer_schema_fails_naming_the_file_and_episode(tmp_path):
    model, specs, fn = _studies()[0]
    _, raw = await _stored(tmp_path, specs[:1], fn)
    broken = dict(raw[0])
    del broken["candidates"]
    with pytest.raises(RecordError, match=r"episodes.jsonl: episode 'hangman/psit-sim/vanilla/0000'.*candidates"):
        read_records([broken], ForkEpisode, source=tmp_path / "episodes.jsonl")
    newer = {**raw[0], "schema_version": 99}
    with pytest.raises(RecordError, match="schema_version"):
        read_records([newer], ForkEpisode, source="x")


def test_a_failed_episode_stays_failed_and_carries_no_result():
    usage = {"calls": 1, "cache_hits": 0, "prompt_tokens": 3, "completion_tokens": 0, "calls_by_role": {"x": 1}}
    failed = {"episode_id": "e", "status": "error", "error": "ModelCallError: boom", "spec": {}, "usage": usage,
              "calls": [], "wall_seconds": 0.1,
              "diagnostics": {"reads": {"reply|hangman_host|": {"ok": 0, "unreadable": 1}}, "flags": {},
                              "notes": [{"kind": "unreadable_reply", "role": "hangman_host", "agent": None,
                                         "example": "The word is apple", "detail": "no pattern"}]}}
    (record,) = read_records([failed], ForkEpisode)
    assert not record.ok and record.result is None and record.error.startswith("ModelCallError")
    assert record.stored() == failed
    with pytest.raises(RecordError, match="result.task: Field required"):
        read_records([{**failed, "status": "ok", "error": None}], ForkEpisode)
    with pytest.raises(ValueError):
        EpisodeRecord[ForkEpisode].model_validate({**failed, "result": {"task": "x"}})
