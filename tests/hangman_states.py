"""A Hangman state rebuilt from a record's public constraints, for tests that check what a
stored episode's candidates or reveal had to fit."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from psit_lib.studies.psit.tasks.hangman_rules import DEFAULT_LIVES, HangmanState


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
