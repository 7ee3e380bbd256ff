"""The private-state study's headline claims (``claims.toml``: the claims and the paper's words) and the rules that
decide them on a run's tables.

Most read ``table1_self_consistency`` (self-consistency by Table 1's rule per task, model and agent; counts
``successes`` of ``n_scored``). Agents are grouped as the paper's Table 1 groups them
(``data/reference/psit_table1_self_consistency.csv``): *public* are its baselines (vanilla and the four retrieval
memories), *private state* the rest (private CoT and the working-memory agents, *workflow* and *autonomous*); an agent
the paper does not list is left out of both. The paper's evidence is computed from its Table 1 (50 episodes per cell)
and, where the paper gives counts, its own numbers are decided by the same test, so a reader sees whether the paper's
counts carry its claim, and the cells that leave it undecided. RQ2, RQ3 and Appendix E read the tables that count
failure classes, private-state sizes and revealed secrets; the paper gives those as figures, without counts.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
from scipy.stats import binomtest, chi2_contingency
from scipy.stats import t as student_t

from psit_lib.analysis.claims import (FROM_TABLES, INCONCLUSIVE, Claim, Decision, Rule, RunContext, Tables, all_of, any_of, both,
                                      ledger, load_claims, one_sided_p, trend_z)
from psit_lib.analysis.claims import verdict_rule as shared_verdict_rule
from psit_lib.analysis.reference import reference_table
from psit_lib.analysis.stats import fisher_one_sided, wilson_interval
from psit_lib.analysis.verdicts import DEFAULT_MARGIN, h_interval
from psit_lib.studies.psit.protocol.budget import row_comparability
from psit_lib.studies.psit.protocol.reproduction import PAPER_N
from psit_lib.studies.psit.protocol.state_size import SMALL_STATE
from psit_lib.studies.psit.reference import TABLE1, study_model

TABLE = "table1_self_consistency"
FAILURES, STATE, TOP10 = "failure_modes", "state_size", "appendix_e_top10"
ALPHA = 0.05
FAIL_LINE = 0.5
"""A cell *fails* the fork test when its self-consistency is below this (not consistent in most
episodes); the claim is decided on the Wilson 95% interval of each public cell against it."""
DECADE = (0.5, 1.5)
""""About one order of magnitude": a log10 ratio between 0.5 and 1.5 (about 3x to 30x)."""
TOP_K = 10
"""Appendix E lists the ten most revealed secrets per game and model."""

MODEL_SIZES_B = {"GPT-OSS 20B": 20.0, "GPT-OSS 120B": 120.0, "Qwen3 32B": 32.0, "Qwen3 235B": 235.0}
"""Total parameters (billions) of the paper's four models, as the paper names them (Qwen3 235B is
Qwen3-235B-A22B: 235B total, 22B active)."""
MODEL_FAMILIES = {"GPT-OSS 20B": "GPT-OSS", "GPT-OSS 120B": "GPT-OSS", "Qwen3 32B": "Qwen3", "Qwen3 235B": "Qwen3"}
"""The paper's families, as its reference draws scaling (``results_final.ipynb``: gpt_oss {20, 120}, qwen {32, 235})."""

_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)([bm])(?![a-z])")


def model_size(name: str) -> float | None:
    """Billions of parameters of a run's model: the paper's figure for the paper's four models, else
    the size the served name states (``gemma-3-270m`` -> 0.27, ``llama-3-8b`` -> 8), else None."""
    study = study_model(name)
    if study is not None:
        return MODEL_SIZES_B[study]
    found = _SIZE.search(name.rsplit("/", 1)[-1].lower())
    if not found:
        return None
    value = float(found.group(1))
    return value if found.group(2) == "b" else value / 1000


def model_family(name: str) -> str:
    """The family scaling is drawn within: the paper's for its four models, else the served name without its size
    (``gemma-3-270m`` and ``gemma-3-1b`` are ``gemma-3``)."""
    study = study_model(name)
    if study is not None:
        return MODEL_FAMILIES[study]
    base = name.rsplit("/", 1)[-1].lower()
    return _SIZE.sub("", base).strip("-_ .") or base


def agent_groups() -> dict[str, str]:
    """Agent -> "public" or "private" by the paper's Table 1 groups."""
    table = reference_table(TABLE1)
    return {str(m): ("public" if g == "baseline" else "private") for m, g in zip(table["method"], table["group"])}


