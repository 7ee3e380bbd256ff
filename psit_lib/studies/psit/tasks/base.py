"""The contract every private-state interactive task (PSIT) implements, so the fork-test protocol
is written once. Pure and synchronous; a *public state* is all the player may look at.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from psit_lib.llm.non_answers import Reading
from psit_lib.llm.reply_readers import split_reasoning, strip_template_debris


class HostReplyError(ValueError):
    """The host's public reply could not be read (recorded as its own outcome, never dropped)."""


def readable_text(reply: str | None) -> str:
    """A host's reply without inline reasoning and chat-template debris (``<|im_end|>user ...`` is the
    model writing past its turn): every PSIT reader starts here, so none reads debris as data."""
    return strip_template_debris(split_reasoning(reply or "")[0])


class HostContradictionError(HostReplyError):
    """The host's reply was readable but contradicts what it said publicly before. The protocol
    records it (outcome ``public_contradiction``) and the game plays on to the fork."""


@dataclass(frozen=True)
class Candidate:
    """A secret offered in a yes/no branch at the fork: ``secret`` normalised (the task's canonical
    form), ``text`` as the question names it (the host's own words for the reveal and the stored
    secret, the dataset's name otherwise); ``source``: ``"stored"`` (private memory, when it is not the
    reveal), ``"revealed"``, ``"dataset"`` or ``"model"`` (proposed, then re-checked against the public state)."""

    secret: str
    source: str
    text: str


@runtime_checkable
class PsitTask(Protocol):
    """What the protocol needs from a task. ``state`` objects are task-specific and immutable."""

    name: str

    def host_system_prompt(self) -> str:
        """System prompt for the hosting agent (rules of the game, in our own words)."""

    def opener(self) -> str:
        """The player's first message: let's play, you host, choose privately, the rules."""

    def initial_state(self) -> Any:
        """Public state before the host's first reply."""

    def observe_opening(self, state: Any, reply: str) -> Any:
        """Update the public state from the host's reply to the opener (may raise HostReplyError)."""

    def next_move(self, state: Any, rng: random.Random) -> tuple[Any, str]:
        """The seeded player's next move: (move, message to send). Never repeats a move."""

    def observe_reply(self, state: Any, move: Any, reply: str) -> Any:
        """Apply rule R's public consequences of the host's reply to ``move`` (may raise
        HostReplyError, or HostContradictionError when the reply contradicts earlier ones)."""

    def skip_move(self, state: Any, move: Any) -> Any:
        """The state after ``move`` was asked but its reply contradicted earlier ones: the move
        counts as made (never asked again), and nothing is learned from it."""

    def is_over(self, state: Any) -> bool:
        """True when the game has ended (won, lost, or nothing left to ask)."""

    def reveal_prompt(self) -> str:
        """Fork branch: ask the host to reveal the secret, answering with the secret only."""

    def read_reveal(self, reply: str) -> Reading[str]:
        """The secret a reveal reply names, as the reply writes it (:meth:`normalise` gives its
        canonical form), or None with the reason it names none."""

    def confirm_prompt(self, secret: str) -> str:
        """Fork branch: 'is the secret X? answer only yes or no'."""

    def is_compatible(self, state: Any, secret: str) -> bool:
        """Whether ``secret`` explains every public reply so far."""

    def is_checkable(self, secret: str) -> bool:
        """Whether rule R can check ``secret`` at all (a condition outside the dataset cannot be)."""

    def compatible_secrets(self, state: Any, limit: int, rng: random.Random | None = None) -> list[str]:
        """Up to ``limit`` distinct compatible secrets from the task's own data: the reference
        order (deterministic: most frequent words first; conditions in the dataset's order when at
        most ``limit`` fit, else by name) without ``rng``, a seeded sample with it."""

    def normalise(self, secret: str) -> str:
        """Canonical form of a secret for comparisons (case, whitespace, dataset names)."""

    def public_constraints(self, state: Any) -> dict[str, Any]:
        """JSON-serialisable summary of the public constraints (for audit records and prompts)."""
