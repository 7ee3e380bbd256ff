"""Hangman as the simulated model understands it: the board, a guess, and reading its replies.

The model keeps no state between calls: it rebuilds the board from its own earlier replies; a reply it
cannot read constrains nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LIVES = 6
"""Lives a game starts with unless the opening message says otherwise."""

_PATTERN_LINE = re.compile(r"^\s*(?:pattern|word|board|progress)\s*[:=]\s*([A-Za-z_ ]+?)\s*$", re.I | re.M)
_BARE_PATTERN = re.compile(r"(?<![A-Za-z_])((?:[A-Za-z_] ){1,11}[A-Za-z_]|_[A-Za-z_]{1,11})(?![A-Za-z_])")
_LIVES_IN_TEXT = re.compile(r"\b(\d{1,2})\s+lives\b|\blives\s*(?:left)?\s*[:=]?\s*(\d{1,2})\b", re.I)


@dataclass(frozen=True)
class Board:
    """The public state of a game: word length, uncovered letters, misses, guesses in order."""

    length: int
    shown: dict[int, str] = field(default_factory=dict)
    missed: frozenset[str] = frozenset()
    guesses: tuple[str, ...] = ()
    lives: int = LIVES

    @property
    def pattern(self) -> str:
        return " ".join(self.shown.get(i, "_") for i in range(self.length))

    @property
    def lives_left(self) -> int:
        return self.lives - len(self.missed)

    @property
    def solved(self) -> bool:
        return len(self.shown) == self.length

    @property
    def over(self) -> bool:
        return self.solved or self.lives_left <= 0


def play(secret: str, guesses: tuple[str, ...] | list[str], lives: int = LIVES) -> Board:
    """The board an honest host holding ``secret`` shows after ``guesses``."""
    shown: dict[int, str] = {}
    missed: set[str] = set()
    for letter in guesses:
        hits = [i for i, ch in enumerate(secret) if ch == letter]
        if hits:
            shown.update({i: letter for i in hits})
        else:
            missed.add(letter)
    return Board(len(secret), shown, frozenset(missed), tuple(guesses), lives)


def read_pattern(text: str) -> tuple[str | None, ...] | None:
    """The pattern shown in a reply (``_ a _ e _``, ``_a_e_``, after a ``Pattern:`` label)."""
    labelled = _PATTERN_LINE.findall(text)
    candidates = labelled or _BARE_PATTERN.findall(text)
    for raw in reversed(candidates):
        compact = raw.replace(" ", "")
        if "_" in compact or labelled:
            return tuple(None if ch == "_" else ch.lower() for ch in compact)
    return None


def read_lives(text: str) -> int | None:
    found = _LIVES_IN_TEXT.findall(text)
    if not found:
        return None
    first, second = found[0]
    return int(first or second)


def board_from_dialogue(turns: list[tuple[str, str]], guess_of) -> Board | None:
    """Replay ``(role, text)`` turns: my opening gives the length, each reply after a guess
    shows whether the letter hit. ``guess_of(text)`` reads the letter a user message guesses."""
    board: Board | None = None
    pending: str | None = None
    lives = LIVES
    for role, text in turns:
        if role == "user":
            stated = read_lives(text) if board is None else None
            lives = stated or lives
            pending = guess_of(text)
            continue
        shown = read_pattern(text)
        if board is None:
            if shown is not None and all(ch is None for ch in shown):
                board = Board(len(shown), lives=lives)
        elif pending and pending not in board.guesses and shown is not None and len(shown) == board.length:
            board = _observe(board, pending, shown)
        pending = None
    return board


def _observe(board: Board, letter: str, shown: tuple[str | None, ...]) -> Board:
    positions = [i for i, ch in enumerate(shown) if ch == letter]
    consistent = all(shown[i] == ch for i, ch in board.shown.items())
    if not consistent:
        return board  # a reply that contradicts my earlier board tells me nothing new
    if positions:
        return Board(board.length, {**board.shown, **{i: letter for i in positions}}, board.missed,
                     board.guesses + (letter,), board.lives)
    return Board(board.length, board.shown, board.missed | {letter}, board.guesses + (letter,), board.lives)
