"""Fork-test experiments as notebooks run them: parameters, plan, episode function, tables.

Notebooks 02 (Hangman), 03 (diagnosis) and 04 (memory strategies) share all of this; only
the task and the agent list differ.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from psit_lib.studies.psit.protocol.outcomes import OUTCOME_ORDER, Outcome, classify_fork
from psit_lib.analysis.stats import better_than_all_baselines, rate_table, significance_table
from psit_lib.llm.client import ModelSession
from psit_lib.runs.records import ok_results
from psit_lib.runs.runner import EpisodeSpec, StudyEpisode, study_episode
from psit_lib.runs.sweeps import scaled_sweep_size
from psit_lib.studies.psit.protocol.records import ForkEpisode, ForkRecord
from psit_lib.studies.psit.reference import reference_models, self_consistency_reference
from psit_lib.studies.psit.tasks.base import PsitTask
from psit_lib.studies.psit.protocol.fork_test import host_text, run_fork_episode
from psit_lib.studies.psit.protocol.params import ForkTestParams
from psit_lib.studies.psit.protocol.table1 import with_workbook_reader
from psit_lib.studies.psit.protocol.budget import with_budget
from psit_lib.studies.psit.protocol.reproduction import reproduction_reading as reproduction_reading  # for notebooks
from psit_lib.runs.health import beside_rates

def plan_fork_episodes(task: PsitTask, params: ForkTestParams, models: list[str]) -> list[EpisodeSpec]:
    """One spec per (model, agent, episode index); ids are stable across runs."""
    return [EpisodeSpec(f"{task.name}/{model}/{agent}/{i:04d}",
                        {"task": task.name, "model": model, "agent": agent, "index": i})
            for model in models for agent in params.agents for i in range(params.n_episodes)]


def fork_episode_fn(task: PsitTask, params: ForkTestParams) -> StudyEpisode[ForkEpisode]:
    settings = params.fork_settings()

    @study_episode(ForkEpisode)
    async def episode(spec: EpisodeSpec, session: ModelSession) -> ForkEpisode:
        return await run_fork_episode(task, spec.params["agent"], session, settings)

    return episode




def sweep_specs(task: PsitTask, params: ForkTestParams, sweep_models: dict[Any, str]) -> list[EpisodeSpec]:
    """Episodes of the two swept agents at every value of the swept assumption (one simulated
    model per value, see ``Experiment.sweep_models``), fewer in a quick run; none on a real endpoint."""
    full = type(params).model_fields["n_episodes"].default
    per_value = scaled_sweep_size(params.sweep_episodes, params.n_episodes, full)
    if not sweep_models or not per_value:
        return []
    sub = params.model_copy(update={"agents": list(params.sweep_agents), "n_episodes": per_value})
    return plan_fork_episodes(task, sub, list(sweep_models.values()))


def candidate_reading(table: pd.DataFrame) -> str:
    """A generated sentence on how many candidates were model-proposed or unchecked."""
    if table.empty:
        return "No fork reached its candidates in this run."
    total = int(table["candidates"].sum())
    model = float((table["model"] * table["candidates"]).sum()) / total
    unchecked = float((table["unchecked"] * table["candidates"]).sum()) / total
    top = float(table["model"].max())
    most = [str(agent) for agent in table.index[table["model"] == top]]
    if top == 0:
        where = "no agent's forks needed any"
    elif len(most) == len(table) and len(table) > 1:
        where = f"the same share, {top:.1%}, for every agent"
    elif len(most) > 1:
        where = f"most for {', '.join(most)}, tied at {top:.1%}"
    else:
        where = f"most for {most[0]}: {top:.1%}"
    return (f"Of {total} candidates offered at the forks, {model:.1%} were proposed by the model because "
            f"the dataset gave too few ({where}), and {unchecked:.1%} could not be checked by rule R (outside "
            "the dataset). These are shares, not a comparison: no test separates the agents here.")


def fork_outcome(result: ForkEpisode) -> Outcome:
    """The outcome the classification rule (:func:`~psit_lib.studies.psit.protocol.outcomes.classify_fork`)
    gives for a stored episode's fields: the reveal, the public transcript at the fork, each
    candidate's decision and the pre-fork contradictions. The one label of an episode (the
    ``outcome`` scorer's, every table's, the figure's and the browsers')."""
    contradictions = len(result.public_contradictions)
    if result.reveal is None:  # an older record whose play stopped at an unreadable reply stored UNPARSEABLE
        return Outcome.UNPARSEABLE
    if result.reveal.parsed is None:
        return classify_fork(None, "", {}, contradictions)
    public = [m.model_dump() for m in result.transcript]
    return classify_fork(result.reveal.parsed, host_text(public), result.answers, contradictions)


def _in_run_order(table: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    """``table`` indexed by (model, agent), models sorted, agents in the order ``df`` ran them."""
    order = list(dict.fromkeys(df["agent"]))
    return table.reindex(sorted(table.index, key=lambda ix: (ix[0], order.index(ix[1]))))


def outcome_mix(df: pd.DataFrame) -> pd.DataFrame:
    """Counts of each outcome per (model, agent), in the fixed outcome order."""
    table = pd.crosstab([df["model"], df["agent"]], df["outcome"], dropna=False)
    return _in_run_order(table.reindex(columns=[o.value for o in OUTCOME_ORDER], fill_value=0), df)


def state_size_frame(records: list[ForkRecord]) -> pd.DataFrame:
    """Tokens of private state per (agent, turn) for the state-size figure."""
    rows = [{"agent": rec.spec["agent"], "model": rec.spec["model"], "turn": turn, "tokens": tokens}
            for rec, result in ok_results(records)
            for turn, tokens in enumerate(result.state_size_per_turn, start=1)]
    return pd.DataFrame(rows, columns=["agent", "model", "turn", "tokens"])


def cost_table(records: list[ForkRecord]) -> pd.DataFrame:
    """Per (model, agent): model calls per episode (the harness's), hidden calls per episode
    (memory libraries' own, incl. fork branches), private-state tokens at the fork, and helper
    replies per episode that could not be used (calls marked ``read_error``: a memory updater's
    or a library's reply that was garbage, so the agent paid for the call and kept nothing)."""
    rows = [{"model": rec.spec["model"], "agent": rec.spec["agent"], "calls": rec.usage.calls,
             "hidden_calls": len(result.hidden_calls) + len(result.branch_hidden_calls),
             "state_tokens_at_fork": (result.state_size_per_turn or [0])[-1],
             "helper_replies_unusable": sum(call.read_error is not None for call in rec.calls)}
            for rec, result in ok_results(records)]
    df = pd.DataFrame(rows, columns=["model", "agent", "calls", "hidden_calls", "state_tokens_at_fork",
                                     "helper_replies_unusable"])
    return _in_run_order(df.groupby(["model", "agent"], sort=False).mean().round(1), df)


def edit_success_table(records: list[ForkRecord]) -> pd.DataFrame | str:
    """Per (agent, tool): memory edits attempted and the share the tool accepted."""
    edits = pd.DataFrame([{"agent": rec.spec["agent"], "ok": edit.ok, "tool": edit.name}
                          for rec, result in ok_results(records)
                          for turn in result.memory_edits for edit in turn])
    if edits.empty:
        return "no memory edits"
    return edits.groupby(["agent", "tool"])["ok"].agg(["count", "mean"]).rename(columns={"mean": "success share"})


SIGNIFICANCE_BASELINES = ("vanilla", "mem0", "amem", "lightmem", "memoryos")
"""Public-only chat and the retrieval baselines over the public dialogue: every other agent (private
CoT included, as the study tests and stars it too) is tested as a method with private state."""


def significance(df: pd.DataFrame, agents: list[str], family: str = "method",
                 success_col: str = "self_consistent") -> pd.DataFrame:
    """Every comparison: one-sided Fisher of each method against each baseline per (task, model),
    Holm within ``family`` (default: each method's comparisons in its task and model, as the
    study), on ``success_col`` (the workbook's classification, or ``table1_self_consistent``: the
    study's); empty when the run has no method or no baseline."""
    methods = [a for a in agents if a not in SIGNIFICANCE_BASELINES]
    baselines = [a for a in agents if a in SIGNIFICANCE_BASELINES]
    if not methods or not baselines:
        return pd.DataFrame()
    return significance_table(df, methods, baselines, family=family, success_col=success_col)


def stars(sig: pd.DataFrame) -> pd.DataFrame:
    """Per method, whether it beats every baseline (``*``), from a :func:`significance` table."""
    if sig.empty:
        return pd.DataFrame(columns=["task", "model", "method", "baselines_compared", "better_than_all", "marker"])
    return better_than_all_baselines(sig)


def summary_table(rates: pd.DataFrame, stars: pd.DataFrame, tasks: list[str], agents: list[str], *,
                  strict: pd.DataFrame | None = None) -> pd.DataFrame:
    """The study's Table 1 layout: one row per agent, per task this run's rate (``*`` when better
    than all baselines) beside the reference study's four models (its ``*`` too). ``rates`` should
    be Table 1's own metric (:func:`table1_rates`), the only one comparable with the reference;
    ``strict`` (the workbook's classification) adds a column beside it, labelled."""
    marks = {(r.task, r.model, r.method): r.marker for r in stars.itertuples(index=False)}
    models = reference_models()
    table = pd.DataFrame(index=pd.Index(agents, name="agent"))
    for task in tasks:
        for model in rates.loc[rates["task"] == task, "model"].unique():
            table[f"{task} · {model} (this run{', Table 1 rule' if strict is not None else ''})"] = \
                _rate_cells(rates, task, model, agents, marks)
            if strict is not None:
                table[f"{task} · {model} (workbook's strict view)"] = _rate_cells(strict, task, model, agents, {})
        ref = self_consistency_reference(task, agents)
        column = f"{task} · reference ({' / '.join(models)})"
        table[column] = [" / ".join(f"{row.rate:.2f}{'*' if row.significant else ''}"  # a rate, as this run's
                                    for row in ref[ref["agent"] == a].itertuples()) or "—" for a in agents]
    return table


def _rate_cells(rates: pd.DataFrame, task: str, model: str, agents: list[str],
                marks: dict[tuple[str, str, str], str]) -> list[str]:
    cell = rates[(rates["task"] == task) & (rates["model"] == model)].set_index("agent")
    return [f"{cell.at[a, 'rate']:.2f}{marks.get((task, model, a), '')}" if a in cell.index and cell.at[a, "n_scored"]
            else "—" for a in agents]


def table1_rates(df: pd.DataFrame, agents: list[str], records: list[ForkRecord]) -> pd.DataFrame:
    """Self-consistency by Table 1's own rule (:mod:`~psit_lib.studies.psit.protocol.table1`) per
    (task, model, agent), with Wilson intervals, the unreadable shares and the host's token budget
    (:mod:`~psit_lib.studies.psit.protocol.budget`) beside; failed episodes counted apart, never scored."""
    rates = in_agent_order(rate_table(df, ["task", "model", "agent"], "table1_self_consistent"), agents)
    rates = with_workbook_reader(rates, df, ["task", "model", "agent"])
    return with_budget(beside_rates(rates, records, ["model", "agent"]), df, ["task", "model", "agent"])


def in_agent_order(df: pd.DataFrame, agents: list[str]) -> pd.DataFrame:
    """Rows sorted by the notebook's agent order (tables otherwise come out alphabetical)."""
    rank = {name: i for i, name in enumerate(agents)}
    keys = [c for c in ("task", "model") if c in df.columns]
    return df.sort_values([*keys, "agent"], key=lambda col: col.map(rank) if col.name == "agent" else col,
                          ignore_index=True)
