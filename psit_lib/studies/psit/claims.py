"""The private-state study's headline claims (SPEC §1, §4, §7), each decided on a run's Table 1 table.

All three read ``table1_self_consistency`` (self-consistency by Table 1's rule per task, model and
agent; counts ``successes`` of ``n_scored``). Agents are grouped as the paper's Table 1 groups them
(``data/reference/psit_table1_self_consistency.csv``): *public* are its baselines (vanilla and the
four retrieval memories), *private state* the rest (private CoT and the working-memory agents);
an agent the paper does not list is left out of both. The paper's evidence is computed from its
Table 1 (50 episodes per cell) and, where the test applies, the paper's own numbers are decided by
the same test (``paper_decision``), so a reader sees whether the paper's counts carry its claim.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from psit_lib.analysis.claims import INCONCLUSIVE, Claim, ledger, Decision, Tables, all_of, one_sided_p, trend_z
from psit_lib.analysis.reference import reference_table
from psit_lib.analysis.stats import fisher_one_sided, wilson_interval
from psit_lib.analysis.verdicts import DEFAULT_MARGIN, margin_note
from psit_lib.studies.psit.protocol.reproduction import PAPER_N
from psit_lib.studies.psit.reference import TABLE1, study_model

PAPER = "PSIT"
TABLE = "table1_self_consistency"
ALPHA = 0.05
FAIL_LINE = 0.5
"""A cell *fails* the fork test when its self-consistency is below this (not consistent in most
episodes); the claim is decided on the Wilson 95% interval of each public cell against it."""

MODEL_SIZES_B = {"GPT-OSS 20B": 20.0, "GPT-OSS 120B": 120.0, "Qwen3 32B": 32.0, "Qwen3 235B": 235.0}
"""Total parameters (billions) of the paper's four models, as the paper names them (Qwen3 235B is
Qwen3-235B-A22B: 235B total, 22B active)."""


def model_size(name: str) -> float | None:
    """Billions of parameters of a run's model: the paper's figure for the paper's four models, else
    the size the served name states (``gemma-3-270m`` -> 0.27, ``llama-3-8b`` -> 8), else None."""
    study = study_model(name)
    if study is not None:
        return MODEL_SIZES_B[study]
    found = re.search(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)([bm])(?![a-z])", name.rsplit("/", 1)[-1].lower())
    if not found:
        return None
    value = float(found.group(1))
    return value if found.group(2) == "b" else value / 1000


def agent_groups() -> dict[str, str]:
    """Agent -> "public" or "private" by the paper's Table 1 groups."""
    table = reference_table(TABLE1)
    return {str(m): ("public" if g == "baseline" else "private") for m, g in zip(table["method"], table["group"])}


def _scored(table: pd.DataFrame) -> pd.DataFrame:
    ref = reference_table(TABLE1)
    table = table[table["n_scored"].fillna(0) > 0].copy()
    table["group"] = table["agent"].map(agent_groups())
    table["family"] = table["agent"].map(dict(zip(ref["method"].astype(str), ref["group"].astype(str))))
    return table[table["group"].notna()]


def paper_table1() -> pd.DataFrame:
    """The paper's Table 1 as a run's ``table1_self_consistency`` (rates read back as counts of 50)."""
    ref = reference_table(TABLE1)
    k = (ref["self_consistency_pct"] / 100 * PAPER_N).round().astype(int)
    return pd.DataFrame({"task": ref["task"], "model": ref["model"], "agent": ref["method"], "n_scored": PAPER_N,
                         "successes": k, "rate": k / PAPER_N})


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


def _scales(tables: Tables) -> Decision:
    cells = _scored(tables[TABLE])
    cells = cells[cells["group"] == "private"].copy()
    cells["size"] = [model_size(str(m)) for m in cells["model"]]
    cells = cells[cells["size"].notna()]
    per_task = []
    for task, part in cells.groupby("task", sort=False):
        by_size = part.groupby("size")[["successes", "n_scored"]].sum().sort_index()
        if len(by_size) < 2:
            continue
        z = trend_z(by_size["successes"].astype(int).tolist(), by_size["n_scored"].astype(int).tolist(),
                    [math.log10(s) for s in by_size.index])
        per_task.append((task, len(by_size), z))
    if not per_task:
        models = sorted(set(_scored(tables[TABLE])["model"].astype(str)))
        return Decision(INCONCLUSIVE, f"needs two or more model sizes; this run's private-state cells have "
                        f"{cells['size'].nunique()} known size(s) (model(s): {', '.join(models) or 'none'})")
    parts = [(f"{task}: {k} sizes, z {z:+.2f}", one_sided_p(z) < ALPHA,
              one_sided_p(-z) < ALPHA / len(per_task)) for task, k, z in per_task]
    decision = all_of(parts, "games")
    return Decision(decision.verdict, decision.statistic + "; " + "; ".join(p[0] for p in parts))


