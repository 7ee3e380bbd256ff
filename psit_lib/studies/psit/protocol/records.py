"""Typed episode results of the private-state study (notebooks 02-04 and 07): generation only, no
verdict. Every field is always written; a record that lacks one fails loudly when read.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from psit_lib.runs.records import EpisodeRecord, StudyResult
from psit_lib.studies.psit.agents.graph_agent import CheckpointRef
from psit_lib.studies.psit.protocol.outcomes import answers_per_secret


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Message(_Part):
    """One public message: the player (user) or the host agent (assistant)."""

    role: Literal["user", "assistant"]
    content: str


class RevealAnswer(_Part):
    """A reveal: the question, the raw answer, the secret read from it (None when unreadable) and
    whether it fits every public constraint."""

    question: str
    answer: str
    parsed: str | None
    compatible: bool | None


class Reveal(RevealAnswer):
    """The fork's reveal branch, with its checkpoint (its parent is the pre-fork checkpoint; None in
    records made before checkpoints were recorded)."""

    checkpoint: CheckpointRef | None = None


class CandidateBranch(_Part):
    """One yes/no branch at the fork: the candidate (``secret`` normalised, ``text`` as the question
    named it), where it came from, the exchange, the decision read from the answer (None when unreadable)."""

    secret: str
    source: Literal["revealed", "stored", "dataset", "model"]
    question: str
    answer: str
    parsed: bool | None
    checkable: bool | None = None  # whether rule R can check it (False: a condition outside DDXPlus)
    text: str | None = None  # the words the question used; None in records before version 5 (the secret)
    checkpoint: CheckpointRef | None = None  # the branch's checkpoint; its parent is the pre-fork one

    @property
    def named(self) -> str:
        """The candidate as the question named it."""
        return self.text if self.text is not None else self.secret


class CandidateSearch(_Part):
    """How the candidates were found: from the task's data, proposed by the model (and which
    proposals the re-check rejected), and how many were still missing."""

    from_dataset: int
    model_proposed: int
    model_rejected: list[str]
    short_by: int
    from_memory: int = 0  # the secret stored in the agent's memory, when it differs from the reveal
    model_unreadable: list[dict[str, str]] = []  # proposals no reveal reader reads ("yes"), with the reason


class PublicContradiction(_Part):
    """A pre-fork reply that contradicted the host's earlier public replies; play went on."""

    turn: int
    move: str
    reply: str
    error: str


class UnreadableReply(_Part):
    """A pre-fork reply the player could not read (no board, no yes or no): the move counts as
    made, nothing is learned from it, and play goes on to the fork, as the study's player does."""

    turn: int
    move: str
    reply: str
    error: str


class HiddenCallRecord(_Part):
    """A model call a memory library made on its own (see ``agents.baselines.calls``)."""

    turn: int
    library: str
    kind: str
    prompt_tokens: int
    completion_tokens: int
    ok: bool
    error: str | None


class BranchHiddenCall(HiddenCallRecord):
    """A hidden library call made inside one fork branch (``reveal``, ``confirm-0``, ...)."""

    branch: str


class MemoryEdit(_Part):
    """One memory-tool call of a turn: the tool, whether it applied, its meta or error."""

    name: str
    ok: bool
    meta: dict[str, Any] | None = None
    error: str | None = None


class ForkEpisode(StudyResult):
    """One self-consistency fork test (SPEC §1): public play, the private state at the fork, the
    reveal and the yes/no branches. Version 2 added the pre-fork contradictions, the candidate from
    memory and checkability; 3 the unreadable pre-fork replies; 4 stopped storing the outcome (it is derived);
    5 the words each candidate was asked in (``text``; two names of one condition are two candidates, the
    stored secret first), yes/no branches after an unreadable reveal, and the checkpoint tree: the agent's
    LangGraph thread, each pre-fork turn's checkpoint (the last is the one every branch forked from) and
    each branch's; older records read with those empty."""

    schema_version: Literal[1, 2, 3, 4, 5] = 5
    task: str
    agent: str
    model: str
    failure: str | None
    transcript: list[Message]
    turns_played: int | None
    constraints: dict[str, Any]
    private_state_at_fork: str
    state_size_per_turn: list[int]
    memory_edits: list[list[MemoryEdit]]
    hidden_calls: list[HiddenCallRecord]
    reveal: Reveal | None
    candidates: list[CandidateBranch]
    candidate_search: CandidateSearch | None
    branch_hidden_calls: list[BranchHiddenCall]
    public_contradictions: list[PublicContradiction] = []
    unreadable_replies: list[UnreadableReply] = []
    private_state_per_turn: list[str] = []  # what the agent carried after each turn (empty in older records)
    thread_id: str | None = None  # the agent's LangGraph thread (the episode id)
    turn_checkpoints: list[CheckpointRef] = []  # each pre-fork turn's checkpoint; the last is the fork's

    @model_validator(mode="before")
    @classmethod
    def _drop_stored_outcome(cls, data: Any) -> Any:
        """Older records stored an ``outcome``; the label is derived (``fork_outcome``), so it is ignored."""
        return {k: v for k, v in data.items() if k != "outcome"} if isinstance(data, dict) else data

    @property
    def answers(self) -> dict[str, bool | None]:
        """Secret -> the decision read for it, two names of one secret read as one
        (:func:`~psit_lib.studies.psit.protocol.outcomes.answers_per_secret`)."""
        revealed = self.reveal.parsed if self.reveal is not None else None
        return answers_per_secret(revealed, ((c.secret, c.source, c.parsed) for c in self.candidates))


ForkRecord = EpisodeRecord[ForkEpisode]


class Opening(_Part):
    question: str
    answer: str
    constraints: dict[str, Any]


class ChoiceReveal(RevealAnswer):
    said_in_opening: bool


class SecretChoiceEpisode(StudyResult):
    """Notebook 07: the opener, then an immediate reveal, at one sampling temperature."""

    schema_version: Literal[1] = 1
    task: str
    agent: str
    model: str
    temperature: float
    opening: Opening
    reveal: ChoiceReveal
    failure: str | None
