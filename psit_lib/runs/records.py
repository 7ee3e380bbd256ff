"""Typed episode records: what a run stores per episode, read back with every field checked.

An episode record is an *envelope* the runner writes for every planned episode (id, status,
error, the spec, model-call usage and the call log, wall time) and, for a finished episode, the
study's *result*: a pydantic model each study defines with a ``schema_version``. On disk the
two are one flat JSON object per line (``episodes.jsonl``), so a record stays readable with
``jq``; in memory they are typed.

Reading is strict. A record missing a field, with a field of the wrong type, or written by a
newer schema fails with :class:`RecordError` naming the file and the episode, never as a silent
"error" outcome; a failed episode is kept as such (``status="error"``, no result) and is never
scored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generic, Literal, Sequence, TypeVar, cast

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

ENVELOPE_FIELDS = ("episode_id", "status", "error", "spec", "usage", "calls", "wall_seconds", "diagnostics")


class RecordError(ValueError):
    """A stored episode record does not match the model it is read with."""


class StudyResult(BaseModel):
    """Base of every study's result model: strict, immutable, versioned."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_version: int = 1


class CallLog(BaseModel):
    """One model call of the episode (see :class:`psit_lib.llm.types.CallRecord`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    role: str
    path: str
    index: int
    seed: int
    cached: bool
    prompt_tokens: int
    completion_tokens: int
    error: str | None = None
    read_error: str | None = None  # the reply came back but could not be read (absent in older records)


class UsageSummary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    calls_by_role: dict[str, int]


class Diagnostics(BaseModel):
    """What the episode could not read, and what its roles did instead of what they need
    (:class:`psit_lib.llm.diagnostics.EpisodeDiagnostics`; empty in records made before it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    reads: dict[str, dict[str, int]] = {}
    flags: dict[str, int] = {}
    notes: list[dict[str, Any]] = []


R = TypeVar("R", bound=StudyResult)


class EpisodeRecord(BaseModel, Generic[R]):
    """The envelope plus, for a finished episode, the study's result."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    episode_id: str
    status: Literal["ok", "error"]
    error: str | None
    spec: dict[str, Any]
    usage: UsageSummary
    calls: list[CallLog]
    wall_seconds: float
    diagnostics: Diagnostics = Diagnostics()
    result: R | None = None

    @model_validator(mode="before")
    @classmethod
    def _nest_flat_storage(cls, data: Any) -> Any:
        """Accept the flat stored form: every non-envelope key belongs to the result."""
        if isinstance(data, dict) and "result" not in data:
            body = {k: v for k, v in data.items() if k not in ENVELOPE_FIELDS}
            data = {k: v for k, v in data.items() if k in ENVELOPE_FIELDS}
            data["result"] = body if data.get("status") == "ok" else (body or None)
        return data

    @model_validator(mode="after")
    def _result_matches_status(self) -> "EpisodeRecord[R]":
        if self.status == "ok" and self.result is None:
            raise ValueError("a finished episode (status ok) has no result")
        if self.status == "error" and self.result is not None:
            raise ValueError("a failed episode (status error) carries a result")
        return self

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def require_result(self) -> R:
        """The study result of a finished episode; a failed episode has none and raises."""
        if self.result is None:
            raise ValueError(f"episode {self.episode_id!r} failed ({self.error}); it has no result")
        return self.result

    def stored(self) -> dict[str, Any]:
        """The flat JSON object written to ``episodes.jsonl``."""
        envelope = self.model_dump(mode="json", exclude={"result"})
        return {**envelope, **(self.result.model_dump(mode="json") if self.result is not None else {})}


def read_records(raw: Sequence[dict[str, Any]], result_type: type[R], *, source: str | Path = "records") -> list[EpisodeRecord[R]]:
    """Validate stored records into typed ones; a bad record raises one :class:`RecordError`."""
    # ``EpisodeRecord[result_type]``: pydantic parametrises the model at run time, but mypy reads a
    # subscript as a type expression and refuses a variable in it; pydantic's stub types the call
    # as returning any model class.
    model = cast("type[EpisodeRecord[R]]", EpisodeRecord.__class_getitem__(result_type))
    typed = []
    for record in raw:
        try:
            typed.append(model.model_validate(record))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"] if p != result_type.__name__)
            episode = record.get("episode_id", "?") if isinstance(record, dict) else "?"
            raise RecordError(f"{source}: episode {episode!r} does not match {result_type.__name__} "
                              f"(schema {result_type.model_fields['schema_version'].default}): "
                              f"{where or 'record'}: {first['msg']}") from None
    return typed


def ok_results(records: Sequence[EpisodeRecord[R]]) -> list[tuple[EpisodeRecord[R], R]]:
    """(record, result) of every finished episode, in order."""
    return [(r, r.result) for r in records if r.ok and r.result is not None]
