"""The seeded Hangman player: English letter frequencies mixed with uniform exploration,
never repeating a letter."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from psit_lib.studies.psit.tasks.hangman_rules import HangmanState, InvalidGuessError
from psit_lib.studies.psit.tasks.vocabulary import ALPHABET

# Relative frequency (%) of letters in English text; order e t a o i n s h r d l c u m w f g y p b v k j x q z.
ENGLISH_LETTER_FREQUENCY: dict[str, float] = {
    "e": 12.70, "t": 9.06, "a": 8.17, "o": 7.51, "i": 6.97, "n": 6.75, "s": 6.33,
    "h": 6.09, "r": 5.99, "d": 4.25, "l": 4.03, "c": 2.78, "u": 2.76, "m": 2.41,
    "w": 2.36, "f": 2.23, "g": 2.02, "y": 1.97, "p": 1.93, "b": 1.49, "v": 0.98,
    "k": 0.77, "j": 0.153, "x": 0.150, "q": 0.095, "z": 0.074,
}  # fmt: skip


# --------------------------------------------------------------------------------------------
# The player
# --------------------------------------------------------------------------------------------


def choose_letter(state: HangmanState, rng: random.Random, exploration: float = 0.2) -> str:
    """The seeded player's next unguessed letter: uniform with probability ``exploration``, else by
    English letter frequency, so common letters come early but the order varies between seeds."""
    if not 0.0 <= exploration <= 1.0:
        raise ValueError(f"Exploration probability must lie in [0, 1], got {exploration}.")
    unguessed = [letter for letter in ALPHABET if letter not in state.guessed]
    if not unguessed:
        raise InvalidGuessError("Every letter has been guessed already.")
    if rng.random() < exploration:
        return rng.choice(unguessed)
    return rng.choices(unguessed, weights=[ENGLISH_LETTER_FREQUENCY[letter] for letter in unguessed])[0]


def guess_message(letter: str) -> str:
    """The player's message for a guess."""
    return f"My next guess is the letter '{letter}'."


def sample_by_frequency(
    words: Sequence[str], frequencies: Sequence[float], rng: random.Random, limit: int
) -> list[str]:
    """Up to ``limit`` of ``words`` sampled without replacement by frequency (Efraimidis-Spirakis keys,
    numpy seeded from ``rng``: deterministic and fast); zero frequencies can still be drawn, last."""
    if limit <= 0 or not words:
        return []
    weights = np.maximum(np.asarray(frequencies, dtype=float), np.finfo(float).tiny)
    generator = np.random.default_rng(rng.getrandbits(64))
    keys = np.log1p(-generator.random(len(words))) / weights
    order = np.argsort(-keys, kind="stable")[:limit]
    return [words[index] for index in order]


