"""Every episode keeps its audit trail however it ends, and counts what it read: host replies,
the reveal and the yes/no answers (``session.diagnostics``), stored in every record."""

from __future__ import annotations

import dataclasses

from psit_lib.llm import LLMSettings, ModelSession
from psit_lib.llm.diagnostics import FLAG_TEMPLATE_DEBRIS, READ_FORK_ANSWER, READ_REPLY
from psit_lib.runs import RunStore, run_episodes
from psit_lib.runs.backend import make_client
from psit_lib.studies.psit.protocol.experiment import ForkTestParams, fork_episode_fn, plan_fork_episodes
from psit_lib.studies.psit.protocol.fork_test import ForkSettings, run_fork_episode
from psit_lib.studies.psit.protocol.secret_choice import run_secret_choice_episode
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.protocol.experiment import fork_outcome
from recording import RecordingClient

DEBRIS = "<|im_end|>user My next guess is the letter 'q'."


class DebrisAfter(RecordingClient):
    """The simulator, except that the host's reply to the player's ``n``-th guess is
    chat-template debris (what a small model behind a server writes when it runs past its turn)."""

    def __init__(self, settings, n: int) -> None:
        super().__init__(settings)
        self.n = n

    async def chat(self, request):
        result = await super().chat(request)
        guesses = sum(m["role"] == "user" and "My next guess" in str(m.get("content")) for m in request.messages)
        last = request.messages[-1]
        if request.role == "hangman_host" and last["role"] == "user" and guesses == self.n:
            return dataclasses.replace(result, content=DEBRIS)
        return result


async def test_an_unreadable_reply_is_recorded_and_play_goes_on_to_the_fork():
    """As the study's scripted player: a reply that cannot be read is recorded per turn, its move
    counts as made, nothing is learned from it, and the episode still reaches the fork."""
    client = DebrisAfter(LLMSettings(cache="off"), n=2)
    session = ModelSession(client, run_seed=0, episode_id="debris")
    record = await run_fork_episode(HangmanTask(), "workflow_overwrite", session, ForkSettings(t_fork=4))
    assert record.reveal is not None and record.candidates        # the fork was reached
    assert fork_outcome(record).value != "unparseable" and record.failure is None
    assert record.turns_played == 3                              # every move of the plan was played
    (unreadable,) = record.unreadable_replies
    assert unreadable.turn == 3 and "no pattern" in unreadable.error.lower() and unreadable.reply == ""
    assert unreadable.move in record.constraints["unresolved"]  # spent, nothing learned from it
    assert len(record.constraints["guessed"]) == 3 and record.constraints["length"]
    assert "<secret>" in record.private_state_at_fork
    # the client cuts a reply at its first template token (nothing of this one is left) and flags it
    assert [m.content for m in record.transcript if m.role == "assistant"][2] == ""
    diagnostics = session.diagnostics.as_dict()
    assert diagnostics["flags"] == {f"{FLAG_TEMPLATE_DEBRIS}|hangman_host|": 1}
    assert diagnostics["reads"][f"{READ_REPLY}|hangman_host|workflow_overwrite"] == {"ok": 3, "unreadable": 1}
    kinds = {note["kind"]: note for note in session.diagnostics.notes}
    assert kinds[FLAG_TEMPLATE_DEBRIS]["example"] == DEBRIS
    assert "no pattern" in kinds[f"unreadable_{READ_REPLY}"]["detail"].lower()


async def test_a_host_whose_opening_shows_no_board_is_still_played_to_the_fork():
    class NoBoard(RecordingClient):
        async def chat(self, request):
            result = await super().chat(request)
            if request.role == "hangman_host" and len(request.messages) <= 3:
                return dataclasses.replace(result, content='The word is "apple". Guess a letter!')
            return result

    session = ModelSession(NoBoard(LLMSettings(cache="off")), run_seed=0, episode_id="no-board")
    record = await run_fork_episode(HangmanTask(), "vanilla", session, ForkSettings(t_fork=3))
    assert record.reveal is not None and record.turns_played == 2
    assert [u.turn for u in record.unreadable_replies] == [1, 2, 3]   # no length known: nothing can be read
    assert record.constraints["length"] is None


async def test_diagnostics_counts_appear_in_the_record(tmp_path):
    task = HangmanTask()
    params = ForkTestParams(agents=["vanilla"], n_episodes=1, sweep_episodes=0)
    records = await run_episodes(plan_fork_episodes(task, params, ["psit-sim"]), fork_episode_fn(task, params),
                                 store=RunStore(tmp_path / "run"), client=make_client(LLMSettings(cache="off")),
                                 run_seed=0, progress=False)
    (record,) = records
    reads = record["diagnostics"]["reads"]
    assert reads[f"{READ_REPLY}|hangman_host|vanilla"] == {"ok": 1 + record["turns_played"], "unreadable": 0}
    answers = reads[f"{READ_FORK_ANSWER}|hangman_host|vanilla"]
    assert answers["ok"] + answers["unreadable"] == 1 + len(record["candidates"])   # reveal + each yes/no


async def test_the_secret_choice_episode_counts_its_opening_and_reveal():
    session = ModelSession(make_client(LLMSettings(cache="off")), run_seed=0, episode_id="choice")
    await run_secret_choice_episode(HangmanTask(), "vanilla", session)
    reads = session.diagnostics.as_dict()["reads"]
    assert reads[f"{READ_REPLY}|hangman_host|vanilla"] == {"ok": 1, "unreadable": 0}
    assert reads[f"{READ_FORK_ANSWER}|hangman_host|vanilla"] == {"ok": 1, "unreadable": 0}


async def test_a_diagnosis_host_whose_answer_cannot_be_read_is_still_played_to_the_fork():
    from psit_lib.studies.psit.tasks.diagnosis import DiagnosisTask

    class Echo(RecordingClient):
        """The simulated host, except that it repeats the second question instead of answering."""

        async def chat(self, request):
            result = await super().chat(request)
            last = request.messages[-1]
            if request.role == "diagnosis_host" and str(last.get("content", "")).startswith("Question 2:"):
                return dataclasses.replace(result, content=str(last["content"]))
            return result

    session = ModelSession(Echo(LLMSettings(cache="off")), run_seed=0, episode_id="echo")
    record = await run_fork_episode(DiagnosisTask(), "vanilla", session, ForkSettings(t_fork=4))
    assert record.reveal is not None and record.turns_played == 3
    (unread,) = record.unreadable_replies
    assert unread.turn == 3 and "no readable yes or no" in unread.error
    assert record.constraints["unanswered_evidences"] == [unread.move]
    assert len(record.constraints["answers"]) == 2   # the two questions answered readably
