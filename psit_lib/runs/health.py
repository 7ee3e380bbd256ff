"""Run health: could the harness read what the model wrote, and did each role do what it needs?

A rate measures the model only when the replies behind it were read: this pools the episodes'
reads and flags per agent and role and marks a notebook ``suspect`` past a threshold. The
notebook, the command line and the report all call it, so all three say the same thing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from psit_lib.llm.diagnostics import (FLAG_DEGENERATE_JUDGE, FLAG_HELPER_FAILED, FLAG_HINTS, FLAG_LABELS, FLAG_MISSING_TOOL_CALL,
                                      FLAG_NO_REASONING, FLAG_PRIVATE_IN_PUBLIC, FLAG_TEMPLATE_DEBRIS,
                                      FLAG_TOOL_CALL_AS_TEXT,
                                      READ_FORK_ANSWER, READ_HELPER, READ_REPLY, split_key)

DEFAULT_SUSPECT_THRESHOLD = 0.2
"""Share of unreadable replies (or flagged episodes) per agent and role above which a notebook
is ``suspect`` (the ``suspect_threshold`` notebook parameter overrides it)."""

READ_LABELS = {READ_REPLY: "replies", READ_FORK_ANSWER: "fork answers", READ_HELPER: "helper replies"}
SEVERITY = (READ_REPLY, READ_FORK_ANSWER, FLAG_DEGENERATE_JUDGE, FLAG_TOOL_CALL_AS_TEXT, FLAG_MISSING_TOOL_CALL,
            READ_HELPER,
            FLAG_HELPER_FAILED, FLAG_NO_REASONING, FLAG_PRIVATE_IN_PUBLIC, FLAG_TEMPLATE_DEBRIS)
"""The order reasons are reported in: what makes the measured numbers unreadable first."""
NO_AGENT = "—"


def _plain(record: Any) -> dict[str, Any]:
    """A stored record as a dict (typed records are dumped in their stored form)."""
    if isinstance(record, Mapping):
        return dict(record)
    return record.stored() if hasattr(record, "stored") else dict(record)


def _agent_of(record: dict[str, Any], named: str) -> str:
    if named:
        return named
    spec = record.get("spec") or {}
    return str(spec.get("agent") or spec.get("system") or NO_AGENT)


@dataclass
class _Cell:
    ok: int = 0
    unreadable: int = 0
    episodes_flagged: int = 0
    example: str = ""


@dataclass(frozen=True)
class HealthVerdict:
    """A notebook's health: ``ok`` or ``suspect``, one sentence per reason, and the table."""

    status: str
    threshold: float
    sentences: tuple[str, ...] = ()
    table: pd.DataFrame = field(default_factory=pd.DataFrame, compare=False)

    @property
    def suspect(self) -> bool:
        return self.status == "suspect"

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "threshold": self.threshold, "reasons": list(self.sentences)}

    def markdown(self) -> str:
        if not self.suspect:
            return (f"**Run health: ok.** No agent's share of unreadable replies or flagged episodes "
                    f"passes {self.threshold:.0%}.")
        lines = [f"**Run health: SUSPECT.** These results rest on replies the harness could not read, "
                 f"or on roles that lacked what they need (threshold {self.threshold:.0%}):"]
        lines += [f"- {s}" for s in self.sentences]
        return "\n".join(lines)


def _cells(records: Iterable[Any], scored: Iterable[Mapping[str, Any]] = ()
           ) -> tuple[dict[tuple[str, str, str], _Cell], dict[str, int]]:
    """Pooled reads and flags per (agent, role, kind), and episodes per agent. ``scored``: the
    diagnostics model-graded scorers kept for an episode (``{"spec", "diagnostics"}``), counted
    with the episode's own reads but not as further episodes."""
    cells: dict[tuple[str, str, str], _Cell] = defaultdict(_Cell)
    episodes: dict[str, int] = defaultdict(int)
    for raw, is_episode in [*((r, True) for r in records), *((s, False) for s in scored)]:
        record = _plain(raw)
        if is_episode:
            episodes[_agent_of(record, "")] += 1
        diag = record.get("diagnostics") or {}
        for key, tally in (diag.get("reads") or {}).items():
            kind, role, agent = split_key(key)
            cell = cells[(_agent_of(record, agent), role, kind)]
            cell.ok += int(tally.get("ok", 0))
            cell.unreadable += int(tally.get("unreadable", 0))
        for key in diag.get("flags") or {}:  # a flag counts once per episode, however often raised
            kind, role, agent = split_key(key)
            cells[(_agent_of(record, agent), role, kind)].episodes_flagged += 1
        for note in diag.get("notes") or ():
            kind = str(note.get("kind", ""))
            kind = kind.removeprefix("unreadable_")
            noted = cells.get((_agent_of(record, note.get("agent") or ""), str(note.get("role", "")), kind))
            if noted is not None and not noted.example:
                noted.example = str(note.get("example", ""))
    return cells, episodes


