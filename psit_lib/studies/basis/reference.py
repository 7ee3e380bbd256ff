"""Numbers reported by the BASIS study (SPEC §7), for labelled comparison rows only.

Read from ``data/reference/basis_table1_reliability.csv`` (its Table 1: pass^k, pass@k and
success rate per scenario and system). The study's headline mean reliability is the mean of
the three scenarios' success rates. Never used as results.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from psit_lib.analysis.reference import reference_table

TABLE1 = "basis_table1_reliability"

@dataclass(frozen=True)
class Headline:
    scenario: str
    baseline: float
    basis: float
    stated: str


PAPER_HEADLINE = Headline("stale_locations", baseline=0.200, basis=0.744, stated="54.4% increase")
"""The paper's headline: success on stale_locations rises from 0.200 to 0.744, which it states as a
"54.4% increase", the absolute gap in percentage points (0.744 - 0.200 = 0.544); relative to the
baseline the same rates are +272%. Its Table 1 prints the rates to two decimals (0.20, 0.74)."""


def reference_success() -> dict[tuple[str, str], float]:
    """(scenario, system) -> reported success rate."""
    table = reference_table(TABLE1)
    return {(row.scenario, row.system): float(row.success_rate) for row in table.itertuples(index=False)}


def reference_mean() -> dict[str, float]:
    """system -> mean of the reported success rates over the scenarios."""
    table = reference_table(TABLE1)
    return {system: float(part["success_rate"].mean()) for system, part in table.groupby("system", sort=False)}


def reference_passk() -> pd.DataFrame:
    """Long table (scenario, system, k, pass_hat_k, pass_at_k) of the reported reliability."""
    table = reference_table(TABLE1)
    rows = []
    for row in table.itertuples(index=False):
        for k in (1, 2, 5, 10):
            rows.append({"scenario": row.scenario, "system": row.system, "k": k,
                         "pass_hat_k": getattr(row, f"pass_hat_k{k}"), "pass_at_k": getattr(row, f"pass_at_k{k}")})
    return pd.DataFrame(rows)