def _workflow_first(tables: Tables) -> Decision:
    cells = _scored(tables[TABLE])
    parts = _pooled_gaps(cells[cells["family"].isin(["workflow", "autonomous"])], "family", "workflow", "autonomous")
    if not parts:
        return Decision(INCONCLUSIVE, "needs a workflow and an autonomous memory agent in one (game, model) cell")
    decision = all_of(parts, "(task, model) cells")
    return Decision(decision.verdict, decision.statistic + " (workflow agents pooled vs autonomous pooled)")


def _paper_evidence_families() -> str:
    ref = reference_table(TABLE1)
    means = ref[ref["group"].isin(["workflow", "autonomous"])].groupby("group")["self_consistency_pct"].mean()
    return (f"Table 1: workflow agents {means['workflow']:.0f}% vs autonomous {means['autonomous']:.0f}% on average "
            "over both games, four models and three update strategies")


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
    table = paper_table1()
    table = table[table["agent"].map(agent_groups()) == "private"]
    rates = table.groupby("model", sort=False)[["successes", "n_scored"]].sum()
    shown = sorted(((MODEL_SIZES_B[str(m)], str(m), r.successes / r.n_scored) for m, r in rates.iterrows()))
    return "Table 1, private-state agents pooled: " + ", ".join(f"{m} {rate:.2f}" for _, m, rate in shown)


def claims() -> list[Claim]:
    """The study's headline claims (evidence read from the reference table when called)."""
    return [
        Claim("PSIT-1", PAPER, "public-only and retrieval agents fail the fork test regardless of scale",
              _paper_evidence_fail(), (TABLE,),
              f"every public cell's Wilson 95% interval below {FAIL_LINE:g} (supported) / at or above it "
              "(contradicted), over every game and model run", "lower is the claim", _fail, _paper),
        Claim("PSIT-2", PAPER, "private working memory restores consistency", _paper_evidence_restores(), (TABLE,),
              f"per (game, model): one-sided Fisher, private-state pooled > public pooled at {ALPHA:g} in every cell "
              f"(supported); public > private at {ALPHA:g}/cells in any (contradicted)", "higher is the claim",
              _restores, _paper),
        Claim("PSIT-3", PAPER, "self-consistency scales with model size", _paper_evidence_scales(), (TABLE,),
              f"per game: Cochran-Armitage trend of private-state success over log model size, one-sided {ALPHA:g}; "
              "needs two or more sizes", "rises with size", _scales, _paper),
        Claim("PSIT-4", PAPER, "workflow memory agents outperform autonomous ones", _paper_evidence_families(), (TABLE,),
              f"per (game, model): one-sided Fisher, workflow agents pooled > autonomous pooled at {ALPHA:g} in every "
              f"cell (supported); autonomous > workflow at {ALPHA:g}/cells in any (contradicted)", "higher is the claim",
              _workflow_first, _paper),
    ]


def _paper() -> Tables:
    return {TABLE: paper_table1()}


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
    """Per task, model size and agent group (public, private state): pooled rate with its Wilson
    95% interval, this run's rows and the paper's four models (``source`` "paper")."""
    rows = []
    for source, table in ((RUN_SOURCE, table1), ("paper", paper_table1())):
        cells = _scored(table[table["task"].isin(set(table1["task"])) & table["agent"].isin(set(table1["agent"]))])
        cells = cells.assign(size=[model_size(str(m)) for m in cells["model"]]).dropna(subset=["size"])
        for (task, size, group), part in cells.groupby(["task", "size", "group"], sort=True):
            k, n = int(part["successes"].sum()), int(part["n_scored"].sum())
            low, high = wilson_interval(k, n)
            rows.append({"task": task, "size": size, "model": ", ".join(sorted(set(part["model"].astype(str)))),
                         "group": group, "successes": k, "n_scored": n, "rate": k / n, "wilson_low": low,
                         "wilson_high": high, "source": source})
    return pd.DataFrame(rows, columns=["task", "size", "model", "group", "successes", "n_scored", "rate",
                                       "wilson_low", "wilson_high", "source"])


def claims_ledger(tables: Tables) -> pd.DataFrame:
    """The study's claims decided on a notebook's (or a run's merged) tables: what a notebook shows."""
    return ledger(claims(), tables)


def verdict_rule(margin: float = DEFAULT_MARGIN) -> str:
    """The verdicts' margin against this paper's count per cell, as a page says it (generated)."""
    return margin_note(PAPER_N, margin)
