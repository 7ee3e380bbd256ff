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


def _live_rows(episode: AccEpisode) -> list[dict]:
    return [row for t in episode.turns if t.judge is not None for row in scoring.verdict_rows(
        t.turn, t.agents, t.judge.order, {k: v.model_dump() for k, v in t.judge.evaluations.items()},
        t.judge.memory_error, t.judge.scoring_error)]


async def test_the_judge_rerun_over_a_stored_episode_gives_the_live_verdicts():
    episode_id, episode = await _stored_episode()
    rows, memories = await scoring.judge_episode(_session(episode_id), episode, seed=episode.scenario_seed,
                                                 answer_chars=1200)
    live = _live_rows(episode)
    assert live and rows == live  # same requests, same seeds: the verdicts the live judge recorded
    assert [m["memory"] for m in memories] == [t.judge.canonical_memory for t in episode.turns if t.judge]
    assert [r["agent"] for r in rows[:3]] == ["transcript", "retrieval_k5", "acc"]  # answering order
    # another episode id draws other seeds: the judge is not replaying stored numbers
    other, _ = await scoring.judge_episode(_session("another/episode"), episode, seed=episode.scenario_seed,
                                           answer_chars=1200)
    assert other != rows


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


async def test_answer_and_ccs_rows_read_the_stored_turns_only():
    _, episode = await _stored_episode(n_turns=3)
    answers = scoring.answer_rows(episode)
    assert len(answers) == 3 * 3 and answers[0]["turn"] == 1 and answers[0]["footprint_tokens"] == 0
    assert {r["ccs_valid"] for r in answers if r["agent"] == "acc"} == {True}
    forms = scoring.ccs_form_rows(episode)
    assert [r["turn"] for r in forms] == [1, 2, 3]
    assert all(r["compact_tokens"] > 0 and r["json_tokens"] > 0 for r in forms)
