"""Numbers reported by the private-state study (SPEC §7), for labelled comparison rows only.

Read from ``data/reference/psit_table1_self_consistency.csv`` (its Table 1: every method, task
and model, with its significance asterisk) and ``mode_collapse_attractors.csv`` (Appendix E's
attractor per task and model). Tables show
them beside measured rows with ``source = "reference study (reported)"`` and the reference
model's name; they are never used as results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from psit_lib.analysis.paper_models import ROSTER_ENV, name_key, paper_models, read_roster
from psit_lib.analysis.reference import REFERENCE_SOURCE, reference_table

__all__ = ["ROSTER_ENV", "read_roster", "study_model", "near_study_model", "model_match_notes", "reference_models"]

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


# -- which served model is the paper's ---------------------------------------------------------

STUDY = "PSIT"
"""The study's name in ``data/reference/paper_models.csv`` (its four models and the ids its reference
configuration served them under)."""


def study_model(run_model: str, roster: Mapping[str, str] | None = None) -> str | None:
    """The study's model a served name is: the same name as the study prints it or as its reference
    configuration served it (ignoring case, punctuation and an ``org/`` prefix), or the user's
    roster entry for it; None for the simulator and anything else, near names included (``Qwen3-32B-AWQ``
    is another build, ``Qwen3-235B-A22B-Instruct-2507`` another model)."""
    return paper_models(STUDY).model_of(run_model, roster)


def near_study_model(run_model: str) -> str | None:
    """The study's model a served name merely resembles (it starts with the study's name), for the
    label "not the paper's model"; None when the name is the study's or resembles none."""
    key = name_key(run_model)
    near = [m for m in paper_models(STUDY).models if key.startswith(name_key(m)) and key != name_key(m)]
    if study_model(run_model, roster={}) is not None or not near:
        return None
    return max(near, key=lambda m: len(name_key(m)))


def model_match_notes(run_models: Sequence[str], roster: Mapping[str, str] | None = None) -> list[str]:
    """One sentence per run model whose name is near a study model but is not it (and is not mapped)."""
    notes = []
    for model in run_models:
        near = near_study_model(model)
        if near is not None and study_model(model, roster) is None:
            notes.append(f"{model} is not the paper's model: its name is near {near}, but only the study's own "
                         f"names count (set {ROSTER_ENV}=\"{model}={near}\" if it is the same model).")
    return notes
