"""The quick secret-choice experiment (notebook 07): which secrets does a model pick?

Mode collapse (SPEC §4, last item; §7) is about the *choice* of the secret, not the game,
so this experiment skips the play: the player sends the task's opener, then immediately
asks the host to reveal its secret. Many seeds per (task, model, temperature) give the
distribution of revealed secrets; a sweep over temperatures shows how it narrows as the
temperature drops.

What the reveal measures. The vanilla agent (a public-only chat agent) keeps no private
state, so at the reveal the model names a secret that fits its public opening reply (for
Hangman: a word of the announced length). That is still the model's own prior over secrets,
which is the object of the analysis; an agent with private state (``agent="private_cot"``)
reveals the secret it committed to at the opener instead.

Each episode's temperature is part of its spec and is applied through the episode's own
``ModelSession`` sampling defaults, so every call of the episode (opener and reveal) runs at
that temperature and the response cache keys it correctly.

On the simulated model (SPEC §8) the secret is drawn from ``prior ** (alpha / T)``, so the
entropy of the revealed secrets rises with temperature *by construction*; on a real endpoint
the same code measures the model.

References for the chi-square goodness-of-fit test: Hangman against wordfreq frequencies over
the task's vocabulary (``psit_lib.studies.psit.tasks.vocabulary``, independent of the simulator) and
against uniform; diagnosis against uniform over the 49 DDXPlus conditions (there is no
corpus frequency of "conditions a patient picks", so uniform is the reference).
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from functools import lru_cache
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from psit_lib.studies.psit.agents.factory import build_agent, canonical_agent_name
from psit_lib.studies.psit.protocol.outcomes import secret_appears_in
from psit_lib.studies.psit.reference import mode_collapse_attractors
from psit_lib.studies.psit.protocol.secret_reader import COLUMNS, NoRevealRecordsError, read_revealed_secrets, rows_from_records
from psit_lib.studies.psit.secrets import chi_square_vs_prior, secret_summary
from psit_lib.studies.psit.protocol.fork_test import NEUTRAL_SYSTEM_PROMPT
from psit_lib.llm.client import ModelSession, SamplingDefaults
# re-exported: the parameters live in protocol.params (light, for the command line)
from psit_lib.studies.psit.protocol.params import SecretChoiceParams as SecretChoiceParams
from psit_lib.runs.records import EpisodeRecord
from psit_lib.studies.psit.protocol.records import ChoiceReveal, Opening, SecretChoiceEpisode
from psit_lib.runs.runner import EpisodeSpec, StudyEpisode, study_episode
from psit_lib.studies.psit.tasks.base import HostReplyError, PsitTask

from psit_lib.studies.psit.tasks.registry import TASK_NAMES, UnknownTaskError, make_task

from psit_lib.studies.psit.protocol.fork_test import count_fork_answer, host_role, observe_host_reply

NOTEBOOK = "07_secret_distribution_mode_collapse"


# -- parameters ---------------------------------------------------------------------------


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


def session_at_temperature(session: ModelSession, temperature: float) -> ModelSession:
    """The episode's session with its own sampling temperature (same seeds path and call log)."""
    sampling = SamplingDefaults(temperature=temperature, max_tokens=session.sampling.max_tokens)
    return ModelSession(session.client, run_seed=session.run_seed, episode_id=session.episode_id,
                        sampling=sampling, path=session.path, log=session.log,
                        diagnostics=session.diagnostics)


