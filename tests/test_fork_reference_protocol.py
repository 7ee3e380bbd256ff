"""The fork test as the study's reference code runs it, pinned on hand-worked episodes.

A scripted host (an agent family registered for the test) plays Hangman with a known word by
rule R, so every expectation below can be worked out by hand: the fork comes after the opener
plus ``t_fork - 1`` guesses; the candidates are the word stored in memory when it is not the
reveal, the revealed word, then the most frequent compatible words; a reply that contradicts an earlier
one is its own outcome and play goes on; a diagnosis reveal outside DDXPlus is kept.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from wordfreq import word_frequency

from psit_lib.llm import LLMSettings, ModelSession
from psit_lib.studies.psit.agents.graph_agent import CheckpointRef, Turn
from psit_lib.studies.psit.agents.graphs import ChatAgent
from psit_lib.studies.psit.agents.config import parse_agent
from psit_lib.studies.psit.agents.names import register_agent_family
from psit_lib.studies.psit.protocol.fork_test import NEUTRAL_SYSTEM_PROMPT, ForkSettings, host_role, run_fork_episode
from psit_lib.studies.psit.tasks.diagnosis import DiagnosisTask
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from hangman_states import pattern
from psit_lib.studies.psit.tasks.hangman_rules import is_compatible
from psit_lib.studies.psit.protocol.experiment import fork_outcome
from recording import RecordingClient


class ScriptedHost:
    """Hosts with a fixed word by rule R; ``stored`` is what its private memory says;
    ``contradict_at`` makes the reply to that guess (1-based) show a letter that was never guessed."""

    def __init__(self, word: str, stored: str | None = None, contradict_at: int | None = None,
                 reveal: str | None = None) -> None:
        self.word, self.stored, self.contradict_at, self.reveal = word, stored, contradict_at, reveal
        self.public: list[dict[str, str]] = []

    def _reply(self, text: str, public: list[dict[str, str]]) -> str:
        guesses = [m["content"] for m in public if m["role"] == "user"][1:] + [text]
        letters = [m.group(1) for g in guesses if (m := re.search(r"letter '([a-z])'", g))]
        if public and "reveal" in text.lower():  # the opener mentions revealing too
            return self.reveal or self.word
        if (m := re.search(r"Is your word '([a-z]+)'", text)):
            return "Yes." if m.group(1) == self.word else "No."
        if not public:
            return f"Ready! {pattern(self.word, '')} · 6 lives."
        shown = pattern(self.word, letters)
        if self.contradict_at is not None and len(letters) == self.contradict_at:
            shown = "q " + shown[2:]  # a letter nobody guessed appears
        return f"{shown} · letters so far: {' '.join(letters)}"

    thread_id = "scripted"

    async def send(self, text: str, session: ModelSession, *, checkpoint_id: str | None = None) -> Turn:
        """A hand-written ForkableAgent: the main line moves on with every move (the fork test passes
        the latest turn's checkpoint, which is the head); a branch ("reveal", "confirm-n") never does."""
        public = list(self.public)
        reply = self._reply(text, public)
        after = [*public, {"role": "user", "content": text}, {"role": "assistant", "content": reply}]
        branch = session.path != "main"
        if not branch:
            self.public = after
        here = f"{session.path}/turn-{len(after) // 2}"
        return Turn({"reply": reply, "public": after}, CheckpointRef(here, checkpoint_id))

    async def state(self, checkpoint_id: str | None = None) -> dict[str, Any]:
        return {"public": list(self.public), "turn_log": [{"private_state_tokens": 0}] * (len(self.public) // 2)}

    def private_state(self, values: dict[str, Any]) -> str:
        return f"## Facts\n<secret>{self.stored}</secret>\n" if self.stored else ""


HOSTS: dict[str, ScriptedHost] = {}
register_agent_family("scripted", lambda name, system, role: HOSTS[name])


async def _episode(task, name: str, host: ScriptedHost, settings: ForkSettings | None = None,
                   episode_id: str = "episode"):
    HOSTS[name] = host
    client = RecordingClient(LLMSettings(cache="off"))
    try:
        return await run_fork_episode(task, name, ModelSession(client, run_seed=3, episode_id=episode_id),
                                      settings or ForkSettings())
    finally:
        await client.aclose()


def _by_frequency(task: HangmanTask, state_words: list[str], n: int) -> list[str]:
    """The reference's deterministic candidates, worked out independently: every vocabulary
    word compatible with the state, most frequent (wordfreq) first."""
    return sorted(state_words, key=lambda w: -word_frequency(w, "en"))[:n]


async def test_the_fork_comes_after_the_opener_and_t_fork_minus_one_guesses():
    task = HangmanTask()
    result = await _episode(task, "scripted_a", ScriptedHost("planet"), ForkSettings(t_fork=4))
    user_turns = [m for m in result.transcript if m.role == "user"]
    assert len(user_turns) == 4 and result.turns_played == 3       # opener = turn 1, then 3 guesses
    assert user_turns[0].content == task.opener()
    one = await _episode(task, "scripted_b", ScriptedHost("planet"), ForkSettings(t_fork=1))
    assert [m.role for m in one.transcript] == ["user", "assistant"] and one.turns_played == 0


async def test_candidates_are_stored_then_revealed_then_the_most_frequent_compatible_words():
    """The reference engine lists the stored secret first (chandar-lab/Hangman, engine_sct_hangman.py:
    "WM secret -> revealed secret -> base")."""
    task = HangmanTask()
    result = await _episode(task, "scripted_c", ScriptedHost("planet", stored="planes"), ForkSettings(n_candidates=5))
    secrets = [c.secret for c in result.candidates]
    sources = [c.source for c in result.candidates]
    assert secrets[:2] == ["planes", "planet"] and sources == ["stored", "revealed", "dataset", "dataset", "dataset"]
    from hangman_states import state_from_constraints

    state = state_from_constraints(result.constraints)
    vocabulary = [w for w in task.vocabulary.words if is_compatible(state, w)]
    expected = [w for w in _by_frequency(task, vocabulary, 10) if w not in ("planet", "planes")][:3]
    assert secrets[2:] == expected
    assert result.candidate_search.from_memory == 1 and result.candidate_search.from_dataset == 3
    assert fork_outcome(result).value == "self_consistent"  # yes to its word, no to every other
    again = await _episode(task, "scripted_d", ScriptedHost("planet", stored="planes"), ForkSettings(n_candidates=5))
    assert [c.secret for c in again.candidates] == secrets  # deterministic, as in the reference


async def test_an_unreadable_reveal_still_gets_its_yes_no_branches_as_in_the_reference():
    """The reference engine builds the candidates and asks every yes/no branch whatever the reveal
    branch returned; the branches are recorded and Table 1's rule scores them (no yes for the reveal)."""
    from psit_lib.studies.psit.protocol.table1 import paper_outcome, score_table1

    task = HangmanTask()
    host = ScriptedHost("planet", stored="planet", reveal="I'd rather not say.")
    result = await _episode(task, "scripted_u", host, ForkSettings(n_candidates=4))
    assert result.reveal.parsed is None and result.failure.startswith("reveal answer unreadable")
    assert [c.source for c in result.candidates] == ["stored", "dataset", "dataset", "dataset"]
    assert all(c.parsed is not None for c in result.candidates)         # every branch was asked and read
    assert [c.parsed for c in result.candidates][0] is True              # the host still says yes to its word
    assert fork_outcome(result).value == "unparseable"                   # the workbook's view: no reveal to check
    score = score_table1(result)  # the reference stores the reply's first word, "i", which the board's text holds
    assert not score.revealed_yes and score.leakage and paper_outcome(score) == "leakage"


async def test_sampled_candidates_remain_available_as_an_option():
    task = HangmanTask()
    result = await _episode(task, "scripted_e", ScriptedHost("planet"),
                            ForkSettings(n_candidates=5, candidate_order="sampled"))
    assert [c.source for c in result.candidates] == ["revealed"] + ["dataset"] * 4


async def test_a_public_contradiction_is_its_own_outcome_and_play_goes_on():
    task = HangmanTask()
    result = await _episode(task, "scripted_f", ScriptedHost("planet", contradict_at=1), ForkSettings(t_fork=4))
    assert fork_outcome(result).value == "public_contradiction"
    assert result.turns_played == 3 and len(result.public_contradictions) == 1
    contradiction = result.public_contradictions[0]
    assert contradiction.turn == 2 and "'q'" in contradiction.error
    assert result.reveal is not None and result.candidates  # the fork still ran, for the audit
    assert contradiction.move in result.constraints["unresolved"]


async def test_a_free_choice_off_dataset_reveal_is_kept_and_marked_unchecked():
    class OffDatasetHost(ScriptedHost):
        def _reply(self, text, public):
            if "reveal the medical condition" in text:
                return "Lyme disease"
            if text.startswith("Is the hidden condition"):
                return "Yes." if "lyme disease" in text.lower() else "No."
            return "Ready." if not public else "No."

    task = DiagnosisTask()
    result = await _episode(task, "scripted_g", OffDatasetHost("x"), ForkSettings(t_fork=3, n_candidates=3))
    assert result.reveal.parsed == "lyme disease" and result.reveal.compatible is None
    assert result.candidates[0].checkable is False and all(c.checkable for c in result.candidates[1:])
    assert fork_outcome(result).value == "self_consistent"


# -- the agents as the reference builds them ---------------------------------------------------

async def _played(agent_name: str, **options):
    task = HangmanTask()
    client = RecordingClient(LLMSettings(cache="off"))
    session = ModelSession(client, run_seed=2, episode_id=f"ref-{agent_name}")
    agent = ChatAgent(parse_agent(agent_name, **options), system_prompt=NEUTRAL_SYSTEM_PROMPT,
                      host_role=host_role(task))
    await agent.send(task.opener(), session)
    for letter in "ea":
        await agent.send(f"My next guess is the letter '{letter}'.", session)
    await client.aclose()
    return agent, client


async def test_private_cot_interleaves_each_turns_reasoning_before_its_reply():
    agent, client = await _played("private_cot")
    last = [r for r in client.requests if r.role == "hangman_host"][-1]
    assistants = [m for m in last.messages if m["role"] == "assistant"]
    assert len(assistants) == 2 and all(m["content"].startswith("<thinking>") for m in assistants)
    assert "<thinking>" not in last.messages[0]["content"]  # the system prompt stays neutral
    state = await agent.state()
    assert all("<thinking>" not in m["content"] for m in state["public"])  # never public
    _, block = await _played("private_cot", reasoning_layout="system_block")
    last = [r for r in block.requests if r.role == "hangman_host"][-1]
    assert "<private_reasoning>" in last.messages[0]["content"]


async def test_the_workflow_updater_sees_the_whole_dialogue():
    _, client = await _played("workflow_overwrite")
    last = [r for r in client.requests if r.role == "memory_updater"][-1]
    text = last.messages[-1]["content"]
    assert "Let's play Hangman" in text  # the opener, three turns back, is still there


def test_agent_design_defaults_follow_the_reference_code():
    config = parse_agent("autonomous_overwrite")
    assert config.updater_attempts == 5
    assert parse_agent("private_cot").reasoning_layout == "interleaved"
    with pytest.raises(ValueError):
        parse_agent("private_cot", reasoning_layout="sideways")


async def test_a_failed_memory_update_is_retried_with_its_error_shown_then_applied_whole():
    from recording import CapturingSession

    task = HangmanTask()
    client = RecordingClient(LLMSettings(cache="off"))
    replies = iter(['{"name": "overwrite_memory", "arguments": {"new_memory": ',          # broken JSON
                    '{"name": "append_in_memory", "arguments": {"section_title": "x"}}',  # tool not offered
                    '{"name": "overwrite_memory", "arguments": {"new_memory": "## 1. Goals and Plans\\n'
                    '<secret>planet</secret>\\n"}}'])
    sink: list = []
    session = CapturingSession(ModelSession(client, run_seed=1, episode_id="retry"), sink,
                               override=lambda role: next(replies) if role == "memory_updater" else None)
    agent = ChatAgent(parse_agent("workflow_overwrite"), system_prompt=NEUTRAL_SYSTEM_PROMPT, host_role=host_role(task))
    state = (await agent.send(task.opener(), session)).values
    await client.aclose()
    updater = [c["messages"][-1]["content"] for c in sink if c["role"] == "memory_updater"]
    assert len(updater) == 3
    assert "<previous_attempt_error>" not in updater[0]
    assert "<previous_attempt_error>" in updater[1] and "append_in_memory" in updater[2]
    assert "<secret>planet</secret>" in state["memory"]
    edits = state["turn_log"][-1]["edits"]
    assert [e["ok"] for e in edits] == [False, False, True]
    assert [e["meta"]["attempt"] for e in edits] == [1, 2, 3]


async def test_after_five_failed_tries_the_memory_is_left_as_it_was():
    from recording import CapturingSession

    task = HangmanTask()
    client = RecordingClient(LLMSettings(cache="off"))
    sink: list = []
    session = CapturingSession(ModelSession(client, run_seed=1, episode_id="retry5"), sink,
                               override=lambda role: "not json" if role == "memory_updater" else None)
    agent = ChatAgent(parse_agent("workflow_overwrite"), system_prompt=NEUTRAL_SYSTEM_PROMPT, host_role=host_role(task))
    state = (await agent.send(task.opener(), session)).values
    await client.aclose()
    assert sum(c["role"] == "memory_updater" for c in sink) == 5
    from psit_lib.studies.psit.memory.working_memory import initial_memory

    assert state["memory"] == initial_memory()
