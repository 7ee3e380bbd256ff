"""The simulated Hangman host: reads guesses and its own earlier patterns from the dialogue."""

from __future__ import annotations

import re
from functools import lru_cache

from psit_lib.studies.psit.tasks.base import HostReplyError
from psit_lib.studies.psit.tasks.hangman import HangmanState, HangmanTask, apply_guess, normalise_word
from psit_lib.studies.psit.tasks.vocabulary import get_vocabulary

from ..context import SimContext, SimReply
from ..registry import register_role
from .candidates import register_proposer
from .secret_host import Intent, host_reply

_GUESS = re.compile(r"letter\s+'([a-zA-Z])'")
_CONFIRM = re.compile(r"is your word\s+'([^']+)'", re.I)
POOL_SIZE = 3000          # the common words the simulated model draws a fresh secret from
REIMAGINE_POOL = 400      # compatible words considered when re-imagining


@lru_cache(maxsize=1)
def _opening_pool() -> tuple[tuple[str, ...], tuple[float, ...]]:
    vocab = get_vocabulary()
    words = [w for w in vocab.words if 5 <= len(w) <= 9][:POOL_SIZE]
    return tuple(words), tuple(vocab.frequency(w) for w in words)


class HangmanGame:
    name = "hangman"

    def __init__(self) -> None:
        self.task = HangmanTask()

    def intent(self, user_text: str, first_turn: bool) -> Intent:
        text = user_text.lower()
        if first_turn or "show me the blank pattern" in text:
            return Intent("open")
        if (m := _CONFIRM.search(user_text)):
            return Intent("confirm", m.group(1))
        if "reveal" in text:
            return Intent("reveal")
        if _GUESS.search(user_text):
            return Intent("move")
        return Intent("other")

    def public_state(self, ctx: SimContext) -> HangmanState:
        """Replay the public dialogue: my blank pattern, then each guess and my reply to it."""
        state = self.task.initial_state()
        pending: str | None = None
        dialogue = ctx.dialogue()[:-1]  # everything before the current user message
        for role, text in dialogue:
            if role == "user":
                m = _GUESS.search(text)
                pending = m.group(1).lower() if m else None
                continue
            try:
                if state.length is None:
                    state = self.task.observe_opening(state, text)
                elif pending and pending not in state.guessed:
                    state = self.task.observe_reply(state, pending, text)
            except (HostReplyError, ValueError):
                pass  # my earlier reply was unreadable: it constrains nothing
            pending = None
        return state

    def choose_secret(self, ctx: SimContext) -> str:
        words, freqs = _opening_pool()
        return ctx.prior_choice(words, freqs)

    def reimagine(self, ctx: SimContext, public: HangmanState) -> str:
        vocab = get_vocabulary()
        if public is None or public.length is None:
            return self.choose_secret(ctx)
        words = vocab.matching(public.length, public.known, set(public.absent))[:REIMAGINE_POOL]
        if not words:
            words = vocab.matching(public.length, {}, set())[:REIMAGINE_POOL] or ["secret"]
        return ctx.prior_choice(words, [vocab.frequency(w) for w in words])

    def opening_reply(self, ctx: SimContext, secret: str) -> str:
        blank = " ".join("_" for _ in secret)
        return (f"I've chosen a word with {len(secret)} letters. Let's begin!\n"
                f"Pattern: {blank}\nLives left: {self.task.lives}\nGuessed letters: none")

    def move_reply(self, ctx: SimContext, secret: str, public: HangmanState, user_text: str) -> str:
        letter = _GUESS.search(user_text).group(1).lower()
        state = HangmanState.started(len(secret), self.task.lives)
        try:
            for earlier in public.guessed if public else ():
                state = apply_guess(secret, state, earlier)
            if letter in state.guessed:
                return f"You already tried '{letter}'.\nPattern: {state.pattern_text}\nLives left: {state.lives}"
            state = apply_guess(secret, state, letter)
        except ValueError:
            return f"The game is already over.\nPattern: {state.pattern_text}\nLives left: {state.lives}"
        verdict = f"Yes, '{letter}' is in the word!" if letter in secret else f"Sorry, no '{letter}'."
        tail = ""
        if state.won:
            tail = "\nYou solved it, well done!"
        elif state.lost:
            tail = "\nNo lives left: the game is over."
        guessed = ", ".join(state.guessed)
        return (f"{verdict}\nPattern: {state.pattern_text}\nLives left: {state.lives}\n"
                f"Guessed letters: {guessed}{tail}")

    def same_secret(self, a: str, b: str) -> bool:
        return normalise_word(a) == normalise_word(b)

    def malformed_reply(self, ctx: SimContext) -> str:
        return "Ooh, good one! Let me think about how that fits..."


GAME = HangmanGame()


@register_role("hangman_host")
def hangman_host(ctx: SimContext) -> SimReply:
    return host_reply(GAME, ctx)


@register_proposer("hangman")
def propose_words(ctx: SimContext, constraints: dict, count: int) -> list[str]:
    """Words that fit; with the profile's error rate one proposal ignores the constraints."""
    fields = {k: v for k, v in constraints.items() if k != "task"}
    try:
        state = HangmanState.from_public(**fields)
    except (TypeError, ValueError):
        return []
    vocab = get_vocabulary()
    pool = vocab.matching(state.length, state.known, set(state.absent))[:REIMAGINE_POOL]
    picks: list[str] = []
    for _ in range(min(count, len(pool))):
        remaining = [w for w in pool if w not in picks]
        picks.append(ctx.prior_choice(remaining, [vocab.frequency(w) for w in remaining]))
    if picks and ctx.chance(ctx.profile.edit_error_rate):
        picks[-1] = _opening_pool()[0][0]
    return picks