async def run_secret_choice_episode(task: PsitTask, agent_name: str, session: ModelSession) -> SecretChoiceEpisode:
    """Opener, then the reveal prompt on the same conversation; returns the audit record. The
    opening and the reveal are counted in the session's diagnostics, as in the fork test."""
    name = canonical_agent_name(agent_name)
    agent = build_agent(agent_name, system_prompt=NEUTRAL_SYSTEM_PROMPT, host_role=host_role(task))
    opener = task.opener()
    opening = (await agent.send(opener, session))["reply"]
    try:
        state = observe_host_reply(task, session, opening,
                                   lambda: task.observe_opening(task.initial_state(), opening), name)
        constraints = task.public_constraints(state)
    except HostReplyError as exc:
        state, constraints = None, {"unreadable": str(exc)}
    reveal_q = task.reveal_prompt()
    reveal_a = (await agent.send(reveal_q, session.branch("reveal")))["reply"]
    parsed = task.parse_reveal(reveal_a)
    revealed = task.normalise(parsed) if parsed else None
    count_fork_answer(task, session, reveal_a, revealed, "reveal", name)
    return SecretChoiceEpisode(
        task=task.name, agent=name, model=session.model,
        temperature=session.sampling.temperature,
        opening=Opening(question=opener, answer=opening, constraints=constraints),
        reveal=ChoiceReveal(question=reveal_q, answer=reveal_a, parsed=revealed,
                            compatible=None if (state is None or revealed is None)
                            else bool(task.is_compatible(state, revealed)),
                            said_in_opening=bool(revealed and secret_appears_in(revealed, opening))),
        failure=None if revealed is not None else "reveal answer unreadable")


def secret_choice_episode_fn(params: SecretChoiceParams) -> StudyEpisode[SecretChoiceEpisode]:
    """The runner's episode function: each spec's task, agent and temperature."""
    tasks = {name: make_task(name) for name in params.tasks}

    @study_episode(SecretChoiceEpisode)
    async def episode(spec: EpisodeSpec, session: ModelSession) -> SecretChoiceEpisode:
        at_t = session_at_temperature(session, float(spec.params["temperature"]))
        return await run_secret_choice_episode(tasks[spec.params["task"]], spec.params["agent"], at_t)

    return episode


def secret_frame(records: list[EpisodeRecord[SecretChoiceEpisode]], notebook: str = NOTEBOOK) -> pd.DataFrame:
    """The reader's table (one row per episode, failed ones with secret None) from run records."""
    df = pd.DataFrame(rows_from_records(records, source_notebook=notebook), columns=list(COLUMNS))
    df.attrs["n_missing"] = int(df["secret"].isna().sum())
    return df


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


def domain_size(task: str) -> int:
    """Size of the task's secret domain for normalised entropy (dictionary words / 49 conditions)."""
    return len(domain_of(task))


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


