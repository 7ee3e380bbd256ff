"""The Compressed Cognitive State (CCS) of the Agent Cognitive Compressor (SPEC §5).

The CCS is the ACC agent's one persistent variable, *replaced* every turn. Because the next
answer is built from it alone (plus the new input), the compressor's reply is validated here
deterministically, with no second model call; anything off-schema raises
:class:`CCSValidationError`, recorded as a failed compression for that turn.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from psit_lib.llm.reply_readers import read_json_object

#: Size limits the compressor is told about; a CCS beyond them is invalid (it would stop being compressed).
MAX_EPISODIC = 12
MAX_ENTITIES = 32
MAX_RELATIONS = 64
MAX_CONSTRAINTS = 32
MAX_ARTIFACTS = 16

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class CCSValidationError(ValueError):
    """The compressor's reply is not a valid CCS (bad JSON, missing or mistyped fields)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FocalEntity(_Strict):
    """An entity the task currently revolves around, with its type (e.g. ``failing node``)."""

    name: str = Field(min_length=1)
    type: str = Field(min_length=1)


class Relation(_Strict):
    """One edge of the relational map: ``subject relation object`` (e.g. failing node · is · db-07)."""

    subject: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    object: str = Field(min_length=1)


class ArtifactRef(_Strict):
    """A reference to a stored artifact the compressor used, with where it came from."""

    artifact_id: str = Field(min_length=1)
    turn: int = Field(ge=0)
    source: str = Field(min_length=1)


class CCS(_Strict):
    """The SPEC §5 schema; every field is required so an omitted field is a visible failure."""

    episodic_trace: list[str] = Field(max_length=MAX_EPISODIC)
    semantic_gist: str
    focal_entities: list[FocalEntity] = Field(max_length=MAX_ENTITIES)
    relational_map: list[Relation] = Field(max_length=MAX_RELATIONS)
    goal_orientation: str
    constraints: list[str] = Field(max_length=MAX_CONSTRAINTS)
    predictive_cue: str
    uncertainty_signal: str
    retrieved_artifacts: list[ArtifactRef] = Field(max_length=MAX_ARTIFACTS)

    def to_json(self) -> str:
        """Compact JSON, the form the compressor receives back as its previous state."""
        return self.model_dump_json()


def empty_ccs() -> CCS:
    """The state before the first turn: nothing known yet."""
    return CCS(episodic_trace=[], semantic_gist="", focal_entities=[], relational_map=[],
               goal_orientation="", constraints=[], predictive_cue="", uncertainty_signal="",
               retrieved_artifacts=[])


def parse_ccs(text: str) -> CCS:
    """The CCS in ``text`` (a JSON object, plain, fenced or in prose) or CCSValidationError; no
    repair: truncated or invalid JSON, or a field that needs guessing, is a recorded failure."""
    if not isinstance(text, str) or not text.strip():
        raise CCSValidationError("the compressor returned an empty reply instead of a CCS JSON object")
    data: Any = read_json_object(text)
    if data is None:
        body = text.strip()
        fenced = _FENCE.match(body)
        try:
            json.loads(fenced.group(1) if fenced else body)
        except json.JSONDecodeError as exc:
            raise CCSValidationError(f"the compressor's reply is not valid JSON ({exc.msg} at "
                                     f"character {exc.pos})") from None
        raise CCSValidationError("the compressor's reply is JSON but not an object")
    try:
        return CCS.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "CCS"
        raise CCSValidationError(f"the compressor's CCS field {where!r} is invalid: {err['msg']} "
                                 f"({exc.error_count()} problem(s) in total)") from None


def render_ccs(ccs: CCS) -> str:
    """The CCS as the answering agent reads it: one labelled line per item, facts as sentences
    (``Fact: the <subject> <relation> <object>.``), so it reads the statement forms the user wrote."""
    lines = [f"Goal: {ccs.goal_orientation}" if ccs.goal_orientation else "",
             f"Gist: {ccs.semantic_gist}" if ccs.semantic_gist else ""]
    lines += [f"Constraint: {c}" for c in ccs.constraints]
    lines += [f"Fact: the {r.subject} {r.relation} {r.object}." for r in ccs.relational_map]
    if ccs.focal_entities:
        lines.append("Focal entities: " + "; ".join(f"{e.name} ({e.type})" for e in ccs.focal_entities))
    lines += [f"Recent: {e}" for e in ccs.episodic_trace]
    if ccs.uncertainty_signal:
        lines.append(f"Uncertain: {ccs.uncertainty_signal}")
    if ccs.predictive_cue:
        lines.append(f"Expect: {ccs.predictive_cue}")
    lines += [f"Source: [{a.artifact_id}] turn {a.turn}, {a.source}" for a in ccs.retrieved_artifacts]
    return "\n".join(line for line in lines if line)


def _cell(value: object) -> str:
    """One value of a compact row: quoted only when it holds the row's separator or a quote."""
    text = str(value)
    return '"' + text.replace('"', '\\"') + '"' if ("," in text or '"' in text or not text) else text


def compact_ccs(ccs: CCS) -> str:
    """The CCS in a compact token-oriented form like the paper's Figure 3 (each field named once,
    records as a header ``name[n]{col,col}:`` and one row each), measured beside :func:`render_ccs`
    in the ``ccs_forms`` table; the agent keeps reading the labelled lines."""
    lines: list[str] = []
    for name in CCS.model_fields:
        value = getattr(ccs, name)
        if isinstance(value, str):
            lines.append(f"{name}: {value}".rstrip())
        elif value and isinstance(value[0], BaseModel):
            cols = list(type(value[0]).model_fields)
            lines.append(f"{name}[{len(value)}]{{{','.join(cols)}}}:")
            lines += ["  " + ",".join(_cell(getattr(item, c)) for c in cols) for item in value]
        else:
            lines.append((f"{name}[{len(value)}]: " + ",".join(_cell(v) for v in value)).rstrip())
    return "\n".join(lines)
