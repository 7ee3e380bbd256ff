"""Typed episode records: what a run stores per episode, read back with every field checked.

A record is the runner's envelope (id, status, spec, usage, calls, diagnostics) and, for a
finished episode, the study's result nested under ``result`` (format 2; the flat format 1 of
older runs reads as format 2). Reading is strict: a record that does not fit raises
:class:`RecordError` naming the file and the episode, never a silent "error" outcome.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generic, Literal, Sequence, TypeVar, cast

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

ENVELOPE_FIELDS = ("episode_id", "status", "error", "spec", "usage", "calls", "wall_seconds", "diagnostics",
                   "system_prompts")
RECORD_FORMAT = 2
"""The stored format written now: the study result nested under ``result``."""
FORMAT_KEY = "format"
RESULT_KEY = "result"


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
    max_tokens: int | None = None  # the request's budget of generated tokens (absent in older records)
    finish_reason: str | None = None  # why the reply ended; "length": cut at max_tokens (absent in older records)


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
    system_prompts: dict[str, str] = {}
    """Per role, the system prompt of its first call as sent (a long one by its head and hash;
    :func:`psit_lib.runs.runner.shown_prompt`): what a plug-in's agent was actually told.
    Empty in records made before it."""
    result: R | None = None

    @model_validator(mode="before")
    @classmethod
    def _nest_stored_forms(cls, data: Any) -> Any:
        """Accept every stored format (see :func:`nested_record`)."""
        return nested_record(data) if isinstance(data, dict) else data

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
        """The JSON object stored in the run folder's records (format 2, the result nested)."""
        envelope = self.model_dump(mode="json", exclude={"result"})
        result = self.result.model_dump(mode="json") if self.result is not None else None
        return {FORMAT_KEY: RECORD_FORMAT, **envelope, RESULT_KEY: result}


def nested_record(data: dict[str, Any]) -> dict[str, Any]:
    """A stored record in format 2 without its ``format`` key. In format 1 (neither ``format`` nor
    ``result``) every non-envelope key belongs to the result; a format newer than
    :data:`RECORD_FORMAT` raises ``ValueError``: this code cannot know what it means."""
    data = dict(data)
    version = data.pop(FORMAT_KEY, 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"unknown record format {version!r}")
    if version > RECORD_FORMAT:
        raise ValueError(f"record format {version} is newer than this reader (format {RECORD_FORMAT})")
    if version == 1 and RESULT_KEY not in data:
        body = {k: v for k, v in data.items() if k not in ENVELOPE_FIELDS}
        data = {k: v for k, v in data.items() if k in ENVELOPE_FIELDS}
        data[RESULT_KEY] = body if data.get("status") == "ok" else (body or None)
    return data


def flat_record(record: "dict[str, Any] | EpisodeRecord[Any]") -> dict[str, Any]:
    """A record (typed, or stored in any format) as one flat dict for readers that index by field
    name: the result's fields and the envelope's, the envelope winning a clash; reading only."""
    data = record.stored() if isinstance(record, EpisodeRecord) else dict(record)
    version = data.pop(FORMAT_KEY, 1)
    if version == 1 and RESULT_KEY not in data:
        return data  # stored flat already
    result = data.pop(RESULT_KEY, None)
    return {**(result if isinstance(result, dict) else {}), **data}


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
