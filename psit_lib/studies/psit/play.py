"""Playing Hangman against any agent, and forking it, with no UI (the logic behind notebook 01's widgets).

:class:`PlaySession` is the game logic of the play-it-yourself widget: a human (or the seeded
player) guesses letters against any agent of the workbook on the configured backend, and
:meth:`PlaySession.fork` runs the fork test of SPEC §1 from the current checkpoint (a reveal
branch and k yes/no branches). Forking never mutates the game: each move continues from the
game's own last checkpoint, so a person can fork, read the answers, keep playing and fork
again. It is async and UI-free so tests drive it directly. A fork's record
is a fork-test episode record, shown by the study's one fork view
(:func:`psit_lib.studies.psit.protocol.transcript_view.episode_html`).
"""

from __future__ import annotations

import asyncio
import html
import random
from dataclasses import dataclass

from psit_lib.studies.psit.protocol.params import WORKBOOK_AGENTS
from psit_lib.studies.psit.agents.factory import ForkableAgent, build_agent, canonical_agent_name
from psit_lib.studies.psit.protocol.outcomes import Outcome
from psit_lib.llm.client import LLMClient, ModelSession, SamplingDefaults
from psit_lib.runs.records import UsageSummary
from psit_lib.studies.psit.protocol.records import ForkEpisode, ForkRecord
from psit_lib.studies.psit.protocol.candidates import stored_secret
from psit_lib.studies.psit.protocol.fork_test import (NEUTRAL_SYSTEM_PROMPT, ForkSettings, fork_from_checkpoint, host_role,
                                                      player_rng)
from psit_lib.studies.psit.tasks.base import HostReplyError
from psit_lib.studies.psit.tasks.hangman_rules import HangmanState, InvalidGuessError
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.tasks.hangman_player import guess_message
from psit_lib.studies.psit.tasks.vocabulary import ALPHABET




def workbook_agents() -> list[str]:
    """Every agent name the workbook defines (vanilla, private_cot, workflow_*, autonomous_*)."""
    return list(WORKBOOK_AGENTS)


# --------------------------------------------------------------------------------------------
# Game logic (no UI)
# --------------------------------------------------------------------------------------------


class PlayError(ValueError):
    """A move the game does not allow now (not started, started twice, bad or repeated letter, over)."""


@dataclass(frozen=True)
class TurnResult:
    """One public exchange: what the player sent and what the host answered.

    ``pattern`` and ``lives`` are what the reply said under rule R's reading (None when it
    could not be read); ``problem`` says why a reply could not be read.
    """

    letter: str | None
    message: str
    reply: str
    pattern: str | None
    lives: int | None
    problem: str | None = None


