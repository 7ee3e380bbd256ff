"""Notebook 01's play-it-yourself widget: play Hangman against any agent and fork it whenever you like.

:class:`PlaySession` is the UI-free game (tests drive it directly): each move is the fork test's
own step (:func:`~psit_lib.studies.psit.protocol.fork_test.play_move`) from the game's last
checkpoint, and a fork is the fork test's own record, so forking never changes the game.
:func:`hangman_player` is its ipywidgets front end; building it never calls a model (papermill and
nbval run headless), model calls run as tasks on ipykernel's event loop with errors shown in the widget.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from psit_lib.llm.client import LLMClient, ModelSession, SamplingDefaults
from psit_lib.runs.records import UsageSummary
from psit_lib.runs.runner import describe_error
from psit_lib.studies.psit.agents.factory import ForkableAgent, build_agent
from psit_lib.studies.psit.agents.names import canonical_agent_name
from psit_lib.studies.psit.protocol.fork_test import (NEUTRAL_SYSTEM_PROMPT, ForkSettings, Play, fork_episode, host_role,
                                                      open_game, play_move, player_rng)
from psit_lib.studies.psit.protocol.params import WORKBOOK_AGENTS
from psit_lib.studies.psit.protocol.records import ForkRecord
from psit_lib.studies.psit.protocol.transcript_view import episode_html
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.tasks.hangman_player import guess_message
from psit_lib.studies.psit.tasks.hangman_rules import InvalidGuessError
from psit_lib.studies.psit.tasks.vocabulary import ALPHABET


class PlayError(ValueError):
    """A move the game does not allow now (not started, started twice, bad or repeated letter, over)."""


class PlaySession:
    """One Hangman game between a person (or the seeded player) and one agent.

    Seeds as in the fork test (``episode_id=game_id``, the protocol's player generator); fork n
    runs on the branch ``fork-n``. A lock serialises moves, so overlapping clicks cannot interleave.
    """

    def __init__(self, task: HangmanTask, agent_name: str, client: LLMClient, *, seed: int = 0,
                 game_id: str = "play/000", sampling: SamplingDefaults | None = None, n_candidates: int = 5) -> None:
        if n_candidates < 1:
            raise ValueError(f"n_candidates must be at least 1, got {n_candidates}.")
        self.task = task
        self.agent_name = canonical_agent_name(agent_name)
        self.game_id = game_id
        self.settings = ForkSettings(n_candidates=n_candidates)
        self.session = ModelSession(client, run_seed=seed, episode_id=game_id, sampling=sampling)
        self.agent: ForkableAgent = build_agent(self.agent_name, system_prompt=NEUTRAL_SYSTEM_PROMPT,
                                                host_role=host_role(task))
        self.rng = player_rng(self.session)
        self.play: Play | None = None
        self.forks: list[ForkRecord] = []
        self._lock = asyncio.Lock()

    @property
    def over(self) -> bool:
        return self.play is not None and self.task.is_over(self.play.state)

    def status_text(self) -> str:
        """One line for the UI: pattern, lives, guessed letters."""
        if self.play is None:
            return "No game yet: choose an agent and start a game."
        state = self.play.state
        end = " · game won" if state.won else " · game lost" if state.lost else ""
        unread = f" · {len(self.play.unreadable)} unreadable replies" if self.play.unreadable else ""
        return (f"Pattern: {state.pattern_text} · lives: {state.lives} · guessed: "
                f"{', '.join(state.guessed) or 'none'}{unread}{end}")

    async def transcript(self) -> list[dict[str, str]]:
        """The game's public conversation so far (forks excluded)."""
        head = self.play.head if self.play else None
        return list((await self.agent.state(head)).get("public", [])) if head else []

    async def private_state(self) -> str:
        """The agent's private state now (empty for a public-only agent)."""
        head = self.play.head if self.play else None
        return self.agent.private_state(await self.agent.state(head)) if head else ""

    async def start(self) -> None:
        """Send the opener; the host shows its blank pattern."""
        async with self._lock:
            if self.play is not None:
                raise PlayError("This game has already started; build a new session for a new game.")
            self.play = await open_game(self.task, self.agent, self.session, self.agent_name)

    async def guess(self, letter: str | None = None) -> str:
        """Guess ``letter`` (case-insensitive), or let the seeded player choose as in the fork test;
        returns the host's public reply."""
        async with self._lock:
            if self.play is None:
                raise PlayError("Start a game before guessing.")
            if self.over:
                raise PlayError("The game is over; start a new one or fork to question the host.")
            if letter is None:
                try:
                    letter, _ = self.task.next_move(self.play.state, self.rng)
                except InvalidGuessError as exc:
                    raise PlayError(str(exc)) from None
            cleaned = letter.strip().lower()
            if len(cleaned) != 1 or cleaned not in ALPHABET:
                raise PlayError(f"Guess {letter!r} is not a single letter a-z.")
            if cleaned in self.play.state.guessed:
                raise PlayError(f"Letter {cleaned!r} was already guessed.")
            return await play_move(self.task, self.agent, self.session, self.play, cleaned, guess_message(cleaned),
                                   self.agent_name)

    async def fork(self) -> ForkRecord:
        """The fork test's reveal and yes/no branches from the game's last checkpoint, as a fork-test
        record (``<game>/fork-<n>``); the game itself is untouched."""
        async with self._lock:
            if self.play is None or self.play.head is None:
                raise PlayError("Start a game (and play a few letters) before forking.")
            branch = self.session.branch(f"fork-{len(self.forks) + 1}")
            result = await fork_episode(self.task, self.agent, self.agent_name, branch, self.play, self.play.head,
                                        self.settings, self.rng)
            record = ForkRecord(episode_id=f"{self.game_id}/fork-{len(self.forks) + 1}", status="ok", error=None,
                                spec={"agent": self.agent_name, "model": self.session.model}, wall_seconds=0.0,
                                calls=[], usage=UsageSummary(calls=0, cache_hits=0, prompt_tokens=0,
                                                             completion_tokens=0, calls_by_role={}), result=result)
            self.forks.append(record)
            return record


PLAYER_STATIC_HTML = ("<p><i>Interactive widget: open this notebook in JupyterLab to play Hangman against "
                      "any agent and fork it. A static report cannot run it.</i></p>")


class HangmanPlayer:
    """The play-it-yourself widget (see :func:`hangman_player`); display it or its ``widget``."""

    def __init__(self, task: HangmanTask, agent_names: Sequence[str], source: Any, *, n_candidates: int,
                 widgets: Any) -> None:
        names = [canonical_agent_name(name) for name in agent_names]
        if not names:
            raise ValueError("hangman_player needs at least one agent name.")
        self.task = task
        self.make_client: Callable[[], LLMClient] = source if callable(source) else lambda: source.client
        self.seed, self.sampling = int(getattr(source, "seed", 0)), getattr(source, "sampling", None)
        self.n_candidates = n_candidates
        self.session: PlaySession | None = None
        self.games = 0
        self.tasks: set[asyncio.Task] = set()
        w = widgets
        self.agent = w.Dropdown(options=names, value=names[0], description="agent")
        self.new_game = w.Button(description="Start new game", button_style="primary")
        self.letter = w.Text(placeholder="a letter", description="guess", layout=w.Layout(width="180px"))
        self.guess_button = w.Button(description="Guess")
        self.auto_button = w.Button(description="Seeded player guesses")
        self.fork_button = w.Button(description="Reveal + fork", button_style="warning")
        self.status = w.HTML(value=self._status_html())
        self.error = w.HTML()
        self.log = w.HTML()
        self.fork_view = w.HTML()
        self.new_game.on_click(lambda _: self._schedule(self._start(), "starting a game"))
        self.guess_button.on_click(lambda _: self._schedule(self._guess(self.letter.value), "guessing"))
        self.auto_button.on_click(lambda _: self._schedule(self._guess(None), "guessing"))
        self.fork_button.on_click(lambda _: self._schedule(self._fork(), "forking"))
        label = getattr(source, "label", None)
        self.widget = w.VBox([
            w.HBox([self.agent, self.new_game]),
            w.HBox([self.letter, self.guess_button, self.auto_button, self.fork_button]),
            self.status, self.error, self.log, self.fork_view, w.HTML(f"<small>{html.escape(label or '')}</small>"),
        ])  # fmt: skip
        self._set_busy(False)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """The widget, with an HTML part for renderers without widget state (nbconvert's export)."""
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        data = {**(bundle[0] if isinstance(bundle, tuple) else bundle), "text/html": PLAYER_STATIC_HTML}
        return (data, bundle[1]) if isinstance(bundle, tuple) else data

    def _schedule(self, coro: Coroutine[Any, Any, None], action: str) -> asyncio.Task | None:
        """Run ``coro`` as a task on the running loop (ipykernel's), errors shown in the widget."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            try:
                loop = asyncio.get_event_loop()
            except RuntimeError:
                coro.close()
                self.error.value = self._error_html(f"{action}: no event loop to run model calls on")
                return None
        task = loop.create_task(self._guarded(coro, action))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _guarded(self, coro: Coroutine[Any, Any, None], action: str) -> None:
        self._set_busy(True)
        self.error.value = ""
        try:
            await coro
        except PlayError as exc:
            self.error.value = self._error_html(str(exc))
        except Exception as exc:  # shown in the widget, never lost in a background task
            self.error.value = self._error_html(f"{action} failed: {describe_error(exc)}")
        finally:
            self._set_busy(False)
            self.status.value = self._status_html()

    def _set_busy(self, busy: bool) -> None:
        started = self.session is not None and self.session.play is not None
        over = self.session is not None and self.session.over
        self.new_game.disabled = busy
        for button in (self.guess_button, self.auto_button):
            button.disabled = busy or not started or over  # a finished game takes no more guesses
        self.fork_button.disabled = busy or not started  # forking a finished game still shows its answers
        if busy:
            self.status.value = self._status_html() + " <i>(waiting for the model…)</i>"

    @staticmethod
    def _error_html(text: str) -> str:
        return f"<span style='color:#b00'>{html.escape(text)}</span>"

    def _status_html(self) -> str:
        text = self.session.status_text() if self.session else "No game yet: choose an agent and start a game."
        return f"<code>{html.escape(text)}</code>"

    async def _start(self) -> None:
        self.games += 1
        self.session = PlaySession(self.task, self.agent.value, self.make_client(), seed=self.seed,
                                   game_id=f"play/{self.agent.value}/{self.games:03d}", sampling=self.sampling,
                                   n_candidates=self.n_candidates)
        self.log.value = self.fork_view.value = ""
        await self.session.start()
        await self._show_log()

    async def _guess(self, letter: str | None) -> None:
        if self.session is None:
            raise PlayError("Start a game before guessing.")
        await self.session.guess(letter)
        self.letter.value = ""
        await self._show_log()

    async def _fork(self) -> None:
        if self.session is None:
            raise PlayError("Start a game before forking.")
        record = await self.session.fork()
        self.fork_view.value = f"<h4>Fork {len(self.session.forks)}</h4>" + episode_html(record)

    async def _show_log(self) -> None:
        assert self.session is not None
        rows = [f"<tr><td><b>{'you' if m['role'] == 'user' else 'host'}</b></td><td><pre style='white-space: "
                f"pre-wrap; margin: 0'>{html.escape(m['content'])}</pre></td></tr>"
                for m in await self.session.transcript()]
        self.log.value = "<table>" + "".join(rows[-16:]) + "</table>"


def hangman_player(task: HangmanTask, source: Any, agent_names: Sequence[str] = WORKBOOK_AGENTS, *,
                   n_candidates: int = 5) -> HangmanPlayer | str:
    """A widget to play Hangman against any agent of the workbook; *Reveal + fork* runs the reveal
    and yes/no branches from the current checkpoint and the game can go on afterwards.

    ``source`` is the notebook's Experiment (its client, seed, sampling and label) or a callable
    returning an LLMClient (called when a game starts). Without ipywidgets, returns a short text.
    """
    try:
        import ipywidgets
    except ImportError:
        return ("ipywidgets is not installed, so the interactive Hangman player is not available here. Use "
                "psit_lib.studies.psit.play.PlaySession from an async cell: await s.start(); await s.guess('e'); "
                "await s.fork().")
    return HangmanPlayer(task, agent_names, source, n_candidates=n_candidates, widgets=ipywidgets)
