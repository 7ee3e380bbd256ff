"""The ACC study's headline claims (``claims.toml``), each decided on notebook 05's saved tables.

The paper reports its comparisons as figures and summary rates without a reference file here
(``data/reference/`` holds none for ACC), so its evidence is stated, never tested on counts. Turns of one scenario
are not independent, so the rate and score claims compare agents on per-episode turn averages
(``episode_rates``: H_u, D_r and the mean judge scores within each scenario), paired by scenario, with an exact
sign-flip test (every agent answered the same turns of a scenario; with n scenarios the smallest p is 1/2^n, so
fewer than five scenarios cannot reach 0.05, which the statistic says).
"""

from __future__ import annotations

from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd

from psit_lib.analysis.claims import (FROM_TABLES, INCONCLUSIVE, Claim, Decision, Rule, RunContext, Tables, all_of, both, ledger,
                                      load_claims)

PAPER = "ACC"
ALPHA = 0.05
EPISODES, FOOTPRINT, SCORES = "episode_rates", "footprint_by_domain", "judge_scores"
METHOD, REPLAY = "acc", "transcript"
GROWTH_LIMIT = 1.5
"""ACC's footprint is *bounded* in a domain when its last turn carries at most this many times its
mean over turns (a footprint growing linearly from zero ends at about twice its mean)."""
COMPETITIVE = 1.0
""""Competitive": ACC's mean judge score at most this far below a baseline's (one step of the 0-10 scale)."""
EXACT_UP_TO = 16
"""Scenarios up to which the sign-flip test enumerates every flip; beyond, 2^16 seeded random flips."""


def _baselines(agents: pd.Series) -> list[str]:
    return [a for a in dict.fromkeys(agents.astype(str)) if a == REPLAY or a.startswith("retrieval")]


def sign_flip_p(differences: np.ndarray, alternative: str) -> float:
    """Exact p of a paired sign-flip (permutation) test of the mean difference (``less``: below 0; ``greater``:
    above 0): the share of sign assignments whose mean is at least as extreme (the observed one included)."""
    d = np.asarray(differences, dtype=float)
    if len(d) == 0:
        return 1.0
    if len(d) <= EXACT_UP_TO:
        signs = np.array(list(product((1.0, -1.0), repeat=len(d))))
    else:
        signs = np.random.default_rng(0).choice((1.0, -1.0), size=(1 << EXACT_UP_TO, len(d)))
    means, observed = (signs * d).mean(axis=1), d.mean()
    tol = 1e-12
    hits = means <= observed + tol if alternative == "less" else means >= observed - tol
    return float(hits.mean())


def paired(table: pd.DataFrame, column: str, base: str, shift: float = 0.0) -> np.ndarray:
    """Per episode where both answered: ACC's ``column`` minus ``base``'s, plus ``shift``."""
    wide = table.pivot_table(index="episode_id", columns="agent", values=column, observed=True)
    if METHOD not in wide or base not in wide:
        return np.array([])
    both_ = wide[[METHOD, base]].dropna()
    return (both_[METHOD] - both_[base]).to_numpy(dtype=float) + shift


def _compare(table: pd.DataFrame, column: str, lower: bool, shift: float = 0.0, comparisons: int = 1
             ) -> list[tuple[str, bool, bool]]:
    """Per baseline: (label, ACC better at ALPHA, ACC worse at ALPHA/comparisons) on ``column`` per episode."""
    towards, away = ("less", "greater") if lower else ("greater", "less")
    parts = []
    for base in _baselines(table["agent"]):
        d = paired(table, column, base, shift)
        if len(d) == 0:
            continue
        p, q = sign_flip_p(d, towards), sign_flip_p(d, away)
        gap = d.mean() - shift
        parts.append((f"{column} acc − {base} {gap:+.3f} over {len(d)} scenario(s) (p {p:.3g})", p < ALPHA,
                      q < ALPHA / comparisons))
    return parts


