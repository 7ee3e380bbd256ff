"""Hangman rules, reply reading, player, vocabulary index and candidate search."""

from __future__ import annotations

import json
from dataclasses import replace
import random
import re
from collections import Counter

import pytest
from hangman_states import constraints_from_history, pattern, slots_from_text, state_from_constraints
from hypothesis import given, settings
from hypothesis import strategies as st

from psit_lib.studies.psit.tasks.base import HostReplyError, PsitTask
from psit_lib.studies.psit.tasks.hangman_player import ENGLISH_LETTER_FREQUENCY, choose_letter, sample_by_frequency
from psit_lib.studies.psit.tasks.hangman_rules import HangmanState, HostContradictionError, InvalidGuessError, apply_guess, is_compatible, observe_pattern, reveal_slots
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.tasks.hangman_reader import read_opening, read_reply, read_stated_length, read_reveal
from psit_lib.studies.psit.tasks.vocabulary import (
    ALPHABET,
    Vocabulary,
    VocabularyQueryError,
    get_vocabulary,
    is_vocabulary_word,
)


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return get_vocabulary()


def play(secret: str, letters: str, max_lives: int = 6) -> HangmanState:
    state = HangmanState.started(len(secret), max_lives)
    for letter in letters:
        if state.finished:
            break
        state = apply_guess(secret, state, letter)
    return state


def brute_force(words, length, known, absent):
    absent = set(absent)
    result = []
    for word in words:
        if len(word) != length:
            continue
        if any(word[position] != letter for position, letter in known.items()):
            continue
        if absent & set(word):
            continue
        if any(
            word.count(letter) != list(known.values()).count(letter) for letter in set(known.values())
        ):
            continue
        result.append(word)
    return result


# --- rule R -----------------------------------------------------------------------------------


def test_pattern_shows_guessed_letters_at_every_position():
    assert pattern("paper", "ae") == "_ a _ e _"
    assert pattern("paper", "") == "_ _ _ _ _"
    assert pattern("paper", "p") == "p _ p _ _"
    assert pattern("paper", "xyz") == "_ _ _ _ _"


def test_hit_reveals_all_occurrences_and_keeps_lives():
    state = play("paper", "p")
    assert state.known == {0: "p", 2: "p"}
    assert state.lives == 6 and state.absent == frozenset() and state.guessed == ("p",)


def test_miss_costs_a_life_and_marks_letter_absent():
    state = play("paper", "pz")
    assert state.absent == {"z"} and state.lives == 5 and state.guessed == ("p", "z")
    assert not state.finished


def test_win_when_every_letter_is_revealed():
    state = play("paper", "xpaer")
    assert state.won and state.finished and not state.lost
    assert state.pattern_text == "p a p e r" and state.lives == 5


def test_loss_at_zero_lives_and_no_guess_afterwards():
    state = play("paper", "bcdfgh")
    assert state.lost and state.finished and state.lives == 0
    with pytest.raises(InvalidGuessError):
        apply_guess("paper", state, "a")


@pytest.mark.parametrize("bad", ["a", "A", "ab", "1", ""])
def test_repeated_or_malformed_guess_is_rejected(bad):
    state = play("paper", "a")
    with pytest.raises(InvalidGuessError):
        apply_guess("paper", state, bad)


def test_secret_of_wrong_length_is_rejected():
    with pytest.raises(ValueError):
        apply_guess("apple", HangmanState.started(4), "a")


@settings(max_examples=150, deadline=None)
@given(
    secret=st.text(alphabet="abcdefgh", min_size=1, max_size=8),
    letters=st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10),
)
def test_rule_r_replay_is_consistent(secret, letters):
    state = HangmanState.started(len(secret))
    history = []
    for letter in letters:
        if state.finished:
            break
        state = apply_guess(secret, state, letter)
        history.append((letter, pattern(secret, state.guessed)))
    misses = [letter for letter in state.guessed if letter not in secret]
    assert state.lives == 6 - len(misses)
    assert state.absent == set(misses)
    assert state.slots == reveal_slots(secret, state.guessed)
    assert is_compatible(state, secret)
    assert constraints_from_history(len(secret), history) == state
    assert state.won == (set(secret) <= set(state.guessed))


