"""The quick secret-choice experiment (notebook 07): which secrets does a model pick?

This workbook's extension, not the study's measurement (the study's view is its Appendix E,
:mod:`~psit_lib.studies.psit.protocol.appendix_e`, at one temperature). The player sends the task's
opener and at once asks the host to reveal its secret, many seeds per (task, model, temperature).
A public-only agent keeps no private state, so it names a secret that fits its opening reply: still
the model's prior over secrets, the object of the analysis (``agent="private_cot"`` reveals the
secret it committed to). On the simulator the secret is drawn from ``prior ** (alpha / T)``
(SPEC §8), so entropy rises with temperature by construction.

Chi-square references: Hangman against wordfreq frequencies over the task's vocabulary and against
uniform; diagnosis against uniform over the 49 DDXPlus conditions (no corpus frequency exists of
conditions a patient picks). Every table of 07 is a metric over the ``secret`` scores (:data:`METRICS`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from typing import Any, Mapping

import pandas as pd

from psit_lib.analysis.labels import format_number
from psit_lib.studies.psit.agents.factory import build_agent
from psit_lib.studies.psit.agents.names import canonical_agent_name
from psit_lib.studies.psit.protocol.outcomes import secret_appears_in
from psit_lib.studies.psit.reference import attractor_spellings, mode_collapse_attractors
from psit_lib.studies.psit.protocol.appendix_e import COLUMNS, main_fork_reveals, rows_from_records, top_secrets
from psit_lib.studies.psit.secrets import MIN_SAMPLES_TO_COMPARE, chi_square_vs_prior, entropy_gap, secret_summary
from psit_lib.studies.psit.protocol.fork_test import (NEUTRAL_SYSTEM_PROMPT, count_fork_answer, host_role,
                                                      observe_host_reply)
from psit_lib.llm.client import ModelSession
from psit_lib.studies.psit.protocol.params import SecretChoiceParams
from psit_lib.runs.scores import Metric, Score, ScoreContext, Scored, Scorer, scorer
from psit_lib.runs.study import MAIN
from psit_lib.studies.psit.protocol.records import ChoiceReveal, Opening, SecretChoiceEpisode
from psit_lib.runs.runner import EpisodeSpec, StudyEpisode, study_episode
from psit_lib.studies.psit.tasks.base import HostReplyError, PsitTask
from psit_lib.studies.psit.tasks.registry import TASK_NAMES, UnknownTaskError, make_task

NOTEBOOK = "07_secret_distribution_mode_collapse"


# -- plan and episodes --------------------------------------------------------------------


def temperature_tag(temperature: float) -> str:
    """Stable text of a temperature for episode ids (``T0.30``)."""
    return f"T{temperature:.2f}"


def plan_secret_choice(params: SecretChoiceParams, models: list[str]) -> list[EpisodeSpec]:
    """One spec per (task, model, temperature, sample); ids are stable across runs."""
    return [EpisodeSpec(f"{task}/{model}/{temperature_tag(t)}/{i:04d}",
                        {"task": task, "model": model, "agent": params.agent, "temperature": t, "index": i})
            for task in params.tasks for model in models for t in params.temperatures
            for i in range(params.n_samples)]


async def run_secret_choice_episode(task: PsitTask, agent_name: str, session: ModelSession) -> SecretChoiceEpisode:
    """Opener, then the reveal prompt on the same conversation; returns the audit record. The
    opening and the reveal are counted in the session's diagnostics, as in the fork test."""
    name = canonical_agent_name(agent_name)
    agent = build_agent(agent_name, system_prompt=NEUTRAL_SYSTEM_PROMPT, host_role=host_role(task))
    opener = task.opener()
    opening = (await agent.send(opener, session)).reply
    try:
        state = observe_host_reply(task, session, opening,
                                   lambda: task.observe_opening(task.initial_state(), opening), name)
        constraints = task.public_constraints(state)
    except HostReplyError as exc:
        state, constraints = None, {"unreadable": str(exc)}
    reveal_q = task.reveal_prompt()
    reveal_a = (await agent.send(reveal_q, session.branch("reveal"))).reply
    reading = task.read_reveal(reveal_a)
    revealed = task.normalise(reading.value) if reading.value else None
    count_fork_answer(task, session, reveal_a, revealed, "reveal", name, reading.reason)
    return SecretChoiceEpisode(
        task=task.name, agent=name, model=session.model,
        temperature=session.sampling.temperature,
        opening=Opening(question=opener, answer=opening, constraints=constraints),
        reveal=ChoiceReveal(question=reveal_q, answer=reveal_a, parsed=revealed,
                            compatible=reveal_compatibility(task, state, revealed),
                            said_in_opening=bool(revealed and secret_appears_in(revealed, opening))),
        failure=None if revealed is not None else f"reveal answer unreadable ({reading.reason})")


