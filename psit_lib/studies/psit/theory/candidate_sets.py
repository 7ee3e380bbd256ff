"""Compatible sets C_t: which secrets still explain the public Hangman history.

The theorem of SPEC §0 turns on one object. After t public replies, the compatible set C_t is
every dictionary word that an honest host could have been holding: same length, the revealed
letters at exactly their revealed positions, none of the missed letters. While |C_t| >= 2 the
secret is not pinned down by the public record, so a public-only agent (POCA) cannot know which
of those words "it" chose; the fork test probes exactly that gap. This module computes C_t
and how fast it shrinks when the workbench's seeded player plays against a truthful host.

Everything here is exact and pure; the only randomness is the seeded player (and, in
:func:`simulate_set_sizes`, the seeded choice of secrets).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pandas as pd

from psit_lib.studies.psit.tasks.hangman_rules import DEFAULT_LIVES, HangmanState, apply_guess, is_compatible

from psit_lib.studies.psit.tasks.hangman_player import choose_letter
from psit_lib.studies.psit.tasks.vocabulary import DEFAULT_VOCABULARY_SIZE, Vocabulary, get_vocabulary

Dictionary = Sequence[str] | Vocabulary
"""A word list (any order, kept) or the indexed wordfreq :class:`Vocabulary` (frequency order)."""


def words_of_length(dictionary: Dictionary, length: int) -> list[str]:
    """The dictionary's words of ``length`` letters, in dictionary order (frequency order for a
    :class:`Vocabulary`)."""
    if isinstance(dictionary, Vocabulary):
        return dictionary.matching(length, {}, ())
    return [word for word in dictionary if len(word) == length]


def compatible_set(dictionary: Dictionary, state: HangmanState) -> list[str]:
    """C_t: the dictionary words compatible with the public ``state``, in dictionary order.

    Uses the same Hangman semantics as :func:`psit_lib.studies.psit.tasks.hangman.is_compatible` (a revealed
    letter occurs at exactly its revealed positions), via the vectorised index when the
    dictionary is a :class:`Vocabulary`. Before the opening (no length yet) every word fits.
    """
    if isinstance(dictionary, Vocabulary):
        return dictionary.compatible(state.length, state.known, state.absent)
    return [word for word in dictionary if is_compatible(state, word)]


def replay(secret: str, guesses: Sequence[str], max_lives: int = DEFAULT_LIVES) -> list[HangmanState]:
    """The public states a truthful host holding ``secret`` shows to fixed ``guesses``: the opening's,
    then one per guess until the game ends."""
    states = [HangmanState.started(len(secret), max_lives)]
    for letter in guesses:
        if states[-1].finished:
            break
        states.append(apply_guess(secret, states[-1], letter))
    return states


def play_truthful_game(
    secret: str,
    rng: random.Random,
    n_turns: int,
    exploration: float = 0.2,
    max_lives: int = DEFAULT_LIVES,
) -> list[HangmanState]:
    """Public states of a game between the seeded player and a truthful host holding ``secret``.

    Element 0 is the state right after the all-blank opening; element t the state after the
    t-th guess. The game stops after ``n_turns`` guesses or earlier when won or lost, so the
    list has at most ``n_turns + 1`` states.
    """
    if n_turns < 0:
        raise ValueError(f"n_turns must be non-negative, got {n_turns}.")
    state = HangmanState.started(len(secret), max_lives)
    states = [state]
    for _ in range(n_turns):
        if state.finished:
            break
        letter = choose_letter(state, rng, exploration)
        state = apply_guess(secret, state, letter)
        states.append(state)
    return states


def simulate_set_sizes(
    n_games: int,
    length: int,
    seed: int,
    n_turns: int = 10,
    dictionary: Dictionary | None = None,
    vocabulary_size: int = DEFAULT_VOCABULARY_SIZE,
    exploration: float = 0.2,
    max_lives: int = DEFAULT_LIVES,
) -> pd.DataFrame:
    """|C_t| per turn over ``n_games`` seeded games, as a long table for a figure.

    Secrets are the dictionary's words of ``length`` letters, drawn uniformly; the default
    dictionary is the wordfreq vocabulary of ``vocabulary_size`` words. Game g uses its own generator derived from ``seed``, so adding
    games never changes earlier ones.

    Columns: ``game``, ``turn`` (0 = after the opening), ``guess`` (letter of that turn, ``""``
    at turn 0), ``size`` (|C_t|), ``secret``. A game that ends early has fewer rows.
    """
    if n_games < 1:
        raise ValueError(f"n_games must be at least 1, got {n_games}.")
    words = dictionary if dictionary is not None else get_vocabulary(vocabulary_size)
    pool = words_of_length(words, length)
    if not pool:
        raise ValueError(f"The dictionary has no word of length {length}.")
    master = random.Random(seed)
    rows: list[tuple[int, int, str, int, str]] = []
    for game in range(n_games):
        game_rng = random.Random(master.getrandbits(64))
        secret = game_rng.choice(pool)
        states = play_truthful_game(secret, game_rng, n_turns, exploration, max_lives)
        rows += [(game, turn, state.guessed[-1] if turn else "", len(compatible_set(words, state)), secret)
                 for turn, state in enumerate(states)]
    return pd.DataFrame(rows, columns=["game", "turn", "guess", "size", "secret"])
