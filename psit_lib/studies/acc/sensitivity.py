"""What decides notebook 05's comparison: the judge's prompt, and the simulator's assumptions.

* **Judge-prompt sensitivity.** Every recorded turn is scored again under each wording of the
  rubric (:data:`~psit_lib.studies.acc.judge.JUDGE_VARIANTS`: rubric wording, score scale,
  answer order), from the same canonical memory, query and answers the live judge saw; only
  judge calls are made. The table gives each agent's mean score per variant on 0-10, its
  spread across variants, and each variant's ranking of the agents.
* **Sweeps.** The ACC - transcript-replay gap in drift and hallucination at each value of a
  simulator assumption (attention window, answer length), from small swept runs.

Readings are generated from these tables, never written by hand.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from psit_lib.analysis.labels import format_number
from psit_lib.analysis.sweeps import GAP_COLUMNS, gap_table
from psit_lib.runs.runner import EpisodeSpec
from psit_lib.studies.acc.agents import agent_rank
from psit_lib.studies.acc.experiment import AccParams, AccRecord, make_specs
from psit_lib.studies.acc.judge import CRITERIA, JUDGE_VARIANTS, CanonicalMemory, JudgeOutputError, rejudge_turn
from psit_lib.studies.acc.metrics import turns_frame

SENSITIVITY_COLUMNS = ["agent", "variant", "n", "mean_score", "rank"]


def rejudge_specs(records: list[AccRecord], variants: list[str]) -> list[EpisodeSpec]:
    """One re-judging job per (finished episode, variant)."""
    unknown = [v for v in variants if v not in JUDGE_VARIANTS]
    if unknown:
        raise ValueError(f"unknown judge variant(s) {unknown}; choose from {list(JUDGE_VARIANTS)}")
    return [EpisodeSpec(f"{r.episode_id}/judge-{v}", {"source": r.episode_id, "variant": v,
                                                        "model": r.spec["model"]})
            for r in records if r.ok for v in variants]


def rejudge_fn(records: list[AccRecord], answer_chars: int):
    """The episode function that re-scores one recorded episode under one judge variant."""
    by_id = {r.episode_id: r for r in records}

    async def rejudge(spec: EpisodeSpec, session: Any) -> dict[str, Any]:
        record = by_id[spec.params["source"]]
        variant = JUDGE_VARIANTS[spec.params["variant"]]
        rows = []
        for t in record.result.turns:
            memory = CanonicalMemory.model_validate(t.judge.canonical_memory)
            answers = {name: a.answer for name, a in t.agents.items()}
            try:
                scored = await rejudge_turn(session.branch(f"t{t.turn}"), variant, memory, t.query, answers,
                                            seed=record.result.scenario_seed + t.turn, answer_chars=answer_chars)
            except JudgeOutputError as exc:
                rows.append({"turn": t.turn, "agent": None, "error": str(exc)})
                continue
            rows += [{"turn": t.turn, "agent": name, "error": None, **{c: ev[c] for c in CRITERIA}}
                     for name, ev in scored.items()]
        return {"variant": variant.name, "source": record.episode_id, "rows": rows}

    return rejudge


def sensitivity_table(rejudged: list[dict[str, Any]]) -> pd.DataFrame:
    """Per (agent, variant): scored turns, mean of the four criteria on 0-10, and the agent's
    rank under that variant (1 = best)."""
    rows = [{"variant": r["variant"], **row} for r in rejudged if r.get("status") == "ok"
            for row in r["rows"] if row["agent"] is not None]
    if not rows:
        return pd.DataFrame(columns=SENSITIVITY_COLUMNS)
    df = pd.DataFrame(rows)
    df["score"] = df[list(CRITERIA)].mean(axis=1)
    table = df.groupby(["agent", "variant"]).agg(n=("score", "size"), mean_score=("score", "mean")).reset_index()
    table["rank"] = table.groupby("variant")["mean_score"].rank(ascending=False, method="min").astype(int)
    order = {v: i for i, v in enumerate(JUDGE_VARIANTS)}
    return table.sort_values(["variant", "agent"], key=lambda c: c.map(order) if c.name == "variant"
                             else c.map(agent_rank)).reset_index(drop=True)[SENSITIVITY_COLUMNS]


def sensitivity_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per agent: mean score under each variant side by side, the spread (max - min) and the
    ranks it got."""
    if table.empty:
        return pd.DataFrame()
    wide = table.pivot(index="agent", columns="variant", values="mean_score")
    wide = wide[[v for v in JUDGE_VARIANTS if v in wide.columns]]
    wide["spread"] = wide.max(axis=1) - wide.min(axis=1)
    wide["ranks"] = table.pivot(index="agent", columns="variant", values="rank")[
        [v for v in JUDGE_VARIANTS if v in wide.columns]].astype(str).agg(" / ".join, axis=1)
    return wide.reindex(sorted(wide.index, key=agent_rank))