def reveal_compatibility(task: PsitTask, state: Any, revealed: str | None) -> bool | None:
    """Whether the revealed secret fits every public constraint: None when there is no readable
    opening or reveal, and None for a secret rule R cannot check (a condition outside DDXPlus
    has no evidence list, so nothing could refute it: it is unchecked, never ``compatible``)."""
    if state is None or revealed is None or not task.is_checkable(revealed):
        return None
    return bool(task.is_compatible(state, revealed))


def secret_choice_episode_fn(params: SecretChoiceParams) -> StudyEpisode[SecretChoiceEpisode]:
    """The runner's episode function: each spec's task, agent and temperature."""
    tasks = {name: make_task(name) for name in params.tasks}

    @study_episode(SecretChoiceEpisode)
    async def episode(spec: EpisodeSpec, session: ModelSession) -> SecretChoiceEpisode:
        # its own temperature; the run's sampling object is shared by every session, so replaced, never changed
        session.sampling = replace(session.sampling, temperature=float(spec.params["temperature"]))
        return await run_secret_choice_episode(tasks[spec.params["task"]], spec.params["agent"], session)

    return episode


def secret_frame(scored: Scored) -> pd.DataFrame:
    """The reveals of the quick experiment from the ``secret`` scores (one row per episode, failed
    ones with secret None and status ``error``): every table's and the figure's frame."""
    rows = scored.part(MAIN)
    if rows.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    ok = rows["status"] == "ok"
    status = rows["secret.status"] if "secret.status" in rows else pd.Series(None, index=rows.index, dtype=object)
    return pd.DataFrame({"task": rows["task"], "model": rows["model"], "agent": rows["agent"],
                         "temperature": rows["temperature"].astype(float),
                         "secret": rows["secret"].where(ok, None), "status": status.where(ok, "error"),
                         "episode_id": rows["episode_id"], "source_notebook": NOTEBOOK}, columns=list(COLUMNS))


# -- scorer and metrics (every table of 07) ----------------------------------------------

GROUPS = ["task", "model", "temperature"]


@scorer("secret", version=1)
def secret_scorer(record, ctx: ScoreContext) -> Score:
    """The secret read from the episode's reveal (None when unreadable; ``status`` says which)."""
    row = rows_from_records([record], source_notebook=NOTEBOOK)[0]
    return Score(value=row["secret"], explanation=f"reveal {row['status']}", metadata={"status": row["status"]})


SCORERS: tuple[Scorer, ...] = (secret_scorer,)
METRICS: tuple[Metric, ...] = (  # a spread has no better or worse (mode collapse is described)
    Metric("secret_spread", lambda s: metrics_table(secret_frame(s), GROUPS, n_boot=s.params.n_boot, seed=s.params.seed)),
    Metric("chi_square", lambda s: chi_square_table(secret_frame(s), GROUPS)),
    Metric("appendix_e_top10", lambda s: top_secrets(main_fork_reveals(s.run_mates))),  # 07's run-mates 02-04
    Metric("attractors", lambda s: attractor_table(secret_frame(s), main_fork_reveals(s.run_mates))),
)
"""Notebook 07's tables, by the names they are saved under."""


def sweep_banner(banner: str, temperatures: list[float]) -> str:
    """The experiment banner with its single default temperature replaced by the sweep."""
    sweep = ", ".join(f"{t:g}" for t in temperatures)
    replaced, count = re.subn(r"\*\*temperature:\*\* `[^`]*`", f"**temperatures (swept):** `{sweep}`", banner)
    return replaced if count else f"{banner} · **temperatures (swept):** `{sweep}`"


