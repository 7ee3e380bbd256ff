"""ACC's judge as a scorer: re-run over a stored episode it gives the live judge's verdicts, and its
variants score the same turns from the judge's canonical memory."""

from __future__ import annotations

import json

import pytest

from psit_lib.llm import LLMSettings, ModelSession
from psit_lib.runs.backend import make_client
from psit_lib.studies.acc import scoring
from psit_lib.studies.acc.experiment import AccParams, make_specs, run_acc_episode
from psit_lib.studies.acc.judge import CRITERIA, JUDGE_VARIANTS
from psit_lib.studies.acc.records import AccEpisode


def _session(episode_id: str, seed: int = 0) -> ModelSession:
    return ModelSession(make_client(LLMSettings(cache="off")), run_seed=seed, episode_id=episode_id)


async def _stored_episode(n_turns: int = 4, seed: int = 0) -> tuple[str, AccEpisode]:
    spec = make_specs(AccParams(domains=("cybersecurity",), n_turns=n_turns, seed=seed))[0]
    body = await run_acc_episode(spec, _session(spec.episode_id, seed))
    # what the run folder keeps: JSON with its keys sorted (the agents no longer in answering order)
    return spec.episode_id, AccEpisode.model_validate(json.loads(json.dumps(body.model_dump(mode="json"),
                                                                            sort_keys=True)))


async def test_the_judge_scores_a_stored_episode_on_the_episodes_own_judge_seeds():
    from psit_lib.llm.seeds import derive_seed

    episode_id, episode = await _stored_episode()
    assert all(t.judge is None for t in episode.turns)  # generation keeps no verdict
    session = _session(episode_id)
    rows, memories = await scoring.judge_episode(session, episode, seed=episode.scenario_seed, answer_chars=1200)
    assert len(rows) == 4 * 3 and all(r["status"] == "ok" for r in rows)
    assert [r["agent"] for r in rows[:3]] == ["transcript", "retrieval_k5", "acc"]  # answering order
    assert sorted(r["presented_as"] for r in rows[:3]) == [0, 1, 2]  # blinded, one label each
    assert [m["turn"] for m in memories] == [1, 2, 3, 4]
    # per turn a memory update then a scoring call, on the branch the live judge used: its seeds
    assert [(c.path, c.index, c.seed) for c in session.log] == [
        ("main/judge", i, derive_seed(0, episode_id, "main/judge", i)) for i in range(8)]
    again, _ = await scoring.judge_episode(_session(episode_id), episode, seed=episode.scenario_seed,
                                           answer_chars=1200)
    assert again == rows
    # another episode id draws other seeds: the judge is not replaying stored numbers
    other, _ = await scoring.judge_episode(_session("another/episode"), episode, seed=episode.scenario_seed,
                                           answer_chars=1200)
    assert other != rows


def test_a_record_of_schema_1_with_the_live_judges_verdicts_still_reads():
    turn = {"turn": 1, "topic": "t", "query": "q",
            "agents": {"acc": {"answer": "x", "footprint_tokens": 3, "details": {"ccs_valid": True}}},
            "judge": {"order": ["acc"], "evaluations": {}, "memory_error": None, "scoring_error": "bad",
                      "canonical_memory": {}}}
    old = AccEpisode.model_validate({"schema_version": 1, "model": "m", "domain": "finance", "scenario_id": "f/0",
                                     "scenario_seed": 0, "n_turns": 1, "turns": [turn], "ccs_failures": 0,
                                     "judge_failures": 1, "memory_failures": 0})
    assert old.schema_version == 1 and old.turns[0].judge is not None
    assert scoring.answer_rows(old) == [{"turn": 1, "topic": "t", "agent": "acc", "footprint_tokens": 3,
                                         "ccs_valid": True}]


async def test_a_variant_scores_every_turn_from_the_judges_memory():
    episode_id, episode = await _stored_episode(n_turns=3)
    _, memories = await scoring.judge_episode(_session(episode_id), episode, seed=episode.scenario_seed,
                                              answer_chars=1200)
    five = await scoring.rejudge_episode(_session(episode_id), episode, "five_point", memories, answer_chars=1200)
    assert {(r["turn"], r["agent"]) for r in five} == {(t.turn, a) for t in episode.turns for a in t.agents}
    assert all(0 <= r[c] <= 10 and r[c] in {0, 2.5, 5, 7.5, 10} for r in five for c in CRITERIA)
    with pytest.raises(ValueError, match="unknown judge variant"):
        await scoring.rejudge_episode(_session(episode_id), episode, "lenient", memories, answer_chars=1200)
    assert set(JUDGE_VARIANTS) >= {"standard", "strict_rubric", "five_point", "reversed_order"}
    with pytest.raises(ValueError, match="unknown judge variant"):
        AccParams(judge_variants=["standard", "lenient"])


async def test_answer_and_ccs_rows_read_the_stored_turns_only():
    _, episode = await _stored_episode(n_turns=3)
    answers = scoring.answer_rows(episode)
    assert len(answers) == 3 * 3 and [r["agent"] for r in answers[:3]] == ["acc", "retrieval_k5", "transcript"]
    assert [r["footprint_tokens"] for r in answers if r["agent"] == "transcript"][0] == 0  # nothing to replay yet
    assert {r["ccs_valid"] for r in answers if r["agent"] == "acc"} == {True}
    forms = scoring.ccs_form_rows(episode)
    assert [r["turn"] for r in forms] == [1, 2, 3]
    assert all(r["compact_tokens"] > 0 and r["json_tokens"] > 0 for r in forms)