def agent_families() -> dict[str, str]:
    """Agent -> its Table 1 group (baseline, upper_bound, workflow, autonomous)."""
    table = reference_table(TABLE1)
    return dict(zip(table["method"].astype(str), table["group"].astype(str)))


def _scored(table: pd.DataFrame) -> pd.DataFrame:
    table = table[table["n_scored"].fillna(0) > 0].copy()
    table["group"] = table["agent"].map(agent_groups())
    table["family"] = table["agent"].map(agent_families())
    return table[table["group"].notna()]


def paper_table1() -> pd.DataFrame:
    """The paper's Table 1 as a run's ``table1_self_consistency`` (rates read back as counts of 50)."""
    ref = reference_table(TABLE1)
    k = (ref["self_consistency_pct"] / 100 * PAPER_N).round().astype(int)
    return pd.DataFrame({"task": ref["task"], "model": ref["model"], "agent": ref["method"], "n_scored": PAPER_N,
                         "successes": k, "rate": k / PAPER_N})


def _withhold(table: pd.DataFrame) -> pd.Series:
    """Per row, why a cell is not comparable with the paper (its host budget; "" when it is)."""
    return pd.Series([row_comparability(r) for r in table.itertuples(index=False)], index=table.index, dtype=object)


# -- PSIT-1, -2, -4, -5: Table 1 --------------------------------------------------------------------

def _fail(tables: Tables) -> Decision:
    cells = _scored(tables[TABLE])
    cells = cells[cells["group"] == "public"]
    if cells.empty:
        return Decision(INCONCLUSIVE, "no public-only or retrieval agent was scored")
    parts = []
    for r in cells.itertuples(index=False):
        low, high = wilson_interval(int(r.successes), int(r.n_scored))
        parts.append((f"{r.task}/{r.agent} on {r.model} {r.successes}/{r.n_scored}", high < FAIL_LINE,
                      low >= FAIL_LINE))
    decision = all_of(parts, "public cells")
    sizes = {model_size(str(m)) for m in cells["model"]}
    return Decision(decision.verdict, f"{decision.statistic} (highest rate {cells['rate'].max():.2f}; "
                    f"{cells['model'].nunique()} model(s), {len(sizes - {None})} known size(s))")


def _pooled_gaps(cells: pd.DataFrame, column: str, better: str, worse: str) -> list[tuple[str, bool, bool]]:
    """Per (task, model): ``better`` agents pooled against ``worse`` pooled (``column`` says which
    an agent is), one-sided Fisher both ways: (cell, better at ALPHA, worse at ALPHA/cells)."""
    groups = list(cells.groupby(["task", "model"], sort=False))
    parts = []
    for (task, model), part in groups:
        pooled = part.groupby(column)[["successes", "n_scored"]].sum()
        if not {better, worse} <= set(pooled.index):
            continue
        kb, nb = int(pooled.at[better, "successes"]), int(pooled.at[better, "n_scored"])
        kw, nw = int(pooled.at[worse, "successes"]), int(pooled.at[worse, "n_scored"])
        parts.append((f"{task} on {model} ({kb / nb:.2f} vs {kw / nw:.2f})", fisher_one_sided(kb, nb, kw, nw) < ALPHA,
                      fisher_one_sided(kw, nw, kb, nb) < ALPHA / max(1, len(groups))))
    return parts


def _restores(tables: Tables) -> Decision:
    decision = all_of(_pooled_gaps(_scored(tables[TABLE]), "group", "private", "public"), "(task, model) cells")
    return Decision(decision.verdict, decision.statistic + " (private-state agents pooled vs public pooled)")


def _workflow_first(tables: Tables) -> Decision:
    cells = _scored(tables[TABLE])
    parts = _pooled_gaps(cells[cells["family"].isin(["workflow", "autonomous"])], "family", "workflow", "autonomous")
    if not parts:
        return Decision(INCONCLUSIVE, "needs a workflow and an autonomous memory agent in one (game, model) cell")
    decision = all_of(parts, "(task, model) cells")
    return Decision(decision.verdict, decision.statistic + " (workflow agents pooled vs autonomous pooled)")