# -- references ---------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _hangman_frequencies() -> dict[str, float]:
    """wordfreq frequency of every word of the Hangman task's vocabulary (most frequent first)."""
    from psit_lib.studies.psit.tasks.hangman import HangmanTask

    vocabulary = HangmanTask().vocabulary
    return {word: vocabulary.frequency(word) for word in vocabulary.words}


def domain_of(task: str) -> tuple[str, ...]:
    """Every secret the task's reference distributions cover (vocabulary words / conditions)."""
    if task == "hangman":
        return tuple(_hangman_frequencies())
    if task == "diagnosis":
        from psit_lib.studies.psit.tasks.diagnosis import DiagnosisTask

        return tuple(DiagnosisTask().dataset.condition_names)
    raise UnknownTaskError(f"unknown task {task!r}; choose from {', '.join(TASK_NAMES)}")


def reference_priors(task: str) -> dict[str, dict[str, float]]:
    """Reference distributions per task, by label, for the chi-square comparison."""
    uniform = dict.fromkeys(domain_of(task), 1.0)
    if task == "hangman":
        return {"wordfreq frequency": _hangman_frequencies(), "uniform over vocabulary": uniform}
    return {"uniform over 49 conditions (frequency reference)": uniform}


def min_n_for_test(prior: Mapping[str, float], min_expected: float = 5) -> int:
    """Smallest sample size at which the chi-square test has two cells of expected count >= ``min_expected``.

    The most likely secret's cell fills first; the rest can always be pooled, so the answer is
    ``min_expected / p_max`` (for a uniform prior over ``K`` secrets: ``min_expected * K``).
    """
    weights = [float(w) for w in prior.values() if w > 0]
    if len(weights) < 2:
        raise ValueError("a prior needs at least two secrets of positive weight to be tested against.")
    total = sum(weights)
    p_max = max(weights) / total
    return max(math.ceil(min_expected / p_max - 1e-9), math.ceil(min_expected / (1 - p_max) - 1e-9))


