"""Table 1's rule where the reference code decides less obvious cases: the evaluator's ground-truth
fallback, two names of one DDXPlus condition, which candidates count as one, the engines' candidate
order, and the words no vocabulary offers.

Expected values marked "reference" were obtained by running chandar-lab/Hangman's own
``SCTEvaluator.evaluate_trial`` (src/hangman/evaluation/sct_evaluator.py) on the same candidates,
branch answers, revealed secret and ground truth; the engines' rules are in
src/hangman/engine_sct_hangman.py and src/hangman/engine_sct_ds.py (``_build_candidates``).
"""

from __future__ import annotations

import asyncio

import pytest

from psit_lib.studies.psit.protocol.candidates import pick_candidates, stored_secret
from psit_lib.studies.psit.protocol.outcomes import Outcome, classify_fork
from psit_lib.studies.psit.protocol.records import CandidateBranch, ForkEpisode, Message, Reveal
from psit_lib.studies.psit.protocol.reference_reading import (ground_truth, label_key, reveal_index, same_as_reveal,
                                                              same_candidate)
from psit_lib.studies.psit.protocol.table1 import paper_outcome, score_table1, score_table1_workbook_reader
from psit_lib.studies.psit.tasks.diagnosis import DiagnosisState, DiagnosisTask
from psit_lib.studies.psit.tasks.hangman import HangmanTask

FREE = DiagnosisTask()
NSTEMI = "Possible NSTEMI / STEMI"


class _NoProposals:
    """The candidate generator's session: the model proposes nothing."""

    async def chat(self, messages, **kwargs):
        from psit_lib.llm.types import ChatResult

        return ChatResult(content="[]")


def _branch(secret: str, source: str, answer: str, text: str | None = None) -> CandidateBranch:
    return CandidateBranch(secret=secret, source=source, question=f"Is it '{text or secret}'?", answer=answer,
                           parsed={"yes": True, "no": False}.get(answer), text=text)


def _episode(task: str, reply: str, parsed: str | None, branches: list[CandidateBranch],
             memory: str = "") -> ForkEpisode:
    return ForkEpisode(
        task=task, agent="workflow_overwrite", model="m", failure=None if parsed else "reveal answer unreadable",
        transcript=[Message(role="user", content="Let's play"), Message(role="assistant", content="Ready.")],
        turns_played=0, constraints={}, private_state_at_fork=memory, state_size_per_turn=[], memory_edits=[],
        hidden_calls=[], reveal=Reveal(question="reveal?", answer=reply, parsed=parsed, compatible=True),
        candidates=branches, candidate_search=None, branch_hidden_calls=[])


def _strict(episode: ForkEpisode) -> Outcome:
    return classify_fork(episode.reveal.parsed, "Ready.", episode.answers, 0)


# -- the ground-truth fallback ----------------------------------------------------------------------

def test_the_fallback_gives_the_reveal_the_yes_of_the_stored_secrets_candidate():
    """reference: candidates ['through', 'rough'] answered yes, no; revealed 'thoughts' (0.80 to
    'through', no match); ground truth 'thought' (0.93 to the reveal, 0.86 to 'through') ->
    revealed_secret_received_yes True. Without the ground truth, or without a reveal: False."""
    candidates = ["through", "rough"]
    assert reveal_index("thoughts", "thought", candidates) == 0
    assert reveal_index("thoughts", None, candidates) is None
    assert reveal_index(None, "thought", candidates) is None     # an unreadable reveal gets no yes from it


def test_the_fallback_decides_an_episode_whose_reveal_has_no_candidate_of_its_own():
    branches = [_branch("through", "dataset", "yes"), _branch("rough", "dataset", "no")]
    with_memory = _episode("hangman", "thoughts", None, branches, memory="## Facts\n<secret>thought</secret>")
    without = _episode("hangman", "thoughts", None, branches)
    assert score_table1(with_memory).revealed_yes and score_table1(with_memory).self_consistent
    assert not score_table1(without).revealed_yes and paper_outcome(score_table1(without)) == "state substitution"


def test_the_ground_truth_is_the_reveal_when_one_contains_the_other():
    assert ground_truth("hangman", "planets", "planet") == "planet"            # Hangman keeps the shorter
    assert ground_truth("hangman", "planet", "planets") == "planet"
    assert ground_truth("diagnosis", "**Sarcoidosis**", "Sarcoidosis") == "**Sarcoidosis**"  # the raw reply
    assert ground_truth("diagnosis", "Heart attack", "Myocardial infarction") == "Myocardial infarction"
    assert ground_truth("hangman", "planet", None) is None


def test_the_stored_secret_is_the_last_tag_of_the_latest_state_that_has_one():
    """As the reference's summarize_secret_history: a later state without a tag keeps the earlier one."""
    assert stored_secret(["<secret>apple</secret>", "<secret>plane</secret> <SECRET> planet </secret>", "no tag"]) == "planet"
    assert stored_secret("< secret >rocket</ secret >") == "rocket" and stored_secret(["", ""]) is None


