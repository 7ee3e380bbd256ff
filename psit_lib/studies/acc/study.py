"""The ACC study (notebook 05) as a :class:`~psit_lib.runs.study.Study`: task -> episode -> scores -> metrics.

The ``judge`` scorer and each ``judge_<variant>`` are model-graded on the episode's own seeds, so their
calls are the live judge's and replay from the run's cache (``psit rescore``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from psit_lib.analysis.sweeps import GAP_COLUMNS
from psit_lib.llm.client import ModelSession
from psit_lib.runs.records import EpisodeRecord
from psit_lib.runs.scores import Metric, Score, ScoreContext, Scored, Scorer, metric, scorer
from psit_lib.runs.study import MAIN, Study, StudyNotebook, imported
from psit_lib.studies.acc import experiment as accx
from psit_lib.studies.acc import metrics as accm
from psit_lib.studies.acc import scoring
from psit_lib.studies.acc import sensitivity as accs
from psit_lib.studies.acc import summary as accsum
from psit_lib.llm.diagnostics import FLAG_DEGENERATE_JUDGE
from psit_lib.studies.acc.judge import CRITERIA, JUDGE_ROLE, JUDGE_VARIANTS, judge_is_degenerate
from psit_lib.studies.acc.records import AccEpisode

NOTEBOOK = "05_acc_judge_evaluation"
SWEEP_METRICS: tuple[str, ...] = ("drift", "hallucination")


# -- scorers ---------------------------------------------------------------------------------------

def _episode(record: EpisodeRecord[Any]) -> AccEpisode:
    result = record.require_result()
    assert isinstance(result, AccEpisode)
    return result


def episode_session(ctx: ScoreContext, episode_id: str) -> ModelSession:
    """A session on the episode's own seeds (root path ``main``, as generation's): the judge's
    calls draw the seeds the live judge drew, so a run that recorded them replays them from the
    cache. ``episode_id`` names whose seeds (a judge variant draws its own, see below)."""
    if ctx.session is None:
        raise ValueError("the judge calls a model: scoring needs a session (the run's cache)")
    given = ctx.session
    return ModelSession(given.client, run_seed=given.run_seed, episode_id=episode_id, sampling=given.sampling,
                        log=given.log, diagnostics=given.diagnostics)


@scorer("footprint", version=1)
def footprint(record: EpisodeRecord[Any], ctx: ScoreContext) -> Score:
    """Tokens each agent carried into its answering context per turn; the value is the ACC's mean."""
    rows = scoring.answer_rows(_episode(record))
    acc = [r["footprint_tokens"] for r in rows if r["agent"] == "acc"]
    return Score(value=sum(acc) / len(acc) if acc else None,
                 explanation="mean tokens of the rendered CCS the ACC answered from, per turn",
                 metadata={"rows": rows})


@scorer("judge", version=1, model_graded=True)
async def judge(record: EpisodeRecord[Any], ctx: ScoreContext) -> Score:
    """The study's judge over the stored turns: per turn the canonical memory from the query, then
    the blinded, shuffled answers scored 0-10 with claim and rule counts. The value is the share
    of answers it could score."""
    episode = _episode(record)
    session = episode_session(ctx, record.episode_id)
    rows, memories = await scoring.judge_episode(session, episode, seed=episode.scenario_seed,
                                                 answer_chars=int(record.spec["judge_answer_chars"]))
    scored = sum(r["status"] == "ok" for r in rows)
    # a judge that told no answers apart is a health finding (judge.judge_is_degenerate), flagged where the
    # judge's own reads are kept: this score's diagnostics, which the run health reads
    degenerate = judge_is_degenerate([r for r in rows if r["status"] == "ok"], len(episode.turns))
    if degenerate is not None:
        session.diagnostics.flag(FLAG_DEGENERATE_JUDGE, JUDGE_ROLE, degenerate, degenerate)
    # what the judge could not read (its replies are no longer in the episode's own diagnostics)
    return Score(value=scored / len(rows) if rows else None,
                 explanation=f"{scored} of {len(rows)} answers scored by the judge",
                 metadata={"rows": rows, "memories": memories, "diagnostics": session.diagnostics.as_dict()})


