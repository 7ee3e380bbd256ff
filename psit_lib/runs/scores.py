"""Scores per episode and the metrics over them: the scoring half of a study (inspect_ai's chain).

A :class:`Scorer` reads one stored episode and returns a versioned :class:`Score`, stored one
line per (episode, scorer); a :class:`Metric` builds one table from the scored view and declares
``higher_is_better``. A score depends only on the stored record (and on model calls replayed
from the cache), so a rescore gives the same tables.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from psit_lib.runs.records import EpisodeRecord

if TYPE_CHECKING:
    import pandas as pd

    from psit_lib.llm.client import ModelSession

__all__ = ["Metric", "Score", "ScoreContext", "ScoreLine", "Scored", "Scorer", "metric", "score_records",
           "scorer", "scores_frame"]

ScoreValue = float | int | bool | str | None


class Score(BaseModel):
    """One scorer's score of one episode: a value, why, and what else the scorer read."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    value: ScoreValue = None
    explanation: str = ""
    metadata: dict[str, Any] = {}


class ScoreLine(BaseModel):
    """One stored line of the scores file: a score with the episode, part, scorer and version."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    episode_id: str
    part: str
    scorer: str
    version: int
    value: ScoreValue = None
    explanation: str = ""
    metadata: dict[str, Any] = {}
    usage: dict[str, int] = {}
    """A model-graded score's new model calls (not from the response cache) and their tokens: what
    scoring cost on top of the episode (``psit run --dry-run`` counts it); absent for other scorers."""

    def stored(self) -> dict[str, Any]:
        """The line as the scores file holds it (JSON types only, so a re-read gives it back)."""
        return json.loads(json.dumps(self.model_dump(exclude={"usage"} if not self.usage else None),
                                     sort_keys=True, default=str))


@dataclass(frozen=True)
class ScoreContext:
    """What a scorer may read besides the episode: the run's parameters and models, the part the
    episode belongs to, and, for a model-graded scorer, a model session whose calls go through the
    run's response cache (so re-scoring replays them)."""

    params: Any
    models: Sequence[str]
    part: str = "main"
    session: ModelSession | None = None


ScoreFn = Callable[[EpisodeRecord[Any], ScoreContext], "Score | Awaitable[Score]"]


@dataclass(frozen=True)
class Scorer:
    """A named, versioned function of one finished episode. Bump ``version`` when the rule
    changes: a stored score of another version is recomputed, and the change recorded."""

    name: str
    fn: ScoreFn
    version: int = 1
    model_graded: bool = False
    """True when the scorer calls a model (through ``ctx.session``); it is then async."""
    applies: Callable[[Any, str], bool] | None = None
    """(parameters, part) -> whether it scores that part's episodes (None: every part's); what the
    scorer checks itself, declared so an estimate counts a model-graded scorer's calls where it makes them."""

    def __post_init__(self) -> None:
        if not self.name or "." in self.name:
            raise ValueError(f"a scorer's name is a column name without dots, not {self.name!r}")
        if self.version < 1:
            raise ValueError(f"scorer {self.name!r}: version must be 1 or more")

    async def score(self, record: EpisodeRecord[Any], ctx: ScoreContext) -> Score:
        """The score of a finished episode (a failed one has nothing to score: ValueError)."""
        if not record.ok:
            raise ValueError(f"episode {record.episode_id!r} failed; failed episodes are never scored")
        out = self.fn(record, ctx)
        if inspect.isawaitable(out):
            out = await out
        if not isinstance(out, Score):
            raise TypeError(f"scorer {self.name!r} returned {type(out).__name__}, not a Score")
        return out


def scorer(name: str, *, version: int = 1, model_graded: bool = False,
           applies: Callable[[Any, str], bool] | None = None) -> Callable[[ScoreFn], Scorer]:
    """Decorator form: ``@scorer("outcome", version=1)`` over ``def fn(record, ctx) -> Score``."""
    def make(fn: ScoreFn) -> Scorer:
        return Scorer(name, fn, version, model_graded, applies)
    return make


@dataclass(frozen=True)
class Scored:
    """What a metric reads: the run's parameters and models, and its scores as one frame.

    ``scores``: one row per episode in plan order (``episode_id``, ``part``, ``status``, ``error``, the
    spec's parameters, then ``<scorer>`` and ``<scorer>.<key>`` columns; empty for a failed episode).
    ``records`` serve what a table shows beside its scores; ``run_mates`` are handed in, never looked up."""

    params: Any
    models: list[str]
    scores: pd.DataFrame
    backend: str = "sim"
    profile: str | None = None
    parts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    records: Mapping[str, EpisodeRecord[Any]] = field(default_factory=dict)
    run_mates: Mapping[str, Path] = field(default_factory=dict)

    def part(self, name: str) -> pd.DataFrame:
        """The rows of one part (``"main"``, ``"sweep:<knob>=<value>"``...)."""
        return self.scores[self.scores["part"] == name].reset_index(drop=True)

    def part_names(self, prefix: str = "") -> list[str]:
        """The parts whose name starts with ``prefix``, in plan order."""
        return [p for p in self.parts if p.startswith(prefix)]

    def only(self, parts: Sequence[str]) -> Scored:
        """The view restricted to ``parts`` (names, or prefixes ending in ``:`` such as ``"sweep:"``)."""
        def kept(name: str) -> bool:
            return any(name == p or (p.endswith(":") and name.startswith(p)) for p in parts)

        chosen = {name: meta for name, meta in self.parts.items() if kept(name)}
        rows = self.scores[[kept(str(p)) for p in self.scores["part"]]].reset_index(drop=True)
        return dataclasses.replace(self, scores=rows, parts=chosen)

    def records_of(self, frame: pd.DataFrame) -> list[EpisodeRecord[Any]]:
        """The typed records of the rows of ``frame`` (a selection of :attr:`scores`), in its order."""
        return [self.records[e] for e in frame["episode_id"] if e in self.records]


