"""Hangman states for tests: rebuilt from a record's public constraints (what a stored episode's
candidates or reveal had to fit), or replayed from a hand-written public history."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from psit_lib.studies.psit.tasks.hangman_rules import (DEFAULT_LIVES, HangmanState, Slots, format_slots, observe_pattern,
                                                       reveal_slots)


def pattern(secret: str, guessed: Iterable[str]) -> str:
    """Rule R's pattern text as an honest host shows it, e.g. ``pattern("paper", "ae") == "_ a _ e _"``."""
    return format_slots(reveal_slots(secret, guessed))


def state_from_constraints(constraints: dict[str, Any]) -> HangmanState:
    """The state :meth:`HangmanTask.public_constraints` summarised (known positions may be digit
    strings after a JSON round trip)."""
    max_lives = constraints.get("max_lives", DEFAULT_LIVES)
    if constraints["length"] is None:
        return HangmanState.initial(max_lives)
    slots = [None] * constraints["length"]
    for position, letter in constraints["known"].items():
        slots[int(position)] = letter
    return replace(HangmanState.started(constraints["length"], max_lives), slots=tuple(slots),
                   absent=frozenset(constraints["absent"]), guessed=tuple(constraints["guessed"]),
                   lives=constraints["lives"], unresolved=frozenset(constraints.get("unresolved", ())))


def slots_from_text(text: str) -> Slots:
    """Slots from a clean pattern string such as ``"_ a _ e _"`` or ``"_a_e_"``."""
    compact = re.sub(r"\s+", "", text)
    if not re.fullmatch(r"[A-Za-z_]+", compact):
        raise ValueError(f"Pattern {text!r} may contain only letters, underscores and spaces.")
    return tuple(None if char == "_" else char.lower() for char in compact)


def constraints_from_history(length: int, guesses_and_patterns: Iterable[tuple[str, Slots | str]],
                             max_lives: int = DEFAULT_LIVES) -> HangmanState:
    """Replay (guess, pattern shown) pairs from an all-blank start (HostContradictionError when
    no word explains them)."""
    state = HangmanState.started(length, max_lives)
    for letter, shown in guesses_and_patterns:
        state = observe_pattern(state, letter, slots_from_text(shown) if isinstance(shown, str) else tuple(shown))
    return state