def variant_scorer(variant: str) -> Scorer:
    """The scorer of one judge-prompt variant: the main part's turns scored again from the judge's
    canonical memory, on seeds of episode ``<episode>/judge-<variant>`` (as older runs' re-judging
    pass drew them, so their cached calls replay). Value: mean 0-10 score over scored answers."""

    def applies(params: Any, part: str) -> bool:
        return part == MAIN and variant in params.judge_variants

    async def score(record: EpisodeRecord[Any], ctx: ScoreContext) -> Score:
        if not applies(ctx.params, ctx.part):
            return Score(explanation=f"not scored: the {variant} judge scores the main part's episodes when "
                                     "judge_variants names it")
        episode = _episode(record)
        chars = int(record.spec["judge_answer_chars"])
        _, memories = await scoring.judge_episode(episode_session(ctx, record.episode_id), episode,
                                                  seed=episode.scenario_seed, answer_chars=chars)
        rows = await scoring.rejudge_episode(episode_session(ctx, f"{record.episode_id}/judge-{variant}"),
                                             episode, variant, memories, answer_chars=chars)
        values = [sum(r[c] for c in CRITERIA) / len(CRITERIA) for r in rows if r["agent"] is not None]
        return Score(value=sum(values) / len(values) if values else None,
                     explanation=f"mean 0-10 score over {len(values)} answers under the {variant} judge prompt",
                     metadata={"rows": rows})

    return Scorer(f"judge_{variant}", score, version=1, model_graded=True, applies=applies)


@scorer("ccs_forms", version=1)
def ccs_forms(record: EpisodeRecord[Any], ctx: ScoreContext) -> Score:
    """The ACC's committed CCS per turn in three serialisations (tokens); the value is the mean
    compact-over-rendered ratio."""
    rows = scoring.ccs_form_rows(_episode(record))
    ratios = [r["compact_tokens"] / r["rendered_tokens"] for r in rows if r["rendered_tokens"]]
    return Score(value=sum(ratios) / len(ratios) if ratios else None,
                 explanation="compact over rendered tokens of the committed CCS, mean over turns",
                 metadata={"rows": rows})


SCORERS: tuple[Scorer, ...] = (footprint, judge, *(variant_scorer(v) for v in JUDGE_VARIANTS), ccs_forms)


# -- from scores to turns ------------------------------------------------------------------------------

def turns_of(frame: pd.DataFrame) -> pd.DataFrame:
    """The turns frame (:func:`~psit_lib.studies.acc.metrics.frame_of_turns`) of a selection of the
    scored view: one row per (episode, turn, agent), the judge's verdict beside what the agent
    carried; a failed episode is one ``episode_error`` row."""
    rows: list[dict[str, Any]] = []
    for row in frame.to_dict("records"):
        base = {"episode_id": row["episode_id"], "model": row.get("model"), "domain": row.get("domain")}
        if row["status"] != "ok":
            rows.append({**base, "status": "episode_error", "error": row.get("error"), "agent": None, "turn": None})
            continue
        verdicts = {(v["turn"], v["agent"]): v for v in row.get("judge.rows") or []}
        for answer in row.get("footprint.rows") or []:
            verdict = verdicts.get((answer["turn"], answer["agent"]), {"status": "judge_error", "error": None})
            rows.append({**base, **answer, **verdict})
    return accm.frame_of_turns(rows)


def main_turns(scored: Scored) -> pd.DataFrame:
    """The main part's turns frame (the notebook's status table and per-turn figures read it)."""
    return turns_of(scored.part(MAIN))


# -- metrics ---------------------------------------------------------------------------------------------

@metric("summary_rates", higher_is_better=accsum.SUMMARY_HIGHER_IS_BETTER, parts=[MAIN])
def summary_rates(scored: Scored) -> pd.DataFrame:
    """The paper's H_u and D_r (turn averages) with the pooled rates beside; lower is better."""
    return accsum.summary_table(main_turns(scored))


@metric("episode_rates", higher_is_better=accsum.EPISODE_HIGHER_IS_BETTER, parts=[MAIN])
def episode_rates(scored: Scored) -> pd.DataFrame:
    """Per (episode, agent): H_u, D_r and the mean judge scores within the episode (the claims pair agents by it)."""
    return accsum.episode_table(main_turns(scored))


