"""Notebook 05 as the paper measures it: H_u and D_r as turn averages, the three-way default,
the outcome figure's mean ± std, the compact CCS, the study-scale size, and every generated
sentence of the notebook tested on a table built to make it wrong."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from psit_lib.studies.acc import metrics as accm
from psit_lib.studies.acc import summary as accsum
from psit_lib.studies.acc.ccs import CCS, ArtifactRef, FocalEntity, Relation, compact_ccs, render_ccs
from psit_lib.studies.acc.experiment import AccParams
from psit_lib.studies.acc.judge import CRITERIA, drift_rate, hallucination_rate

ROOT = Path(__file__).resolve().parents[1]


def _row(agent: str, turn: int, *, supported: int = 0, unsupported: int = 0, active: int = 0, violations: int = 0,
         omitted: int = 0, status: str = "ok", episode: str = "e0", score: float = 9.0) -> dict:
    row = {"episode_id": episode, "model": "m", "domain": "it_operations", "turn": turn, "topic": "t",
           "agent": agent, "footprint_tokens": 10, "ccs_valid": None, "presented_as": 0, "memory_error": None,
           "status": status, "error": None}
    if status != "ok":
        return {**row, **dict.fromkeys((*CRITERIA, "supported_claims", "unsupported_claims", "active_constraints",
                                        "violations", "omitted_required", "hallucination", "drift"), np.nan)}
    return {**row, **dict.fromkeys(CRITERIA, score), "supported_claims": supported, "unsupported_claims": unsupported,
            "active_constraints": active, "violations": violations, "omitted_required": omitted,
            "hallucination": hallucination_rate(supported, unsupported),
            "drift": drift_rate(violations, omitted, active, turn)}


def _frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df["agent"] = pd.Categorical(df["agent"], categories=sorted(df["agent"].dropna().unique(),
                                                                key=accm.agent_rank))
    return df


def _rates(per_agent: dict[str, list[tuple[int, int]]], metric: str = "hallucination") -> pd.DataFrame:
    """A turns frame where agent a's turn t has claims (supported, unsupported) = per_agent[a][t]
    (hallucination), or (violations, active) for drift, turns numbered from 2."""
    rows = []
    for agent, turns in per_agent.items():
        for i, (x, y) in enumerate(turns):
            if metric == "hallucination":
                rows.append(_row(agent, i + 1, supported=x, unsupported=y))
            else:
                rows.append(_row(agent, i + 2, violations=x, active=y))
    return _frame(rows)


# -- H_u and D_r as the paper defines them -----------------------------------------------------

def test_h_u_and_d_r_are_turn_averages_not_pooled_sums():
    df = _frame([
        _row("acc", 1, supported=0, unsupported=0, active=0),   # no claims: H_t = 0, averaged in
        _row("acc", 2, supported=9, unsupported=1, active=1, violations=2, omitted=1),  # D_t = 3 (not clamped)
        _row("acc", 3, supported=0, unsupported=1, active=4),   # H_t = 1, D_t = 0
        _row("acc", 4, status="judge_error"),                   # unscored: no H_t, no D_t
    ])
    summary = accsum.summary_table(df).set_index("metric")
    assert summary.loc["hallucination", "symbol"] == "H_u" and summary.loc["drift", "symbol"] == "D_r"
    assert summary.loc["hallucination", "turns"] == 3 and summary.loc["drift", "turns"] == 2
    assert summary.loc["hallucination", "mean"] == pytest.approx((0 + 0.1 + 1) / 3)
    assert summary.loc["drift", "mean"] == pytest.approx((3 + 0) / 2)  # above 1: no clamping
    assert summary.loc["drift", "std"] == pytest.approx(1.5)
    # the pooled view beside: 2 unsupported of 11 claims; drift clamped to 3 failures of 5 checks
    assert summary.loc["hallucination", "pooled_rate"] == pytest.approx(2 / 11)
    assert summary.loc["drift", "pooled_rate"] == pytest.approx(3 / 5)


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 4), st.integers(0, 4),
                          st.integers(0, 3)), min_size=1, max_size=12))
@pytest.mark.slow
def test_h_u_is_the_mean_of_h_t_and_d_r_the_mean_of_d_t_from_turn_2(turns):
    df = _frame([_row("acc", i + 1, supported=s, unsupported=u, active=a, violations=v, omitted=o)
                 for i, (s, u, a, v, o) in enumerate(turns)])
    summary = accsum.summary_table(df).set_index("metric")
    h = [u / max(1, s + u) for s, u, *_ in turns]
    d = [(v + o) / max(1, a) for _, _, a, v, o in turns[1:]]
    assert summary.loc["hallucination", "mean"] == pytest.approx(np.mean(h))
    if d:
        assert summary.loc["drift", "mean"] == pytest.approx(np.mean(d))
    else:
        assert np.isnan(summary.loc["drift", "mean"]) and summary.loc["drift", "turns"] == 0


# -- generated sentences, each on a table built to make it wrong ----------------------------------

def _reading(per_agent, metric="hallucination") -> str:
    return accsum.metric_reading(accsum.turn_values(_rates(per_agent, metric), metric), metric)


def test_turn_average_reading_follows_lower_is_better():
    # acc's H_t are low, transcript's high: the higher value is the worse one
    text = _reading({"transcript": [(1, 9), (2, 8)] * 8, "acc": [(10, 0), (9, 1)] * 8})
    assert text.startswith("acc has the lowest H_u") and "better than transcript" in text
    assert "excludes zero" in text and "ahead" not in text and "transcript has the lowest" not in text
    drift = _reading({"transcript": [(0, 4), (1, 4)] * 8, "retrieval_k5": [(3, 4), (4, 4)] * 8,
                      "acc": [(2, 4), (1, 4)] * 8}, "drift")
    assert drift.startswith("transcript has the lowest D_r")
    assert "the worst is retrieval_k5, highest D_r" in drift


def test_turn_average_reading_does_not_rank_a_tie_at_zero_nor_call_claimless_turns_unscored():
    # four agents, four scored turns, no claims at all: H_t = 0 everywhere, a tie, not "no data"
    df = _rates({a: [(0, 0)] * 4 for a in ("transcript", "retrieval_k3", "retrieval_k5", "acc")})
    text = accsum.turn_average_reading(df)
    hallucination = text.splitlines()[0]
    assert "transcript, retrieval_k3, retrieval_k5, acc tie at H_u 0: nothing to rank" in hallucination
    assert ">" not in text and "lowest" not in hallucination and "No scored" not in text and "No agent" not in text


def test_turn_average_reading_does_not_separate_a_gap_its_interval_includes():
    rng = np.random.default_rng(1)
    noisy = lambda: [(int(s), int(u)) for s, u in rng.integers(0, 4, size=(10, 2))]  # noqa: E731
    text = _reading({"transcript": noisy(), "acc": noisy()})
    assert "cannot be told apart" in text and "includes zero" in text and "better than" not in text


def test_turn_average_reading_zero_width_interval_is_no_evidence():
    # two turns each, no variation: the bootstrap has nothing to resample, so nothing is separated
    text = _reading({"transcript": [(0, 1)] * 2, "acc": [(1, 0)] * 2})
    assert "cannot be tested" in text and "better than" not in text and "excludes" not in text


def test_turn_average_reading_names_the_worst_only_when_separated():
    rng = np.random.default_rng(2)
    text = _reading({"transcript": [(1, 9), (0, 10)] * 6,
                     "retrieval_k5": [(int(s), int(u)) for s, u in rng.integers(0, 4, size=(12, 2))],
                     "acc": [(int(s), int(u)) for s, u in rng.integers(0, 4, size=(12, 2))]})
    assert "the worst is" not in text or "separated from" in text
    tied_worst = _reading({"transcript": [(0, 1), (1, 1)] * 4, "retrieval_k5": [(0, 1), (1, 1)] * 4,
                           "acc": [(1, 0), (1, 0)] * 4})
    assert "transcript, retrieval_k5 tie for the highest H_u" in tied_worst and "the worst is" not in tied_worst


def test_turn_average_reading_with_no_turn_from_2_or_nothing_scored():
    one_turn = _frame([_row("acc", 1, supported=1), _row("transcript", 1, supported=1)])
    text = accsum.turn_average_reading(one_turn)
    assert "acc, transcript tie at H_u 0" in text.replace("transcript, acc", "acc, transcript")
    assert "None of transcript, acc had any turns from turn 2 on to score, so there is no D_r to read." in text
    failed = _frame([_row("acc", 1, status="judge_error")])
    assert accsum.turn_average_reading(failed) == "No turn was scored, so there is no H_u or D_r to read."


# -- the outcome figure: mean ± std across turns --------------------------------------------------

def test_outcome_figure_is_mean_plus_minus_std_across_turns():
    from psit_lib.studies.acc.figures import plot_outcome

    df = _frame([_row("acc", t, score=s) for t, s in ((1, 6.0), (2, 8.0), (3, 10.0))])
    scores = accm.score_table(df, n_boot=200)
    row = scores[scores["criterion"] == "relevance"].iloc[0]
    assert row["mean"] == pytest.approx(8.0) and row["std"] == pytest.approx(np.std([6, 8, 10]))
    fig = plot_outcome(scores, "backend=sim")
    ax = fig.axes[0]
    assert "mean ± std across turns" in ax.get_title() and "mean ± std" in ax.get_ylabel()
    (bars,) = [c for c in ax.containers]
    segments = bars.lines[2][0].get_segments()  # one vertical bar per criterion
    assert [tuple(np.round(seg[:, 1], 6)) for seg in segments][0] == (
        round(8 - row["std"], 6), round(8 + row["std"], 6))
    assert ax.get_ylim()[1] >= 8 + row["std"]  # the whisker is not cut at the top of the scale


# -- the compact CCS ------------------------------------------------------------------------------

def test_compact_ccs_names_each_field_once_and_keeps_every_value():
    ccs = CCS(episodic_trace=["turn 1: setup, with a comma", "turn 2: update"], semantic_gist="outage",
              focal_entities=[FocalEntity(name="db-07", type="failing node")] * 3,
              relational_map=[Relation(subject="failing node", relation="is", object="db-07")] * 4,
              goal_orientation="answer", constraints=['R2: every answer must include "INC-1"'],
              predictive_cue="", uncertainty_signal="cache-03 unverified",
              retrieved_artifacts=[ArtifactRef(artifact_id="t1", turn=1, source="stored turn")])
    text = compact_ccs(ccs)
    assert text.count("failing node") == 3 + 4 and text.count("subject") == 1 and text.count("name,type") == 1
    assert "relational_map[4]{subject,relation,object}:" in text and '"turn 1: setup, with a comma"' in text
    assert all(field in text for field in CCS.model_fields)
    from psit_lib.llm.tokens import count_tokens
    assert count_tokens(text) < count_tokens(ccs.to_json())
    assert render_ccs(ccs).count("Fact: the failing node is db-07.") == 4  # what the agent reads is unchanged


# -- the default and the study scale ---------------------------------------------------------------

def test_study_scale_reproduces_the_papers_600_evaluations():
    scale = yaml.safe_load((ROOT / "notebooks" / "params" / "study_scale.yaml").read_text())["05_acc_judge_evaluation"]
    params = AccParams(**scale)
    assert len(params.domains) * params.scenarios_per_domain == 600
    assert len(params.domains) * params.scenarios_per_domain * params.n_turns == 30_000
    assert "finance" not in params.domains and params.retrieval_ks == (5,)
    assert AccParams(domains=[*params.domains, "finance"]).domains[-1] == "finance"  # an option


async def test_the_default_judges_three_answers_labelled_a_b_c(tmp_path):
    from psit_lib.llm import LLMClient, LLMSettings, ModelSession
    from psit_lib.runs import RunStore, run_episodes
    from psit_lib.runs.records import read_records
    from psit_lib.sim.transport import SimTransport
    from psit_lib.studies.acc import scoring
    from psit_lib.studies.acc.experiment import make_specs, run_acc_episode
    from psit_lib.studies.acc.records import AccEpisode

    client = LLMClient(LLMSettings(cache="off"), transport=SimTransport())
    raw = await run_episodes(make_specs(AccParams(n_turns=2, domains=["it_operations"])), run_acc_episode,
                             store=RunStore(tmp_path), client=client, run_seed=0, progress=False)
    (record,) = read_records(raw, AccEpisode)
    rows, _ = await scoring.judge_episode(ModelSession(client, run_seed=0, episode_id=record.episode_id),
                                          record.require_result(), seed=record.require_result().scenario_seed,
                                          answer_chars=1200)
    await client.aclose()
    for turn in (1, 2):
        mine = [r for r in rows if r["turn"] == turn]
        assert sorted(r["agent"] for r in mine) == ["acc", "retrieval_k5", "transcript"]
        assert sorted(r["presented_as"] for r in mine) == [0, 1, 2] and all(r["status"] == "ok" for r in mine)