def _matches_private_cot(tables: Tables) -> Decision:
    cells = _scored(tables[TABLE])
    cells = cells[cells["family"].isin(["workflow"]) | (cells["agent"] == "private_cot")]
    both_ran = cells.groupby(["task", "model"])["agent"].transform(
        lambda a: (a == "private_cot").any() and (a != "private_cot").any())
    cells = cells[both_ran.astype(bool)]
    if cells.empty:
        return Decision(INCONCLUSIVE, "needs private_cot and a workflow agent in one (game, model) cell")
    cot, flow = cells[cells["agent"] == "private_cot"], cells[cells["agent"] != "private_cot"]
    kc, nc = int(cot["successes"].sum()), int(cot["n_scored"].sum())
    kw, nw = int(flow["successes"].sum()), int(flow["n_scored"].sum())
    low, high = h_interval(kw, nw, kc, nc, 2 * ALPHA)
    text = (f"workflow {kw}/{nw} ({kw / nw:.2f}) vs private CoT {kc}/{nc} ({kc / nc:.2f}) over "
            f"{cells.groupby(['task', 'model']).ngroups} (game, model) cell(s): Cohen's h 90% [{low:+.2f}, {high:+.2f}]"
            f" against ±{DEFAULT_MARGIN:g}")
    if -DEFAULT_MARGIN < low and high < DEFAULT_MARGIN:
        return Decision("supported", text)
    if low >= DEFAULT_MARGIN or high <= -DEFAULT_MARGIN:
        return Decision("contradicted", text)
    return Decision(INCONCLUSIVE, text)


# -- PSIT-3: scaling within each family, and the baselines' contrast ----------------------------------

