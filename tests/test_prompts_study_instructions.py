"""The shipped prompts keep every instruction of the study's Appendix F.2 system prompts (in our
own words): a dropped instruction fails here by name."""

from __future__ import annotations

import pytest

from psit_lib.studies.psit.prompt_book import PROMPTS

SECTIONS = ("Goals and Plans", "Facts and Knowledge", "Active Notes", "subgoals", "short-lived")


def text(name: str) -> str:
    return PROMPTS.templates[name].text


@pytest.mark.parametrize("name", ["agent.workflow_memory_intro", "agent.autonomous_memory_intro",
                                  "agent.updater_system"])
def test_the_memory_prompts_keep_the_section_guidance(name):
    assert all(words in text(name) for words in SECTIONS)
    assert "actively and deliberately" in text(name)


def test_the_workflow_agent_is_told_its_memory_is_read_only_and_never_to_write_tags():
    body = text("agent.workflow_memory_intro")
    assert "read-only" in body and "separate process" in body and "only as internal context" in body
    assert "working-memory tag, the secret tag or any other XML-style tag" in body


def test_the_autonomous_agent_keeps_the_save_before_you_reply_and_secret_tag_rules():
    body = text("agent.autonomous_memory_intro")
    for words in ("reasoning for this turn is gone", "intermediate reasoning", "obsolete or are contradicted",
                  "organised", "inside <secret> tags", "never write these tags in a reply"):
        assert words in body, words


def test_the_updater_is_not_told_the_secret_must_be_stored():
    body = text("agent.updater_system")
    assert "must be stored" not in body
    assert "Whenever you save or update secret information" in body
    assert "never change the section headers" in body and "never wrapped in prose" in body


@pytest.mark.parametrize("library", ["mem0", "amem", "lightmem", "memoryos"])
def test_each_retrieval_baseline_gets_its_full_prompt_with_the_memories_slot(library):
    template = PROMPTS.templates[f"baseline.{library}_memories"]
    assert template.slots == ("memories",)
    body = template.text
    assert "staying consistent with the task's instructions" in body
    assert "contradict" in body and ("Do not restate or list" in body or "without listing" in body)
    assert len(body.split()) > 60  # the whole guidance, not one sentence


def test_the_private_cot_agent_is_told_where_its_reasoning_is_and_to_answer_directly():
    for name in ("agent.private_reasoning_intro", "agent.private_reasoning_in_history"):
        assert "cannot see" in text(name) and "clearly and directly" in text(name)


#: Nudges towards consistency that the study's prompts (chandar-lab/Hangman, src/hangman/prompts/*.py)
#: do not give: a host told to stay consistent with its earlier choices, or where to keep its secret,
#: would score better here than the study's host for a reason the study never tested.
NUDGES = ("stay consistent with any choices", "what you must stay consistent with", "for example the secret you",
          "did you choose at the start", "the condition you chose {secret}", "whatever is not written in the memory",
          "playing an interactive game", "never quote it to the user")


@pytest.mark.parametrize("name", sorted(n for n in PROMPTS.templates
                                        if n.startswith(("agent.", "hangman.reveal", "hangman.confirm",
                                                         "diagnosis.reveal", "diagnosis.confirm"))))
def test_no_prompt_of_the_agents_or_the_fork_carries_a_nudge_the_study_does_not_give(name):
    assert not [nudge for nudge in NUDGES if nudge in text(name)]


def test_the_fork_questions_keep_the_studys_instructions():
    assert "reveal the secret word now" in text("hangman.reveal") and "one lowercase English word" in text("hangman.reveal")
    assert "reveal the medical condition now" in text("diagnosis.reveal") and "name only" in text("diagnosis.reveal")
    for name in ("hangman.confirm", "diagnosis.confirm"):
        assert "single word only: yes or no" in text(name)
    assert "hidden condition" in text("diagnosis.confirm")
