"""The simulated model's own knowledge and reading (psit_lib.sim.knowledge, psit_lib.sim.request_reading).

The simulator must agree with the rules a model knows, read its context as a model would (any
clear phrasing of its secret, private places only), and never import the harness to do so.
"""

from __future__ import annotations


from hypothesis import given, settings
from hypothesis import strategies as st

from psit_lib.sim import complete
from psit_lib.sim.knowledge.hangman import board_from_dialogue, play, read_pattern
from psit_lib.sim.knowledge.words import english_words
from psit_lib.sim.request_reading import kept_reasoning, leading_yes_no, memory_text, secret_statements
from psit_lib.sim.roles.hangman import GAME, read_guess
from psit_lib.studies.psit.tasks.hangman_rules import HangmanState, apply_guess
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.tasks.vocabulary import get_vocabulary

TASK = HangmanTask()
LETTERS = "abcdefghijklmnopqrstuvwxyz"


@settings(max_examples=80, deadline=None)
@given(secret=st.text(alphabet=LETTERS, min_size=3, max_size=10),
       guesses=st.lists(st.sampled_from(LETTERS), unique=True, max_size=8))
def test_the_simulators_hangman_rules_agree_with_the_harnesss_rule_r(secret, guesses):
    state = HangmanState.started(len(secret))
    played = []
    for letter in guesses:
        if state.finished:
            break
        state = apply_guess(secret, state, letter)
        played.append(letter)
    board = play(secret, played)
    assert board.pattern == state.pattern_text
    assert board.lives_left == state.lives and board.missed == state.absent


def test_the_simulators_vocabulary_ranks_words_like_the_harness():
    mine, theirs = english_words(), get_vocabulary()
    assert mine.ranked[:2000] == theirs.words[:2000]
    shown, missed = {1: "a"}, {"e", "t"}
    assert mine.fitting(5, shown, missed)[:50] == theirs.matching(5, shown, missed)[:50]


def test_the_board_is_rebuilt_from_its_own_replies_and_unreadable_replies_constrain_nothing():
    turns = [("user", TASK.opener()),
             ("assistant", "I've chosen a word.\nPattern: _ _ _ _ _\nLives left: 6"),
             ("user", "My next guess is the letter 'a'."), ("assistant", "Yes!\nPattern: _ a _ _ _"),
             ("user", "Is there an E?"), ("assistant", "Ooh, let me think..."),
             ("user", "I guess t"), ("assistant", "Sorry, no 't'.\nPattern: _ a _ _ _\nLives left: 5")]
    board = board_from_dialogue(turns, read_guess)
    assert board.length == 5 and board.shown == {1: "a"} and board.missed == {"t"}
    assert board.guesses == ("a", "t")
    assert read_pattern("Word: _a__e") == (None, "a", None, None, "e")


def test_a_secret_is_read_in_any_clear_phrasing():
    for text in ("<secret>candy</secret>", "Secret word: candy", "secret: candy",
                 "I chose the word candy.", "The word is 'candy'.", "My secret is 'candy'.",
                 "Facts:\n- The secret word I chose is candy"):
        assert [GAME.as_secret(s) for s in secret_statements(text)][:1] == ["candy"], text
    assert secret_statements("I've chosen a word with 5 letters. Let's begin!") == []
    assert secret_statements("Yes, 'e' is in the word!") == []


def test_private_places_only():
    system = ("Intro mentions the secret you chose, inside <secret> tags.\n<working_memory>\n"
              "## 2. Facts and Knowledge\nSecret word: candy\n</working_memory>")
    assert memory_text(system).strip().endswith("Secret word: candy")
    messages = [{"role": "system", "content": "<private_reasoning>[turn 1] My secret is 'apple'.</private_reasoning>"},
                {"role": "user", "content": "My secret is 'pear'."},
                {"role": "assistant", "content": "<thinking>I chose the word plum.</thinking>Pattern: _ _ _ _"}]
    assert kept_reasoning(messages) == ["[turn 1] My secret is 'apple'.", "I chose the word plum."]
    assert leading_yes_no("No, I don't.") is False and leading_yes_no("Hmm, no idea") is None


def _confirm(memory: str, candidate: str, seed: int = 0) -> str:
    messages = [{"role": "system", "content": f"You host a game.\n<working_memory>\n{memory}\n</working_memory>"},
                {"role": "user", "content": TASK.opener()},
                {"role": "assistant", "content": "Pattern: _ _ _ _ _\nLives left: 6"},
                {"role": "user", "content": TASK.confirm_prompt(candidate)}]
    body = {"model": "psit-sim", "messages": messages, "seed": seed, "temperature": 0.3}
    return complete(body, None, "cautious")["choices"][0]["message"]["content"]


def test_a_held_secret_in_free_phrasing_is_honoured_and_a_missing_one_is_not_invented():
    for memory in ("## 2. Facts and Knowledge\n<secret>candy</secret>", "## 2. Facts\n- I chose the word candy.",
                   "## 2. Facts\nSecret word: candy"):
        # the fork question asks for a single word, and the simulated model answers with one
        assert _confirm(memory, "candy") == "Yes" and _confirm(memory, "sugar") == "No"
    # the cautious profile denies what it does not hold: no secret in memory means no "yes"
    assert {_confirm("## 2. Facts\n(nothing yet)", w, seed) for w in ("candy", "sugar") for seed in range(3)} == {"No"}


def test_a_yes_no_question_that_does_not_ask_for_one_word_gets_a_short_sentence():
    messages = [{"role": "system", "content": "You host a game.\n<working_memory>\n<secret>candy</secret>\n</working_memory>"},
                {"role": "user", "content": TASK.opener()},
                {"role": "assistant", "content": "Pattern: _ _ _ _ _\nLives left: 6"},
                {"role": "user", "content": "Is your word 'candy'? Answer only yes or no."}]
    body = {"model": "psit-sim", "messages": messages, "seed": 0, "temperature": 0.3}
    assert complete(body, None, "cautious")["choices"][0]["message"]["content"] == "Yes."


@given(letter=st.sampled_from(LETTERS))
def test_guesses_are_read_in_several_phrasings(letter):
    for text in (f"My next guess is the letter '{letter}'.", f"Is there an {letter.upper()}?", f"I guess {letter}",
                 f"letter \"{letter}\" please"):
        assert read_guess(text) == letter, text