def chi_square_table(df: pd.DataFrame, group_cols: list[str], *, min_expected: float = 5) -> pd.DataFrame:
    """Chi-square goodness of fit of each group's revealed secrets against each reference prior.

    Groups are keyed by ``group_cols`` (which must include ``task``). When the counts do not
    allow a test (every cell's expected count below ``min_expected`` after pooling), the row
    says so and gives the sample size a test would need.
    """
    if "task" not in group_cols:
        raise ValueError("chi_square_table groups must include the 'task' column.")
    rows = []
    for key, sub in df.groupby(group_cols, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        cell = dict(zip(group_cols, key))
        secrets = sub["secret"].dropna().tolist()
        for label, prior in reference_priors(cell["task"]).items():
            inside = [s for s in secrets if s in prior]
            row = {**cell, "reference": label, "n": len(secrets), "n_in_prior": len(inside),
                   "out_of_prior_share": (len(secrets) - len(inside)) / len(secrets) if secrets else float("nan")}
            result = chi_square_vs_prior(Counter(inside), prior, min_expected=min_expected) if inside else None
            if result is None:
                row.update(cells=None, dof=None, chi2=None, p_value=None,
                           note=f"not testable: needs n_in_prior >= {min_n_for_test(prior, min_expected)}")
            else:
                row.update(cells=len(result.categories), dof=result.dof, chi2=result.statistic,
                           p_value=result.p_value, note=f"{len(result.pooled)} in-prior secrets pooled into '(other)'")
            rows.append(row)
    return pd.DataFrame(rows, columns=[*group_cols, "reference", "n", "n_in_prior", "out_of_prior_share",
                                       "cells", "dof", "chi2", "p_value", "note"])


# -- tables -------------------------------------------------------------------------------


def metrics_table(df: pd.DataFrame, group_cols: list[str], *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Entropy, normalised entropy, effective number, top share (bootstrap 95% CIs) per group."""
    sizes = {task: domain_size(task) for task in df["task"].dropna().unique()}
    return secret_summary(df, group_cols, "secret", domain_size=sizes, domain_key="task",
                          n_boot=n_boot, seed=seed)


def top_k_by_temperature(df: pd.DataFrame, task: str, model: str, k: int = 10) -> pd.DataFrame:
    """Rank x temperature table of the ``k`` most revealed secrets, cells ``"secret (count)"``."""
    sub = df[(df["task"] == task) & (df["model"] == model)]
    columns = {}
    for temperature, part in sub.groupby("temperature", sort=True):
        ranked = sorted(Counter(part["secret"].dropna()).items(), key=lambda item: (-item[1], str(item[0])))[:k]
        columns[f"T={temperature:g}"] = [f"{s} ({c})" for s, c in ranked] + [""] * (k - len(ranked))
    table = pd.DataFrame(columns, index=pd.RangeIndex(1, k + 1, name="rank"))
    return table


def top_k_tables(df: pd.DataFrame, tasks: Sequence[str], models: Sequence[str], k: int = 10) -> pd.DataFrame:
    """:func:`top_k_by_temperature` for every (task, model), stacked with a ``task · model`` level."""
    tables = {f"{task} · {model}": top_k_by_temperature(df, task, model, k) for task in tasks for model in models}
    return pd.concat(tables, names=["task · model"])


def entropy_comparisons(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (task, model): entropy at the coldest and the hottest temperature with reveals, the
    gap (hot - cold) with its bootstrap 95% interval, and the verdict the readings and the
    ``rises`` flag share.

    The gap is tested by :func:`psit_lib.studies.psit.secrets.entropy_gap` on the reveals the summary
    carries (``secret_summary`` keeps their counts): ``rises``/``falls`` only when the interval
    excludes zero; ``tie`` when the two entropies are equal; ``too small`` when either
    temperature has fewer than ``MIN_SAMPLES_TO_COMPARE`` reveals (a zero-width interval from two
    reveals is never a separation). Without the counts (a summary read back from a file), the
    per-temperature intervals decide only when they are clear of each other (``method`` says so).
    """
    from psit_lib.studies.psit.secrets import MIN_SAMPLES_TO_COMPARE, entropy_gap, reveal_counts

    columns = ["task", "model", "cold", "hot", "n_cold", "n_hot", "entropy_cold", "entropy_hot", "gap",
               "ci_low", "ci_high", "method", "verdict", "unusable"]
    if summary.empty or not {"task", "model", "temperature", "entropy"} <= set(summary.columns):
        return pd.DataFrame(columns=columns)
    stored = summary.attrs.get("secret_counts") or {}
    n_boot, seed = int(stored.get("n_boot", 1000)), int(stored.get("seed", 0))
    rows = []
    for (task, model), cell in summary.groupby(["task", "model"], sort=False, dropna=False):
        part = cell.dropna(subset=["entropy"]).sort_values("temperature")
        row: dict[str, Any] = dict.fromkeys(columns)
        row.update(task=task, model=model, unusable=[])
        if part.empty:
            rows.append({**row, "verdict": "no readable secret"})
            continue
        cold, hot = part.iloc[0], part.iloc[-1]
        row.update(cold=float(cold["temperature"]), hot=float(hot["temperature"]), n_cold=int(cold["n"]),
                   n_hot=int(hot["n"]), entropy_cold=float(cold["entropy"]), entropy_hot=float(hot["entropy"]),
                   gap=float(hot["entropy"]) - float(cold["entropy"]))
        row["unusable"] = [float(r["temperature"]) for r in (cold, hot)
                           if not r["entropy_low"] <= r["entropy"] <= r["entropy_high"]]
        if len(part) < 2:
            rows.append({**row, "verdict": "one temperature"})
            continue
        if min(row["n_cold"], row["n_hot"]) < MIN_SAMPLES_TO_COMPARE:
            rows.append({**row, "verdict": "too small", "method": f"fewer than {MIN_SAMPLES_TO_COMPARE} reveals"})
            continue
        if row["gap"] == 0:
            rows.append({**row, "verdict": "tie", "method": "equal entropies"})
            continue
        counts_cold, counts_hot = reveal_counts(summary, cold), reveal_counts(summary, hot)
        if counts_cold is not None and counts_hot is not None:
            _, low, high = entropy_gap(counts_hot, counts_cold, n_boot=n_boot, seed=seed)
            row.update(ci_low=low, ci_high=high, method="bootstrap 95% interval of the gap")
            separated = low > 0 or high < 0
        else:
            usable = not row["unusable"]
            clear = cold["entropy_high"] < hot["entropy_low"] or hot["entropy_high"] < cold["entropy_low"]
            separated = bool(usable and clear)
            row["method"] = "per-temperature intervals (no reveals to test the gap)"
        verdict = ("rises" if row["gap"] > 0 else "falls") if separated else "cannot be told apart"
        rows.append({**row, "verdict": verdict})
    return pd.DataFrame(rows, columns=columns)


def entropy_by_temperature(summary: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """Compact (task, model) x temperature table of entropy in bits, whether it rises, and the
    comparison behind that flag.

    ``rises`` compares the highest temperature with reveals with the lowest, exactly as
    :func:`spread_reading` does (:func:`entropy_comparisons`): True when the bootstrap interval of
    the gap is above zero, False when below, None when the run cannot say (too few reveals, a
    tie, the interval includes zero, one temperature, no readable secret); ``comparison`` says
    which. Mode collapse is entropy falling as the temperature drops.
    """
    comparisons = entropy_comparisons(summary)
    if comparisons.empty:
        return pd.DataFrame(columns=["rises", "comparison"],
                            index=pd.MultiIndex.from_tuples([], names=["task", "model"]))
    readable = summary.dropna(subset=["entropy"])
    if readable.empty:
        table = pd.DataFrame(index=pd.MultiIndex.from_frame(comparisons[["task", "model"]]))
    else:
        table = readable.pivot_table(index=["task", "model"], columns="temperature", values="entropy")
        table.columns = [f"T={t:g}" for t in table.columns]
        table = table.round(digits).reindex(pd.MultiIndex.from_frame(comparisons[["task", "model"]]))
    flags = {"rises": True, "falls": False}
    table["rises"] = pd.Series([flags.get(v) for v in comparisons["verdict"]], index=table.index, dtype=object)
    table["comparison"] = comparisons["verdict"].to_numpy()
    return table


def attractor_rows(df: pd.DataFrame) -> pd.DataFrame:
    """SPEC §7 reference attractors as labelled rows, with how often each was revealed here
    (0 of 0 for a task this run did not reveal any secret of)."""
    columns = ["task", "attractor", "reported for", "source", "revealed here", "of", "rank here"]
    rows = []
    for (task, reference_model), secret in mode_collapse_attractors().items():
        if "task" in df.columns and "secret" in df.columns:
            revealed = [s for s in df.loc[df["task"] == task, "secret"].tolist()
                        if s is not None and not (isinstance(s, float) and math.isnan(s))]
        else:
            revealed = []
        ranking = [s for s, _ in sorted(Counter(revealed).items(), key=lambda i: (-i[1], str(i[0])))]
        matches = sum(str(s).lower() == secret.lower() for s in revealed)
        rows.append({"task": task, "attractor": secret, "reported for": reference_model,
                     "source": "reference study (reported)",
                     "revealed here": int(matches), "of": len(revealed),
                     "rank here": next((i + 1 for i, s in enumerate(ranking) if str(s).lower() == secret.lower()), None)})
    return pd.DataFrame(rows, columns=columns).astype({"rank here": "Int64"})


# -- reading earlier fork-test runs -------------------------------------------------------


def resolve_read_from(params: SecretChoiceParams, env: Mapping[str, str] | None = None) -> Path | None:
    """Folder to read fork-test reveals from: ``read_from``, else the ``psit run`` folder, else None."""
    if params.read_from is not None:
        return Path(params.read_from)
    env = os.environ if env is None else env
    return Path(env["PSIT_RUN_DIR"]) if env.get("PSIT_RUN_DIR") else None


def read_fork_reveals(params: SecretChoiceParams, *, own_notebook: str = NOTEBOOK,
                      env: Mapping[str, str] | None = None) -> tuple[pd.DataFrame | None, str]:
    """Revealed secrets of the other notebooks of the run (02/03/...), and a one-line note.

    An explicit ``read_from`` without reveal records is an error; the implicit run folder
    simply may not have them yet (e.g. ``psit run 07`` alone), which returns ``(None, note)``.
    """
    folder = resolve_read_from(params, env)
    if folder is None:
        return None, "no run folder to read (not started by `psit run` and no read_from given): skipped"
    try:
        df = read_revealed_secrets(folder, exclude=[own_notebook])
    except NoRevealRecordsError:
        if params.read_from is not None:
            raise
        return None, f"the run folder {folder.name} has no fork-test reveals yet (run 02/03 first): skipped"
    notebooks = ", ".join(sorted(df["source_notebook"].unique()))
    return df, (f"read {len(df)} episodes from {notebooks} in {folder.name} "
                f"({df.attrs['n_missing']} without a readable reveal)")


def spread_reading(summary: pd.DataFrame) -> str:
    """Generated sentences: per (task, model), entropy at the coldest and the hottest temperature
    with their intervals, and whether the bootstrap interval of the gap separates them (see
    :func:`entropy_comparisons`, which the ``rises`` flag of :func:`entropy_by_temperature` shares).
    Too few reveals, ties and a single temperature are said as such, never compared; a
    per-temperature interval that misses its estimate is flagged. Entropy is a description of the
    spread, so the sentence says rises or falls, never better or worse."""
    from psit_lib.analysis.labels import format_number
    from psit_lib.studies.psit.secrets import MIN_SAMPLES_TO_COMPARE

    comparisons = entropy_comparisons(summary)
    if comparisons.empty:
        return "No reveals in this run, so there is no entropy to compare."
    rows = summary.assign(_t=summary["temperature"].astype(float)) if "temperature" in summary else summary
    lines = []

    def at(c: pd.Series, t: float) -> str:
        r = rows[(rows["task"] == c["task"]) & (rows["model"] == c["model"]) & (rows["_t"] == t)].iloc[0]
        return (f"{format_number(float(r['entropy']))} bits [{format_number(float(r['entropy_low']))}, "
                f"{format_number(float(r['entropy_high']))}] at T={format_number(t)} (n={int(r['n'])})")

    for _, c in comparisons.iterrows():
        head = f"- **{c['task']} · {c['model']}**: "
        verdict = c["verdict"]
        if verdict == "no readable secret":
            lines.append(head + "no readable secret at any temperature, so there is no entropy to compare.")
            continue
        if verdict == "one temperature":
            lines.append(head + f"entropy {at(c, c['cold'])}; no other temperature has reveals, so there is "
                                "nothing to compare.")
            continue
        text = head + f"entropy {at(c, c['cold'])} against {at(c, c['hot'])}; "
        if verdict == "too small":
            text += (f"with {int(c['n_cold'])} and {int(c['n_hot'])} reveals this run is too small to compare "
                     f"entropies (at least {MIN_SAMPLES_TO_COMPARE} per temperature are needed; the interval of a "
                     "handful of reveals is narrow by construction, not by evidence)")
        elif verdict == "tie":
            text += "the two entropies are equal: a tie"
        elif c["method"] and str(c["method"]).startswith("bootstrap"):
            interval = f"[{format_number(float(c['ci_low']))}, {format_number(float(c['ci_high']))}]"
            gap = format_number(float(c["gap"]))
            if verdict == "cannot be told apart":
                text += (f"the bootstrap 95% interval of the gap (hot − cold, {gap} bits) is {interval}, which "
                         "includes zero, so this run cannot tell them apart")
            else:
                text += (f"the bootstrap 95% interval of the gap (hot − cold, {gap} bits) is {interval}, which "
                         f"excludes zero: entropy {verdict} with temperature")
        elif verdict == "cannot be told apart":
            text += ("the reveals are not at hand to test the gap and the two intervals are not clear of each "
                     "other, so this reading does not separate them")
        else:
            text += f"the two intervals are clear of each other: entropy {verdict} with temperature"
        if c["unusable"]:
            temps = " and ".join(f"T={format_number(t)}" for t in c["unusable"])
            text += (f" (at {temps} the bootstrap interval does not contain the plug-in estimate: with this few "
                     "reveals per distinct secret the plug-in entropy is biased low and resampling cannot show "
                     "unseen secrets, so that interval is unusable; see top share and distinct counts)")
        lines.append(text + ".")
    return "\n".join(lines)