# -- the study's chain: parts, scores, metrics; rescored without a model ----------------------------

NOTEBOOK = "05_acc_judge_evaluation"
SMALL = dict(domains=["cybersecurity"], n_turns=3, judge_variants=["standard", "five_point"],
             sweeps={"attention_tokens": [500, 8000], "answer_elaboration_tokens": [0, 400]}, sweep_turns=3,
             sweep_scenarios=2, n_boot=200)
TABLES = {"summary_rates", "episode_rates", "hallucination_drift", "judge_scores", "footprint_by_domain", "ccs_forms",
          "judge_sensitivity", "sweeps"}


class _Refusing:
    """A transport that fails any request: a scorer may only replay the cache."""

    async def handle_async_request(self, request):
        raise AssertionError(f"a model call while re-scoring: {request.url}")


def _replay_sessions(run_dir, seed: int):
    """Sessions for model-graded scorers whose client answers from the run's cache only."""
    from psit_lib.llm import LLMClient
    from psit_lib.llm.cache import ResponseCache

    cache = ResponseCache(run_dir / "cache.sqlite", mode="replay")
    clients: dict[str, LLMClient] = {}

    def session_for(record, scorer):
        model = record.spec["model"]
        if model not in clients:
            clients[model] = LLMClient(LLMSettings(cache="replay", model=model), cache=cache, transport=_Refusing())
        return ModelSession(clients[model], run_seed=seed, episode_id=record.episode_id, path=f"score/{scorer.name}")

    return session_for


def _forbid_clients(monkeypatch):
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("re-scoring must not build a model client or open a connection")

    import psit_lib.runs.experiment  # noqa: F401

    monkeypatch.setattr("psit_lib.runs.backend.make_client", refuse)
    monkeypatch.setattr("psit_lib.runs.experiment.make_client", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.fixture
def small_run(tmp_path):
    import asyncio

    from psit_lib.runs import Experiment
    from psit_lib.studies.acc import STUDY

    params = AccParams(**SMALL)
    exp = Experiment(NOTEBOOK, params.model_dump(), seed=params.seed, run_dir=tmp_path / "run")
    run = asyncio.run(STUDY.run(exp, params))
    return exp, params, run


def test_the_run_writes_every_table_from_scores_and_rescore_reproduces_them(small_run, monkeypatch):
    import pandas as pd

    from psit_lib.runs.folder import RunFolder
    from psit_lib.studies.acc import STUDY

    exp, params, run = small_run
    assert set(run.tables) == TABLES
    assert {n.removesuffix(".csv") for n in RunFolder(exp.store.dir).table_names()} == TABLES
    assert list(run.records) == ["main", "sweep:attention_tokens=500", "sweep:attention_tokens=8000",
                                 "sweep:answer_elaboration_tokens=0", "sweep:answer_elaboration_tokens=400"]
    scores = run.scores
    main = scores[scores["part"] == "main"]
    assert main["judge"].eq(1.0).all() and main["judge_five_point"].between(0, 10).all()
    assert main["judge_strict_rubric"].isna().all()  # not in judge_variants: not scored
    assert main["judge.diagnostics"].map(lambda d: d["reads"]["helper|acc_judge|"]).tolist() == [
        {"ok": 6, "unreadable": 0}]  # what the judge could read: 3 turns, a memory and a scoring reply each
    assert scores.loc[scores["part"] != "main", "judge_standard"].isna().all()  # variants score the main part
    _forbid_clients(monkeypatch)
    stored = STUDY.rescore(exp.store.dir)  # the stored scores: no model call
    for name in TABLES:
        pd.testing.assert_frame_equal(run.tables[name], stored.tables[name], obj=name)
    assert set(stored.tables["judge_sensitivity"]["variant"]) == {"standard", "five_point"}
    assert len(stored.tables["sweeps"]) == 4 * 2  # four values x (drift, hallucination), in the study's knob order
    assert list(dict.fromkeys(stored.tables["sweeps"]["knob"])) == ["attention_tokens", "answer_elaboration_tokens"]


def test_the_judge_and_its_variants_rerun_from_stored_episodes_through_the_cache(small_run, monkeypatch):
    import pandas as pd

    from psit_lib.runs.folder import RunFolder
    from psit_lib.studies.acc import STUDY

    exp, params, run = small_run
    _forbid_clients(monkeypatch)
    judges = ["judge", "judge_standard", "judge_five_point"]
    again = STUDY.rescore(exp.store.dir, judges, session_for=_replay_sessions(exp.run_dir, params.seed))
    for name in TABLES:
        pd.testing.assert_frame_equal(run.tables[name], again.tables[name], obj=name)
    assert RunFolder(exp.store.dir).metadata().rescored[-1]["scorers"] == judges
    # a folder made before scores were stored: every score computed, the judges' calls replayed
    (exp.store.dir / "scores.jsonl").unlink()
    old = STUDY.rescore(exp.store.dir, session_for=_replay_sessions(exp.run_dir, params.seed))
    for name in TABLES:
        pd.testing.assert_frame_equal(run.tables[name], old.tables[name], obj=name)
    # a cache that lacks the judge's calls is a stop, never a silent new verdict
    (exp.run_dir / "cache.sqlite").unlink()
    with pytest.raises(Exception, match="replay|cache"):
        STUDY.rescore(exp.store.dir, ["judge"], session_for=_replay_sessions(exp.run_dir, params.seed))
