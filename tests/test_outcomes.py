"""classify_fork on hand-made fork episodes, one per outcome, plus precedence and word matching."""

from __future__ import annotations

import pytest

from psit_lib.studies.psit.protocol.outcomes import (
    OUTCOME_COLOURS,
    OUTCOME_LABELS,
    OUTCOME_ORDER,
    ForkInputError,
    Outcome,
    classify_fork,
    secret_appears_in,
)

TRANSCRIPT = (
    "user: Let's play hangman. You host; pick a word privately.\n"
    "assistant: I have chosen a word. _ _ _ _ _ , 6 lives.\n"
    "user: e\nassistant: _ _ a _ e _ ... wait, pattern: _ l a _ e _, 6 lives left.\n"
)


def test_self_consistent():
    answers = {"planet": True, "placed": False, "blamed": False}
    assert classify_fork("planet", TRANSCRIPT, answers) is Outcome.SELF_CONSISTENT


def test_over_confirmation():
    answers = {"planet": True, "placed": True, "blamed": False}
    assert classify_fork("planet", TRANSCRIPT, answers) is Outcome.OVER_CONFIRMATION


def test_state_substitution():
    answers = {"planet": False, "placed": True, "blamed": False}
    assert classify_fork("planet", TRANSCRIPT, answers) is Outcome.STATE_SUBSTITUTION


def test_all_denial():
    answers = {"planet": False, "placed": False, "blamed": False}
    assert classify_fork("planet", TRANSCRIPT, answers) is Outcome.ALL_DENIAL


def test_single_candidate_episode():
    assert classify_fork("planet", TRANSCRIPT, {"planet": True}) is Outcome.SELF_CONSISTENT
    assert classify_fork("planet", TRANSCRIPT, {"planet": False}) is Outcome.ALL_DENIAL


def test_leakage_takes_precedence_over_a_consistent_answer_pattern():
    leaked = TRANSCRIPT + "assistant: (note to self: the word is PLANET)\n"
    answers = {"planet": True, "placed": False}
    assert classify_fork("planet", leaked, answers) is Outcome.LEAKAGE


def test_leakage_takes_precedence_over_unparseable_answers():
    leaked = TRANSCRIPT + "assistant: Planet! Oops.\n"
    assert classify_fork("planet", leaked, {"planet": None, "placed": None}) is Outcome.LEAKAGE


def test_unparseable_answer_makes_the_episode_unparseable():
    answers = {"planet": True, "placed": None, "blamed": False}
    assert classify_fork("planet", TRANSCRIPT, answers) is Outcome.UNPARSEABLE


def test_unreadable_reveal_is_unparseable():
    assert classify_fork(None, TRANSCRIPT, {"planet": True}) is Outcome.UNPARSEABLE
    assert classify_fork("   ", TRANSCRIPT, {"planet": True}) is Outcome.UNPARSEABLE


def test_revealed_secret_missing_from_candidates_is_a_protocol_error():
    with pytest.raises(ForkInputError, match="not among the candidate keys"):
        classify_fork("planet", TRANSCRIPT, {"placed": True})


@pytest.mark.parametrize(
    ("secret", "text", "leaked"),
    [
        ("cat", "a category of words", False),
        ("ant", "I want to play", False),
        ("cat", "is it a CAT?", True),
        ("cat", "cat", True),
        ("cat", "c _ t", False),
        ("cat", "my_cat_word", False),
        ("acute pulmonary edema", "Could it be acute\npulmonary  edema?", True),
        ("acute pulmonary edema", "acute pulmonary edemas", False),
        ("c++", "I love C++ a lot", True),
        ("", "anything", False),
    ],
)
def test_secret_matching_is_whole_word_and_case_insensitive(secret, text, leaked):
    assert secret_appears_in(secret, text) is leaked


def test_substring_of_a_longer_word_is_not_leakage():
    transcript = TRANSCRIPT + "assistant: Great guess, that letter appears in many categories.\n"
    assert classify_fork("cat", transcript, {"cat": True, "cot": False}) is Outcome.SELF_CONSISTENT


def test_order_palette_and_labels_cover_every_outcome():
    assert set(OUTCOME_ORDER) == set(Outcome) and len(OUTCOME_ORDER) == len(Outcome)
    assert OUTCOME_ORDER[0] is Outcome.SELF_CONSISTENT
    assert set(OUTCOME_COLOURS) == set(Outcome) and set(OUTCOME_LABELS) == set(Outcome)
    assert len(set(OUTCOME_COLOURS.values())) == len(Outcome)


def test_outcome_values_are_plain_strings():
    assert Outcome("self_consistent") is Outcome.SELF_CONSISTENT
    assert Outcome.LEAKAGE == "leakage"
    assert OUTCOME_COLOURS["leakage"] == OUTCOME_COLOURS[Outcome.LEAKAGE]
