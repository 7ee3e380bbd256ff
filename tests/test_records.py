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
from psit_lib.runs.folder import RunFolder, RunMetadata, RunParams
from psit_lib.runs.records import EpisodeRecord, RecordError, StudyResult, flat_record, read_records
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
    assert all(r["format"] == 2 and r["result"]["schema_version"] == model.model_fields["schema_version"].default
               for r in raw)


async def test_a_missing_field_or_a_newer_schema_fails_naming_the_file_and_episode(tmp_path):
    model, specs, fn = _studies()[0]
    _, raw = await _stored(tmp_path, specs[:1], fn)
    broken = {**raw[0], "result": dict(raw[0]["result"])}
    del broken["result"]["candidates"]
    with pytest.raises(RecordError, match=r"episodes.jsonl: episode 'hangman/psit-sim/vanilla/0000'.*candidates"):
        read_records([broken], ForkEpisode, source=tmp_path / "episodes.jsonl")
    newer = {**raw[0], "result": {**raw[0]["result"], "schema_version": 99}}
    with pytest.raises(RecordError, match="schema_version"):
        read_records([newer], ForkEpisode, source="x")
    with pytest.raises(RecordError, match="record format 3 is newer"):
        read_records([{**raw[0], "format": 3}], ForkEpisode, source="x")


def test_a_failed_episode_stays_failed_and_carries_no_result():
    usage = {"calls": 1, "cache_hits": 0, "prompt_tokens": 3, "completion_tokens": 0, "calls_by_role": {"x": 1}}
    failed = {"episode_id": "e", "status": "error", "error": "ModelCallError: boom", "spec": {}, "usage": usage,
              "calls": [], "wall_seconds": 0.1,
              "diagnostics": {"reads": {"reply|hangman_host|": {"ok": 0, "unreadable": 1}}, "flags": {},
                              "notes": [{"kind": "unreadable_reply", "role": "hangman_host", "agent": None,
                                         "example": "The word is apple", "detail": "no pattern"}]},
              "system_prompts": {"hangman_host": "You host Hangman."}}
    (record,) = read_records([failed], ForkEpisode)
    assert not record.ok and record.result is None and record.error.startswith("ModelCallError")
    assert record.stored() == {"format": 2, **failed, "result": None}
    with pytest.raises(RecordError, match="result.task: Field required"):
        read_records([{**failed, "status": "ok", "error": None}], ForkEpisode)
    with pytest.raises(ValueError):
        EpisodeRecord[ForkEpisode].model_validate({**failed, "result": {"task": "x"}})


# -- stored formats: 2 nests the result, 1 (older runs) is flat -----------------------------------

class _Verdict(StudyResult):
    """A study result with fields named like the envelope's (``status``, ``error``)."""

    status: str
    error: int
    score: float


_USAGE = {"calls": 1, "cache_hits": 0, "prompt_tokens": 3, "completion_tokens": 2, "calls_by_role": {"x": 1}}
_ENVELOPE = {"spec": {"agent": "a"}, "usage": _USAGE, "calls": [], "wall_seconds": 0.5,
             "diagnostics": {"reads": {}, "flags": {}, "notes": []}}


def _record(eid: str, verdict: "_Verdict | None") -> EpisodeRecord[_Verdict]:
    return EpisodeRecord[_Verdict](episode_id=eid, status="ok" if verdict else "error",
                                   error=None if verdict else "RuntimeError: boom", result=verdict, **_ENVELOPE)