def _lower(column: str):
    def decide(tables: Tables) -> Decision:
        table = tables[EPISODES]
        parts = _compare(table, column, lower=True, comparisons=max(1, len(_baselines(table["agent"]))))
        if not parts:
            return Decision(INCONCLUSIVE, f"needs acc and a baseline with {column} per episode")
        decision = all_of(parts, "baselines", name_open=False)
        few = len(set(table["episode_id"]))
        note = f" (with {few} scenario(s) the smallest p is {0.5 ** few:.3g})" if 0.5 ** few >= ALPHA else ""
        return Decision(decision.verdict, f"{decision.statistic}: " + "; ".join(p[0] for p in parts) + note)

    return decide


def _judge(tables: Tables) -> Decision:
    table = tables[EPISODES]
    n_base = max(1, len(_baselines(table["agent"])))
    strongest = [p for c in ("relevance", "coherence") for p in _compare(table, c, lower=False, comparisons=2 * n_base)]
    competitive = [p for c in ("answer_quality", "instruction_following")
                   for p in _compare(table, c, lower=False, shift=COMPETITIVE, comparisons=2 * n_base)]
    if not strongest or not competitive:
        return Decision(INCONCLUSIVE, "needs acc and a baseline with judge scores per episode")
    decision = both(all_of(strongest, "comparisons"), all_of(competitive, "comparisons"),
                    ("strongest on relevance and coherence", f"within {COMPETITIVE:g} point on the other two"))
    scores = tables.get(SCORES)
    if scores is not None and not scores.empty:
        shown = "; ".join(f"{r.agent} {r.criterion} {r.mean:.1f} ± {r.std:.1f}" for r in scores.itertuples(index=False))
        return Decision(decision.verdict, f"{decision.statistic}; mean ± std across turns: {shown}")
    return decision


def _bounded(tables: Tables) -> Decision:
    table = tables[FOOTPRINT]
    parts = []
    for domain, part in table.groupby("domain", sort=False):
        rows = part.set_index("agent")
        if METHOD not in rows.index or REPLAY not in rows.index:
            continue
        acc, replay = rows.loc[METHOD], rows.loc[REPLAY]
        growth = float(acc.last_turn_tokens) / float(acc.mean_tokens) if acc.mean_tokens else float("nan")
        parts.append((f"{domain}: acc last {acc.last_turn_tokens:.0f} (x{growth:.2f} its mean) vs transcript "
                      f"{replay.last_turn_tokens:.0f}",
                      acc.last_turn_tokens < replay.last_turn_tokens and growth <= GROWTH_LIMIT,
                      acc.last_turn_tokens > replay.last_turn_tokens))
    if parts and all(opposes for _, _, opposes in parts):
        return Decision("contradicted", "; ".join(p[0] for p in parts))
    decision = all_of([(label, supports, False) for label, supports, _ in parts], "domains", name_open=False)
    return Decision(decision.verdict, f"{decision.statistic}: " + "; ".join(p[0] for p in parts))


def _stated(text: str):
    return lambda: f"reported: {text} (no reference numbers in data/reference/)"


def claims() -> list[Claim]:
    rules = {
        "ACC-1": Rule(_bounded, _stated("one bounded CCS of a fixed schema, replaced every turn, against a replayed "
                                        "transcript that grows with every turn")),
        "ACC-2": Rule(_lower("H_u"), _stated("ACC's hallucination rate (H_u) below both baselines'")),
        "ACC-3": Rule(_lower("D_r"), _stated("ACC's drift rate (D_r) below both baselines'")),
        "ACC-4": Rule(_judge, _stated("judge scores (0-10) on relevance, answer quality, instruction following and "
                                      "coherence, mean ± std across turns")),
    }
    return load_claims(Path(__file__).with_name("claims.toml"), rules,
                       {"alpha": ALPHA, "growth": GROWTH_LIMIT, "competitive": COMPETITIVE})


def claims_ledger(tables: Tables, run: RunContext = FROM_TABLES) -> pd.DataFrame:
    """The study's claims decided on a notebook's (or a run's merged) tables: what a notebook shows."""
    return ledger(claims(), tables, run)
