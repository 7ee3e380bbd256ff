"""Hangman's rules as pure code: the public state and rule R (what an honest host must show).
The same semantics back :func:`is_compatible` and the vocabulary index, so candidates and checks agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from psit_lib.studies.psit.tasks.base import HostContradictionError
from psit_lib.studies.psit.tasks.vocabulary import ALPHABET

DEFAULT_LIVES = 6
Slots = tuple[str | None, ...]
"""A pattern as data: the revealed letter at each position, ``None`` where still hidden."""


class InvalidGuessError(ValueError):
    """A guess the rules do not allow (not a letter, already guessed, or the game is over)."""


# --------------------------------------------------------------------------------------------
# Public state
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HangmanState:
    """What the player knows publicly (immutable). ``unresolved``: guesses whose reply contradicted
    earlier ones; ``lives`` follows rule R, whatever the host says about them."""

    length: int | None
    slots: Slots
    absent: frozenset[str]
    guessed: tuple[str, ...]
    lives: int
    max_lives: int = DEFAULT_LIVES
    unresolved: frozenset[str] = frozenset()

    @classmethod
    def initial(cls, max_lives: int = DEFAULT_LIVES) -> HangmanState:
        """The state before the host has shown anything."""
        if max_lives < 1:
            raise ValueError(f"A game needs at least one life, got {max_lives}.")
        return cls(length=None, slots=(), absent=frozenset(), guessed=(), lives=max_lives, max_lives=max_lives)

    @classmethod
    def started(cls, length: int, max_lives: int = DEFAULT_LIVES) -> HangmanState:
        """The state right after the host showed an all-blank pattern of ``length`` letters."""
        if length < 1:
            raise ValueError(f"A word needs at least one letter, got length {length}.")
        return replace(cls.initial(max_lives), length=length, slots=(None,) * length)

    @property
    def known(self) -> dict[int, str]:
        """Revealed letters by 0-based position."""
        return {position: letter for position, letter in enumerate(self.slots) if letter is not None}

    @property
    def won(self) -> bool:
        """Every letter revealed."""
        return self.length is not None and all(letter is not None for letter in self.slots)

    @property
    def lost(self) -> bool:
        """No lives left."""
        return self.lives <= 0

    @property
    def finished(self) -> bool:
        """Won or lost."""
        return self.won or self.lost

    @property
    def pattern_text(self) -> str:
        """The pattern as the host shows it, e.g. ``_ a _ e _``."""
        return format_slots(self.slots)


def _require_letter(letter: str) -> None:
    if not (isinstance(letter, str) and len(letter) == 1 and letter in ALPHABET):
        raise InvalidGuessError(f"Guess {letter!r} is not a single lowercase a-z letter.")


def format_slots(slots: Slots) -> str:
    """Render slots as ``_ a _ e _`` (underscore for hidden letters, single spaces)."""
    return " ".join(letter if letter is not None else "_" for letter in slots)


# --------------------------------------------------------------------------------------------
# Rule R
# --------------------------------------------------------------------------------------------


def skip_guess(state: HangmanState, letter: str) -> HangmanState:
    """The state after ``letter`` was guessed but the reply contradicted earlier ones: the guess
    is spent (never repeated) and nothing is learned about the word."""
    _require_letter(letter)
    if letter in state.guessed:
        raise InvalidGuessError(f"Letter {letter!r} was already guessed.")
    return replace(state, guessed=state.guessed + (letter,), unresolved=state.unresolved | {letter})


def reveal_slots(secret: str, guessed: Iterable[str]) -> Slots:
    """What rule R reveals of ``secret`` once ``guessed`` letters were tried."""
    guessed_set = set(guessed)
    return tuple(letter if letter in guessed_set else None for letter in secret)


def observe_pattern(state: HangmanState, letter: str, slots: Slots) -> HangmanState:
    """Public consequence of the host showing ``slots`` after the guess ``letter``; a pattern that
    cannot follow the earlier one under rule R raises :class:`HostContradictionError`."""
    if state.length is None:
        raise InvalidGuessError("The host's opening pattern must be read before any guess.")
    if state.finished:
        raise InvalidGuessError("The game is already over; no further guess can be applied.")
    _require_letter(letter)
    if letter in state.guessed:
        raise InvalidGuessError(f"Letter {letter!r} was already guessed.")
    if len(slots) != state.length:
        raise HostContradictionError(
            f"The pattern {format_slots(slots)!r} has {len(slots)} letters but the word has {state.length}."
        )
    for position, (before, after) in enumerate(zip(state.slots, slots)):
        if before is not None and after != before:
            shown = "a blank" if after is None else repr(after)
            raise HostContradictionError(
                f"Letter {before!r} revealed at position {position} now shows as {shown}."
            )
        if before is None and after is not None and after != letter and after not in state.unresolved:
            if after in state.absent:
                reason = "it was announced absent"
            elif after in state.guessed:
                reason = "all its positions were revealed when it was guessed"
            else:
                reason = "it was never guessed"
            raise HostContradictionError(
                f"Letter {after!r} appeared at position {position} although {reason}."
            )
    guessed = state.guessed + (letter,)
    if letter in slots:
        return replace(state, slots=tuple(slots), guessed=guessed)
    return replace(state, absent=state.absent | {letter}, guessed=guessed, lives=state.lives - 1)


def apply_guess(secret: str, state: HangmanState, letter: str) -> HangmanState:
    """Rule R: the public state after guessing ``letter`` against the hidden ``secret``."""
    if state.length is not None and len(secret) != state.length:
        raise ValueError(f"Secret {secret!r} does not have the state's length {state.length}.")
    if state.length is None:
        state = HangmanState.started(len(secret), state.max_lives)
    return observe_pattern(state, letter, reveal_slots(secret, state.guessed + (letter,)))


def is_compatible(state: HangmanState, word: str) -> bool:
    """Whether ``word`` explains every public reply: same length, revealed letters in place,
    no absent letter, and every revealed letter at exactly its revealed positions."""
    if not re.fullmatch(r"[a-z]+", word):
        return False
    if state.length is None:
        return True
    if len(word) != state.length:
        return False
    revealed = {letter for letter in state.slots if letter is not None}
    for shown, actual in zip(state.slots, word):
        if shown is not None and shown != actual:
            return False
        if shown is None and (actual in revealed or actual in state.absent):
            return False
    return True