@metric("hallucination_drift", higher_is_better=accm.RATES_HIGHER_IS_BETTER, parts=[MAIN])
def hallucination_drift(scored: Scored) -> pd.DataFrame:
    """Pooled hallucination and drift rates with Wilson intervals; lower is better."""
    return accm.rate_table(main_turns(scored))


@metric("judge_scores", higher_is_better={"mean": True, "ci_low": True, "ci_high": True}, parts=[MAIN])
def judge_scores(scored: Scored) -> pd.DataFrame:
    """Mean 0-10 judge score per (agent, criterion) with a bootstrap interval; higher is better."""
    return accm.score_table(main_turns(scored), n_boot=scored.params.n_boot, seed=scored.params.seed)


@metric("footprint_by_domain", parts=[MAIN])
def footprint_by_domain(scored: Scored) -> pd.DataFrame:
    """Mean memory footprint per (domain, agent): a cost, reported without a better or worse."""
    return accm.footprint_table(main_turns(scored))


@metric("ccs_forms", parts=[MAIN])
def ccs_form_table(scored: Scored) -> pd.DataFrame:
    """Tokens of the committed CCS in three serialisations, mean per domain (sizes, no direction)."""
    frame = scored.part(MAIN)
    rows = [{"domain": row.get("domain"), **form} for row in frame.to_dict("records") if row["status"] == "ok"
            for form in row.get("ccs_forms.rows") or []]
    return accm.ccs_form_table(rows)


@metric("judge_sensitivity", higher_is_better={"mean_score": True}, parts=[MAIN])
def judge_sensitivity(scored: Scored) -> pd.DataFrame:
    """Each agent's mean 0-10 score under each judge prompt, and its rank (1 = best)."""
    frame = scored.part(MAIN)
    return accs.sensitivity_table([(v, [r for cell in frame.get(f"judge_{v}.rows", []) if isinstance(cell, list)
                                        for r in cell]) for v in scored.params.judge_variants])


@metric("sweeps", higher_is_better=accs.SWEEPS_HIGHER_IS_BETTER, parts=["sweep:"])
def sweeps(scored: Scored) -> pd.DataFrame:
    """The ACC - transcript gap in drift and hallucination at each swept value; both rates
    (:data:`SWEEP_METRICS`) are lower-is-better, so a negative gap favours the ACC."""
    known = list(accx.SWEEPS)
    parts = {part: scored.parts[part] for part in scored.part_names("sweep:")}
    tables = []
    for knob in sorted({str(meta["knob"]) for meta in parts.values()},
                       key=lambda k: (known.index(k) if k in known else len(known), k)):
        turns = pd.concat([turns_of(scored.part(part)).assign(value=meta["value"]) for part, meta in parts.items()
                           if str(meta["knob"]) == knob], ignore_index=True)
        tables += [accs.sweep_gaps(turns, knob, m, seed=scored.params.seed) for m in SWEEP_METRICS]
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=[*GAP_COLUMNS, "metric"])


METRICS: tuple[Metric, ...] = (summary_rates, episode_rates, hallucination_drift, judge_scores, footprint_by_domain, ccs_form_table,
                               judge_sensitivity, sweeps)


_differences = imported("psit_lib.studies.acc.differences:DIFFERENCES")
_assumptions = imported("psit_lib.studies.acc.assumptions:SIMULATOR_ASSUMPTIONS")
_catalogue = imported("psit_lib.studies.acc.catalogue:prompt_catalogue", call=True)


STUDY = Study(
    name="acc",
    result_type=AccEpisode,
    notebooks={NOTEBOOK: StudyNotebook(
        params_model=accx.AccParams, plan=accx.make_specs, episode=lambda params: accx.run_acc_episode,
        scorers=SCORERS, metrics=METRICS,
        sweeps=lambda params: params.sweeps, sweep_plan=accs.sweep_specs, key_table="summary_rates")},
    prompt_catalogue=_catalogue, differences=_differences, simulator_assumptions=_assumptions,
    episode_view=imported("psit_lib.studies.acc.conversation_view:VIEW"))

