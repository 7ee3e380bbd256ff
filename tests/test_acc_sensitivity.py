"""Judge-prompt variants the simulated judge follows, the answer-length and attention knobs,
and the sensitivity tables built from re-judged episodes."""

from __future__ import annotations

import pytest

from psit_lib.llm import LLMClient, LLMSettings, ModelSession
from psit_lib.runs import RunStore, run_episodes
from psit_lib.sim.roles.acc import notice_probability, read_rubric
from psit_lib.sim.transport import SimTransport
from psit_lib.studies.acc.experiment import AccParams, make_specs, run_acc_episode
from psit_lib.studies.acc.judge import JUDGE_VARIANTS, CanonicalMemory, rejudge_turn
from psit_lib.studies.acc import sensitivity as accs
from psit_lib.runs.records import read_records
from psit_lib.studies.acc.records import AccEpisode

MEMORY = CanonicalMemory(facts={"failing node": "db-07"}, rules={"R2": 'every answer must include "INC-1"'})
QUERY = "State the current failing node."
ANSWERS = {"good": "Tags: INC-1\n- the failing node is db-07.\nNext step: watch.",
           "bad": "Tags: INC-1\n- the failing node is db-07.\n- the root cause is disk-full.\nNext step: watch."}


def _session(profile: str = "default") -> ModelSession:
    client = LLMClient(LLMSettings(cache="off", sim_profile=profile), transport=SimTransport())
    return ModelSession(client, run_seed=0, episode_id="judge")


async def _scores(variant: str, profile: str = "default") -> dict[str, dict]:
    return await rejudge_turn(_session(profile), JUDGE_VARIANTS[variant], MEMORY, QUERY, ANSWERS, seed=1)


def test_the_rubric_reader_finds_scale_and_strictness():
    assert read_rubric(JUDGE_VARIANTS["five_point"].system, True).high == 5
    assert read_rubric(JUDGE_VARIANTS["strict_rubric"].system, True).strict
    standard = read_rubric(JUDGE_VARIANTS["standard"].system, True)
    assert (standard.low, standard.high, standard.strict) == (0, 10, False)
    assert read_rubric(JUDGE_VARIANTS["five_point"].system, False).high == 10  # a judge that ignores it


async def test_the_simulated_judge_uses_the_scale_and_strictness_it_is_given():
    standard, strict, five = await _scores("standard"), await _scores("strict_rubric"), await _scores("five_point")
    assert strict["bad"]["answer_quality"] < standard["bad"]["answer_quality"]
    assert strict["good"]["answer_quality"] == pytest.approx(standard["good"]["answer_quality"], abs=1)
    assert five["good"]["relevance"] == pytest.approx(10)  # 5 of 5, put on 0-10
    assert all(v in {0, 2.5, 5, 7.5, 10} for ev in five.values() for k, v in ev.items()
               if k in ("relevance", "answer_quality", "instruction_following", "coherence"))
    deaf = await _scores("strict_rubric", profile="default,judge_follows_rubric=false")
    assert deaf["bad"]["answer_quality"] >= strict["bad"]["answer_quality"]


def test_attention_window_is_the_profile_knob():
    assert notice_probability(3000, window=2000) < 1.0 == notice_probability(3000, window=4000)


async def _episodes(tmp_path, profile: str, n_turns: int = 6):
    params = AccParams(n_turns=n_turns, domains=("finance",))
    client = LLMClient(LLMSettings(cache="off", sim_profile=profile), transport=SimTransport())
    raw = await run_episodes(make_specs(params), run_acc_episode, store=RunStore(tmp_path / profile),
                             client=client, run_seed=0, progress=False)
    await client.aclose()
    return read_records(raw, AccEpisode)


async def test_longer_answers_grow_the_replayed_transcript(tmp_path):
    short = await _episodes(tmp_path, "default")
    long = await _episodes(tmp_path, "default,answer_elaboration_tokens=300")
    size = lambda recs: recs[0].result.turns[-1].agents["transcript"].footprint_tokens  # noqa: E731
    assert size(long) > size(short) + 4 * 250
    assert set(short[0].result.turns[0].agents) == {"transcript", "retrieval_k5", "acc"}


async def test_sensitivity_tables_and_reading_from_the_variant_scorers_rows(tmp_path):
    from psit_lib.studies.acc import scoring

    records = await _episodes(tmp_path, "default", n_turns=3)
    client = LLMClient(LLMSettings(cache="off"), transport=SimTransport())
    rejudged = []
    for variant in JUDGE_VARIANTS:
        rows = []
        for record in records:
            session = ModelSession(client, run_seed=0, episode_id=record.episode_id)
            _, memories = await scoring.judge_episode(session, record.result, seed=record.result.scenario_seed,
                                                      answer_chars=1200)
            rows += await scoring.rejudge_episode(session, record.result, variant, memories, answer_chars=1200)
        rejudged.append((variant, rows))
    await client.aclose()
    table = accs.sensitivity_table(rejudged)
    assert set(table["variant"]) == set(JUDGE_VARIANTS) and table["mean_score"].between(0, 10).all()
    summary = accs.sensitivity_summary(table)
    assert list(summary.index)[0] == "transcript" and (summary["spread"] >= 0).all()
    reading = accs.sensitivity_reading(table)
    assert "prompt" in reading and "points of 10" in reading
    assert accs.sensitivity_table([]).empty
