"""Numbers reported by the BASIS study (SPEC §7), for labelled comparison rows only.

Read from ``data/reference/basis_table1_reliability.csv`` (its Table 1: pass^k, pass@k and
success rate per scenario and system). The study's headline mean reliability is the mean of
the three scenarios' success rates. Never used as results.
"""

from __future__ import annotations

import pandas as pd

from psit_lib.analysis.reference import reference_table

TABLE1 = "basis_table1_reliability"

PAPER_HEADLINE = {("stale_locations", "baseline"): 0.200, ("stale_locations", "basis"): 0.744}
"""The paper's headline rates: its "54.4% increase" is the absolute gap 0.744 - 0.200 (relative to
the baseline, +272%); its Table 1 prints them to two decimals (0.20, 0.74)."""


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
    return pd.DataFrame([{"scenario": row.scenario, "system": row.system, "k": k, "pass_hat_k": getattr(row, f"pass_hat_k{k}"),
                          "pass_at_k": getattr(row, f"pass_at_k{k}")}
                         for row in table.itertuples(index=False) for k in (1, 2, 5, 10)])