# --- public state -----------------------------------------------------------------------------


def test_public_constraints_round_trip_through_json():
    task = HangmanTask()
    state = play("planet", "etsa")
    constraints = task.public_constraints(state)
    assert constraints == {
        "length": 6,
        "known": {2: "a", 4: "e", 5: "t"},
        "absent": ["s"],
        "guessed": ["e", "t", "s", "a"],
        "lives": 5,
        "max_lives": 6,
        "unresolved": [],
    }
    assert state_from_constraints(constraints) == state
    assert state_from_constraints(json.loads(json.dumps(constraints))) == state
    assert state_from_constraints(task.public_constraints(task.initial_state())) == task.initial_state()


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("paper", True),
        ("vapor", False),  # no 'e' at position 3
        ("eater", False),  # 'e' also at position 0, which would have been revealed
        ("pates", False),  # 't' and 's' are absent... and 'e' misplaced
        ("caped", True),
        ("caper", True),
        ("cape", False),
        ("Paper", False),
    ],
)
def test_is_compatible_uses_hangman_semantics(word, expected):
    state = constraints_from_history(5, [("a", "_ a _ _ _"), ("e", "_a_e_"), ("t", "_ a _ e _"), ("s", "_ a _ e _")])
    assert is_compatible(state, word) is expected


# --- reading the host -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "length"),
    [
        ("_ _ _ _ _", 5),
        ("Let's play! Here is your word: _ _ _ _ _ _\nLives: 6\nGuessed: none", 6),
        ("Word: _ _ _ _ _ (5 letters)", 5),
        ("I have chosen a word.\n\n`_ _ _ _`\n\nYou have 6 lives.", 4),
        ("**Pattern:** \\_ \\_ \\_ \\_ \\_ \\_ \\_", 7),
        ("I've picked a secret word. _______ Good luck!", 7),
        ("I picked a 6-letter word. Make your first guess!", 6),
        ("Ready! I picked a five letter word. Guess one letter at a time.", 5),
        ("_Let's begin!_ I picked a word: _ _ _", 3),
        ("Got it. I _ _ _ _", 4),
    ],
)
def test_opening_reads_word_length(reply, length):
    state = read_opening(reply)
    assert state.length == length and state.slots == (None,) * length and state.lives == 6


@pytest.mark.parametrize(
    "reply",
    [
        "Sure, let's play! Guess a letter.",
        "I chose a 6-letter word: _ _ _ _ _",
        "",
        "The word is apple.",
    ],
)
def test_opening_without_clear_length_raises(reply):
    with pytest.raises(HostReplyError):
        read_opening(reply)


def test_opening_cannot_be_read_twice():
    task = HangmanTask()
    state = task.observe_opening(task.initial_state(), "Word: _ _ _ _ _\nYou have 6 lives.")
    with pytest.raises(InvalidGuessError):
        task.observe_opening(state, "_ _ _ _ _")


@pytest.fixture
def after_a() -> HangmanState:
    """Secret-agnostic state of a 5-letter game after 'a' was revealed at position 1."""
    return constraints_from_history(5, [("a", "_ a _ _ _")])


@pytest.mark.parametrize(
    "reply",
    [
        "_ a _ e _",
        "_a_e_",
        "`_ A _ E _`",
        "Pattern: _ a _ e _",
        "Yes, there is an E!\n\n**Word:** _ a _ e _\n**Lives:** 6\n**Guessed:** a, e",
        "Good guess! Word: _ a _ e _ (5 letters)",
        "Correct!\n```\n_ a _ e _\n```\nLives left: 6",
        "\\_ a \\_ e \\_",
        "_Nice one!_ Here you go: _ a _ e _ — _6 lives left_",
        "Yes! e _ a _ e _",
        "_ a _ e _ ← e is there twice? no, once.",
        "Current progress = _ a _ e _",
        "_  a  _  e  _",
    ],
)
def test_reply_parser_reads_sloppy_formats(after_a, reply):
    state = read_reply(after_a, "e", reply)
    assert state.known == {1: "a", 3: "e"}
    assert state.lives == 6 and state.guessed == ("a", "e")