def sensitivity_reading(table: pd.DataFrame) -> str:
    """A generated sentence: does the ranking of agents change with the judge's prompt, and how
    far do an agent's mean scores move."""
    if table.empty:
        return "No episode was re-judged."
    rankings = {v: tuple(part.sort_values(["rank", "agent"])["agent"]) for v, part in table.groupby("variant")}
    summary = sensitivity_summary(table)
    widest = summary["spread"].idxmax()
    stable = len(set(rankings.values())) == 1
    ranking = " > ".join(next(iter(rankings.values())))
    moved = (f"the largest spread of an agent's mean score across the {len(rankings)} prompts is "
             f"{format_number(float(summary.at[widest, 'spread']))} points of 10 ({widest})")
    if stable:
        return f"Every judge prompt ranks the agents the same way ({ranking}); {moved}."
    changed = ", ".join(f"{v}: {' > '.join(r)}" for v, r in rankings.items())
    return f"The ranking of the agents depends on the judge's prompt ({changed}); {moved}."


# -- sweeps of simulator assumptions ---------------------------------------------------------

def sweep_params(params: AccParams) -> AccParams:
    """The small run each swept value gets (first domain, ``sweep_scenarios`` scenarios of
    ``sweep_turns`` turns)."""
    return params.model_copy(update={"domains": params.domains[:1], "n_turns": params.sweep_turns,
                                     "scenarios_per_domain": params.sweep_scenarios,
                                     "retrieval_ks": params.retrieval_ks[:1]})


def sweep_specs(params: AccParams, sweep_models: dict[Any, str]) -> list[EpisodeSpec]:
    """Episodes of the small swept run at every value (one simulated model per value)."""
    return make_specs(sweep_params(params), list(sweep_models.values())) if sweep_models else []


def sweep_gaps(records: list[AccRecord], sweep_models: dict[Any, str], knob: str, metric: str,
               a: str = "acc", b: str = "transcript", seed: int = 0) -> pd.DataFrame:
    """``metric`` gap (a - b) at each swept value: each scenario's mean over its turns, then the
    mean over scenarios with a percentile-bootstrap 95% interval over scenarios (the turns of
    one conversation are not independent: a rule lost at turn 5 stays lost)."""
    df = turns_frame(records)
    if df.empty or "status" not in df:
        return pd.DataFrame(columns=GAP_COLUMNS)
    value_of = {model: value for value, model in sweep_models.items()}
    ok = df[(df["status"] == "ok") & df[metric].notna()].assign(value=lambda d: d["model"].map(value_of),
                                                               agent=lambda d: d["agent"].astype(str))
    per_scenario = ok.groupby(["value", "agent", "episode_id"], as_index=False)[metric].mean()
    table = gap_table(per_scenario, knob=knob, value_col="value", system_col="agent", a=a, b=b,
                      outcome_col=metric, kind="mean", seed=seed)
    return table.assign(metric=metric)


async def run_sweeps(exp: Any, params: AccParams, metrics: tuple[str, ...] = ("drift", "hallucination")
                     ) -> pd.DataFrame:
    """Every sweep of ``params.sweeps`` (simulator only; empty on a real endpoint): the small run
    at each value, then the ACC - replay gap per metric. Resumes and reuses the cache like any run."""
    from psit_lib.studies.acc.experiment import run_acc_episode

    tables = await exp.run_sweeps(
        params.sweeps, lambda models: sweep_specs(params, models), run_acc_episode,
        lambda records, models, knob: [sweep_gaps(records, models, knob, m, seed=params.seed) for m in metrics],
        concurrency=params.concurrency)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=[*GAP_COLUMNS, "metric"])


def sweeps_reading(gaps: pd.DataFrame) -> str:
    """One generated sentence per (knob, metric) sweep, as a Markdown list."""
    from psit_lib.analysis.sweeps import sweep_reading

    if gaps.empty:
        return "No sweep ran (the simulator's assumptions are swept only on the simulated backend)."
    return "\n".join(f"- **{metric} · {knob}**: {sweep_reading(part, measure=metric)}"
                     for (knob, metric), part in gaps.groupby(["knob", "metric"], sort=False))
