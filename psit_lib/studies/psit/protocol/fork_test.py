"""The self-consistency fork test (SPEC §1), for any task and any agent.

Play ``t_fork`` turns with a seeded player (the opener counts as turn 1, as in the study's
reference code), then branch from the agent's checkpoint (LangGraph time travel: each branch is a
run from the pre-fork checkpoint's id): one branch asks for the secret, then one branch per
candidate asks "is it X?", all from the identical state, concurrently. The episode record is the
audit trail, the checkpoint tree included (each turn's and each branch's checkpoint and parent).
As in the study, a reply that contradicts earlier ones or cannot be read never ends the game: it
is recorded and the move counts as made (a public-only
host fails in public first: ``public_contradiction``). Every reply and fork answer read is
counted in the session's diagnostics, so a rate can be told apart from replies the harness
failed to read.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

from psit_lib.studies.psit.agents.factory import ForkableAgent, build_agent, checked_fork_state
from psit_lib.studies.psit.agents.graph_agent import CheckpointRef
from psit_lib.studies.psit.agents.names import canonical_agent_name
from psit_lib.studies.psit.protocol.outcomes import Outcome, answers_per_secret, classify_fork
from psit_lib.llm.client import ModelSession
from psit_lib.llm.diagnostics import READ_FORK_ANSWER, READ_REPLY
from psit_lib.llm.seeds import derive_seed
from psit_lib.llm.reply_readers import read_yes_no, strip_template_debris
from psit_lib.studies.psit.prompt_book import PROMPTS
from psit_lib.studies.psit.protocol.records import ForkEpisode, PublicContradiction, UnreadableReply
from psit_lib.studies.psit.tasks.base import HostContradictionError, HostReplyError, PsitTask
from psit_lib.studies.psit.protocol.candidates import pick_candidates, stored_secret

NEUTRAL_SYSTEM_PROMPT = PROMPTS.render("host.neutral_system")
"""The host's system prompt by default (as in the study): the game's rules come in the opener."""


@dataclass(frozen=True)
class ForkSettings:
    """How an episode is played. Defaults follow the study's reference code; the values are
    checked once, by the notebooks' parameters (:class:`~psit_lib.studies.psit.protocol.params.ForkTestParams`).

    ``t_fork``: turns before the fork, the opener counted as turn 1. ``candidate_order``:
    ``"reference"`` (the reference code's: the stored secret, the reveal, then the most frequent
    compatible words, or conditions in the dataset's order, by name when more fit) or
    ``"sampled"`` (seeded, frequency-weighted). ``system_prompt``: ``"neutral"`` (rules in the
    opener) or ``"task"`` (a task-specific host prompt). ``agent_options``: design choices of
    the PSIT agents (:class:`~psit_lib.studies.psit.agents.config.AgentConfig`), as pairs.
    """

    t_fork: int = 4
    n_candidates: int = 5
    candidate_order: str = "reference"
    system_prompt: str = "neutral"
    agent_options: tuple[tuple[str, Any], ...] = ()


def host_role(task: PsitTask) -> str:
    return f"{task.name}_host"


def player_rng(session: ModelSession) -> random.Random:
    return random.Random(derive_seed(session.run_seed, session.episode_id, "player", 0))


def host_text(public: list[dict[str, str]]) -> str:
    """What the host said in public. Leakage is checked here: the player's own messages
    (rules, guesses) are not the host revealing anything."""
    return "\n".join(m["content"] for m in public if m["role"] == "assistant")


def observe_host_reply(task: PsitTask, session: ModelSession, reply: str, observe: Callable[[], Any],
                       agent_name: str | None = None) -> Any:
    """``observe()``, the task reading the host's ``reply``, counted in the session's
    diagnostics: unreadable when it raises :class:`HostReplyError`; a contradiction of earlier
    replies (:class:`HostContradictionError`) was read, so it counts as read."""
    def count(error: HostReplyError | None) -> None:
        session.diagnostics.read(READ_REPLY, host_role(task), error is None, reply, str(error or ""),
                                 agent=agent_name)

    try:
        result = observe()
    except HostReplyError as exc:
        count(None if isinstance(exc, HostContradictionError) else exc)  # a contradiction was read
        raise
    count(None)
    return result


def count_fork_answer(task: PsitTask, session: ModelSession, answer: str, parsed: Any, what: str,
                      agent_name: str | None = None, reason: str = "") -> None:
    """Count one answer read at the fork (the reveal, a yes/no) in the session's diagnostics;
    an unreadable one keeps the reader's ``reason``."""
    session.diagnostics.read(READ_FORK_ANSWER, host_role(task), parsed is not None, answer,
                             "" if parsed is not None else f"no readable {what}" + (f" ({reason})" if reason else ""),
                             agent=agent_name)


@dataclass
class Play:
    """What the player has read of one game so far: the public state, the moves made, and the
    replies it could not use (each move still counts as made)."""

    state: Any
    moves: int = 0
    contradictions: list[PublicContradiction] = field(default_factory=list)
    unreadable: list[UnreadableReply] = field(default_factory=list)
    checkpoints: list[CheckpointRef] = field(default_factory=list)  # the agent's checkpoint after each turn

    @property
    def head(self) -> str | None:
        """The latest turn's checkpoint, where the next move continues and the fork branches."""
        return self.checkpoints[-1].id if self.checkpoints else None


async def open_game(task: PsitTask, agent: ForkableAgent, session: ModelSession,
                    agent_name: str | None = None) -> Play:
    """Turn 1: the opener and the host's first board."""
    play = Play(task.initial_state())
    turn = await agent.send(task.opener(), session)
    play.checkpoints.append(turn.checkpoint)
    reply = turn.reply
    try:
        play.state = observe_host_reply(task, session, reply, lambda: task.observe_opening(play.state, reply),
                                        agent_name)
    except HostReplyError as exc:
        play.unreadable.append(UnreadableReply(turn=1, move="opening", reply=reply, error=str(exc)))
    return play


async def play_move(task: PsitTask, agent: ForkableAgent, session: ModelSession, play: Play, move: Any,
                    message: str, agent_name: str | None = None) -> str:
    """One move from the game's latest checkpoint and the host's reply, whatever it says (as the
    study's scripted player): a contradicting or unreadable reply is recorded and nothing is learned
    from it. Returns the reply."""
    turn = await agent.send(message, session, checkpoint_id=play.head)
    play.checkpoints.append(turn.checkpoint)
    reply = turn.reply
    play.moves += 1
    try:
        play.state = observe_host_reply(task, session, reply, partial(task.observe_reply, play.state, move, reply),
                                        agent_name)
        return reply
    except HostContradictionError as exc:
        play.contradictions.append(PublicContradiction(turn=play.moves + 1, move=str(move), reply=reply,
                                                       error=str(exc)))
    except HostReplyError as exc:
        play.unreadable.append(UnreadableReply(turn=play.moves + 1, move=str(move), reply=reply, error=str(exc)))
    play.state = task.skip_move(play.state, move)
    return reply


async def play_until_fork(task: PsitTask, agent: ForkableAgent, session: ModelSession,
                          settings: ForkSettings, rng: random.Random, agent_name: str | None = None) -> Play:
    """The opener (turn 1) plus up to ``t_fork - 1`` moves of the seeded player."""
    play = await open_game(task, agent, session, agent_name)
    while play.moves < settings.t_fork - 1 and not task.is_over(play.state):
        move, message = task.next_move(play.state, rng)
        await play_move(task, agent, session, play, move, message, agent_name)
    return play


def fork_agent(task: PsitTask, name: str, settings: ForkSettings) -> ForkableAgent:
    """The agent ``name`` as an episode of ``task`` runs it: its host prompt and design options."""
    system = NEUTRAL_SYSTEM_PROMPT if settings.system_prompt == "neutral" else task.host_system_prompt()
    return build_agent(name, system_prompt=system, host_role=host_role(task), options=dict(settings.agent_options))


async def run_fork_episode(task: PsitTask, agent_name: str, session: ModelSession,
                           settings: ForkSettings) -> ForkEpisode:
    """One fork-test episode; returns its typed audit record."""
    name = canonical_agent_name(agent_name)
    agent = fork_agent(task, name, settings)
    rng = player_rng(session)
    play = await play_until_fork(task, agent, session, settings, rng, name)
    return await fork_episode(task, agent, name, session, play, str(play.head), settings, rng)


async def fork_episode(task: PsitTask, agent: ForkableAgent, name: str, session: ModelSession, play: Play,
                       fork_id: str, settings: ForkSettings, rng: random.Random) -> ForkEpisode:
    """The fork from checkpoint ``fork_id`` after ``play``, as the episode's typed audit record."""
    at_fork = checked_fork_state(await agent.state(checkpoint_id=fork_id), name)
    fork = await fork_from_checkpoint(task, agent, play.state, fork_id, at_fork, session, settings,
                                      rng if settings.candidate_order == "sampled" else None,
                                      public_contradictions=len(play.contradictions), agent_name=name)
    turn_log = at_fork.get("turn_log", [])  # the agent's account of play up to the fork
    return ForkEpisode(
        task=task.name, agent=name, model=session.model, turns_played=play.moves,
        transcript=at_fork.get("public", []), constraints=task.public_constraints(play.state),
        private_state_at_fork=agent.private_state(at_fork),
        state_size_per_turn=[t["private_state_tokens"] for t in turn_log],
        private_state_per_turn=[str(t.get("private_state") or "") for t in turn_log],
        memory_edits=[t["edits"] for t in turn_log if t.get("edits")],
        hidden_calls=list(at_fork.get("hidden_calls") or []), failure=fork.get("failure"), reveal=fork["reveal"], candidates=fork["candidates"],
        thread_id=agent.thread_id, turn_checkpoints=play.checkpoints,
        candidate_search=fork["candidate_search"],
        branch_hidden_calls=fork["branch_hidden_calls"], public_contradictions=play.contradictions,
        unreadable_replies=play.unreadable)


async def fork_from_checkpoint(task: PsitTask, agent: ForkableAgent, state: Any, fork_id: str,
                               at_fork: dict[str, Any], session: ModelSession, settings: ForkSettings,
                               rng: random.Random | None, *, public_contradictions: int = 0,
                               agent_name: str | None = None) -> dict[str, Any]:
    """SPEC §1 step 2-3 from checkpoint ``fork_id``: the reveal branch, the candidates (the secret
    stored in memory unless it is the reveal, the revealed secret, then compatible ones), one yes/no
    branch per candidate (concurrently, each from the identical state), the outcome. An unreadable
    reveal still gets its yes/no branches (about the other candidates), as in the reference code:
    Table 1's rule scores them.

    ``rng`` None means the reference code's deterministic candidate order. Returns ``reveal``,
    ``candidates``, ``candidate_search`` and ``failure`` (the outcome is derived from these by
    ``fork_outcome``). The checkpoint itself is never changed. The reveal and every yes/no answer
    are counted in the session's diagnostics (``agent_name`` labels them). ``at_fork`` is the
    checkpoint's state, read once by the caller.
    """
    turns = [str(t.get("private_state") or "") for t in at_fork.get("turn_log", [])]
    stored = stored_secret([*turns, agent.private_state(at_fork)])  # the latest tagged secret, as the reference
    hidden: dict[str, list[dict[str, Any]]] = {}  # memory-library calls made in each branch

    async def branch_turn(question: str, name: str) -> tuple[str, CheckpointRef]:
        turn = await agent.send(question, session.branch(name), checkpoint_id=fork_id)
        hidden[name] = [{**call, "branch": name}  # the memory library's own calls made after the fork
                        for call in (turn.values.get("hidden_calls") or [])[len(at_fork.get("hidden_calls") or []):]]
        return turn.reply, turn.checkpoint

    def hidden_in_order() -> list[dict[str, Any]]:  # branches finish in any order; records must not
        order = ["reveal", *(f"confirm-{i}" for i in range(len(hidden)))]  # reveal, then candidate order
        return [call for name in order if name in hidden for call in hidden[name]]

    reveal_q = task.reveal_prompt()
    reveal_a, reveal_at = await branch_turn(reveal_q, "reveal")
    reading = task.read_reveal(reveal_a)
    written = reading.value.strip() if reading.value else None  # the reveal in the host's words
    revealed = task.normalise(written) if written else None
    count_fork_answer(task, session, reveal_a, revealed, "reveal", agent_name, reading.reason)
    compatible = (task.is_compatible(state, revealed) if task.is_checkable(revealed) else None) if revealed else False
    result: dict[str, Any] = {"reveal": {"question": reveal_q, "answer": reveal_a, "parsed": revealed,
                                         "compatible": compatible, "checkpoint": reveal_at}}
    candidates, note = await pick_candidates(task, state, written, settings.n_candidates, rng,
                                             session.branch("candidates"), stored=stored)

    async def ask(i: int, secret: str) -> dict[str, Any]:
        question = task.confirm_prompt(secret)
        answer, at = await branch_turn(question, f"confirm-{i}")
        decision = read_yes_no(strip_template_debris(answer))
        parsed = decision.value
        count_fork_answer(task, session, answer, parsed, "yes or no", agent_name, decision.reason)
        return {"question": question, "answer": answer, "parsed": parsed, "checkpoint": at}

    branches = await asyncio.gather(*(ask(i, c.text) for i, c in enumerate(candidates)))
    rows = [{"secret": c.secret, "text": c.text, "source": c.source, **b, "checkable": task.is_checkable(c.secret)}
            for c, b in zip(candidates, branches)]
    if revealed is None:
        failure: str | None = f"reveal answer unreadable ({reading.reason})"
    else:
        answers = answers_per_secret(revealed, ((row["secret"], row["source"], row["parsed"]) for row in rows))
        outcome = classify_fork(revealed, host_text(at_fork.get("public", [])), answers, public_contradictions)
        unread = [row["text"] for row in rows if row["parsed"] is None]
        failure = (f"yes/no answer unreadable for {', '.join(map(repr, unread))}"
                   if outcome == Outcome.UNPARSEABLE and unread else None)
    return {**result, "branch_hidden_calls": hidden_in_order(), "candidates": rows,
            "candidate_search": note, "failure": failure}