def test_reply_parser_records_a_miss(after_a):
    state = read_reply(after_a, "z", "Sorry, no Z. Pattern: _ a _ _ _\n5 lives left\nGuessed: a, z")
    assert state.absent == {"z"} and state.lives == 5


def test_reply_parser_prefers_the_board_over_an_italic_word():
    state = constraints_from_history(6, [])
    state = read_reply(state, "e", "_Great guess!_ Board: _ _ _ _ e _")
    assert state.known == {4: "e"}


def test_reply_parser_accepts_the_completed_word(after_a):
    state = constraints_from_history(5, [("a", "_ a _ _ _"), ("p", "p a p _ _"), ("e", "p a p e _")])
    won = read_reply(state, "r", "You got it! The word was **paper**. Congratulations!")
    assert won.won and won.pattern_text == "p a p e r"
    won_spaced = read_reply(state, "r", "Correct: P A P E R — you win!")
    assert won_spaced == won


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("Good guess!", HostReplyError),
        ("", HostReplyError),
        ("Before: _ a _ _ _\nNow: _ a _ e _", HostReplyError),  # two boards: never guess which is current
        ("Pattern: _ a _ e _ _", HostContradictionError),  # length changed
        ("Pattern: _ _ _ e _", HostContradictionError),  # revealed 'a' disappeared
        ("Pattern: _ o _ e _", HostContradictionError),  # revealed 'a' changed
        ("Pattern: _ a _ e t", HostContradictionError),  # 't' never guessed
        ("Pattern: a a _ e _", HostContradictionError),  # 'a' at a new position
    ],
)
def test_reply_parser_failures(after_a, reply, error):
    with pytest.raises(error) as raised:
        read_reply(after_a, "e", reply)
    if error is HostReplyError:
        assert not isinstance(raised.value, HostContradictionError)


def test_absent_letter_reappearing_is_a_contradiction(after_a):
    state = read_reply(after_a, "t", "No t. _ a _ _ _")
    with pytest.raises(HostContradictionError, match="absent"):
        read_reply(state, "e", "_ a t e _")


def test_contradiction_is_a_host_reply_error():
    assert issubclass(HostContradictionError, HostReplyError)


@pytest.mark.parametrize(
    ("reply", "length"),
    [("a 5-letter word", 5), ("(7 letters)", 7), ("It has six letters.", 6), ("Guess one letter at a time", None)],
)
def test_read_stated_length(reply, length):
    assert read_stated_length(reply) == length


def test_slots_from_text_rejects_garbage():
    assert slots_from_text("_ A _") == (None, "a", None)
    with pytest.raises(ValueError):
        slots_from_text("_ 1 _")


def test_observe_pattern_requires_an_opening():
    with pytest.raises(InvalidGuessError):
        observe_pattern(HangmanState.initial(), "a", (None,))


# --- reveal -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "word"),
    [
        ("planet", "planet"),
        ("Planet.", "planet"),
        ("**PLANET**", "planet"),
        ('"planet"', "planet"),
        ("`python`", "python"),
        ("The word was **planet**.", "planet"),
        ("The word I chose is planet.", "planet"),
        ("My secret word is: garden", "garden"),
        ("Word: garden", "garden"),
        ("Sure! It was 'garden'. Thanks for playing!", "garden"),
        ("<think>hmm, I said apple</think>garden", "garden"),
        ("<secret>apple</secret>", "apple"),
        ("P L A N E T", "planet"),
        ("p-l-a-n-e-t", "planet"),
        ("I cannot reveal it.", None),
        ("The word is still hidden.", None),
        ("", None),
        ("Maybe **apple** or **grape**", None),
    ],
)
def test_parse_reveal(reply, word):
    assert read_reveal(reply).value == word
    assert HangmanTask().read_reveal(reply).value == word


def test_normalise():
    task = HangmanTask()
    assert task.normalise("  **Planet**. ") == "planet"
    assert task.is_compatible(play("planet", "e"), " Planet ")