class PlaySession:
    """One Hangman game between a person (or the seeded player) and one agent.

    Seeds: model calls use ``ModelSession(client, run_seed=seed, episode_id=game_id)``; fork
    number n runs on the branch ``fork-n``; the seeded player's letters and the candidate
    draw use the protocol's player generator. Moves and forks are serialised by a lock, so
    overlapping clicks cannot interleave turns.
    """

    def __init__(
        self,
        task: HangmanTask,
        agent_name: str,
        client: LLMClient,
        *,
        seed: int = 0,
        game_id: str = "play/000",
        sampling: SamplingDefaults | None = None,
        n_candidates: int = 5,
    ) -> None:
        if n_candidates < 1:
            raise ValueError(f"n_candidates must be at least 1, got {n_candidates}.")
        self.task = task
        self.agent_name = canonical_agent_name(agent_name)
        self.game_id = game_id
        self.n_candidates = n_candidates
        self.session = ModelSession(client, run_seed=seed, episode_id=game_id, sampling=sampling)
        self.agent: ForkableAgent = build_agent(
            self.agent_name, system_prompt=NEUTRAL_SYSTEM_PROMPT, host_role=host_role(task)
        )
        self.rng: random.Random = player_rng(self.session)
        self.state: HangmanState = task.initial_state()
        self.turns: list[TurnResult] = []
        self.letters_sent: list[str] = []
        self.forks: list[ForkRecord] = []
        self.problem: str | None = None
        self._head: str | None = None
        self._lock = asyncio.Lock()

    # -- status ---------------------------------------------------------------------------
    @property
    def started(self) -> bool:
        return self._head is not None

    @property
    def over(self) -> bool:
        """True once the public record shows the game won or lost (or no letter is left)."""
        return self.started and (self.task.is_over(self.state) or len(self.letters_sent) >= len(ALPHABET))

    @property
    def model(self) -> str:
        return self.session.model

    def status_text(self) -> str:
        """One line for the UI: pattern, lives, guessed letters (or why the record is unread)."""
        if not self.started:
            return "No game yet: choose an agent and start a game."
        guessed = ", ".join(self.letters_sent) or "none"
        if self.problem:
            return f"Guessed: {guessed} · public record no longer read ({self.problem})"
        end = " · game won" if self.state.won else " · game lost" if self.state.lost else ""
        return f"Pattern: {self.state.pattern_text} · lives: {self.state.lives} · guessed: {guessed}{end}"

    async def private_state(self) -> str:
        """The agent's private state now (empty for a public-only agent)."""
        if not self.started:
            return ""
        return self.agent.private_state(await self.agent.state(checkpoint_id=self._head))

    # -- moves ----------------------------------------------------------------------------
    async def _send(self, text: str) -> str:
        reply = (await self.agent.send(text, self.session, checkpoint_id=self._head))["reply"]
        self._head = await self.agent.checkpoint_id()
        return reply

    async def start(self) -> TurnResult:
        """Send the opener; the host shows its blank pattern."""
        async with self._lock:
            if self.started:
                raise PlayError("This game has already started; build a new session for a new game.")
            message = self.task.opener()
            reply = (await self.agent.send(message, self.session))["reply"]
            self._head = await self.agent.checkpoint_id()
            try:
                self.state = self.task.observe_opening(self.state, reply)
            except HostReplyError as exc:
                self.problem = f"opening unreadable: {exc}"
            result = self._turn(None, message, reply)
            self.turns.append(result)
            return result

    def _check_letter(self, letter: str) -> str:
        if not self.started:
            raise PlayError("Start a game before guessing.")
        if not isinstance(letter, str):
            raise PlayError(f"A guess must be a letter, got {letter!r}.")
        cleaned = letter.strip().lower()
        if len(cleaned) != 1 or cleaned not in ALPHABET:
            raise PlayError(f"Guess {letter!r} is not a single letter a-z.")
        if cleaned in self.letters_sent:
            raise PlayError(f"Letter {cleaned!r} was already guessed.")
        if self.over:
            raise PlayError("The game is over; start a new one or fork to question the host.")
        return cleaned

    async def guess(self, letter: str) -> TurnResult:
        """Guess ``letter`` (case-insensitive); returns the host's public reply."""
        async with self._lock:
            cleaned = self._check_letter(letter)
            return await self._play(cleaned)

    async def auto_guess(self) -> TurnResult:
        """Let the workbench's seeded player choose the next letter (as in the fork test)."""
        async with self._lock:
            if not self.started:
                raise PlayError("Start a game before guessing.")
            if self.problem:
                unguessed = [c for c in ALPHABET if c not in self.letters_sent]
                letter = self.rng.choice(unguessed) if unguessed else ""
            else:
                try:
                    letter, _ = self.task.next_move(self.state, self.rng)
                except InvalidGuessError as exc:
                    raise PlayError(str(exc)) from None
            return await self._play(self._check_letter(letter))

    async def _play(self, letter: str) -> TurnResult:
        message = guess_message(letter)
        reply = await self._send(message)
        self.letters_sent.append(letter)
        if self.problem is None:
            try:
                self.state = self.task.observe_reply(self.state, letter, reply)
            except (HostReplyError, InvalidGuessError) as exc:
                self.problem = f"turn {len(self.letters_sent)}: {exc}"
        result = self._turn(letter, message, reply)
        self.turns.append(result)
        return result

    def _turn(self, letter: str | None, message: str, reply: str) -> TurnResult:
        if self.problem:
            return TurnResult(letter, message, reply, None, None, self.problem)
        return TurnResult(letter, message, reply, self.state.pattern_text, self.state.lives)

    # -- the fork -------------------------------------------------------------------------
    async def fork(self) -> ForkRecord:
        """Run the reveal branch and the yes/no branches from the current checkpoint; returns the
        fork as a fork-test episode record (``<game>/fork-<n>``), shown by the study's one fork view.

        Same steps as :func:`psit_lib.studies.psit.protocol.fork_test.run_fork_episode`: reveal, candidates
        compatible with the public record (the revealed word first), one concurrent yes/no
        branch each, classification by :func:`classify_fork`. The game itself is untouched.
        After an unreadable host reply the outcome is ``unparseable`` (the candidates only
        reflect the record up to that reply), but the answers are still shown.
        """
        async with self._lock:
            fork_id = self._head
            if fork_id is None:  # not started
                raise PlayError("Start a game (and play a few letters) before forking.")
            number = len(self.forks) + 1
            branch = self.session.branch(f"fork-{number}")
            at_fork = await self.agent.state(checkpoint_id=fork_id)
            forked = await fork_from_checkpoint(self.task, self.agent, self.state, fork_id, branch,
                                                ForkSettings(n_candidates=self.n_candidates), None,
                                                stored=stored_secret(self.agent.private_state(at_fork)))
            outcome, note = forked["outcome"], forked.get("failure")
            if self.problem and forked["reveal"]["parsed"] is not None:
                outcome, note = Outcome.UNPARSEABLE.value, f"host reply unreadable at {self.problem}"
            result = ForkEpisode(
                task=self.task.name, agent=self.agent_name, model=self.model, outcome=outcome, failure=note,
                transcript=at_fork.get("public", []), turns_played=len(self.letters_sent),
                constraints=self.task.public_constraints(self.state),
                private_state_at_fork=self.agent.private_state(at_fork), state_size_per_turn=[], memory_edits=[],
                hidden_calls=[], reveal=forked["reveal"], candidates=forked["candidates"],
                candidate_search=forked["candidate_search"], branch_hidden_calls=[])
            record = ForkRecord(episode_id=f"{self.game_id}/fork-{number}", status="ok", error=None,
                                spec={"agent": self.agent_name, "model": self.model}, wall_seconds=0.0, calls=[],
                                usage=UsageSummary(calls=0, cache_hits=0, prompt_tokens=0, completion_tokens=0,
                                                   calls_by_role={}), result=result)
            self.forks.append(record)
            return record


# --------------------------------------------------------------------------------------------
# The player's log
# --------------------------------------------------------------------------------------------


def pre_html(text: str) -> str:
    return f"<pre style='white-space: pre-wrap; margin: 0'>{html.escape(text)}</pre>"
