"""Readers that refuse: a reply is an answer only when it is one (issue #28, item 1).

Each defect seen with real small models is a named test; a property test feeds generated
defects through every reader (the reveal readers, the yes/no reader, the Hangman opening and
board readers, the candidate proposals, notebook 07's secret reader), and a corpus of real
replies recorded from the test suite's models (``tests/fixtures/real_replies.json``, each
labelled with its reader and its correct reading) is read back reply by reply.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from psit_lib.llm import ChatResult, LLMSettings
from psit_lib.llm.client import ModelSession
from psit_lib.runs.backend import make_client
from psit_lib.llm.non_answers import FUNCTION_WORDS, reply_non_answer, word_non_answer
from psit_lib.llm.reply_readers import read_yes_no
from psit_lib.studies.psit.protocol.candidates import pick_candidates
from psit_lib.studies.psit.protocol.secret_choice import reveal_compatibility, run_secret_choice_episode
from psit_lib.studies.psit.tasks.base import HostReplyError
from psit_lib.studies.psit.tasks.diagnosis import DiagnosisState, DiagnosisTask
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.tasks.hangman_reader import read_opening, read_reply, read_stated_length
from psit_lib.studies.psit.tasks.hangman_rules import HangmanState

HANGMAN, FREE, CLOSED = HangmanTask(), DiagnosisTask(), DiagnosisTask(choice="closed")
TASKS = {"hangman": HANGMAN, "diagnosis": FREE, "diagnosis_closed": CLOSED}
FIXTURES = Path(__file__).parent / "fixtures" / "real_replies.json"

FENCED_CALL = '```json\n{"name": "reveal_secret", "arguments": {"word": "planet"}}\n```'
ALWAYS = 'The first letter of the word is always "A".'
ALPHABET = "a b c d e f g"


# -- the repros, by name -----------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS.values(), ids=TASKS.keys())
def test_parse_reveal_refuses_the_fenced_tool_call(task):
    reading = task.read_reveal(FENCED_CALL)
    assert reading.value is None
    assert "tool call (reveal_secret)" in reading.reason


def test_parse_reveal_refuses_always():
    reading = HANGMAN.read_reveal(ALWAYS)
    assert reading.value is None and "function word" in reading.reason


def test_parse_reveal_refuses_the_alphabet():
    reading = HANGMAN.read_reveal(ALPHABET)
    assert reading.value is None and "alphabet" in reading.reason


def test_read_opening_keeps_the_leading_a():
    assert read_opening("(1) a _ e _").length == 4
    assert read_opening("a _ _ _ _ word").length == 4          # prose "a" before a board of blanks


def test_a_runaway_of_underscores_is_no_board_and_no_length():
    with pytest.raises(HostReplyError, match="runaway of 238 '_'"):
        read_opening("_" * 238)
    with pytest.raises(HostReplyError, match="runaway"):
        read_reply(HangmanState.started(5, 6), "e", "_ " * 60)


def test_a_list_of_10_letters_is_no_word_length():
    assert read_stated_length("Here is a list of 10 letters: a, b, c") is None
    assert read_stated_length("My word has 6 letters.") == 6
    assert read_stated_length("I picked a word of 6 letters") == 6


def _generator_session(reply: str) -> Any:
    """A session whose candidate generator writes ``reply``."""

    class Session:
        async def chat(self, messages, **kwargs):
            assert kwargs["role"] == "candidate_generator"
            return ChatResult(content=reply)

    return Session()


def test_candidates_yes_yes_yes_propose_nothing():
    task = FREE
    state = DiagnosisState()
    n = len(task.compatible_secrets(state, 1000)) + 2          # more than the dataset holds: the model is asked
    chosen, note = asyncio.run(pick_candidates(task, state, "Croup", n, None,
                                               _generator_session('["yes","yes","yes"]')))
    assert "yes" not in {c.secret.lower() for c in chosen}
    assert all(c.source != "model" for c in chosen)
    assert note["model_proposed"] == 0 and note["short_by"] == n - len(chosen) >= 2
    assert [u["proposal"] for u in note["model_unreadable"]] == ["yes", "yes", "yes"]
    assert all("function word" in u["reason"] for u in note["model_unreadable"])


def test_an_off_dataset_diagnosis_reveal_is_never_compatible():
    state = DiagnosisState((("E_201", False),))
    assert FREE.read_reveal("Lyme disease").value == "Lyme disease"
    assert reveal_compatibility(FREE, state, "Lyme disease") is None            # unchecked, not compatible
    assert reveal_compatibility(FREE, state, "Croup") is not None                # a dataset name is checked
    assert reveal_compatibility(FREE, None, "Croup") is None


@pytest.mark.parametrize("reply", [
    "I have decided to choose the condition Premature Ejaculation (PE).",
    "to choose the condition premature ejaculation (PE)",
    "Answer: to choose the condition Premature Ejaculation (PE)",
])
def test_a_sentence_about_the_choice_is_not_cut_into_a_name(reply):
    assert FREE.read_reveal(reply).value is None


@pytest.mark.parametrize(("reply", "expected"), [
    ("(1) yes", True), ("(1) Yes.", True), ("1. No", False), ("1) no\n2) no", False),
    ("(1) yes (2) no", None), ("1. Yes\n2. maybe", None),
])
def test_numbered_yes_no_lists_read_where_one_answer_is_unambiguous(reply, expected):
    assert read_yes_no(reply).value is expected


def test_a_yes_no_that_is_a_tool_call_is_unreadable_with_its_reason():
    reading = read_yes_no('{"name": "answer", "arguments": {"answer": "yes"}}')
    assert reading.value is None and "tool call" in reading.reason


class _Scripted:
    """A model session whose host replies are scripted (opening, then reveal)."""

    def __init__(self, inner: ModelSession, replies: dict[str, str]) -> None:
        self.inner, self.replies = inner, replies

    def branch(self, name: str) -> "_Scripted":
        return _Scripted(self.inner.branch(name), self.replies)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def chat(self, messages, **kwargs):
        last = str(messages[-1]["content"]).lower()
        return ChatResult(content=self.replies["reveal" if "reveal" in last else "opening"])


def _secret_choice(task, opening: str, reveal: str):
    session = ModelSession(make_client(LLMSettings(cache="off")), run_seed=0, episode_id="scripted")
    return asyncio.run(run_secret_choice_episode(task, "vanilla", _Scripted(session, {"opening": opening,
                                                                                       "reveal": reveal})))


@pytest.mark.parametrize("reveal", [FENCED_CALL, ALWAYS, ALPHABET, "_" * 238, "Yes."])
def test_the_07_secret_reader_refuses_every_defect_with_its_reason(reveal):
    episode = _secret_choice(HANGMAN, "_ _ _ _ _", reveal)
    assert episode.reveal.parsed is None and episode.reveal.compatible is None
    assert episode.failure.startswith("reveal answer unreadable (") and len(episode.failure) > 30


def test_the_07_off_dataset_reveal_is_unchecked():
    episode = _secret_choice(FREE, "I have chosen a condition. Ask your first question.", "Lyme disease")
    assert episode.reveal.parsed == "lyme disease" and episode.reveal.compatible is None


# -- property test: generated defects through every reader -----------------------------------

_names = st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True)
_words = st.sampled_from(["planet", "garden", "Croup", "Pneumonia", "yes", "apple"])


@st.composite
def tool_calls(draw) -> str:
    call: dict[str, Any] = {"name": draw(_names), draw(st.sampled_from(["arguments", "parameters"])):
                            {draw(_names): draw(_words)}}
    if draw(st.booleans()):
        call = {"type": "function", "function": call}
    text = json.dumps(draw(st.sampled_from([call, [call]])))
    style = draw(st.sampled_from(["bare", "fenced", "fenced_json", "prose", "tag"]))
    return {"bare": text, "fenced": f"```\n{text}\n```", "fenced_json": f"```json\n{text}\n```",
            "prose": f"Sure! Here is my answer:\n{text}\nHope that helps.",
            "tag": f"<tool_call>\n{text}\n</tool_call>"}[style]


@st.composite
def alphabet_runs(draw) -> str:
    start = draw(st.integers(0, 22))
    length = draw(st.integers(4, 26 - start))
    letters = "abcdefghijklmnopqrstuvwxyz"[start:start + length]
    if draw(st.booleans()):
        letters = letters.upper()
    return draw(st.sampled_from([" ", "-", ", "])).join(letters)


@st.composite
def runaways(draw) -> str:
    unit = draw(st.sampled_from(["_", "_ ", "a", "e ", "x"]))
    return draw(st.sampled_from(["", "The word is ", "Here: "])) + unit * draw(st.integers(25, 300))


@st.composite
def function_words_in_sentences(draw) -> str:
    word = draw(st.sampled_from(sorted(FUNCTION_WORDS)))
    frame = draw(st.sampled_from(["The first letter of the word is {w} \"A\".", "My word is {w} hard to guess",
                                  "The secret was {w} there", "Answer: {w}"]))
    return frame.format(w=word)


DEFECTS = st.one_of(tool_calls(), alphabet_runs(), runaways(), function_words_in_sentences(),
                    st.sampled_from(["Yes.", "**yes**", "json", "The", "ok", "Sure!", FENCED_CALL, ALWAYS]))


def _no_board(reply: str) -> None:
    """A defect shows no board and states no length: the opening and board readers refuse it."""
    with pytest.raises(HostReplyError):
        read_opening(reply)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DEFECTS)
def test_no_defect_is_ever_a_secret_a_candidate_or_a_length(reply):
    for task in TASKS.values():
        reading = task.read_reveal(reply)
        assert reading.value is None and reading.reason, (task.name, reply)
    assert HANGMAN.read_reveal(reply).value is None
    if reply_non_answer(reply) is not None:
        assert read_yes_no(reply).value is None
        _no_board(reply)
    # as a candidate generator's reply, a defect proposes no candidate
    proposal = json.dumps([reply, reply])
    chosen, note = asyncio.run(pick_candidates(FREE, DiagnosisState(), "Croup", 60, random.Random(0),
                                               _generator_session(proposal)))
    assert all(c.source != "model" for c in chosen)


@given(st.sampled_from(sorted(FUNCTION_WORDS)))
def test_every_function_word_pulled_from_a_sentence_is_refused(word):
    assert word_non_answer(word, in_sentence=True)


# -- a corpus of real replies ------------------------------------------------------------------


def _corpus() -> list[dict[str, Any]]:
    return json.loads(FIXTURES.read_text())["replies"]


def _read(reader: str, reply: str) -> Any:
    """What ``reader`` reads from ``reply``: a value, or None when it refuses."""
    if reader == "hangman_reveal":
        return HANGMAN.read_reveal(reply).value
    if reader == "diagnosis_reveal":
        return FREE.read_reveal(reply).value
    if reader == "yes_no":
        return read_yes_no(reply).value
    if reader == "hangman_opening":
        try:
            return read_opening(reply).length
        except HostReplyError:
            return None
    if reader == "candidates":
        return [FREE.read_reveal(p).value for p in json.loads(reply)]     # the diagnosis candidate generator
    raise AssertionError(f"unknown reader {reader!r}")


def test_the_corpus_is_labelled_and_covers_every_reader():
    corpus = _corpus()
    assert {row["reader"] for row in corpus} >= {"hangman_reveal", "diagnosis_reveal", "yes_no", "hangman_opening"}
    assert all({"reader", "reply", "expected", "model", "note"} <= set(row) for row in corpus)


@pytest.mark.parametrize("row", _corpus(), ids=lambda row: f"{row['reader']}-{row['model'][:5]}")
def test_each_real_reply_reads_as_labelled(row):
    got = _read(row["reader"], row["reply"])
    expected = row["expected"]
    if isinstance(got, str) and isinstance(expected, str):
        got, expected = got.lower(), expected.lower()
    assert got == expected, (row["reply"][:200], row["note"])


@pytest.mark.parametrize("row", _corpus(), ids=lambda row: f"every-reader-{row['reader']}-{row['model'][:5]}")
def test_every_reader_reads_each_real_reply_or_refuses_it_with_a_reason(row):
    reply = row["reply"]
    for task in TASKS.values():
        reading = task.read_reveal(reply)
        assert reading.value is not None or reading.reason
        if row["expected"] is None and row["reader"].endswith("_reveal"):
            assert reading.value is None            # a non-answer is no secret for any task
    decision = read_yes_no(reply)
    assert decision.value is not None or decision.reason
    try:
        read_opening(reply)
    except HostReplyError as exc:
        assert str(exc)
