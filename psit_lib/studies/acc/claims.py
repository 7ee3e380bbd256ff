"""The ACC study's headline claims (SPEC §5), each decided on notebook 05's saved tables.

The paper reports its comparisons as figures and summary rates without a reference file here
(``data/reference/`` holds none for ACC), so its evidence is stated, never tested on counts. Pooled
counts treat turns as independent; turns of one episode are correlated, so the intervals are a
lower bound on the uncertainty (said in each test).
"""

from __future__ import annotations

import pandas as pd

from psit_lib.analysis.claims import INCONCLUSIVE, Claim, ledger, Decision, Tables, all_of
from psit_lib.analysis.verdicts import newcombe_interval

PAPER = "ACC"
ALPHA = 0.05
RATES, FOOTPRINT = "hallucination_drift", "footprint_by_domain"
METHOD, REPLAY = "acc", "transcript"
GROWTH_LIMIT = 1.5
"""ACC's footprint is *bounded* in a domain when its last turn carries at most this many times its
mean over turns (a footprint growing linearly from zero ends at about twice its mean)."""


def _baselines(agents: pd.Series) -> list[str]:
    return [a for a in dict.fromkeys(agents.astype(str)) if a == REPLAY or a.startswith("retrieval")]


def _lower(metric: str):
    def decide(tables: Tables) -> Decision:
        table = tables[RATES]
        table = table[table["metric"] == metric].set_index("agent")
        baselines = _baselines(table.index.to_series())
        if METHOD not in table.index or not baselines:
            return Decision(INCONCLUSIVE, f"needs acc and a baseline with {metric} counts")
        a = table.loc[METHOD]
        parts = []
        for base in baselines:
            b = table.loc[base]
            k1, n1, k2, n2 = int(a.failures), int(a.opportunities), int(b.failures), int(b.opportunities)
            if not n1 or not n2:
                continue
            low, high = newcombe_interval(k1, n1, k2, n2, ALPHA)
            above = newcombe_interval(k1, n1, k2, n2, ALPHA / len(baselines))[0] > 0
            parts.append((f"acc − {base} {k1 / n1 - k2 / n2:+.3f} [{low:+.3f}, {high:+.3f}]", high < 0, above))
        decision = all_of(parts, "baselines")
        return Decision(decision.verdict, f"{decision.statistic}: " + "; ".join(p[0] for p in parts))

    return decide


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
    decision = all_of([(label, supports, False) for label, supports, _ in parts], "domains")
    return Decision(decision.verdict, f"{decision.statistic}: " + "; ".join(p[0] for p in parts))


def claims() -> list[Claim]:
    return [
        Claim("ACC-1", PAPER, "ACC keeps memory bounded",
              "reported: one bounded CCS of a fixed schema, replaced every turn, against a replayed transcript "
              "that grows with every turn (no reference numbers in data/reference/)", (FOOTPRINT,),
              f"per domain: ACC's last-turn tokens below transcript replay's and at most {GROWTH_LIMIT:g}x its own "
              "mean (supported in every domain) / above transcript replay's in every domain (contradicted); "
              "descriptive, the table holds means", "lower is the claim", _bounded),
        Claim("ACC-2", PAPER, "lower hallucination than transcript replay and retrieval",
              "reported: ACC's hallucination rate (H_u) below both baselines' (no reference numbers in "
              "data/reference/)", (RATES,),
              f"per baseline: Newcombe {1 - ALPHA:.0%} interval of acc − baseline (pooled failures over "
              "opportunities, turns taken as independent) below 0 for every baseline (supported) / above 0 at "
              f"{ALPHA:g}/baselines for any (contradicted)", "lower is the claim", _lower("hallucination")),
        Claim("ACC-3", PAPER, "lower drift than transcript replay and retrieval",
              "reported: ACC's drift rate (D_r) below both baselines' (no reference numbers in data/reference/)",
              (RATES,),
              "as ACC-2, on drift (violations and omissions over active rules, turns 2..T)", "lower is the claim",
              _lower("drift")),
    ]


def claims_ledger(tables: Tables) -> pd.DataFrame:
    """The study's claims decided on a notebook's (or a run's merged) tables: what a notebook shows."""
    return ledger(claims(), tables)
