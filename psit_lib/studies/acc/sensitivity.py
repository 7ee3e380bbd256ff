"""What decides notebook 05's comparison: the judge's prompt (the ``judge_<variant>`` scorers, tabled
per agent and variant on 0-10) and the simulator's assumptions (the ``sweep:`` parts), with their readings.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from psit_lib.analysis.labels import format_number
from psit_lib.analysis.sweeps import GAP_COLUMNS, gap_table, sweep_reading
from psit_lib.runs.runner import EpisodeSpec
from psit_lib.studies.acc.agents import agent_rank
from psit_lib.studies.acc.experiment import AccParams, make_specs
from psit_lib.studies.acc.judge import CRITERIA, JUDGE_VARIANTS
from psit_lib.studies.acc.summary import tested_gap

SENSITIVITY_COLUMNS = ["agent", "variant", "n", "mean_score", "rank"]
LEGEND = "`>` separated, `≈` within noise, `=` equal"
SCORES_ATTR = "turn_scores"
"""The table's attrs key holding each (variant, agent)'s turn scores, as counts of each value."""
SWEEPS_HIGHER_IS_BETTER = {"a": False, "b": False}
"""Which way is better for the swept rates (drift and hallucination: lower); the ``sweeps``
metric declares these."""


def sensitivity_table(rejudged: list[tuple[str, list[dict[str, Any]]]]) -> pd.DataFrame:
    """Per (agent, variant): scored turns, mean of the four criteria on 0-10, and the agent's
    rank under that variant (1 = best). ``rejudged``: (variant, its rows) with the rows of every
    episode the variant scored (:func:`~psit_lib.studies.acc.scoring.rejudge_episode`)."""
    rows = [{"variant": variant, **row} for variant, part in rejudged for row in part if row["agent"] is not None]
    if not rows:
        return pd.DataFrame(columns=SENSITIVITY_COLUMNS)
    df = pd.DataFrame(rows)
    df["score"] = df[list(CRITERIA)].mean(axis=1)
    table = df.groupby(["agent", "variant"]).agg(n=("score", "size"), mean_score=("score", "mean")).reset_index()
    table["rank"] = table.groupby("variant")["mean_score"].rank(ascending=False, method="min").astype(int)
    order = {v: i for i, v in enumerate(JUDGE_VARIANTS)}
    out = table.sort_values(["variant", "agent"], key=lambda c: c.map(order) if c.name == "variant"
                            else c.map(agent_rank)).reset_index(drop=True)[SENSITIVITY_COLUMNS]
    # Each (variant, agent)'s turn scores as counts of each value, so the reading can test a gap
    # in mean score (sweeps.mean_gap) instead of ordering means; JSON-safe (parquet keeps attrs).
    out.attrs[SCORES_ATTR] = {
        str(variant): {str(agent): {repr(float(v)): int(c) for v, c in part["score"].value_counts().items()}
                       for agent, part in by_variant.groupby("agent")}
        for variant, by_variant in df.groupby("variant")}
    return out


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


def _separations(table: pd.DataFrame, variant: str, part: pd.DataFrame) -> dict[tuple[str, str], bool | None]:
    """For each ordered pair (higher mean, lower mean) of agents under one variant: whether the
    bootstrap 95% interval of the gap in mean score separates them (as H_u's and D_r's readings
    test it); None when the turn scores are not at hand."""
    means = part.set_index("agent")["mean_score"].astype(float)
    counts = table.attrs.get(SCORES_ATTR, {}).get(str(variant), {})
    scores = {agent: np.repeat([float(v) for v in c], [int(n) for n in c.values()])
              for agent in means.index if (c := counts.get(str(agent)))}
    return {(hi, lo): bool(tested_gap(scores, hi, lo, seed=0)[3]) if hi in scores and lo in scores else None
            for hi in means.index for lo in means.index if means[hi] > means[lo]}


def _order_text(part: pd.DataFrame, separated: dict[tuple[str, str], bool | None]) -> str:
    """One variant's agents by mean score: ``>`` between a separated neighbour pair, ``=`` for
    equal means, ``≈`` where the test cannot tell them apart."""
    ordered = part.sort_values(["mean_score", "agent"], ascending=[False, True], kind="stable")
    agents, means = ordered["agent"].tolist(), ordered["mean_score"].astype(float).tolist()
    text = agents[0]
    for i in range(1, len(agents)):
        sign = "=" if means[i] == means[i - 1] else (">" if separated.get((agents[i - 1], agents[i])) else "≈")
        text += f" {sign} {agents[i]}"
    return text


def sensitivity_reading(table: pd.DataFrame) -> str:
    """A generated sentence: does the judge's prompt change which agents are separated (the
    bootstrap 95% interval of their gap in mean score excludes zero), and how far do means move."""
    if table.empty:
        return "No episode was re-judged."
    variants = list(dict.fromkeys(table["variant"]))
    parts = {v: table[table["variant"] == v] for v in variants}
    separations = {v: _separations(table, v, parts[v]) for v in variants}
    summary = sensitivity_summary(table)
    spread = summary["spread"].astype(float)
    if spread.max() == 0:
        moved = f"no agent's mean score moves across the {len(variants)} prompts"
    else:
        widest = ", ".join(str(a) for a in spread[spread == spread.max()].index)
        moved = (f"the largest spread of an agent's mean score across the {len(variants)} prompts is "
                 f"{format_number(float(spread.max()))} points of 10 ({widest})")
    if all(parts[v]["mean_score"].nunique() == 1 for v in variants):
        same = {v: format_number(float(parts[v]["mean_score"].iloc[0])) for v in variants}
        scores = (f"{next(iter(same.values()))} of 10" if len(set(same.values())) == 1
                  else ", ".join(f"{v}: {s}" for v, s in same.items()))
        return (f"Under every judge prompt all {parts[variants[0]]['agent'].nunique()} agents have the same mean "
                f"score ({scores}): a tie, so no prompt ranks them; {moved}.")
    if len(variants) == 1:
        return (f"Only the {variants[0]} judge prompt was run, so this run cannot say whether the prompt changes "
                f"the ranking; under it: {_order_text(parts[variants[0]], separations[variants[0]])} "
                f"({LEGEND}).")
    untested = any(sep is None for seps in separations.values() for sep in seps.values())
    pairs = {v: {pair for pair, sep in seps.items() if sep} for v, seps in separations.items()}
    orders = "; ".join(f"{v}: {_order_text(parts[v], separations[v])}" for v in variants)
    if not any(pairs.values()):
        why = ("the turn scores are not at hand to test any gap" if untested else
               "the bootstrap 95% interval of every gap in mean score includes zero")
        return (f"No judge prompt separates any two agents ({why}), so this run ranks none of them under any "
                f"prompt ({orders}); {moved}.")
    reversed_pairs = sorted({(hi, lo, v1, v2) for v1 in variants for v2 in variants
                             for (hi, lo) in pairs[v1] if (lo, hi) in pairs[v2]})
    if reversed_pairs:
        hi, lo, v1, v2 = reversed_pairs[0]
        return (f"The ranking of the agents depends on the judge's prompt: {v1} scores {hi} above {lo} and {v2} "
                f"the reverse, both gaps clear of zero ({orders}; {LEGEND}); "
                f"{moved}.")
    if len({frozenset(p) for p in pairs.values()}) == 1:
        shown = ", ".join(f"{hi} above {lo}" for hi, lo in sorted(pairs[variants[0]]))
        return (f"Every judge prompt separates the same pairs of agents ({shown}) and none reverses them "
                f"({orders}; {LEGEND}); {moved}.")
    return (f"No judge prompt reverses a separated pair of agents, but the prompts separate different pairs "
            f"({orders}; {LEGEND}); {moved}.")


# -- sweeps of simulator assumptions ---------------------------------------------------------

def sweep_specs(params: AccParams, sweep_models: dict[Any, str]) -> list[EpisodeSpec]:
    """Episodes of the small run each swept value gets (one simulated model per value): the first
    domain, ``sweep_scenarios`` scenarios of ``sweep_turns`` turns."""
    small = params.model_copy(update={"domains": params.domains[:1], "n_turns": params.sweep_turns,
                                      "scenarios_per_domain": params.sweep_scenarios,
                                      "retrieval_ks": params.retrieval_ks[:1]})
    return make_specs(small, list(sweep_models.values())) if sweep_models else []


def sweep_gaps(turns: pd.DataFrame, knob: str, metric: str, a: str = "acc", b: str = "transcript",
               seed: int = 0) -> pd.DataFrame:
    """``metric`` gap (a - b) at each swept value, the interval bootstrapped over scenarios' means
    (the turns of one conversation are not independent: a rule lost at turn 5 stays lost)."""
    if turns.empty or "status" not in turns or "value" not in turns:
        return pd.DataFrame(columns=GAP_COLUMNS)
    ok = turns[(turns["status"] == "ok") & turns[metric].notna()].assign(agent=lambda d: d["agent"].astype(str))
    per_scenario = ok.groupby(["value", "agent", "episode_id"], as_index=False)[metric].mean()
    table = gap_table(per_scenario, knob=knob, value_col="value", system_col="agent", a=a, b=b,
                      outcome_col=metric, kind="mean", seed=seed)
    return table.assign(metric=metric)


def sweeps_reading(gaps: pd.DataFrame) -> str:
    """One generated sentence per (knob, metric) sweep, as a Markdown list; which way is better is
    what the ``sweeps`` metric declares for its rates (lower)."""
    if gaps.empty:
        return "No sweep ran (the simulator's assumptions are swept only on the simulated backend)."
    better = "higher" if SWEEPS_HIGHER_IS_BETTER["a"] else "lower"
    return "\n".join(f"- **{metric} · {knob}**: {sweep_reading(part, measure=metric, direction=better)}"
                     for (knob, metric), part in gaps.groupby(["knob", "metric"], sort=False))