def test_a_result_field_named_status_survives_the_run_folder(tmp_path):
    store = RunStore(tmp_path)
    written = [_record("e1", _Verdict(status="rejected", error=3, score=0.25)), _record("e2", None)]
    for record in written:
        store.append(record.stored())
    lines = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [line["format"] for line in lines] == [2, 2]
    assert lines[0]["status"] == "ok" and lines[0]["result"]["status"] == "rejected"
    assert lines[1]["result"] is None
    typed = RunFolder(tmp_path).typed_records(_Verdict)
    assert typed == written and typed[0].require_result().status == "rejected"
    assert RunFolder(tmp_path).finished_ids() == {"e1"}                  # the envelope's status counts
    flat = RunFolder(tmp_path).flat_records()
    assert flat["e1"]["status"] == "ok" and flat["e1"]["score"] == 0.25   # the envelope wins a clash
    assert flat["e2"]["error"] == "RuntimeError: boom" and "score" not in flat["e2"]
    assert flat_record(typed[0]) == flat["e1"] == flat_record(typed[0].stored())


def test_the_old_flat_format_reads_as_the_new_one(tmp_path):
    """Format 1 (no ``format`` key): every key that is not the envelope's belongs to the result."""
    old_ok = {"episode_id": "e1", "status": "ok", "error": None, **_ENVELOPE, "schema_version": 1,
              "score": 0.75, "error_count": 1}
    old_failed = {"episode_id": "e2", "status": "error", "error": "RuntimeError: boom", **_ENVELOPE}

    class _Old(StudyResult):
        score: float
        error_count: int

    (tmp_path / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (old_ok, old_failed))
                                            + '{"episode_id": "e3", "sta')      # a killed writer's partial line
    folder = RunFolder(tmp_path)
    stored = folder.records()
    assert set(stored) == {"e1", "e2"}
    assert stored["e1"]["result"] == {"schema_version": 1, "score": 0.75, "error_count": 1}
    assert stored["e2"]["result"] is None
    assert folder.flat_records() == {"e1": old_ok, "e2": old_failed}   # the flat view is what was stored
    ok, failed = folder.typed_records(_Old)
    assert ok.require_result().score == 0.75 and not failed.ok
    assert ok.stored()["format"] == 2 and ok.stored()["result"]["score"] == 0.75
    # appending to an old folder: the newest record of an id wins, whatever its format
    store = RunStore(tmp_path)
    store.append(EpisodeRecord[_Old](episode_id="e2", status="ok", error=None,
                                     result=_Old(score=0.5, error_count=0), **_ENVELOPE).stored())
    assert [r.require_result().score for r in RunFolder(tmp_path).typed_records(_Old)] == [0.75, 0.5]
    assert RunFolder(tmp_path).attempts("e2") == 2


def test_the_owner_refuses_a_flat_record_and_reads_broken_files_as_empty(tmp_path):
    store = RunStore(tmp_path)
    with pytest.raises(ValueError, match="under 'result'"):
        store.append({"episode_id": "e", "status": "ok", "score": 1.0})
    (tmp_path / "metadata.json").write_text("{not json")
    (tmp_path / "params.json").write_text(json.dumps({"_models": "m1", "suspect_threshold": "high",
                                                      "temperature": 0.3, "future_key": [1]}))
    folder = RunFolder(tmp_path)
    assert folder.metadata() == RunMetadata()
    params = folder.params()                       # what does not fit is left out, the rest is kept
    assert params.run_models == [] and params.suspect_threshold is None and params.temperature == 0.3
    assert params.stored() == {"temperature": 0.3, "future_key": [1]}
    (tmp_path / "metadata.json").write_text(json.dumps({"notebook": "02_x", "seed": "not a seed",
                                                        "last_execution": {"model_calls": 4, "new": 1},
                                                        "health": {"status": "suspect", "reasons": ["r"]},
                                                        "something_new": {"a": 1}}))
    meta = RunFolder(tmp_path).metadata()
    assert meta.notebook == "02_x" and meta.seed is None and meta.last_execution.model_calls == 4
    assert meta.health.reasons == ["r"] and meta.model_extra == {"something_new": {"a": 1}}
    missing = RunFolder(tmp_path / "nothing")
    assert missing.records() == {} and missing.metadata() == RunMetadata() and missing.params() == RunParams()
    assert not (tmp_path / "nothing").exists()                  # a reader never creates the folder