# --- player -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("exploration", [0.0, 0.2, 1.0])
def test_player_never_repeats_and_covers_all_letters(seed, exploration):
    rng = random.Random(seed)
    state = HangmanState.started(1, 30)
    letters = []
    for _ in range(26):
        letter = choose_letter(state, rng, exploration)
        letters.append(letter)
        state = replace(state, absent=state.absent | {letter}, guessed=state.guessed + (letter,),
                        lives=30 - len(state.absent) - 1)
    assert sorted(letters) == list(ALPHABET)
    with pytest.raises(InvalidGuessError):
        choose_letter(state, rng, exploration)


def test_player_is_seeded_and_frequency_weighted():
    state = HangmanState.started(5)
    first = [choose_letter(state, random.Random(seed), 0.0) for seed in range(2000)]
    assert first == [choose_letter(state, random.Random(seed), 0.0) for seed in range(2000)]
    counts = Counter(first)
    assert counts["e"] > 150 and counts["e"] > 10 * counts["z"]
    assert len(counts) > 15
    uniform = Counter(choose_letter(state, random.Random(seed), 1.0) for seed in range(2000))
    assert uniform["e"] < 150 and uniform["z"] > 30
    assert list(ENGLISH_LETTER_FREQUENCY) == list("etaoinshrdlcumwfgypbvkjxqz")


def test_task_plays_a_full_game_against_rule_r():
    task = HangmanTask(max_turns=26)
    secret = "jazz"
    rng = random.Random(3)
    state = task.observe_opening(task.initial_state(), f"Word: {pattern(secret, '')}")
    turns = 0
    while not task.is_over(state):
        letter, message = task.next_move(state, rng)
        assert re.search(rf"'{letter}'", message)
        state = task.observe_reply(state, letter, f"Pattern: {pattern(secret, state.guessed + (letter,))}")
        turns += 1
        assert task.is_compatible(state, secret)
    assert state.finished and turns == len(state.guessed)
    with pytest.raises(InvalidGuessError):
        task.next_move(state, rng)


def test_max_turns_ends_the_game():
    task = HangmanTask(max_turns=2)
    state = play("planet", "ea")
    assert task.is_over(state) and not state.finished


# --- prompts and protocol ---------------------------------------------------------------------


def test_task_implements_protocol_and_prompts_carry_the_rules():
    task = HangmanTask(lives=6)
    assert isinstance(task, PsitTask) and task.name == "hangman"
    system = task.host_system_prompt().lower()
    for phrase in ["privately", "lowercase", "underscore", "6 lives", "guessed", "reveal"]:
        assert phrase in system
    opener = task.opener().lower()
    # every instruction of the study's opener (its Appendix F), in this project's words
    for phrase in ["hangman", "private", "exists in english", "lowercase letters only",
                   "don't reveal it unless i ask you to reveal it", "6 lives", "underscore", "lives i have left",
                   "guessed", "stay consistent", "never restate the secret or hint at it"]:
        assert phrase in opener, phrase
    reveal = task.reveal_prompt().lower()
    assert "exactly one lowercase english word" in reveal and "no punctuation" in reveal
    confirm = task.confirm_prompt("planet").lower()
    assert "planet" in confirm and "single word" in confirm and "yes or no" in confirm


@pytest.mark.parametrize("kwargs", [{"lives": 0}, {"max_turns": 0}, {"exploration": 1.5}])
def test_task_rejects_bad_settings(kwargs):
    with pytest.raises(ValueError):
        HangmanTask(**kwargs)


# --- vocabulary and candidates ----------------------------------------------------------------

SMALL_WORDS = [
    "apple", "paper", "caper", "taper", "eater", "panel", "label", "eagle", "adder", "abbey",
    "papa", "pope", "peep", "deed", "added", "dab", "bad", "bee", "ebb", "cab", "acab",
    "babble", "dabble", "pebble", "pedal", "ladle", "ample",
]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    secret=st.sampled_from(SMALL_WORDS),
    letters=st.lists(st.sampled_from("abcdelpt"), unique=True, max_size=6),
    weights=st.lists(st.floats(min_value=1e-9, max_value=1.0), min_size=len(SMALL_WORDS), max_size=len(SMALL_WORDS)),
)
@pytest.mark.slow
def test_index_agrees_with_brute_force_on_a_small_list(secret, letters, weights):
    frequencies = dict(zip(SMALL_WORDS, weights))
    small = Vocabulary(SMALL_WORDS, frequencies)
    state = play(secret, "".join(letters), max_lives=10)
    expected = [word for word in small.words if is_compatible(state, word)]
    assert small.matching(state.length, state.known, state.absent) == expected
    assert secret in expected
    assert [frequencies[word] for word in expected] == sorted((frequencies[w] for w in expected), reverse=True)
    assert small.matching(state.length, state.known, state.absent) == brute_force(
        small.words, state.length, state.known, state.absent
    )


