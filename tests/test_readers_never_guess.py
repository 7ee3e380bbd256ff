"""The PSIT readers never guess: a reveal names a DDXPlus condition by its name or a synonym
only, chat-template debris is never a secret, a Hangman reply is read only when it shows one
pattern (and says why not otherwise)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from psit_lib.llm.reply_readers import json_breaks_off, read_json_object, strip_template_debris
from psit_lib.studies.psit.tasks.base import HostContradictionError, HostReplyError
from psit_lib.studies.psit.tasks.diagnosis import NAME_ALIASES, DiagnosisTask, DiagnosisState
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.tasks.hangman_reader import find_pattern_runs, read_opening, read_reply
from hangman_states import constraints_from_history

FREE, CLOSED = DiagnosisTask(), DiagnosisTask(choice="closed")
ASTHMA = "Bronchospasm / acute asthma exacerbation"


# -- chat-template debris ----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("<|im_end|>user What is the next question?", ""),
    ("Pneumonia<|im_end|>\n<|im_start|>user\nok", "Pneumonia"),
    ("Yes.<|endoftext|>", "Yes."),
    ("No.<end_of_turn>\n<start_of_turn>user", "No."),
    ("planet</s>", "planet"),
    ("[INST] reveal it [/INST]", ""),
    ("<|eot_id|><|start_header_id|>user<|end_header_id|>", ""),
    ("_ a _ e _ | lives: 5", "_ a _ e _ | lives: 5"),  # a pipe is not a template token
    (None, ""),
])
def test_strip_template_debris_cuts_at_the_first_token(text, expected):
    assert strip_template_debris(text) == expected


@pytest.mark.parametrize("task", [FREE, CLOSED, HangmanTask()], ids=["free", "closed", "hangman"])
@pytest.mark.parametrize("reply", ["<|im_end|>user", "<|im_end|>user I think it is something else",
                                   "<end_of_turn>\n<start_of_turn>user\nPneumonia"])
def test_debris_is_never_a_secret(task, reply):
    assert task.read_reveal(reply).value is None


def test_what_precedes_the_debris_is_read():
    assert FREE.read_reveal("Pneumonia<|im_end|>user Whooping cough").value == "Pneumonia"
    assert HangmanTask().read_reveal("planet<|im_end|>\n<|im_start|>user\nrocket").value == "planet"


def test_a_debris_yes_no_is_unreadable():
    with pytest.raises(HostReplyError, match="no readable yes or no"):
        FREE.observe_reply(DiagnosisState(), "E_201", "<|im_end|>user Yes")


# -- DDXPlus names: exact, never by containment ---------------------------------------------


def test_a_symptom_is_not_the_condition_whose_name_contains_it():
    parsed = FREE.read_reveal("Cough").value
    assert parsed == "Cough" and parsed != "Whooping cough"
    assert not FREE.is_checkable(parsed)                  # off-dataset: kept as written, unchecked
    assert FREE.is_compatible(DiagnosisState((("E_201", False),)), parsed)
    assert CLOSED.read_reveal("Cough").value is None


def test_asthma_is_not_resolved_by_containment():
    assert "asthma" not in NAME_ALIASES                   # the disease is broader than one exacerbation
    assert FREE.read_reveal("asthma").value == "asthma" and not FREE.is_checkable("asthma")
    assert CLOSED.read_reveal("Asthma").value is None
    assert FREE.normalise("asthma") == "asthma"


@pytest.mark.parametrize("reply", ["Asthma attack", "acute asthma exacerbation", "Bronchospasm",
                                   "Bronchospasm / acute asthma exacerbation"])
def test_synonyms_of_the_asthma_condition_are_aliases(reply):
    assert CLOSED.normalise(CLOSED.read_reveal(reply).value) == ASTHMA


@pytest.mark.parametrize("reply", ["pneumothorax", "Acute bronchitis", "Viral pneumonia", "angina", "HIV",
                                   "exacerbation", "cough", "Pulmonary"])
def test_no_name_is_matched_by_containment_either_way(reply):
    assert CLOSED.read_reveal(reply).value is None
    assert not FREE.is_checkable(reply)


@pytest.mark.parametrize(("reply", "expected"), [
    ("The condition is Pneumonia.", "Pneumonia"),
    ("Sure! The condition I chose is **Pneumonia**.", "Pneumonia"),
    ("**Diagnosis:** croup", "Croup"),
    ("I picked Whooping cough.", "Whooping cough"),
    ("Pneumonia\n\nHope that helps.", "Pneumonia"),
    ("NSTEMI", "Possible NSTEMI / STEMI"),
])
def test_a_sentence_naming_one_condition_in_full_is_read(reply, expected):
    closed, free = CLOSED.read_reveal(reply).value, FREE.read_reveal(reply).value
    assert closed == free and CLOSED.normalise(closed) == expected


def test_a_reply_naming_several_conditions_names_none():
    assert FREE.read_reveal("Pneumonia. Or maybe whooping cough.").value is None


def test_every_alias_names_one_dataset_condition_exactly():
    for alias, canonical in NAME_ALIASES.items():
        assert FREE.normalise(alias) == canonical


# -- Hangman boards: one pattern, or unreadable with a reason --------------------------------


def test_letters_shown_at_the_opening_are_slots():
    assert read_opening("_ h e l l o").length == 6
    assert read_opening("Here it is: h _ l _ o").length == 5
    assert read_opening("Got it. I _ _ _ _").length == 4   # a leading "I" is prose, not a slot


@pytest.mark.parametrize(("reply", "reason"), [
    ("Like `_ a _ e _`. My word: _ _ _ _ _ _", "two different patterns"),
    ("I chose a 6-letter word: _ _ _ _ _", "pattern length 5 .* disagrees with its stated length 6"),
    ("Let's play! Guess a letter.", "no pattern and states no word length"),
    ("<|im_end|>user _ _ _ _ _", "no pattern"),
])
def test_an_unreadable_opening_says_why(reply, reason):
    with pytest.raises(HostReplyError, match=reason):
        read_opening(reply)


def test_a_reply_with_two_inconsistent_patterns_is_unreadable():
    state = constraints_from_history(5, [("a", "_ a _ _ _")])
    with pytest.raises(HostReplyError, match="two different patterns") as raised:
        read_reply(state, "e", "Pattern: _ a _ e _\nOops, I mean: _ a e _ _")
    assert not isinstance(raised.value, HostContradictionError)


def test_the_same_pattern_twice_is_one_pattern():
    state = constraints_from_history(5, [("a", "_ a _ _ _")])
    after = read_reply(state, "e", "_ a _ e _\nBoard: _ a _ e _")
    assert after.known == {1: "a", 3: "e"}


def test_debris_after_the_board_is_not_a_second_pattern():
    state = constraints_from_history(5, [("a", "_ a _ _ _")])
    after = read_reply(state, "e", "Pattern: _ a _ e _<|im_end|>user Pattern: _ _ _ _ _")
    assert after.known == {1: "a", 3: "e"}


def test_italic_prose_starting_with_a_digit_is_not_a_pattern():
    assert [run.tokens for run in find_pattern_runs("_ a _ e _ — _6 lives left_")] == [("_", "a", "_", "e", "_")]


@pytest.mark.parametrize("salad", ["teapot seventeen teapot ipsum maybe seventeen", "banana blue lorem banana",
                                   "### { maybe"])
def test_word_salad_is_no_condition_name(salad):
    from psit_lib.studies.psit.tasks.diagnosis import off_dataset_name

    assert off_dataset_name(salad) is None


@pytest.mark.parametrize("name", ["Lyme disease", "COVID-19", "Crohn's disease", "Heart disease"])
def test_names_of_conditions_outside_the_dataset_are_kept_as_written(name):
    from psit_lib.studies.psit.tasks.diagnosis import off_dataset_name

    assert off_dataset_name(name) == name


def test_a_runaway_reply_of_single_letters_is_no_spelled_out_word():
    from psit_lib.studies.psit.tasks.hangman_reader import MAX_SPELLED_LETTERS, read_reveal

    assert read_reveal("P L A N E T").value == "planet"
    assert read_reveal("a " + "e " * 96).value is None            # seen with a 0.5B model at the reveal
    longest = "pneumonoultramicroscopic"[:MAX_SPELLED_LETTERS]
    assert read_reveal(" ".join(longest)).value == longest
    assert read_reveal(" ".join(longest + "s")).value is None
    assert read_reveal(" ".join("x" * 6)).value is None           # one letter repeated spells no word


_JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                         max_size=3), max_leaves=8)


@given(st.dictionaries(st.text(max_size=6), _JSON_VALUES, min_size=1, max_size=4), st.data())
def test_a_json_reply_cut_anywhere_yields_no_object_and_says_it_breaks_off(obj, data):
    """A reply stopped at its max_tokens inside its JSON is cut: no inner object is its answer."""
    text = json.dumps(obj)
    cut = data.draw(st.integers(min_value=1, max_value=len(text) - 1))
    prose = data.draw(st.sampled_from(["", "Here are the scores: ", "```json\n"]))
    assert read_json_object(prose + text[:cut]) is None
    assert json_breaks_off(prose + text[:cut])
    assert read_json_object(prose + text + " Done.") == obj and not json_breaks_off(prose + text)


def test_the_judges_cut_evaluations_list_is_no_evaluation():
    """qwen2.5-coder-0.5b at max_tokens 96: the list stops inside its second entry; the first
    entry is whole, but it is a fragment of the cut reply, not the reply's object."""
    cut = '{"evaluations": [{"label": "A", "relevance": 0, "coherence": 0}, {"label": "B", "relevance": 0'
    assert read_json_object(cut) is None and json_breaks_off(cut)
    assert not json_breaks_off("Use {braces} freely; no JSON here")
