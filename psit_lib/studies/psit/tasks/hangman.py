"""Hangman as a private-state interactive task: rules, reader and seeded player put together behind
the :class:`~psit_lib.studies.psit.tasks.base.PsitTask` interface the fork-test protocol plays.
"""

from __future__ import annotations

import heapq
import random
from itertools import islice
from typing import Any

from psit_lib.studies.psit.prompt_book import PROMPTS
from psit_lib.studies.psit.tasks.base import HostReplyError
from psit_lib.studies.psit.tasks.hangman_player import choose_letter, guess_message, sample_by_frequency
from psit_lib.llm.non_answers import Reading
from psit_lib.studies.psit.tasks.hangman_reader import normalise_word, read_opening, read_reply, read_reveal
from psit_lib.studies.psit.tasks.hangman_rules import (DEFAULT_LIVES, HangmanState, InvalidGuessError, is_compatible,
                                                      skip_guess)
from psit_lib.studies.psit.tasks.vocabulary import ALPHABET, DEFAULT_VOCABULARY_SIZE, Vocabulary, get_vocabulary

# --------------------------------------------------------------------------------------------
# The task
# --------------------------------------------------------------------------------------------


class HangmanTask:
    """Hangman for the fork test; moves are letters, ``exploration`` is the player's probability of a
    uniform (rather than frequency-weighted) letter."""

    name = "hangman"

    def __init__(
        self,
        lives: int = DEFAULT_LIVES,
        max_turns: int = len(ALPHABET),
        exploration: float = 0.2,
        vocabulary_size: int = DEFAULT_VOCABULARY_SIZE,
    ):
        if lives < 1:
            raise ValueError(f"Hangman needs at least one life, got {lives}.")
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}.")
        if not 0.0 <= exploration <= 1.0:
            raise ValueError(f"Exploration probability must lie in [0, 1], got {exploration}.")
        self.lives = lives
        self.max_turns = max_turns
        self.exploration = exploration
        self.vocabulary_size = vocabulary_size

    @property
    def vocabulary(self) -> Vocabulary:
        """The shared wordfreq vocabulary (loaded on first use)."""
        return get_vocabulary(self.vocabulary_size)

    # Prompts ---------------------------------------------------------------------------------

    def host_system_prompt(self) -> str:
        return PROMPTS.render("hangman.host_system", lives=self.lives)

    def opener(self) -> str:
        return PROMPTS.render("hangman.opener", lives=self.lives)

    def reveal_prompt(self) -> str:
        return PROMPTS.render("hangman.reveal")

    def confirm_prompt(self, secret: str) -> str:
        return PROMPTS.render("hangman.confirm", secret=secret)

    # Game flow -------------------------------------------------------------------------------

    def initial_state(self) -> HangmanState:
        return HangmanState.initial(self.lives)

    def observe_opening(self, state: HangmanState, reply: str) -> HangmanState:
        if state.length is not None:
            raise InvalidGuessError("The opening has already been read for this game.")
        return read_opening(reply, state.max_lives)

    def next_move(self, state: HangmanState, rng: random.Random) -> tuple[str, str]:
        if self.is_over(state):
            raise InvalidGuessError("The game is over; the player has no move left.")
        letter = choose_letter(state, rng, self.exploration)
        return letter, guess_message(letter)

    def observe_reply(self, state: HangmanState, move: str, reply: str) -> HangmanState:
        if state.length is None:  # the opening showed no readable board: nothing to check a reply against
            raise HostReplyError("the word's length was never shown in a readable board, so the reply "
                                 f"to {move!r} cannot be read: {reply[:200]!r}")
        return read_reply(state, move, reply)

    def skip_move(self, state: HangmanState, move: str) -> HangmanState:
        return skip_guess(state, move)

    def is_over(self, state: HangmanState) -> bool:
        return state.finished or len(state.guessed) >= min(self.max_turns, len(ALPHABET))

    # Secrets ---------------------------------------------------------------------------------

    def read_reveal(self, reply: str) -> Reading[str]:
        return read_reveal(reply)

    def normalise(self, secret: str) -> str:
        return normalise_word(secret)

    def is_compatible(self, state: HangmanState, secret: str) -> bool:
        return is_compatible(state, self.normalise(secret))

    def is_checkable(self, secret: str) -> bool:
        return True  # rule R checks any string of letters

    def compatible_secrets(self, state: HangmanState, limit: int, rng: random.Random | None = None) -> list[str]:
        """Compatible vocabulary words: the most frequent first (the reference code's
        deterministic candidates), or with ``rng`` sampled without replacement weighted by
        word frequency."""
        if limit < 0:
            raise ValueError(f"limit must be non-negative, got {limit}.")
        vocabulary = self.vocabulary
        if rng is None:  # each length's words come most frequent first, ties in rank order: merged, the stable sort
            lengths = vocabulary.lengths if state.length is None else (state.length,)
            runs = [vocabulary.matching(n, state.known, state.absent) for n in lengths]
            return list(islice(heapq.merge(*runs, key=lambda word: -vocabulary.frequency(word)), limit))
        words = vocabulary.compatible(state.length, state.known, state.absent)
        return sample_by_frequency(words, [vocabulary.frequency(word) for word in words], rng, limit)

    def public_constraints(self, state: HangmanState) -> dict[str, Any]:
        """``{"length", "known": {position: letter}, "absent", "guessed", "lives", "max_lives",
        "unresolved"}``: everything the public record shows."""
        return {
            "length": state.length,
            "known": state.known,
            "absent": sorted(state.absent),
            "guessed": list(state.guessed),
            "lives": state.lives,
            "max_lives": state.max_lives,
            "unresolved": sorted(state.unresolved),
        }