def chi_square_table(df: pd.DataFrame, group_cols: list[str]) -> pd.DataFrame:
    """Chi-square goodness of fit of each group's revealed secrets (``group_cols`` include ``task``)
    against each reference prior; a row without a test gives the sample size a test would need."""
    rows = []
    for key, sub in df.groupby(group_cols, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        cell = dict(zip(group_cols, key))
        secrets = sub["secret"].dropna().tolist()
        for label, prior in reference_priors(cell["task"]).items():
            inside = [s for s in secrets if s in prior]
            row = {**cell, "reference": label, "n": len(secrets), "n_in_prior": len(inside),
                   "out_of_prior_share": (len(secrets) - len(inside)) / len(secrets) if secrets else float("nan")}
            result = chi_square_vs_prior(Counter(inside), prior) if inside else None
            if result is None:
                row.update(cells=None, dof=None, chi2=None, p_value=None,
                           note=f"not testable: needs n_in_prior >= {min_n_for_test(prior)}")
            else:
                row.update(cells=len(result.categories), dof=result.dof, chi2=result.statistic,
                           p_value=result.p_value, note=f"{len(result.pooled)} in-prior secrets pooled into '(other)'")
            rows.append(row)
    return pd.DataFrame(rows, columns=[*group_cols, "reference", "n", "n_in_prior", "out_of_prior_share",
                                       "cells", "dof", "chi2", "p_value", "note"])


# -- tables -------------------------------------------------------------------------------


def metrics_table(df: pd.DataFrame, group_cols: list[str], *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Entropy, normalised entropy, effective number, top share (bootstrap 95% CIs) per group."""
    sizes = {task: len(domain_of(task)) for task in df["task"].dropna().unique()}
    return secret_summary(df, group_cols, "secret", domain_size=sizes,
                          n_boot=n_boot, seed=seed)


def plain_number(value: Any) -> str:
    """A number for a compact table as the workbook writes every table's numbers
    (:func:`~psit_lib.analysis.labels.format_number`: 3 significant digits, an exponent only below 1e-4),
    a dash when missing."""
    return str(format_number(None if value is None else float(value)))


UNUSABLE_MARK = "†"


def _with_interval(row: pd.Series, name: str) -> str:
    estimate, low, high = row.get(name), row.get(f"{name}_low"), row.get(f"{name}_high")
    if estimate is None or pd.isna(estimate):
        return "—"
    if pd.isna(low) or pd.isna(high):
        return f"{plain_number(estimate)} {UNUSABLE_MARK}"
    return f"{plain_number(estimate)} [{plain_number(low)}, {plain_number(high)}]"


def _cell_columns(table: pd.DataFrame) -> pd.DataFrame:
    """A page view's leading columns: the task, the model only when the run has several, and T."""
    view = pd.DataFrame({"task": table["task"]})
    if "model" in table.columns and table["model"].nunique(dropna=False) > 1:
        view["model"] = table["model"]
    if "temperature" in table.columns:
        view["T"] = [plain_number(t) for t in table["temperature"]]
    return view


def spread_view(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`metrics_table` for the page: one row per (task, model, temperature), each statistic
    beside its 95% interval in one cell, the model column only when the run has several models.
    The interval method and the cells without an interval go in the caption
    (:func:`spread_caption`), not in a column."""
    if summary.empty:
        return pd.DataFrame(columns=["task", "T", "n", "distinct", "entropy (bits)", "effective number",
                                     "top share", "top secret (count)"])
    view = _cell_columns(summary)
    view["n"] = [f"{int(n)}" + (f" (+{int(m)} unread)" if m else "") for n, m in zip(summary["n"], summary["n_missing"])]
    view["distinct"] = summary["distinct"].astype(int)
    view["entropy (bits)"] = [_with_interval(r, "entropy") for _, r in summary.iterrows()]
    view["effective number"] = [_with_interval(r, "effective_number") for _, r in summary.iterrows()]
    view["top share"] = [_with_interval(r, "top_share") for _, r in summary.iterrows()]
    view["top secret (count)"] = [f"{s} ({int(c)})" if not pd.isna(s) else "—"
                                  for s, c in zip(summary["top_secret"], summary["top_count"])]
    return view.reset_index(drop=True)


def spread_caption(summary: pd.DataFrame) -> str:
    """The caption's note on the intervals of :func:`spread_view`: the bootstrap methods used for
    entropy and effective number, the top share's Wilson interval, and what the mark on a cell without
    an interval means."""
    methods = sorted({m.strip() for text in summary.get("interval", pd.Series(dtype=str)).dropna()
                      for m in str(text).split(" 95%")[0].split(" / ") if not str(text).startswith("none")})
    note = (f"entropy and effective number: 95% bootstrap intervals ({', '.join(methods) or 'none'}), clipped to "
            "what n reveals can show; top share: Wilson 95% interval of the top secret's count")
    if summary.get("interval", pd.Series(dtype=str)).astype(str).str.contains("no interval is given").any():
        note += (f"; {UNUSABLE_MARK} no interval: the bootstrap interval excluded the estimate (a few dozen "
                 "reveals, most of them distinct, cannot show the secrets never seen)")
    return note


def at_ceiling(entropy: float, n: int) -> bool:
    """Whether an entropy sits at its sample-size ceiling, log2(n): every one of the n reveals
    distinct, so the estimate says how many reveals there were, not how spread the choice is."""
    return n >= 2 and entropy >= math.log2(n) - 1e-9


def _unreliable_why(ceiling: list[float], unusable: list[float]) -> str:
    parts = []
    if ceiling:
        parts.append(f"entropy at its log2(n) ceiling at {' and '.join(f'T={plain_number(t)}' for t in ceiling)} "
                     "(every reveal distinct)")
    rest = [t for t in unusable if t not in ceiling]
    if rest:
        parts.append(f"no usable entropy interval at {' and '.join(f'T={plain_number(t)}' for t in rest)}")
    return "; ".join(parts)


def attractor_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The study's attractors (Appendix E: one per task and reference model, eight in all) as
    labelled reference rows, with how often each was revealed in ``df`` (a reveal counts when it
    is the attractor or one of its listed spellings, case-insensitively) out of the task's
    readable reveals, and its rank there (0 of 0 for a task without reveals)."""
    columns = ["task", "attractor", "reported for", "source", "revealed here", "of", "rank here"]
    spellings = attractor_spellings()
    rows = []
    for (task, reference_model), secret in mode_collapse_attractors().items():
        revealed = df.loc[df["task"] == task, "secret"].dropna().astype(str).tolist() if len(df) else []
        names = set(spellings.get(secret, (secret.lower(),)))
        # ranked as Appendix E's lists are: by count, secrets revealed equally often sharing a rank
        counts = Counter(revealed)
        found = [c for s, c in counts.items() if s.lower() in names]
        rank = 1 + sum(c > max(found) for c in counts.values()) if found else None
        rows.append({"task": task, "attractor": secret, "reported for": reference_model,
                     "source": "reference study (reported)",
                     "revealed here": sum(s.lower() in names for s in revealed), "of": len(revealed),
                     "rank here": rank})
    return pd.DataFrame(rows, columns=columns).astype({"rank here": "Int64"})


def attractor_table(quick: pd.DataFrame, fork: pd.DataFrame | None = None) -> pd.DataFrame:
    """The eight attractors the study reports, each beside this run's counts: at the fork of the
    main runs of 02-04 (Appendix E's source, every agent once; empty when this run has none) and in notebook 07's
    quick experiment (every temperature of its sweep). Counts are of the task's readable reveals
    across the run's models: the reference model names the model the study saw collapse, not a
    model of this run."""
    here = attractor_rows(quick)
    fork_rows = attractor_rows(fork if fork is not None else pd.DataFrame())
    return pd.DataFrame({
        "task": here["task"], "reported for": here["reported for"], "attractor": here["attractor"],
        "fork_count": fork_rows["revealed here"], "fork_n": fork_rows["of"], "fork_rank": fork_rows["rank here"],
        "quick_count": here["revealed here"], "quick_n": here["of"], "quick_rank": here["rank here"],
    })


def attractor_view(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`attractor_table` for the page: counts as ``count / n (rank r)`` text."""
    def cell(count: Any, n: Any, rank: Any) -> str:
        if not n:
            return "no reveals"
        return f"{int(count)} / {int(n)}" + (f" (rank {int(rank)})" if not pd.isna(rank) else "")

    return pd.DataFrame({
        "task": table["task"], "reported for (study)": table["reported for"], "attractor": table["attractor"],
        "at the fork, 02-04 main runs": [cell(c, n, r) for c, n, r in
                                         zip(table["fork_count"], table["fork_n"], table["fork_rank"])],
        "quick experiment, all T": [cell(c, n, r) for c, n, r in
                                    zip(table["quick_count"], table["quick_n"], table["quick_rank"])],
    })


def chi_square_view(chi: pd.DataFrame) -> pd.DataFrame:
    """:func:`chi_square_table` for the page: the test's result in one cell (statistic, degrees of
    freedom, p value, 3 significant digits) or why there is none."""
    if chi.empty:
        return pd.DataFrame(columns=["task", "T", "reference", "n in prior", "outside prior", "test"])

    def test(row: pd.Series) -> str:
        if pd.isna(row["chi2"]):
            return str(row["note"])
        p = float(row["p_value"])
        p_text = "p < 0.001" if p < 0.001 else f"p = {plain_number(p)}"
        return f"chi2 = {plain_number(row['chi2'])}, dof {int(row['dof'])}, {p_text}"

    view = _cell_columns(chi)
    view["reference"] = chi["reference"]
    view["n in prior"] = chi["n_in_prior"].astype(int)
    view["outside prior"] = [plain_number(v) for v in chi["out_of_prior_share"]]
    view["test"] = [test(r) for _, r in chi.iterrows()]
    return view.reset_index(drop=True)


def run_note(df: pd.DataFrame, top: pd.DataFrame) -> str:
    """One line on what this run holds: the quick experiment's episodes (:func:`secret_frame`;
    failed or unreadable ones counted, never dropped) and the fork-test reveals Appendix E counts."""
    quick = (f"quick experiment: {len(df)} episodes, {int(df['secret'].isna().sum())} without a readable secret "
             f"({int((df.status == 'error').sum())} errors, {int((df.status == 'unparseable').sum())} unreadable)")
    if top.empty:
        fork = ("Appendix E: no fork-test reveals in this run folder (run 02, 03 and 04 in the same `psit run`, "
                "or set read_from)")
    else:
        cells = top.drop_duplicates(["task", "model"])
        fork = "Appendix E: " + "; ".join(f"{r.task} · {r.model} {int(r.n)} reveals" for r in cells.itertuples())
    return f"{quick}. {fork}."


def spread_reading(summary: pd.DataFrame, reveals: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> str:
    """Per (task, model): entropy at the coldest against the hottest temperature with reveals, and
    what the bootstrap 95% interval of the gap (:func:`~psit_lib.studies.psit.secrets.entropy_gap`
    over ``reveals``) says. Rises/falls only when it excludes zero; undecided when an end sits at its
    log2(n) ceiling or has no interval of its own (the same resampling cannot decide the gap); too
    small below ``MIN_SAMPLES_TO_COMPARE`` reveals (a zero-width interval is no separation); ties and
    one temperature are said as such. Entropy describes the spread: rises or falls, never better."""
    if summary.empty or not {"task", "model", "temperature", "entropy"} <= set(summary.columns):
        return "No reveals in this run, so there is no entropy to compare."

    def at(r: pd.Series) -> str:
        interval = ("" if pd.isna(r["entropy_low"]) or pd.isna(r["entropy_high"])
                    else f" [{plain_number(r['entropy_low'])}, {plain_number(r['entropy_high'])}]")
        return f"{plain_number(r['entropy'])} bits{interval} at T={plain_number(float(r['temperature']))} (n={int(r['n'])})"

    def counts(task: Any, model: Any, r: pd.Series) -> Counter:
        here = (reveals["task"] == task) & (reveals["model"] == model) & (
            reveals["temperature"].astype(float) == float(r["temperature"]))
        return Counter(reveals.loc[here, "secret"].dropna())

    lines = []
    for (task, model), cell in summary.groupby(["task", "model"], sort=False, dropna=False):
        part = cell.dropna(subset=["entropy"]).sort_values("temperature")
        head = f"- **{task} · {model}**: "
        if part.empty:
            lines.append(head + "no readable secret at any temperature, so there is no entropy to compare.")
            continue
        cold, hot = part.iloc[0], part.iloc[-1]
        if len(part) < 2:
            lines.append(head + f"entropy {at(cold)}; no other temperature has reveals, so there is nothing to compare.")
            continue
        text = head + f"entropy {at(cold)} against {at(hot)}; "
        gap = float(hot["entropy"]) - float(cold["entropy"])
        unusable = [float(r["temperature"]) for r in (cold, hot) if not r["entropy_low"] <= r["entropy"] <= r["entropy_high"]]
        ceiling = [float(r["temperature"]) for r in (cold, hot) if at_ceiling(float(r["entropy"]), int(r["n"]))]
        if min(int(cold["n"]), int(hot["n"])) < MIN_SAMPLES_TO_COMPARE:
            text += (f"with {int(cold['n'])} and {int(hot['n'])} reveals this run is too small to compare "
                     f"entropies (at least {MIN_SAMPLES_TO_COMPARE} per temperature are needed; the interval of a "
                     "handful of reveals is narrow by construction, not by evidence)")
        elif gap == 0:
            text += "the two entropies are equal: a tie"
        elif ceiling or unusable:
            text += (f"this run cannot say whether entropy rises or falls with temperature: "
                     f"{_unreliable_why(ceiling, unusable)}, and a bootstrap that cannot give an end its own "
                     "interval cannot decide the gap either (more reveals per temperature would)")
            unusable = []  # said already
        else:
            _, low, high = entropy_gap(counts(task, model, hot), counts(task, model, cold), n_boot=n_boot, seed=seed)
            text += (f"the bootstrap 95% interval of the gap (hot − cold, {plain_number(gap)} bits) is "
                     f"[{plain_number(low)}, {plain_number(high)}], ")
            text += ("which includes zero, so this run cannot tell them apart" if not (low > 0 or high < 0)
                     else f"which excludes zero: entropy {'rises' if gap > 0 else 'falls'} with temperature")
        if unusable:
            temps = " and ".join(f"T={plain_number(t)}" for t in unusable)
            text += (f" (no entropy interval at {temps}: the bootstrap interval excluded the plug-in estimate, "
                     "as it does when most reveals are distinct)")
        lines.append(text + ".")
    return "\n".join(lines)