# -- two names of one condition ---------------------------------------------------------------------

def test_two_names_of_one_condition_are_two_candidates_as_in_the_reference():
    state = DiagnosisState()
    chosen, _ = asyncio.run(pick_candidates(FREE, state, "Heart attack", 60, None, session=_NoProposals()))
    texts = [c.text for c in chosen]
    assert texts[0] == "Heart attack" and NSTEMI in texts
    assert {c.secret for c in chosen if c.text in ("Heart attack", NSTEMI)} == {NSTEMI}


def test_a_consistent_host_saying_yes_to_both_names_is_over_confirmation_in_table1_only():
    """reference: candidates ['Heart attack', 'Possible NSTEMI / STEMI'] both answered yes, revealed
    'Heart attack' -> revealed_secret_received_yes True, yes_count 2: not self-consistent."""
    episode = _episode("diagnosis", "Heart attack", NSTEMI, [
        _branch(NSTEMI, "revealed", "yes", text="Heart attack"), _branch(NSTEMI, "dataset", "yes"),
        _branch("Stable angina", "dataset", "no")])
    table1 = score_table1(episode)
    assert table1.revealed_yes and table1.yes_count == 2 and paper_outcome(table1) == "over-confirmation"
    assert not score_table1_workbook_reader(episode).self_consistent
    assert _strict(episode) == Outcome.SELF_CONSISTENT                # the workbook's view: one secret, one yes
    denied = _episode("diagnosis", "Heart attack", NSTEMI, [
        _branch(NSTEMI, "revealed", "yes", text="Heart attack"), _branch(NSTEMI, "dataset", "no")])
    assert score_table1(denied).self_consistent and _strict(denied) == Outcome.SELF_CONSISTENT


def test_another_conditions_yes_under_any_of_its_names_is_a_yes_to_another_secret():
    episode = _episode("diagnosis", "Sarcoidosis", "Sarcoidosis", [
        _branch("Sarcoidosis", "revealed", "yes"), _branch(NSTEMI, "stored", "no", text="Heart attack"),
        _branch(NSTEMI, "dataset", "yes")])
    assert episode.answers == {"Sarcoidosis": True, NSTEMI: True}
    assert _strict(episode) == Outcome.OVER_CONFIRMATION


# -- which candidates are one -----------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "one"), [
    ("Heart attack", NSTEMI, False),
    ("Cushing's Syndrome", "cushing's syndrome", True),     # the same letters
    ("Guillain-Barré syndrome", "Guillain Barre syndrome", True),   # ratio 0.96
    ("Stable angina", "Unstable angina", True),              # ratio 0.93: the engine skips it
    ("Bronchitis", "Bronchiolitis", True),                   # ratio 0.87
    ("Pneumonia", "Pericarditis", False),
])
def test_diagnosis_candidates_are_one_by_the_engines_label_similarity(a, b, one):
    assert same_candidate("diagnosis", a, b) is one


def test_hangman_candidates_are_one_only_when_written_the_same():
    assert same_candidate("hangman", "planet", "planet") and not same_candidate("hangman", "planet", "planets")
    assert label_key("  Acute COPD exacerbation / infection ") == "acute copd exacerbation infection"


def test_a_stored_secret_that_contains_the_reveal_or_is_contained_in_it_is_the_reveal():
    assert same_as_reveal("hangman", "planet", "Planets") and same_as_reveal("hangman", "planets", "planet")
    assert same_as_reveal("diagnosis", "Cushing's Syndrome", "Cushing's syndrome")   # 'cushing' is in it
    assert not same_as_reveal("diagnosis", "Heart attack", "Myocardial infarction")
    chosen, note = asyncio.run(pick_candidates(HangmanTask(), HangmanTask().initial_state(), "planet", 3, None,
                                               session=None, stored="Planets"))
    assert [c.source for c in chosen] == ["revealed", "dataset", "dataset"] and note["from_memory"] == 0


# -- the engines' order ----------------------------------------------------------------------------

def test_diagnosis_dataset_candidates_in_the_engines_order():
    """At most n compatible conditions: the dataset's (conditions.csv) order; more: the first n as Python
    sorts names, capitals first."""
    everything = FREE.compatible_secrets(DiagnosisState(), 49)
    assert everything == [c.name for c in FREE.dataset.conditions]
    first = FREE.compatible_secrets(DiagnosisState(), 48)
    assert first == sorted(everything)[:48] and first.index("PSVT") < first.index("Pancreatic neoplasm")


def test_an_unreadable_reveal_still_lists_the_stored_secret_then_the_dataset():
    chosen, note = asyncio.run(pick_candidates(HangmanTask(), HangmanTask().initial_state(), None, 3, None,
                                               session=None, stored="planet"))
    assert [c.source for c in chosen] == ["stored", "dataset", "dataset"] and note["from_memory"] == 1
