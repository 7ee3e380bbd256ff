"""What an episode could not read in the model's replies, and what its roles did instead of what
they need: the raw material of a run's health (``psit_lib.runs.health``).

A rate computed from replies the harness could not read is not a measurement of the model, so
every reader counts its *reads* (ok or unreadable) and every missing capability raises a *flag*.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

READ_REPLY = "reply"
"""A reply a protocol plays on (a host's game move, an agent's answer, a judge's scores)."""
READ_FORK_ANSWER = "fork_answer"
"""A yes/no answer at the fork, or the reveal."""
READ_HELPER = "helper"
"""A helper role's structured reply (memory updater, fact extraction, compressor, judge JSON)."""

FLAG_TOOL_CALL_AS_TEXT = "tool_call_as_text"
FLAG_MISSING_TOOL_CALL = "missing_tool_call"
FLAG_NO_REASONING = "no_reasoning"
FLAG_HELPER_FAILED = "helper_failed"
FLAG_TEMPLATE_DEBRIS = "template_debris"
FLAG_PRIVATE_IN_PUBLIC = "private_state_in_public"
FLAG_DEGENERATE_JUDGE = "degenerate_judge"

FLAG_LABELS: dict[str, str] = {
    FLAG_TOOL_CALL_AS_TEXT: "wrote a tool call as text",
    FLAG_MISSING_TOOL_CALL: "were decided without the tool call the task needs",
    FLAG_NO_REASONING: "got replies with no reasoning",
    FLAG_HELPER_FAILED: "lost a helper reply that could not be used",
    FLAG_TEMPLATE_DEBRIS: "got replies that ran on past their turn",
    FLAG_PRIVATE_IN_PUBLIC: "wrote their private state block into a public reply",
    FLAG_DEGENERATE_JUDGE: "were scored by a judge that told no answers apart",
}
"""What a flagged episode did, as the verb phrase of a sentence ("3 of 4 episodes ...")."""

FLAG_HINTS: dict[str, str] = {
    FLAG_DEGENERATE_JUDGE: "the same scores for every answer (or none parsed) measure the judge, not the agents: "
                           "use a judge model that follows the scoring format",
    FLAG_TOOL_CALL_AS_TEXT: "the endpoint returned no tool calls, only their JSON in the text: serve the model "
                            "with a tool-call parser (llama.cpp: --jinja and a template that knows the model's "
                            "tool format; vLLM: --enable-auto-tool-choice --tool-call-parser ...), or use a model "
                            "that calls tools in its template's format",
    FLAG_MISSING_TOOL_CALL: "its outcome was decided without the action the task is about",
    FLAG_NO_REASONING: "an agent that keeps the model's reasoning keeps nothing and behaves as vanilla: use a "
                       "reasoning model, or a server with a reasoning parser",
    FLAG_HELPER_FAILED: "the agent lost what that call should have given it (its memory, notes or scores)",
    FLAG_TEMPLATE_DEBRIS: "the model wrote chat-template tokens and went on as the next speaker (a base model, "
                          "or a chat template that does not match the model); only the text before the first "
                          "such token was kept",
    FLAG_PRIVATE_IN_PUBLIC: "whatever the block holds (the secret among it) is public from then on; the reply is "
                            "kept as written and scored by the protocol's rules (a secret written in public is "
                            "leakage): a model that copies its context's private block into its replies cannot "
                            "keep a private state",
}
"""Why a flag matters and what to do about it, for the sentence that reports it."""

EXAMPLES_PER_KEY = 2
"""Example replies kept per (kind, role, agent): enough to show a reader, small in the record."""
EXAMPLE_CHARS = 240


def split_key(key: str) -> tuple[str, str, str]:
    """``(kind, role, agent)`` of a stored tally key (agent ``""`` when none was named)."""
    kind, role, agent = (key.split("|", 2) + ["", ""])[:3]
    return kind, role, agent


def excerpt(text: Any, limit: int = EXAMPLE_CHARS) -> str:
    """One line of at most ``limit`` characters (records and messages stay short)."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass
class EpisodeDiagnostics:
    """Counts of reads and flags for one episode (shared by its fork branches)."""

    reads: dict[str, dict[str, int]] = field(default_factory=dict)
    flags: dict[str, int] = field(default_factory=dict)
    notes: list[dict[str, Any]] = field(default_factory=list)
    _kept: dict[str, int] = field(default_factory=dict, repr=False)

    @staticmethod
    def key(kind: str, role: str, agent: str | None) -> str:
        """The stored key of a tally: ``kind|role|agent`` (see :func:`split_key`)."""
        return f"{kind}|{role}|{agent or ''}"

    def read(self, what: str, role: str, ok: bool, reply: Any = "", reason: str = "",
             agent: str | None = None) -> None:
        """Count one attempt to read a reply of ``role``; an unreadable one keeps an example."""
        tally = self.reads.setdefault(self.key(what, role, agent), {"ok": 0, "unreadable": 0})
        tally["ok" if ok else "unreadable"] += 1
        if not ok:
            self._note(f"unreadable_{what}", role, reply, reason, agent)

    def flag(self, kind: str, role: str, example: Any = "", detail: str = "", agent: str | None = None) -> None:
        """Record that ``role`` did something other than what it needs (see ``FLAG_*``)."""
        key = self.key(kind, role, agent)
        self.flags[key] = self.flags.get(key, 0) + 1
        self._note(kind, role, example, detail, agent)

    def _note(self, kind: str, role: str, example: Any, detail: str, agent: str | None) -> None:
        key = self.key(kind, role, agent)
        self._kept[key] = self._kept.get(key, 0) + 1
        if self._kept[key] <= EXAMPLES_PER_KEY:
            self.notes.append({"kind": kind, "role": role, "agent": agent, "example": excerpt(example),
                               "detail": excerpt(detail, 300)})

    def as_dict(self) -> dict[str, Any]:
        return {"reads": {k: dict(v) for k, v in sorted(self.reads.items())},
                "flags": dict(sorted(self.flags.items())), "notes": list(self.notes)}


# -- reporting a helper role's reply ------------------------------------------------------
# Helper roles (memory updater, fact extraction, ACC compressor and judge) never speak to the
# player: their garbage only shows if every parse of their replies is reported here.


def diagnostics_of(session: Any) -> Any:
    """The episode's diagnostics, or None for a session without them (a test double)."""
    return getattr(session, "diagnostics", None)


def report_helper_read(session: Any, role: str, reply: str, problem: str | None, *, agent: str | None,
                       flag: bool = True) -> None:
    """Count one parse of a helper reply (``problem`` None: it was read); an unreadable one marks
    the latest call of ``role`` on the session's path (the call just parsed: calls on one path run
    one after another) with ``read_error``, which cost tables count, and unless ``flag`` is False
    (a later retry may still succeed) is flagged. Sessions without diagnostics are left alone."""
    diagnostics = diagnostics_of(session)
    if diagnostics is None:
        return
    diagnostics.read(READ_HELPER, role, problem is None, reply, problem or "", agent=agent)
    if problem is None:
        return
    log, path = getattr(session, "log", None) or [], getattr(session, "path", None)
    for i in range(len(log) - 1, -1, -1):
        if log[i].path == path and log[i].role == role:
            log[i] = dataclasses.replace(log[i], read_error=excerpt(problem, 300))
            break
    if flag:
        diagnostics.flag(FLAG_HELPER_FAILED, role, reply, problem, agent=agent)


def report_helper_failed(session: Any, role: str, reply: str, detail: str, *, agent: str | None) -> None:
    """Flag a helper role that gave its agent nothing usable (e.g. every retry failed)."""
    diagnostics = diagnostics_of(session)
    if diagnostics is not None:
        diagnostics.flag(FLAG_HELPER_FAILED, role, reply, detail, agent=agent)