def health_table(records: Iterable[Any], scored: Iterable[Mapping[str, Any]] = ()) -> pd.DataFrame:
    """One row per (agent, role, check): reads and unreadable replies, or flagged episodes, with
    the share the verdict uses and an example reply (``scored``: see :func:`_cells`)."""
    cells, episodes = _cells(records, scored)
    rows = []
    for (agent, role, kind), cell in sorted(cells.items()):
        if kind in READ_LABELS:
            total = cell.ok + cell.unreadable
            rows.append({"agent": agent, "role": role, "kind": kind, "check": f"unreadable {READ_LABELS[kind]}",
                         "count": cell.unreadable, "out_of": total,
                         "share": cell.unreadable / total if total else 0.0, "example": cell.example})
        else:
            total = episodes.get(agent, 0) or cell.episodes_flagged
            rows.append({"agent": agent, "role": role, "kind": kind, "check": kind.replace("_", " "),
                         "count": cell.episodes_flagged, "out_of": total,
                         "share": cell.episodes_flagged / total if total else 0.0, "example": cell.example})
    return pd.DataFrame(rows, columns=["agent", "role", "kind", "check", "count", "out_of", "share", "example"])


def _sentence(row: Mapping[str, Any]) -> str:
    kind = row["kind"]
    example = f", e.g. {row['example']!r}" if row["example"] else ", e.g. an empty reply"
    if kind in READ_LABELS:
        what = (f"{row['count']} of {row['out_of']} {READ_LABELS[kind]} ({row['share']:.0%}) could not be read"
                f"{example}")
    else:
        what = (f"{row['count']} of {row['out_of']} episodes ({row['share']:.0%}) "
                f"{FLAG_LABELS.get(kind, kind.replace('_', ' '))}{example}; {FLAG_HINTS.get(kind, '')}".rstrip("; "))
    return f"agent {row['agent']}, role {row['role']}: {what}."


def assess_health(records: Iterable[Any], threshold: float = DEFAULT_SUSPECT_THRESHOLD,
                  scored: Iterable[Mapping[str, Any]] = ()) -> HealthVerdict:
    """``suspect`` when any (agent, role, check) row's share passes ``threshold``; else ``ok``.
    Reasons come most severe first (see :data:`SEVERITY`). ``scored``: the diagnostics of
    model-graded scorers (an LLM judge's unreadable replies, a degenerate judge)."""
    table = health_table(records, scored)
    rank = {kind: i for i, kind in enumerate(SEVERITY)}
    rows = [r for r in table.to_dict("records") if r["count"] and r["share"] > threshold]
    rows.sort(key=lambda r: (rank.get(r["kind"], len(SEVERITY)), -r["share"], r["agent"], r["role"]))
    sentences = tuple(_sentence(r) for r in rows)
    return HealthVerdict("suspect" if sentences else "ok", threshold, sentences, table)


def read_shares(records: Iterable[Any], by: Sequence[str] = ("agent",)) -> pd.DataFrame:
    """Per agent: the share of unreadable replies and of unreadable fork answers (the columns
    shown beside every rate). ``by`` names spec fields (``agent``, ``model``, ``system``...)."""
    tallies: dict[tuple, dict[str, list[int]]] = defaultdict(lambda: {READ_REPLY: [0, 0], READ_FORK_ANSWER: [0, 0]})
    for raw in records:
        record = _plain(raw)
        spec = record.get("spec") or {}
        for key, tally in ((record.get("diagnostics") or {}).get("reads") or {}).items():
            kind, _, agent = split_key(key)
            if kind not in (READ_REPLY, READ_FORK_ANSWER):
                continue
            values = {**spec, **({"agent": agent, "system": agent} if agent else {})}
            group = tuple(values.get(b, NO_AGENT) for b in by)
            pair = tallies[group][kind]
            pair[0] += int(tally.get("unreadable", 0))
            pair[1] += int(tally.get("ok", 0)) + int(tally.get("unreadable", 0))
    rows = []
    for group, kinds in tallies.items():
        row = dict(zip(by, group))
        for kind, column in ((READ_REPLY, "unreadable_replies"), (READ_FORK_ANSWER, "unreadable_fork_answers")):
            bad, total = kinds[kind]
            row[column] = bad / total if total else float("nan")
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, "unreadable_replies", "unreadable_fork_answers"])


def beside_rates(rates: pd.DataFrame, records: Iterable[Any], by: Sequence[str] = ("agent",)) -> pd.DataFrame:
    """``rates`` with the unreadable shares of :func:`read_shares` joined on ``by`` (NaN where no
    reply of that kind was read), so a rate is never shown without what it rests on."""
    shares = read_shares(records, by)
    keys = [b for b in by if b in rates.columns]
    if not keys:
        return rates
    shares = shares.astype({k: rates[k].dtype for k in keys if k in shares.columns}, errors="ignore")
    return rates.merge(shares[[*keys, "unreadable_replies", "unreadable_fork_answers"]], on=keys, how="left")


def folder_health(folder: Any, threshold: float = DEFAULT_SUSPECT_THRESHOLD) -> HealthVerdict:
    """The run health of a notebook folder (a :class:`~psit_lib.runs.folder.RunFolder`): its
    episodes' diagnostics and those its model-graded scorers kept in their scores (an LLM judge's
    reads and flags), so the notebook, ``psit run``'s summary and the report judge the same things."""
    records = folder.records()
    scored = [{"spec": (records.get(line["episode_id"]) or {}).get("spec") or {},
               "diagnostics": line["metadata"]["diagnostics"]}
              for line in folder.score_lines().values()
              if isinstance(line.get("metadata"), dict) and line["metadata"].get("diagnostics")]
    return assess_health(records.values(), threshold, scored)

