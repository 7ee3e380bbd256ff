"""Typed, validated access to the DDXPlus condition and evidence metadata.

Rule R is read straight from these files, so loading checks every field it relies on and fails
with one sentence (``DatasetError``) rather than silently change what counts as truthful.

Source: DDXPlus (Fansi Tchango et al., NeurIPS 2022 Datasets and Benchmarks), CC-BY; see
``data/ddxplus/ATTRIBUTION.md``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from psit_lib import data_files

CONDITIONS_FILE = "release_conditions.json"
EVIDENCES_FILE = "release_evidences.json"

BINARY = "B"
"""DDXPlus ``data_type`` of yes/no evidences (the others are "C" categorical, "M" multi-choice)."""

_CONDITION_FIELDS = ("cond-name-eng", "symptoms", "antecedents", "severity")
_EVIDENCE_FIELDS = ("question_en", "data_type")


class DatasetError(ValueError):
    """The DDXPlus files are missing, truncated, malformed or inconsistent."""


@dataclass(frozen=True)
class Evidence:
    """One DDXPlus evidence: a symptom or antecedent with the question that elicits it."""

    code: str
    question_en: str
    data_type: str

    @property
    def is_binary(self) -> bool:
        """Whether this evidence is a plain yes/no question (the only kind the player asks)."""
        return self.data_type == BINARY


@dataclass(frozen=True)
class Condition:
    """One DDXPlus pathology with the evidence codes the dataset links to it."""

    name: str
    """English name (``cond-name-eng``), the canonical secret."""
    severity: int
    symptoms: tuple[str, ...]
    antecedents: tuple[str, ...]
    name_fr: str = ""
    evidences: frozenset[str] = field(init=False, repr=False)
    """Union of symptom and antecedent codes: the evidences a patient with this condition has."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidences", frozenset(self.symptoms) | frozenset(self.antecedents))


@dataclass(frozen=True, eq=False)
class DDXPlus:
    """The loaded dataset: conditions in file order and evidences by code."""

    conditions: tuple[Condition, ...]
    evidences: Mapping[str, Evidence]

    def condition(self, name: str) -> Condition:
        """The condition with this exact English name (KeyError naming it otherwise)."""
        for condition in self.conditions:
            if condition.name == name:
                return condition
        raise KeyError(f"{name!r} is not a DDXPlus condition name")

    @functools.cached_property
    def condition_names(self) -> tuple[str, ...]:
        """English names of all conditions, in file order."""
        return tuple(condition.name for condition in self.conditions)

    @functools.cached_property
    def binary_evidences(self) -> tuple[Evidence, ...]:
        """The yes/no evidences, in file order."""
        return tuple(evidence for evidence in self.evidences.values() if evidence.is_binary)


def default_data_dir() -> Path:
    """Where the DDXPlus files live: ``ddxplus/`` of the data folder (:func:`psit_lib.data_files.data_dir`:
    ``$PSIT_DATA_DIR``, else the repository's ``data/``)."""
    return data_files.data_dir("ddxplus")


def load_ddxplus(data_dir: Path | str | None = None) -> DDXPlus:
    """Load and validate the DDXPlus metadata from ``data_dir`` (cached per resolved directory)."""
    directory = Path(data_dir) if data_dir is not None else default_data_dir()
    return _load_cached(directory.resolve())


@functools.lru_cache(maxsize=8)
def _load_cached(directory: Path) -> DDXPlus:
    evidences_path = directory / EVIDENCES_FILE
    conditions_path = directory / CONDITIONS_FILE
    evidences = _parse_evidences(_read_json_object(evidences_path), evidences_path)
    conditions = _parse_conditions(_read_json_object(conditions_path), conditions_path, evidences)
    return DDXPlus(conditions=conditions, evidences=MappingProxyType(evidences))


def _read_json_object(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"DDXPlus file {path} does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"DDXPlus file {path} could not be read as UTF-8 text ({exc}).") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"DDXPlus file {path} is not valid JSON (truncated or malformed): "
            f"{exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from exc
    if not isinstance(data, dict) or not data:
        raise DatasetError(f"DDXPlus file {path} must hold a non-empty JSON object keyed by name.")
    return data


def _require_fields(entry: Any, key: str, fields: tuple[str, ...], path: Path, kind: str) -> None:
    if not isinstance(entry, dict):
        raise DatasetError(f"DDXPlus file {path}: {kind} {key!r} is not a JSON object.")
    for name in fields:
        if name not in entry:
            raise DatasetError(f"DDXPlus file {path}: {kind} {key!r} lacks the required field {name!r}.")


def _parse_evidences(raw: dict[str, Any], path: Path) -> dict[str, Evidence]:
    evidences: dict[str, Evidence] = {}
    for code, entry in raw.items():
        _require_fields(entry, code, _EVIDENCE_FIELDS, path, "evidence")
        question = entry["question_en"]
        if not isinstance(question, str) or not question.strip():
            raise DatasetError(f"DDXPlus file {path}: evidence {code!r} has an empty or non-text 'question_en'.")
        if entry["data_type"] not in ("B", "C", "M"):
            raise DatasetError(
                f"DDXPlus file {path}: evidence {code!r} has data_type {entry['data_type']!r}, expected B, C or M."
            )
        evidences[code] = Evidence(code=code, question_en=question.strip(), data_type=entry["data_type"])
    return evidences


def _parse_code_set(entry: dict[str, Any], key: str, field_name: str, path: Path,
                    evidences: Mapping[str, Evidence]) -> tuple[str, ...]:
    codes = entry[field_name]
    if not isinstance(codes, dict):
        raise DatasetError(f"DDXPlus file {path}: condition {key!r} has a {field_name!r} field that is not an object.")
    for code in codes:
        if code not in evidences:
            raise DatasetError(
                f"DDXPlus file {path}: condition {key!r} names evidence {code!r}, "
                f"which is missing from {EVIDENCES_FILE}."
            )
    return tuple(codes)


def _parse_conditions(raw: dict[str, Any], path: Path, evidences: Mapping[str, Evidence]) -> tuple[Condition, ...]:
    conditions: list[Condition] = []
    seen_names: set[str] = set()
    for key, entry in raw.items():
        _require_fields(entry, key, _CONDITION_FIELDS, path, "condition")
        name = entry["cond-name-eng"]
        if not isinstance(name, str) or not name.strip():
            raise DatasetError(f"DDXPlus file {path}: condition {key!r} has an empty or non-text 'cond-name-eng'.")
        if name in seen_names:
            raise DatasetError(f"DDXPlus file {path}: the English condition name {name!r} appears twice.")
        seen_names.add(name)
        severity = entry["severity"]
        if isinstance(severity, bool) or not isinstance(severity, int):
            raise DatasetError(f"DDXPlus file {path}: condition {key!r} has a non-integer 'severity'.")
        conditions.append(
            Condition(
                name=name,
                severity=severity,
                symptoms=_parse_code_set(entry, key, "symptoms", path, evidences),
                antecedents=_parse_code_set(entry, key, "antecedents", path, evidences),
                name_fr=str(entry.get("cond-name-fr", "")),
            )
        )
    return tuple(conditions)
