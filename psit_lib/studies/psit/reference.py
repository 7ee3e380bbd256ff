"""Numbers reported by the private-state study (SPEC §7), for labelled comparison rows only.

Read from ``data/reference/psit_table1_self_consistency.csv`` (its Table 1: every method, task
and model, with its significance asterisk) and ``mode_collapse_attractors.csv`` (Appendix E's
attractor per task and model). Tables show
them beside measured rows with ``source = "reference study (reported)"`` and the reference
model's name; they are never used as results.
"""

from __future__ import annotations

import pandas as pd

from psit_lib.analysis.reference import REFERENCE_SOURCE, reference_table

TABLE1 = "psit_table1_self_consistency"


def reference_models() -> tuple[str, ...]:
    return tuple(dict.fromkeys(reference_table(TABLE1)["model"]))


def self_consistency_reference(task: str, agents: list[str] | None = None) -> pd.DataFrame:
    """Reference rows (task, agent, model, rate, significant, source) for the agents the study
    reports, in the table's order."""
    table = reference_table(TABLE1)
    table = table[table["task"] == task]
    if agents is not None:
        table = table[table["method"].isin(agents)]
    return pd.DataFrame({
        "task": table["task"], "agent": table["method"], "model": table["model"],
        "rate": table["self_consistency_pct"] / 100,
        "significant": table["significant_vs_all_baselines"].fillna("").astype(str).str.strip() == "yes",
        "source": REFERENCE_SOURCE,
    }).reset_index(drop=True)


def mode_collapse_attractors() -> dict[tuple[str, str], str]:
    """(task, reference model) -> the secret the study reports that model collapsing onto
    (its Appendix E: the main runs at T = 0.3; one secret per task and model)."""
    table = reference_table("mode_collapse_attractors")
    return {(row.task, row.model): row.secret for row in table.itertuples(index=False)}


def attractor_spellings() -> dict[str, tuple[str, ...]]:
    """Each reported attractor -> every spelling a reveal may use for it, lowercased (the name
    the paper uses, e.g. "PBC" for primary biliary cholangitis, and the file's ``aliases``)."""
    table = reference_table("mode_collapse_attractors")
    spellings: dict[str, tuple[str, ...]] = {}
    for row in table.itertuples(index=False):
        aliases = [] if pd.isna(row.aliases) else str(row.aliases).split("|")
        names = [str(row.secret), *aliases]
        spellings[str(row.secret)] = tuple(dict.fromkeys(n.strip().lower() for n in names if n.strip()))
    return spellings