MetricFn = Callable[[Scored], "pd.DataFrame"]


@dataclass(frozen=True)
class Metric:
    """One table over the scored view: ``name`` is the table's (``tables/<name>.csv``), and
    ``higher_is_better`` says, per value column, which way is better (a column absent from it
    has no better or worse: a count, a spread)."""

    name: str
    fn: MetricFn
    higher_is_better: Mapping[str, bool] = field(default_factory=dict)
    parts: tuple[str, ...] | None = None
    """The parts it reads (part names or prefixes ending in ``:``); None: every part."""

    def __call__(self, scored: Scored) -> pd.DataFrame:
        return self.fn(scored)

    def direction(self, column: str) -> str | None:
        """``"higher"``, ``"lower"`` or None (no better or worse) for a value column."""
        if column not in self.higher_is_better:
            return None
        return "higher" if self.higher_is_better[column] else "lower"


def metric(name: str, *, higher_is_better: Mapping[str, bool] | None = None,
           parts: Sequence[str] | None = None) -> Callable[[MetricFn], Metric]:
    """Decorator form: ``@metric("self_consistency", higher_is_better={"rate": True})``."""
    def make(fn: MetricFn) -> Metric:
        return Metric(name, fn, dict(higher_is_better or {}), None if parts is None else tuple(parts))
    return make


# -- scoring -------------------------------------------------------------------------------------

SessionFor = Callable[[EpisodeRecord[Any], Scorer], "ModelSession"]


async def score_records(records: Iterable[tuple[str, EpisodeRecord[Any]]], scorers: Sequence[Scorer], *,
                        params: Any, models: Sequence[str], session_for: SessionFor | None = None,
                        stored: Mapping[tuple[str, str], ScoreLine] | None = None) -> list[ScoreLine]:
    """A score line per (finished episode, scorer), for ``records`` given as (part, record).

    A line in ``stored`` of the same scorer version is kept as it is (nothing recomputed); any
    other is computed. A model-graded scorer gets its session from ``session_for`` (ValueError
    without one)."""
    lines: list[ScoreLine] = []
    stored = stored or {}
    clients: dict[int, Any] = {}
    try:
        for part, record in records:
            if not record.ok:
                continue
            for sc in scorers:
                old = stored.get((record.episode_id, sc.name))
                if old is not None and old.version == sc.version and old.part == part:
                    lines.append(old)
                    continue
                session = None
                if sc.model_graded:
                    if session_for is None:
                        raise ValueError(f"scorer {sc.name!r} calls a model; scoring needs a session (the run's cache)")
                    session = session_for(record, sc)
                    client = getattr(session, "client", None)  # a ModelSession's (a plug-in may hand another)
                    if hasattr(client, "close_connections"):
                        clients[id(client)] = client
                log = getattr(session, "log", None)
                before = len(log) if isinstance(log, list) else 0
                score = await sc.score(record, ScoreContext(params, list(models), part, session))
                lines.append(ScoreLine(episode_id=record.episode_id, part=part, scorer=sc.name, version=sc.version,
                                       value=score.value, explanation=score.explanation, metadata=score.metadata,
                                       usage=new_calls(log[before:]) if isinstance(log, list) else {}))
    finally:  # a judge's HTTP pools close with the scoring (they belong to this event loop)
        for client in clients.values():
            await client.close_connections()
    return lines


def new_calls(calls: Sequence[Any]) -> dict[str, int]:
    """Calls of a call log (:class:`~psit_lib.llm.types.CallRecord`) that reached a model, not the
    cache, and their tokens; empty when there were none."""
    made = [c for c in calls if not getattr(c, "cached", False)]
    if not made:
        return {}
    return {"calls": len(made), "prompt_tokens": sum(int(c.prompt_tokens) for c in made),
            "completion_tokens": sum(int(c.completion_tokens) for c in made)}


_FIXED = ("episode_id", "part", "status", "error")


def scores_frame(records: Sequence[tuple[str, EpisodeRecord[Any]]], lines: Iterable[ScoreLine | Mapping[str, Any]],
                 scorers: Sequence[str]) -> pd.DataFrame:
    """The scored view's frame: one row per (part, record) in the given order, the spec's
    parameters flattened, then ``<scorer>`` and ``<scorer>.<key>`` columns from the score lines
    (read as stored: JSON values). Rows of failed episodes carry no score."""
    import pandas as pd

    by_key: dict[tuple[str, str], Mapping[str, Any]] = {}
    for line in lines:
        data = line.stored() if isinstance(line, ScoreLine) else line
        by_key[(str(data["episode_id"]), str(data["scorer"]))] = data
    rows = []
    spec_keys: dict[str, None] = {}
    for part, record in records:
        spec = dict(record.spec)  # a nested value is kept whole in its one cell
        spec_keys.update(dict.fromkeys(k for k in spec if k not in _FIXED))
        row: dict[str, Any] = {"episode_id": record.episode_id, "part": part, "status": record.status,
                               "error": record.error}
        row.update({k: v for k, v in spec.items() if k not in _FIXED})
        for name in scorers:
            found = by_key.get((record.episode_id, name)) if record.ok else None
            row[name] = None if found is None else found.get("value")
            for key, value in ((found or {}).get("metadata") or {}).items():
                row[f"{name}.{key}"] = value
        rows.append(row)
    meta_cols = sorted({c for row in rows for c in row if "." in c and c.split(".", 1)[0] in scorers})
    columns = [*_FIXED, *spec_keys, *scorers, *meta_cols]
    return pd.DataFrame(rows, columns=columns)
