"""Which served model is a paper's (SPEC §9: a run of the simulated model, or of a model that is not the paper's, gets
no verdict against the paper; it illustrates the protocol).

The papers' models are data (``data/reference/paper_models.csv``: study, model, the served ids its reference code used,
and where that comes from); a study whose model is not recorded has one row with an empty model. A served name is the
paper's model when it is the paper's name or a served id of it (ignoring case, punctuation and an ``org/`` prefix), or
when the user's roster says so (``PSIT_PAPER_MODELS``: ``served-name=Paper Model;...``, the target a model name of the
file or, for a study whose model is not recorded, the study's name: ``gpt-5-mini=BASIS``). The simulated model is never
a paper's, whatever it is called.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from psit_lib.analysis.reference import reference_table
from psit_lib.wire import SIM_MODEL_NAME

ROSTER_ENV = "PSIT_PAPER_MODELS"
TABLE = "paper_models"


def name_key(name: str) -> str:
    """A served or printed model name without its ``org/`` prefix, case and punctuation."""
    return re.sub(r"[^a-z0-9]", "", name.strip().rsplit("/", 1)[-1].lower())


def is_simulated_model(name: str) -> bool:
    """Whether a served name is the embedded simulator's (``psit-sim``, ``psit-sim:<profile>``)."""
    return str(name).strip().startswith(SIM_MODEL_NAME)


@dataclass(frozen=True)
class PaperModels:
    """One study's models: paper name -> the served ids its reference code used; ``source`` says where from."""

    study: str
    models: Mapping[str, tuple[str, ...]]
    source: str

    @property
    def recorded(self) -> bool:
        return bool(self.models)

    def model_of(self, run_model: str, roster: Mapping[str, str] | None = None) -> str | None:
        """The paper's model a served name is (the study's name when its model is unrecorded and the roster maps
        the name to it); None for the simulator and for every other name, near names included."""
        if is_simulated_model(run_model):
            return None
        key = name_key(run_model)
        mapped = (read_roster() if roster is None else roster).get(key)
        if mapped is not None and (mapped in self.models or (not self.recorded and mapped == self.study)):
            return mapped
        for paper, served in self.models.items():
            if key == name_key(paper) or key in {name_key(s) for s in served}:
                return paper
        return None

    def why_not(self, run_model: str, simulated: bool = False) -> str:
        """Why a run on ``run_model`` gets no verdict against this paper (one clause)."""
        if simulated or is_simulated_model(run_model):
            return (f"the simulated model ({run_model}) illustrates the protocol; it is not a measurement of "
                    f"the {self.study} paper's models")
        if self.recorded:
            return (f"{run_model} is not one of the {self.study} paper's models ({', '.join(self.models)}); set "
                    f"{ROSTER_ENV} if it is one of them under another name")
        return (f"the {self.study} paper's model is {self.source}, so {run_model} cannot be matched to it (set "
                f"{ROSTER_ENV}=\"{run_model}={self.study}\" if it is that model)")


@lru_cache(maxsize=None)
def paper_models(study: str) -> PaperModels:
    """The models of ``study`` (its name in the file, e.g. "PSIT", "BASIS", "ACC")."""
    table = reference_table(TABLE).fillna("")
    rows = table[table["study"] == study]
    if rows.empty:
        raise KeyError(f"{study!r} has no row in data/reference/{TABLE}.csv")
    models = {str(r.model): tuple(s.strip() for s in str(r.served_names).split("|") if s.strip())
              for r in rows.itertuples(index=False) if str(r.model).strip()}
    return PaperModels(study, models, str(rows["source"].iloc[0]))


@lru_cache(maxsize=1)
def roster_targets() -> frozenset[str]:
    """What a roster entry may name: every paper model of the file, and each study whose model is unrecorded."""
    table = reference_table(TABLE).fillna("")
    return frozenset({str(m) for m in table["model"] if str(m).strip()}
                     | {str(s) for s, part in table.groupby("study") if not any(str(m).strip() for m in part["model"])})


def read_roster(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The user's roster from :data:`ROSTER_ENV` (served name key -> paper model or study); an entry naming
    something no paper ran is an error in one sentence."""
    return dict(_parse_roster((os.environ if env is None else env).get(ROSTER_ENV, "").strip()))


@lru_cache(maxsize=16)
def _parse_roster(text: str) -> tuple[tuple[str, str], ...]:
    targets = roster_targets() if text else frozenset()
    roster: dict[str, str] = {}
    for entry in filter(None, (e.strip() for e in text.split(";"))):
        served, sep, target = entry.partition("=")
        target = target.strip()
        if not sep or not served.strip() or target not in targets:
            raise ValueError(f"{ROSTER_ENV}: {entry!r} must be served-name=one of {', '.join(sorted(targets))}.")
        roster[name_key(served)] = target
    return tuple(roster.items())