def test_index_agrees_with_brute_force_on_the_real_vocabulary(vocabulary):
    rng = random.Random(11)
    words = vocabulary.words
    for trial in range(30):
        if trial % 2:
            secret = rng.choice(words)
            state = play(secret, "".join(rng.sample(ALPHABET, rng.randint(0, 6))), max_lives=26)
            length, known, absent = state.length, state.known, sorted(state.absent)
        else:
            length = rng.randint(3, 12)
            known = {p: rng.choice("etaoinsr") for p in rng.sample(range(length), rng.randint(0, 2))}
            absent = [letter for letter in rng.sample(ALPHABET, rng.randint(0, 6)) if letter not in known.values()]
        assert vocabulary.matching(length, known, absent) == brute_force(words, length, known, absent)


def test_vocabulary_shape(vocabulary):
    assert len(vocabulary) == 50_000 == len(set(vocabulary.words))
    assert all(is_vocabulary_word(word) for word in vocabulary.words)
    frequencies = [vocabulary.frequency(word) for word in vocabulary.words]
    assert frequencies == sorted(frequencies, reverse=True)
    assert vocabulary.lengths == tuple(range(3, 13))
    assert "planet" in vocabulary and "the" in vocabulary and "a" not in vocabulary
    assert vocabulary.frequency("planet") > vocabulary.frequency("zzzzqqqq") == 0.0
    assert get_vocabulary() is vocabulary
    assert len(get_vocabulary(1_000)) == 1_000


@pytest.mark.parametrize(
    ("length", "known", "absent"),
    [(5, {5: "a"}, []), (5, {-1: "a"}, []), (5, {0: "A"}, []), (5, {}, ["ab"]), (5, {}, ["1"])],
)
def test_malformed_queries_are_rejected(vocabulary, length, known, absent):
    with pytest.raises(VocabularyQueryError):
        vocabulary.matching(length, known, absent)


def test_query_for_an_unindexed_length_is_empty(vocabulary):
    assert vocabulary.matching(2, {}, []) == [] and vocabulary.matching(20, {0: "a"}, []) == []


def test_vocabulary_rejects_bad_words():
    with pytest.raises(ValueError):
        Vocabulary(["Apple"], {"Apple": 1.0})
    with pytest.raises(ValueError):
        Vocabulary(["apple", "apple"], {"apple": 1.0})
    with pytest.raises(ValueError):
        Vocabulary(["apple"], {})


def test_compatible_secrets_are_seeded_distinct_and_compatible(vocabulary):
    task = HangmanTask()
    state = play("paper", "ast")
    first = task.compatible_secrets(state, 20, random.Random(5))
    assert first == task.compatible_secrets(state, 20, random.Random(5))
    assert first != task.compatible_secrets(state, 20, random.Random(6))
    assert len(first) == 20 == len(set(first))
    assert all(task.is_compatible(state, word) for word in first)
    everything = vocabulary.matching(5, state.known, state.absent)
    assert set(task.compatible_secrets(state, 10_000, random.Random(5))) == set(everything)
    opening = task.compatible_secrets(task.initial_state(), 5, random.Random(1))
    assert len(opening) == 5 and all(word in vocabulary for word in opening)
    assert task.compatible_secrets(constraints_from_history(2, []), 5, random.Random(1)) == []


def test_frequency_weighted_sampling_prefers_common_words():
    words = ["common", "rare"]
    picks = Counter(sample_by_frequency(words, [0.99, 0.01], random.Random(seed), 1)[0] for seed in range(500))
    assert picks["common"] > 450 and picks["rare"] > 0
    assert sample_by_frequency(words, [1.0, 0.0], random.Random(0), 5) == ["common", "rare"]
    assert sample_by_frequency(words, [1.0, 1.0], random.Random(0), 0) == []
