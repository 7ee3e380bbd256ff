"""Table 1's metric (the study's reference evaluator's rule) on hand-made fork episodes, beside the
workbook's stricter classification: where the two views differ, each says what its rule says."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from psit_lib.studies.psit.protocol.outcomes import Outcome, classify_fork
from psit_lib.studies.psit.protocol.records import CandidateBranch, ForkEpisode, Message, PublicContradiction, Reveal
from psit_lib.studies.psit.protocol.reference_reading import (candidate_index, diagnosis_span, hangman_token,
                                                              similarity, stored_reveal)
from psit_lib.studies.psit.protocol.reference_reading import substring_leak as reference_leakage
from psit_lib.studies.psit.protocol.table1 import reference_yes, score_table1, score_table1_workbook_reader


def _episode(host_replies, revealed, answers, *, contradictions=0,
             task="hangman", reveal_reply=None):
    transcript = []
    for i, reply in enumerate(host_replies):
        transcript += [Message(role="user", content=f"move {i}"), Message(role="assistant", content=reply)]
    candidates = [CandidateBranch(secret=secret, source="revealed" if i == 0 else "dataset",
                                  question=f"Is your word '{secret}'?", answer=answer,
                                  parsed={"yes": True, "no": False}.get(answer.strip(" .").lower()))
                  for i, (secret, answer) in enumerate(answers)]
    return ForkEpisode(
        task=task, agent="vanilla", model="m", failure=None, transcript=transcript,
        turns_played=len(host_replies) - 1, constraints={}, private_state_at_fork="", state_size_per_turn=[],
        memory_edits=[], hidden_calls=[], reveal=Reveal(question="reveal?", answer=reveal_reply or revealed or "??", parsed=revealed,
                                                         compatible=True),
        candidates=candidates, candidate_search=None, branch_hidden_calls=[],
        public_contradictions=[PublicContradiction(turn=2, move="e", reply="r", error="contradiction")] * contradictions)


def _strict(episode: ForkEpisode) -> Outcome:
    text = "\n".join(m.content for m in episode.transcript)
    return classify_fork(episode.reveal.parsed if episode.reveal else None, text, episode.answers,
                         len(episode.public_contradictions))


def test_a_public_contradiction_then_consistent_answers_is_self_consistent_in_table1_only():
    ep = _episode(["Let's play!", "Yes, there is an 'a'.", "No 'a' in my word."], "plane",
                  [("plane", "yes"), ("place", "no"), ("plate", "no")], contradictions=1)
    assert score_table1(ep).self_consistent
    assert _strict(ep) == Outcome.PUBLIC_CONTRADICTION


def test_a_secret_leaking_as_a_substring_only_is_leakage_in_table1_only():
    ep = _episode(["Let's play! Think of catalogues.", "No 'z'."], "cat", [("cat", "yes"), ("car", "no")])
    table1 = score_table1(ep)
    assert table1.leakage and not table1.self_consistent
    assert _strict(ep) == Outcome.SELF_CONSISTENT  # whole-word rule: "catalogues" does not spell "cat"


def test_a_host_that_wrote_its_word_in_the_opener_is_leakage_in_both_views():
    ep = _episode(['The word is "apple". Guess a letter!', "Yes, one 'p'."], "apple",
                  [("apple", "yes"), ("ample", "no")])
    assert score_table1(ep).leakage and not score_table1(ep).self_consistent
    assert _strict(ep) == Outcome.LEAKAGE


def test_a_yes_with_punctuation_or_words_is_no_yes_in_table1_but_read_in_the_strict_view():
    ep = _episode(["Let's play!", "No 'z'."], "plane", [("plane", "Yes."), ("place", "no")])
    assert not score_table1(ep).revealed_yes and not score_table1(ep).self_consistent
    assert _strict(ep) == Outcome.SELF_CONSISTENT
    assert reference_yes(" YES \n") and not reference_yes("Yes, it is") and not reference_yes("yes.")


def test_two_yes_answers_are_not_self_consistent_and_no_reveal_credits_no_yes():
    two = _episode(["Hi"], "plane", [("plane", "yes"), ("place", "yes")])
    assert score_table1(two).yes_count == 2 and not score_table1(two).self_consistent
    unread = _episode(["Hi"], None, [("place", "yes")])
    assert not score_table1(unread).revealed_yes and not score_table1(unread).self_consistent


def test_the_revealed_secret_matches_its_candidate_exactly_or_by_the_references_similarity():
    assert candidate_index("Whooping-cough", ["Asthma", "whooping cough"]) == 1
    assert candidate_index("Bronchitiss", ["Asthma", "Bronchitis"]) == 1   # ratio 0.95
    assert candidate_index("cough", ["Whooping cough"]) is None             # ratio 0.53: never a guess
    assert candidate_index(None, ["a"]) is None and candidate_index("  ", ["a"]) is None


@given(st.text(min_size=1, max_size=12).filter(str.strip), st.lists(st.text(max_size=30), max_size=4))
def test_leakage_is_exactly_a_case_insensitive_substring_of_the_host_replies(secret, replies):
    assert reference_leakage(secret, replies) == (secret.lower() in " ".join(replies).lower())
    assert reference_leakage(secret, [*replies, f"xx{secret.upper()}yy"]) or secret.upper().lower() != secret.lower()


@given(st.lists(st.sampled_from(["yes", "no", "Yes.", "maybe"]), min_size=1, max_size=6))
def test_self_consistent_exactly_when_the_revealed_secret_alone_gets_a_bare_yes(answers):
    words = [f"w{'abcdef'[i]}" for i in range(len(answers))]
    ep = _episode(["Let's play!"], "wa", list(zip(words, answers)))
    expected = answers[0] == "yes" and sum(a == "yes" for a in answers) == 1
    assert score_table1(ep).self_consistent == expected


# --- The reveal as the reference reads it (the headline view) against the workbook's reader. ---

def test_the_references_reveal_readings_on_hand_made_replies():
    assert hangman_token("The word is planet") == "the"
    assert hangman_token('"Planet"') == "planet" and hangman_token("**planet**") == "planet"
    assert hangman_token("42!") is None and hangman_token("") is None
    assert diagnosis_span("Cushing's Syndrome") == "cushing"
    assert diagnosis_span("**Sarcoidosis**") == "sarcoidosis"
    assert diagnosis_span("  'Whooping   cough' ") == "whooping cough"
    assert diagnosis_span("...") is None and diagnosis_span("x") == "x"
    assert stored_reveal("diagnosis", "  **Sarcoidosis**\n") == "**Sarcoidosis**"
    assert stored_reveal("hangman", "The word is planet") == "the"
    assert round(similarity("sarcoidosis", "**Sarcoidosis**"), 3) == 0.846


def test_cushings_syndrome_becomes_cushing_and_is_never_self_consistent():
    ep = _episode(["I have a condition in mind.", "Yes.", "No."], "Cushing's syndrome",
                  [("Cushing's syndrome", "yes"), ("Sarcoidosis", "no"), ("Asthma", "no")],
                  task="diagnosis", reveal_reply="Cushing's Syndrome")
    assert not score_table1(ep).revealed_yes and not score_table1(ep).self_consistent
    assert score_table1_workbook_reader(ep).self_consistent  # the workbook's reader credits it


def test_a_bolded_sarcoidosis_scores_0_846_against_its_own_candidate_and_is_no_match():
    ep = _episode(["I have a condition in mind.", "No."], "Sarcoidosis",
                  [("Sarcoidosis", "yes"), ("Asthma", "no")], task="diagnosis", reveal_reply="**Sarcoidosis**")
    assert not score_table1(ep).revealed_yes and not score_table1(ep).self_consistent
    assert score_table1_workbook_reader(ep).self_consistent
    plain = _episode(["I have a condition in mind.", "No."], "Sarcoidosis",
                     [("Sarcoidosis", "yes"), ("Asthma", "no")], task="diagnosis", reveal_reply="Sarcoidosis")
    assert score_table1(plain).self_consistent  # the same episode with a bare reply is credited


def test_the_word_is_planet_is_stored_as_the_and_leaks_as_a_substring():
    ep = _episode(["Let's play! Here is the board: _ _ _ _ _ _", "Yes, there is an 'a'."], "planet",
                  [("planet", "yes"), ("plenty", "no")], reveal_reply="The word is planet")
    table1 = score_table1(ep)
    assert table1.leakage and not table1.revealed_yes and not table1.self_consistent
    assert score_table1_workbook_reader(ep).self_consistent and not score_table1_workbook_reader(ep).leakage


def test_the_table1_rates_carry_the_workbook_readers_rate_beside_the_headline():
    import pandas as pd

    from psit_lib.studies.psit.protocol.table1 import WORKBOOK_READER_COLUMN, with_workbook_reader
    df = pd.DataFrame({"task": ["diagnosis"] * 4, "model": ["m"] * 4, "agent": ["vanilla"] * 4,
                       "scored": [True, True, True, False],
                       "table1_self_consistent": [False, True, False, False],
                       "table1_workbook_reader_self_consistent": [True, True, False, True]})
    rates = pd.DataFrame({"task": ["diagnosis"], "model": ["m"], "agent": ["vanilla"], "rate": [1 / 3]})
    out = with_workbook_reader(rates, df, ["task", "model", "agent"])
    assert out.loc[0, WORKBOOK_READER_COLUMN] == 2 / 3  # over the three scored episodes only
    assert out.loc[0, "rate"] == 1 / 3
