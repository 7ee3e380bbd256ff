"""Medical knowledge of the simulated model: the DDXPlus conditions, their severity and evidences, and the
question for each binary evidence, read from the release files (README.md, "Its own knowledge")."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

# Everyday names a model knows for some conditions (keys normalised by ``name_key``).
EVERYDAY_NAMES = {
    "laryngospasm": "Larygospasm",
    "heart attack": "Possible NSTEMI / STEMI",
    "myocardial infarction": "Possible NSTEMI / STEMI",
    "lupus": "SLE",
    "systemic lupus erythematosus": "SLE",
    "common cold": "URTI",
    "upper respiratory tract infection": "URTI",
    "flu": "Influenza",
    "acid reflux": "GERD",
    "gastroesophageal reflux disease": "GERD",
    "lung cancer": "Pulmonary neoplasm",
    "pertussis": "Whooping cough",
}


@dataclass(frozen=True)
class Illness:
    name: str
    severity: int
    evidences: frozenset[str]


@dataclass(frozen=True)
class MedicalKnowledge:
    illnesses: tuple[Illness, ...]
    questions: dict[str, str]          # binary evidence code -> English question

    @property
    def names(self) -> list[str]:
        return [i.name for i in self.illnesses]

    @cached_property
    def _by_key(self) -> dict[str, Illness]:
        table = {name_key(i.name): i for i in self.illnesses}
        for everyday, official in EVERYDAY_NAMES.items():
            table.setdefault(everyday, next(i for i in self.illnesses if i.name == official))
        return table

    @cached_property
    def _flat_questions(self) -> dict[str, str]:
        return {code: _flat(question) for code, question in self.questions.items()}

    def illness(self, name: str) -> Illness | None:
        """The illness a name refers to (case, punctuation and everyday names forgiven)."""
        key = name_key(name)
        if key in self._by_key:
            return self._by_key[key]
        inside = {id(i): i for k, i in self._by_key.items() if f" {k} " in f" {key} "}
        return next(iter(inside.values())) if len(inside) == 1 else None

    def has_it(self, name: str, evidence: str) -> bool:
        """Whether a patient with ``name`` presents ``evidence`` (unknown illnesses: nothing)."""
        illness = self.illness(name)
        return illness is not None and evidence in illness.evidences

    def asked_evidence(self, text: str) -> str | None:
        """The evidence a message asks about: the longest known question found in it."""
        flat = _flat(text)
        found = [code for code, question in self._flat_questions.items() if question in flat]
        return max(found, key=lambda code: len(self.questions[code]), default=None)

    def fits(self, illness: Illness, answers: list[tuple[str, bool]]) -> bool:
        return all((code in illness.evidences) == yes for code, yes in answers)


def name_key(text: str) -> str:
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return " ".join(re.sub(r"[^0-9a-z]+", " ", plain.casefold()).split())


def _flat(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.casefold()).split())


def data_dir() -> Path:
    """The simulator's own copy of the harness's rule (psit_lib/data_files.py, which it may not import):
    ``$PSIT_DATA_DIR/ddxplus``, else the checkout's ``data/ddxplus``."""
    root = os.environ.get("PSIT_DATA_DIR")
    return Path(root) / "ddxplus" if root else Path(__file__).resolve().parents[3] / "data" / "ddxplus"


@lru_cache(maxsize=2)
def medical_knowledge(directory: str | None = None) -> MedicalKnowledge:
    folder = Path(directory) if directory else data_dir()
    conditions = json.loads((folder / "release_conditions.json").read_text(encoding="utf-8"))
    evidences = json.loads((folder / "release_evidences.json").read_text(encoding="utf-8"))
    illnesses = tuple(
        Illness(entry["cond-name-eng"], int(entry["severity"]),
                frozenset(entry.get("symptoms", {})) | frozenset(entry.get("antecedents", {})))
        for entry in conditions.values())
    questions = {code: entry["question_en"] for code, entry in evidences.items() if entry.get("data_type") == "B"}
    return MedicalKnowledge(illnesses, questions)
