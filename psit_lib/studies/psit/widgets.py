"""The play-it-yourself widget (ipywidgets): play Hangman against any agent and fork it.

:func:`hangman_player` is a front end over the UI-free logic of
:mod:`psit_lib.studies.psit.play`; a fork is shown in the study's one fork view
(:func:`psit_lib.studies.psit.protocol.transcript_view.episode_html`), the view the episode
explorer (:mod:`psit_lib.report.explorer`) opens for every stored episode. Widgets must survive
headless execution (papermill, nbval): building one never calls a model and never blocks; model
calls happen only in button callbacks, scheduled as tasks on the running event loop (ipykernel
runs one), and any error they raise is shown in the widget instead of vanishing in a background
task. Without ipywidgets the builder returns a short text explanation.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from psit_lib.llm.client import LLMClient, SamplingDefaults
from psit_lib.runs.runner import describe_error
from psit_lib.studies.psit.agents.factory import canonical_agent_name
from psit_lib.studies.psit.play import PlayError, PlaySession, pre_html
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.protocol.transcript_view import episode_html

NO_WIDGETS = "ipywidgets is not installed, so the interactive {what} is not available here."


def _ipywidgets():
    try:
        import ipywidgets
    except ImportError:
        return None
    return ipywidgets


PLAYER_STATIC_HTML = ("<p><i>Interactive widget: open this notebook in JupyterLab to play Hangman against "
                      "any agent and fork it. A static report cannot run it.</i></p>")

ClientSource = Any
"""An :class:`~psit_lib.runs.experiment.Experiment`, an :class:`LLMClient`, or a zero-argument
callable returning an LLMClient (called only when a game starts)."""


@dataclass(frozen=True)
class _Backend:
    make_client: Callable[[], LLMClient]
    seed: int
    sampling: SamplingDefaults | None
    label: str | None


def _backend(source: ClientSource) -> _Backend:
    if isinstance(source, LLMClient):
        return _Backend(lambda: source, 0, None, None)
    client = getattr(source, "client", None)
    if isinstance(client, LLMClient):  # an Experiment: its client, seed, sampling and label
        return _Backend(lambda: client, int(getattr(source, "seed", 0)), getattr(source, "sampling", None),
                        getattr(source, "label", None))
    if callable(source):
        return _Backend(source, 0, None, None)
    raise TypeError(f"Expected an Experiment, an LLMClient or a client factory, got {type(source).__name__}.")


class HangmanPlayer:
    """The play-it-yourself widget (see :func:`hangman_player`); display it or its ``widget``."""

    def __init__(self, task: HangmanTask, agent_names: Sequence[str], source: ClientSource, *,
                 n_candidates: int = 5, widgets: Any) -> None:
        names = [canonical_agent_name(name) for name in agent_names]
        if not names:
            raise ValueError("hangman_player needs at least one agent name.")
        self.task = task
        self.backend = _backend(source)
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
        self.auto_button.on_click(lambda _: self._schedule(self._auto(), "guessing"))
        self.fork_button.on_click(lambda _: self._schedule(self._fork(), "forking"))
        footer = w.HTML(f"<small>{html.escape(self.backend.label)}</small>") if self.backend.label else w.HTML()
        self.widget = w.VBox([
            w.HBox([self.agent, self.new_game]),
            w.HBox([self.letter, self.guess_button, self.auto_button, self.fork_button]),
            self.status, self.error, self.log, self.fork_view, footer,
        ])  # fmt: skip
        self._set_busy(False)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """The widget, with an HTML part for renderers without widget state (nbconvert's export)."""
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        data = {**(bundle[0] if isinstance(bundle, tuple) else bundle), "text/html": PLAYER_STATIC_HTML}
        return (data, bundle[1]) if isinstance(bundle, tuple) else data

    # -- scheduling -----------------------------------------------------------------------
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

    async def _guarded(self, coro: Awaitable[None], action: str) -> None:
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
        started = self.session is not None and self.session.started
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

    # -- actions --------------------------------------------------------------------------
    async def _start(self) -> None:
        self.games += 1
        self.session = PlaySession(
            self.task, self.agent.value, self.backend.make_client(), seed=self.backend.seed,
            game_id=f"play/{self.agent.value}/{self.games:03d}", sampling=self.backend.sampling,
            n_candidates=self.n_candidates,
        )
        self.log.value = self.fork_view.value = ""
        await self.session.start()
        await self._show_log()

    async def _guess(self, letter: str) -> None:
        if self.session is None:
            raise PlayError("Start a game before guessing.")
        await self.session.guess(letter)
        self.letter.value = ""
        await self._show_log()

    async def _auto(self) -> None:
        if self.session is None:
            raise PlayError("Start a game before guessing.")
        await self.session.auto_guess()
        await self._show_log()

    async def _fork(self) -> None:
        if self.session is None:
            raise PlayError("Start a game before forking.")
        record = await self.session.fork()
        self.fork_view.value = f"<h4>Fork {len(self.session.forks)}</h4>" + episode_html(record)

    async def _show_log(self) -> None:
        assert self.session is not None
        rows = []
        for turn in self.session.turns:
            rows.append(f"<tr><td><b>you</b></td><td>{pre_html(turn.message)}</td></tr>"
                        f"<tr><td><b>host</b></td><td>{pre_html(turn.reply)}</td></tr>")
        self.log.value = "<table>" + "".join(rows[-8:]) + "</table>"


def hangman_player(task: HangmanTask, agent_names: Sequence[str], experiment_or_client_factory: ClientSource,
                   *, n_candidates: int = 5):
    """A widget to play Hangman against any agent of the workbook on the configured backend.

    Choose an agent, start a game, type letters (or let the seeded player guess) and read the
    host's public replies; *Reveal + fork* runs the reveal and the yes/no branches from the
    current checkpoint and shows every answer, and the game can go on afterwards.
    ``experiment_or_client_factory`` is the notebook's Experiment (its client, seed, sampling
    and label are used), an LLMClient, or a callable returning one (called when a game
    starts). Building the widget calls no model. Without ipywidgets, returns a short text.
    """
    w = _ipywidgets()
    if w is None:
        return NO_WIDGETS.format(what="Hangman player") + (
            " Use psit_lib.studies.psit.play.PlaySession from an async cell to play: "
            "await s.start(); await s.guess('e'); await s.fork()."
        )
    return HangmanPlayer(task, agent_names, experiment_or_client_factory, n_candidates=n_candidates, widgets=w)


__all__ = ["HangmanPlayer", "hangman_player"]