def _by_size(cells: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Per (task, family) with two or more known sizes: its pooled counts by size (ascending)."""
    cells = cells.assign(size=[model_size(str(m)) for m in cells["model"]],
                         lineage=[model_family(str(m)) for m in cells["model"]]).dropna(subset=["size"])
    out = []
    for (task, family), part in cells.groupby(["task", "lineage"], sort=False):
        sizes = part.groupby("size")[["successes", "n_scored"]].sum().sort_index()
        if len(sizes) >= 2:
            out.append((f"{task} {family}", sizes))
    return out


def _trend(sizes: pd.DataFrame) -> float:
    return trend_z(sizes["successes"].astype(int).tolist(), sizes["n_scored"].astype(int).tolist(),
                   [math.log10(s) for s in sizes.index])


def _label(name: str, sizes: pd.DataFrame, z: float) -> str:
    rates = " -> ".join(f"{k / n:.2f}" for k, n in zip(sizes["successes"], sizes["n_scored"]))
    return f"{name} {rates} (z {z:+.2f})"


def _ours_scale(cells: pd.DataFrame) -> Decision:
    series = _by_size(cells[cells["group"] == "private"])
    if not series:
        return Decision(INCONCLUSIVE, "needs two or more model sizes within a family")
    parts = [(_label(name, s, z), one_sided_p(z) < ALPHA, one_sided_p(-z) < ALPHA / len(series))
             for name, s in series for z in [_trend(s)]]
    decision = all_of(parts, "(game, family) series", name_open=False)
    return Decision(decision.verdict, decision.statistic + ": " + "; ".join(p[0] for p in parts))


def _baselines_do_not(cells: pd.DataFrame) -> Decision:
    series = _by_size(cells[cells["group"] == "public"])
    if not series:
        return Decision(INCONCLUSIVE, "needs two or more model sizes within a family")
    parts = []
    for name, s in series:
        z = _trend(s)
        (k0, n0), (k1, n1) = s.iloc[0][["successes", "n_scored"]].astype(int), s.iloc[-1][["successes", "n_scored"]].astype(int)
        rise_high = h_interval(k1, n1, k0, n0, 2 * ALPHA)[1]
        parts.append((f"{_label(name, s, z)}, h 90% upper {rise_high:+.2f}",
                      rise_high < DEFAULT_MARGIN or one_sided_p(-z) < ALPHA, one_sided_p(z) < ALPHA))
    decision = any_of(parts, "(game, family) series")
    return Decision(decision.verdict, decision.statistic + ("" if decision.verdict == "supported" else
                                                            ": " + "; ".join(p[0] for p in parts)))


def _scales(tables: Tables) -> Decision:
    cells = _scored(tables[TABLE])
    ours = _ours_scale(cells)
    if ours.statistic.startswith("needs"):
        models = sorted(set(cells["model"].astype(str)))
        return Decision(INCONCLUSIVE, f"needs two or more model sizes within a family; this run's models: "
                        f"{', '.join(models) or 'none'}")
    return both(ours, _baselines_do_not(cells), ("ours scale", "baselines do not"))


# -- PSIT-6: RQ2, the failure mix ------------------------------------------------------------------

FAILURE_CLASSES = ("leakage", "over-confirmation", "state substitution", "all denial")
"""Figure 2's failure classes (its fifth class is self-consistent)."""


def _failure_mix(tables: Tables) -> Decision:
    table = tables[FAILURES]
    classes = [c for c in FAILURE_CLASSES if c in table.columns]
    mix = table.groupby(["task", "model"], sort=False)[classes].sum()
    mix = mix[mix.sum(axis=1) > 0]
    if len(mix) < 2:
        return Decision(INCONCLUSIVE, f"needs failures in two or more (game, model) cells; this run has {len(mix)}")
    leaders = {}
    for (task, model), row in mix.iterrows():
        ordered = row.sort_values(ascending=False)
        top, second = int(ordered.iloc[0]), int(ordered.iloc[1])
        separated = binomtest(top, top + second, 0.5).pvalue < ALPHA / len(mix) if top + second else False
        leaders[f"{task} on {model}"] = (str(ordered.index[0]), int(row.sum()), separated)
    columns = mix.loc[:, mix.sum(axis=0) > 0]
    p = float(chi2_contingency(columns.to_numpy())[1]) if columns.shape[1] >= 2 else 1.0
    shown = "; ".join(f"{cell}: {lead} leads ({n} failures)" for cell, (lead, n, _) in leaders.items())
    distinct = {lead for lead, _, _ in leaders.values()}
    text = f"failure mix across cells: chi-square p {p:.2g}; {shown}"
    if p < ALPHA and len(distinct) > 1:
        return Decision("supported", text)
    if len(distinct) == 1 and all(sep for _, _, sep in leaders.values()):
        return Decision("contradicted", text + f" (one class, {distinct.pop()}, leads everywhere, separated)")
    return Decision(INCONCLUSIVE, text)


# -- PSIT-7: RQ3, private-state sizes ---------------------------------------------------------------

def _pool_logs(rows: pd.DataFrame) -> tuple[int, float, float]:
    """(episodes, mean, sd) of log10(1 + tokens) over the groups of ``rows`` (within- and between-group spread)."""
    n = rows["episodes"].astype(int)
    total = int(n.sum())
    mean = float((n * rows["log_mean"]).sum() / total)
    within = float(((n - 1).clip(lower=0) * rows["log_sd"].fillna(0) ** 2).sum())
    between = float((n * (rows["log_mean"] - mean) ** 2).sum())
    return total, mean, math.sqrt((within + between) / (total - 1)) if total > 1 else float("nan")


def _state_sizes(tables: Tables) -> Decision:
    table = tables[STATE]
    table = table.assign(family=table["agent"].map(agent_families()))
    parts: list[tuple[str, bool, bool]] = []
    cells = list(table.groupby(["task", "model"], sort=False))
    for (task, model), part in cells:
        cot, memory = part[part["agent"] == "private_cot"], part[part["family"].isin(["workflow", "autonomous"])]
        if cot.empty or memory.empty:
            continue
        (n1, m1, s1), (n2, m2, s2) = _pool_logs(cot), _pool_logs(memory)
        under, episodes = int(memory["under_100"].sum()), int(memory["episodes"].sum())
        share_low, share_high = wilson_interval(under, episodes)
        if n1 < 2 or n2 < 2 or not (s1 == s1 and s2 == s2):
            parts.append((f"{task} on {model}: too few episodes for an interval", False, False))
            continue
        se = math.sqrt(s1 ** 2 / n1 + s2 ** 2 / n2)
        df = se ** 4 / ((s1 ** 2 / n1) ** 2 / (n1 - 1) + (s2 ** 2 / n2) ** 2 / (n2 - 1)) if se > 0 else float("inf")
        d = m1 - m2
        q = float(student_t.ppf(1 - ALPHA / 2, df)) if se > 0 else 0.0
        qc = float(student_t.ppf(1 - ALPHA / 2 / len(cells), df)) if se > 0 else 0.0
        low, high = d - q * se, d + q * se
        label = (f"{task} on {model}: private CoT / memory agents x{10 ** d:.1f} (log10 95% [{low:+.2f}, {high:+.2f}]);"
                 f" memory under {SMALL_STATE} tokens in {under}/{episodes}")
        supports = DECADE[0] <= low and high <= DECADE[1] and share_low > 0.5
        opposes = (d - qc * se > DECADE[1] or d + qc * se < DECADE[0]
                   or wilson_interval(under, episodes, ALPHA / len(cells))[1] < 0.5)
        parts.append((label, supports, opposes))
    if not parts:
        return Decision(INCONCLUSIVE, "needs private_cot and a memory agent in one (game, model) cell")
    decision = all_of(parts, "(game, model) cells", name_open=False)
    return Decision(decision.verdict, decision.statistic + ": " + "; ".join(p[0] for p in parts))


# -- PSIT-8: Appendix E ------------------------------------------------------------------------------

def top_k_count(rows: pd.DataFrame, k: int = TOP_K) -> int:
    """Reveals of the ``k`` most revealed secrets of one (game, model) list: a row that stands for a tie the cut
    splits (``(n secrets tied)``) contributes only the members the cut keeps."""
    taken, total = 0, 0
    for r in rows.sort_values("rank").itertuples(index=False):
        members = int(r.tied) if str(r.secret).startswith("(") else 1
        keep = min(members, k - taken)
        if keep <= 0:
            break
        taken += keep
        total += keep * int(r.count)
    return total


def _collapse(tables: Tables) -> Decision:
    table = tables[TOP10]
    cells = list(table.groupby(["task", "model"], sort=False))
    parts = []
    for (task, model), rows in cells:
        n = int(rows["n"].iloc[0])
        if not n:
            continue
        top = top_k_count(rows)
        low, high = wilson_interval(top, n)
        parts.append((f"{task} on {model}: top {TOP_K} hold {top}/{n} ({top / n:.2f})", low > 0.5,
                      wilson_interval(top, n, ALPHA / len(cells))[1] < 0.5))
    decision = all_of(parts, "(game, model) cells", name_open=False)
    return Decision(decision.verdict, decision.statistic + ": " + "; ".join(p[0] for p in parts))


# -- evidence ---------------------------------------------------------------------------------------

def _paper_evidence_fail() -> str:
    table = paper_table1()
    table = table[table["agent"].map(agent_groups()) == "public"]
    spread = "; ".join(f"{task} {part['rate'].min():.0%}-{part['rate'].max():.0%}"
                       for task, part in table.groupby("task", sort=False))
    return f"Table 1: vanilla and the four retrieval memories, 4 models x 50 episodes: {spread}"


def _paper_evidence_restores() -> str:
    ref = reference_table(TABLE1)
    private = ref[ref["group"] != "baseline"]
    starred = (private["significant_vs_all_baselines"].fillna("").astype(str).str.strip() == "yes")
    return (f"Table 1: {int(starred.sum())} of {len(private)} private-state cells marked better than every "
            "baseline (one-sided Fisher, Holm, n = 50)")


def _paper_evidence_scales() -> str:
    table = _scored(paper_table1())
    shown = []
    for group, name in (("private", "private-state agents"), ("public", "baselines")):
        series = [f"{label} {' -> '.join(f'{k / n:.2f}' for k, n in zip(s['successes'], s['n_scored']))}"
                  for label, s in _by_size(table[table["group"] == group])]
        shown.append(f"{name}: " + ", ".join(series))
    return "Table 1 pooled within family, smaller -> larger; " + "; ".join(shown)


def _paper_evidence_families() -> str:
    ref = reference_table(TABLE1)
    means = ref[ref["group"].isin(["workflow", "autonomous"])].groupby("group")["self_consistency_pct"].mean()
    return (f"Table 1: workflow agents {means['workflow']:.0f}% vs autonomous {means['autonomous']:.0f}% on average "
            "over both games, four models and three update strategies")


def _paper_evidence_cot() -> str:
    ref = reference_table(TABLE1)
    means = ref.groupby("group")["self_consistency_pct"].mean()
    return (f"Table 1: workflow agents {means['workflow']:.0f}% vs private CoT {means['upper_bound']:.0f}% on "
            "average over both games and four models")


def _paper() -> Tables:
    return {TABLE: paper_table1()}


def claims() -> list[Claim]:
    """The study's headline claims (``claims.toml``), evidence read from the reference tables when shown."""
    rules = {
        "PSIT-1": Rule(_fail, _paper_evidence_fail, _paper, _withhold),
        "PSIT-2": Rule(_restores, _paper_evidence_restores, _paper, _withhold),
        "PSIT-3": Rule(_scales, _paper_evidence_scales, _paper, _withhold),
        "PSIT-4": Rule(_workflow_first, _paper_evidence_families, _paper, _withhold),
        "PSIT-5": Rule(_matches_private_cot, _paper_evidence_cot, _paper, _withhold),
        "PSIT-6": Rule(_failure_mix, lambda: "Figure 2: the five outcome classes per model and task (bars)",
                       None, _withhold),
        "PSIT-7": Rule(_state_sizes, lambda: "the RQ3 figure: private state per turn (tokens, log scale)", None,
                       _withhold),
        "PSIT-8": Rule(_collapse, lambda: "Appendix E: the ten most revealed secrets per game and model; the "
                       "attractors it names (data/reference/mode_collapse_attractors.csv)", None),
    }
    return load_claims(Path(__file__).with_name("claims.toml"), rules,
                       {"alpha": ALPHA, "fail_line": FAIL_LINE, "margin": DEFAULT_MARGIN, "small_state": SMALL_STATE,
                        "decade_low": DECADE[0], "decade_high": DECADE[1]})


RUN_SOURCE = "this run"


def _paper_rows_for(table: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 1 cells beside a run's: its tasks and agents, on the paper's model each run
    model stands for, or on all four when none does."""
    paper = paper_table1()
    paper = paper[paper["task"].isin(set(table["task"])) & paper["agent"].isin(set(table["agent"]))]
    matched = {m for m in (study_model(str(x)) for x in table["model"]) if m is not None}
    return paper[paper["model"].isin(matched)] if matched else paper


def method_gaps(table1: pd.DataFrame) -> pd.DataFrame:
    """Per (task, model, private-state agent): its rate minus the strongest public baseline's in that
    cell (the baseline named), with the Newcombe 95% interval; this run's rows, then the paper's for
    the same games and agents (``source`` "paper")."""
    from psit_lib.analysis.verdicts import newcombe_interval

    rows = []
    for source, table in ((RUN_SOURCE, table1), ("paper", _paper_rows_for(table1))):
        cells = _scored(table)
        for (task, model), part in cells.groupby(["task", "model"], sort=False):
            public = part[part["group"] == "public"]
            if public.empty:
                continue
            base = public.loc[(public["successes"] / public["n_scored"]).idxmax()]
            kb, nb = int(base["successes"]), int(base["n_scored"])
            for r in part[part["group"] == "private"].itertuples(index=False):
                k, n = int(r.successes), int(r.n_scored)
                low, high = newcombe_interval(k, n, kb, nb)
                rows.append({"task": task, "model": model, "agent": r.agent, "baseline": base["agent"],
                             "comparison": f"{r.agent} − {base['agent']}", "gap": k / n - kb / nb, "low": low,
                             "high": high, "source": source})
    return pd.DataFrame(rows, columns=["task", "model", "agent", "baseline", "comparison", "gap", "low", "high",
                                       "source"])


def rates_by_size(table1: pd.DataFrame) -> pd.DataFrame:
    """Per task, model family, model size and agent group (public, private state): pooled rate with its Wilson
    95% interval, this run's rows and the paper's four models (``source`` "paper"); the figure draws one line per
    family, as the reference does (GPT-OSS 20B -> 120B, Qwen3 32B -> 235B), never one across families."""
    rows = []
    for source, table in ((RUN_SOURCE, table1), ("paper", paper_table1())):
        cells = _scored(table[table["task"].isin(set(table1["task"])) & table["agent"].isin(set(table1["agent"]))])
        cells = cells.assign(size=[model_size(str(m)) for m in cells["model"]],
                             lineage=[model_family(str(m)) for m in cells["model"]]).dropna(subset=["size"])
        for (task, family, size, group), part in cells.groupby(["task", "lineage", "size", "group"], sort=True):
            k, n = int(part["successes"].sum()), int(part["n_scored"].sum())
            low, high = wilson_interval(k, n)
            rows.append({"task": task, "family": family, "size": size,
                         "model": ", ".join(sorted(set(part["model"].astype(str)))), "group": group, "successes": k,
                         "n_scored": n, "rate": k / n, "wilson_low": low, "wilson_high": high, "source": source})
    return pd.DataFrame(rows, columns=["task", "family", "size", "model", "group", "successes", "n_scored", "rate",
                                       "wilson_low", "wilson_high", "source"])


def claims_ledger(tables: Tables, run: RunContext = FROM_TABLES) -> pd.DataFrame:
    """The study's claims decided on a notebook's (or a run's merged) tables: what a notebook shows (``run``: is it
    the simulator, which models ran; a notebook passes ``exp.run_context()``)."""
    return ledger(claims(), tables, run)


def verdict_rule(margin: float = DEFAULT_MARGIN, run: RunContext = FROM_TABLES) -> str:
    """The verdicts' margin against this paper's count per cell, as a page says it (generated)."""
    return shared_verdict_rule(PAPER_N, run, margin)
