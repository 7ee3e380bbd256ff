"""The judge of the ACC study (SPEC §5): blinded scoring against a canonical memory.

Answers are labelled A, B, C and shuffled every turn by the judge's seeded RNG, so scores stay about
the answers, not the agents. The canonical memory is updated from the previous memory and the query
only, so no answer can leak into the standard the agents are measured against; an unreadable reply
is a failed judgement for that turn, never guessed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from psit_lib.llm.reply_readers import json_breaks_off, read_json_object

from psit_lib.llm.diagnostics import report_helper_read
from psit_lib.studies.acc.agents import agent_rank
from psit_lib.studies.acc.catalogue import PROMPTS

MEMORY_TASK = "TASK: update the canonical memory"
SCORING_TASK = "TASK: score the responses"
"""The judge's memory and scoring templates (``prompts.toml``) start with these; the simulated
judge tells its two tasks apart by them."""
CRITERIA: tuple[str, ...] = ("relevance", "answer_quality", "instruction_following", "coherence")
COUNTS: tuple[str, ...] = ("supported_claims", "unsupported_claims", "active_constraints", "violations", "omitted_required")
MAX_UNVERIFIED = 10
JUDGE_ROLE = "acc_judge"


@dataclass(frozen=True)
class JudgeVariant:
    """One wording of the scoring rubric: its system prompt (template ``template`` of the
    study's ``prompts.toml``), its score scale and the order the answers are shown in
    (``shuffled`` as in the live judge, or that order ``reversed``)."""

    name: str
    template: str
    low: int = 0
    high: int = 10
    order: str = "shuffled"

    @property
    def system(self) -> str:
        return PROMPTS.render(self.template)


JUDGE_VARIANTS: dict[str, JudgeVariant] = {v.name: v for v in (
    JudgeVariant("standard", "acc.judge_scoring_system"),
    JudgeVariant("strict_rubric", "acc.judge_scoring_strict_rubric"),
    JudgeVariant("five_point", "acc.judge_scoring_five_point", low=1, high=5),
    JudgeVariant("reversed_order", "acc.judge_scoring_system", order="reversed"),
)}
"""Judge-prompt sensitivity: rubric wording, score scale and answer order (SPEC §5 asks for a
blinded, order-randomised judge; these show how much the verdict depends on its prompt)."""


MIN_ANSWERS = 3
"""Fewer judged answers than this can tie by chance; the degenerate-judge check needs at least this many."""


def judge_is_degenerate(verdicts: Sequence[Mapping[str, Any]], n_judged_turns: int = 0) -> str | None:
    """Why the judge told no answers apart (a health finding, issue #28), or None: turns were judged
    but no verdict parsed, or at least :data:`MIN_ANSWERS` answers got the very same scores and counts."""
    if n_judged_turns and not verdicts:
        return f"the judge's replies parsed into no score in {n_judged_turns} judged turn(s)"
    if len(verdicts) < MIN_ANSWERS:
        return None
    fields = (*CRITERIA, *COUNTS)
    scores = {tuple(verdict.get(field) for field in fields) for verdict in verdicts}
    if len(scores) == 1:
        score = dict(zip(CRITERIA, next(iter(scores))))
        return f"the judge gave all {len(verdicts)} answers the same scores ({score})"
    return None


class JudgeOutputError(ValueError):
    """The judge's reply is not the JSON the task asked for."""


class CanonicalMemory(BaseModel):
    """What the user has established so far: the judge's reference for support and rules."""

    model_config = ConfigDict(extra="forbid")

    facts: dict[str, str] = Field(default_factory=dict)
    rules: dict[str, str] = Field(default_factory=dict)
    unverified: list[str] = Field(default_factory=list)


class Evaluation(BaseModel):
    """One blinded answer's verdict. Scores may be fractional (7.5) or numbers written as
    strings; a label may be written "Response A"."""

    model_config = ConfigDict(extra="ignore")

    label: str
    relevance: float = Field(ge=0, le=10)
    answer_quality: float = Field(ge=0, le=10)
    instruction_following: float = Field(ge=0, le=10)
    coherence: float = Field(ge=0, le=10)
    supported_claims: int = Field(ge=0)
    unsupported_claims: int = Field(ge=0)
    active_constraints: int = Field(ge=0)
    violations: int = Field(ge=0)
    omitted_required: int = Field(ge=0)

    @field_validator("label", mode="before")
    @classmethod
    def _bare_label(cls, value: Any) -> Any:
        if isinstance(value, str):
            return re.sub(r"^\s*(?:response|answer)\s+", "", value.strip(), flags=re.I).strip(" .:")
        return value


def _json(text: str, what: str) -> dict[str, Any]:
    """The JSON object of the judge's reply (plain, fenced, or inside prose)."""
    value = read_json_object(text)
    if value is None:
        raise JudgeOutputError(f"the judge's {what} reply breaks off inside its JSON (cut at its max_tokens?)"
                               if json_breaks_off(text) else f"the judge's {what} reply holds no JSON object")
    return value


def _invalid(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"field {'.'.join(map(str, err['loc']))!r} is invalid: {err['msg']}"


def parse_evaluations(text: str, labels: Sequence[str]) -> dict[str, Evaluation]:
    """One Evaluation per presented label, or JudgeOutputError (missing, extra or bad entries)."""
    data = _json(text, "scoring")
    items = data.get("evaluations")
    if not isinstance(items, list):
        raise JudgeOutputError("the judge's scoring reply has no 'evaluations' list")
    out: dict[str, Evaluation] = {}
    for item in items:
        try:
            ev = Evaluation.model_validate(item)
        except ValidationError as exc:
            raise JudgeOutputError(f"a judge evaluation {_invalid(exc)}") from None
        out[ev.label] = ev
    if sorted(out) != sorted(labels):
        raise JudgeOutputError(f"the judge evaluated labels {sorted(out)} but was shown {sorted(labels)}")
    return out


def hallucination_rate(supported: int, unsupported: int) -> float:
    """H_t = unsupported / max(1, supported + unsupported); 0 for an answer with no claims."""
    return unsupported / max(1, supported + unsupported)


def drift_rate(violations: int, omitted: int, active: int, turn: int) -> float | None:
    """D_t = (violations + omitted) / max(1, active); None on turn 1, where drift is not defined."""
    return None if turn < 2 else (violations + omitted) / max(1, active)


def verdict_rows(turn: int, agents: Iterable[str], order: list[str], evaluations: dict[str, dict[str, Any]],
                 memory_error: str | None, scoring_error: str | None) -> list[dict[str, Any]]:
    """One row per agent of one judged turn: the verdict's scores and counts with H_t and D_t,
    or ``judge_error`` when the scoring reply could not be read."""
    rows = []
    for name in sorted(agents, key=agent_rank):  # records keep them by name
        row: dict[str, Any] = {"turn": turn, "agent": name,
                               "presented_as": order.index(name) if name in order else None,
                               "memory_error": memory_error}
        ev = evaluations.get(name)
        if ev is None:
            rows.append({**row, "status": "judge_error", "error": scoring_error})
            continue
        row.update({k: ev[k] for k in (*CRITERIA, *COUNTS)})
        row["hallucination"] = hallucination_rate(ev["supported_claims"], ev["unsupported_claims"])
        row["drift"] = drift_rate(ev["violations"], ev["omitted_required"], ev["active_constraints"], turn)
        rows.append({**row, "status": "ok", "error": None})
    return rows


async def score_blinded(session: Any, system: str, memory: CanonicalMemory, query: str, order: Sequence[str],
                        answers: dict[str, str], answer_chars: int) -> dict[str, dict[str, Any]]:
    """Per agent, the judge's evaluation of its answer shown as Response A, B, ... in ``order``
    (never by name), each cut to ``answer_chars``; JudgeOutputError if the reply is unreadable. The
    read is reported for the judge alone: its scores belong to no one agent."""
    labels = [chr(ord("A") + i) for i in range(len(order))]
    cut = {name: text if len(text) <= answer_chars else text[:answer_chars] + " …[cut]" for name, text in answers.items()}
    shown = memory.model_copy(update={"unverified": memory.unverified[-MAX_UNVERIFIED:]})  # the latest notes only
    message = "\n\n".join([f"Canonical memory:\n{shown.model_dump_json()}", f"Query:\n{query}",
                           *(f"Response {label}:\n<<<\n{cut[name]}\n>>>" for label, name in zip(labels, order))])
    reply = await session.chat([{"role": "system", "content": system}, {"role": "user", "content": message}],
                               role=JUDGE_ROLE, response_format={"type": "json_object"})
    try:
        evaluations = parse_evaluations(reply.content, labels)
    except JudgeOutputError as exc:
        report_helper_read(session, JUDGE_ROLE, reply.content, str(exc), agent=None)
        raise
    report_helper_read(session, JUDGE_ROLE, reply.content, None, agent=None)
    return {name: evaluations[label].model_dump(exclude={"label"}) for label, name in zip(labels, order)}


async def rejudge_turn(session: Any, variant: JudgeVariant, memory: CanonicalMemory, query: str,
                       answers: dict[str, str], *, seed: int, answer_chars: int = 1200) -> dict[str, dict[str, Any]]:
    """Score one recorded turn's answers again under ``variant``: the same canonical memory and
    query the live judge saw, answers blinded in a seeded order (reversed for ``reversed``).
    Returns per agent the evaluation with scores on 0-10; JudgeOutputError if unreadable."""
    order = sorted(answers)
    random.Random(seed).shuffle(order)
    if variant.order == "reversed":
        order.reverse()
    out = await score_blinded(session, variant.system, memory, query, order, answers, answer_chars)
    span = variant.high - variant.low  # every variant's scores put on 0-10, so variants can be compared
    return {name: {**ev, **{c: 10 * (ev[c] - variant.low) / span for c in CRITERIA}} for name, ev in out.items()}


class LiveJudge:
    """Keeps the canonical memory and scores blinded answers, turn after turn, as the study's
    judge scorer runs it over a stored episode (:func:`psit_lib.studies.acc.scoring.judge_episode`)."""

    def __init__(self, session: Any, *, seed: int, answer_chars: int = 1200) -> None:
        self.session = session
        self.rng = random.Random(seed)
        self.answer_chars = answer_chars
        self.memory = CanonicalMemory()

    async def update_memory(self, query: str) -> str | None:
        """Next canonical memory from (previous memory, user query); returns the error, if any."""
        message = (f"Previous canonical memory:\n{self.memory.model_dump_json()}\n\n"
                   f"New user query:\n{query}")
        reply = await self.session.chat([{"role": "system", "content": PROMPTS.render("acc.judge_memory_system")},
                                         {"role": "user", "content": message}],
                                        role=JUDGE_ROLE, response_format={"type": "json_object"})
        try:
            self.memory = CanonicalMemory.model_validate(_json(reply.content, "memory"))
            error = None
        except JudgeOutputError as exc:
            error = str(exc)
        except ValidationError as exc:
            error = f"the judge's canonical memory {_invalid(exc)}"
        report_helper_read(self.session, JUDGE_ROLE, reply.content, error, agent=None)
        return error

    async def judge_turn(self, turn: int, query: str, answers: dict[str, str]) -> list[dict[str, Any]]:
        """Update the memory from the query, then score the answers (by agent, in answering order)
        blinded and shuffled: :func:`verdict_rows`."""
        memory_error = await self.update_memory(query)
        order = list(answers)
        self.rng.shuffle(order)
        evaluations, error = {}, None
        try:
            evaluations = await score_blinded(self.session, PROMPTS.render("acc.judge_scoring_system"), self.memory,
                                              query, order, answers, self.answer_chars)
        except JudgeOutputError as exc:
            error = str(exc)
        return verdict_rows(turn, answers, order, evaluations, memory_error, error)
