"""The simulated Hangman host: recognises the game from the conversation, as a real model would, and
reads guesses and its own earlier patterns from the dialogue.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..context import SimContext, SimReply
from ..knowledge.hangman import LIVES, Board, board_from_dialogue, play, read_lives
from ..knowledge.words import english_words
from ..registry import register_role
from .candidates import register_proposer
from .secret_host import Intent, host_reply

POOL_SIZE = 3000          # the common words the simulated model draws a fresh secret from
REIMAGINE_POOL = 400      # compatible words considered when re-imagining
OPENING_LENGTHS = (5, 9)  # lengths of a fresh secret: a "good Hangman word" is 5-9 letters

_LETTER = r"['\"“‘]?([a-zA-Z])['\"”’]?"
_GUESS = [
    re.compile(rf"\bletter\s+{_LETTER}(?![a-zA-Z])", re.I),
    re.compile(rf"\bguess(?:ing)?\s*(?:is)?\s*[:=]?\s*{_LETTER}(?![a-zA-Z])", re.I),
    re.compile(rf"\bis there an?\s+{_LETTER}(?![a-zA-Z])", re.I),
    re.compile(rf"\b(?:try|how about|what about)\s+{_LETTER}(?![a-zA-Z])", re.I),
]
_CONFIRM = [
    re.compile(r"\bis (?:it|your word|the word|your secret(?: word)?|the secret(?: word)?)"
               r"(?: (?:you|that you) (?:chose|picked|have|are thinking of))?\s*:?\s*['\"“‘]?([A-Za-z]{2,})['\"”’]?\s*\?", re.I),
    re.compile(r"\bdid you (?:choose|pick)(?: the word)?\s+['\"“‘]?([A-Za-z]{2,})['\"”’]?\s*\?", re.I),
    # a question about the word that names a quoted candidate: "Is the word you picked 'candy'?"
    re.compile(r"\b(?:word|secret)\b[^?\n]{0,40}?['\"“‘]([A-Za-z]{2,})['\"”’]\s*\?", re.I),
]
_REVEAL = re.compile(r"\breveal\b|\bwhat (?:word|was the word|is the word) did you (?:choose|pick)|"
                     r"\bwhich word did you (?:choose|pick)|\btell me (?:the|your) word", re.I)
_OPEN = re.compile(r"\bshow me the (?:blank )?pattern|\blet'?s (?:play|begin|start)", re.I)


def read_guess(text: str) -> str | None:
    """The letter a player's message guesses, if it guesses one."""
    for pattern in _GUESS:
        if (m := pattern.search(text)):
            return m.group(1).lower()
    return None


def read_word(text: str) -> str | None:
    """A Hangman secret from a statement of it: its first word, in lowercase."""
    m = re.search(r"[A-Za-z]+", text or "")
    return m.group(0).lower() if m else None


@lru_cache(maxsize=1)
def _opening_pool() -> tuple[tuple[str, ...], tuple[float, ...]]:
    words = english_words()
    low, high = OPENING_LENGTHS
    pool = [w for w in words.ranked if low <= len(w) <= high][:POOL_SIZE]
    return tuple(pool), tuple(words.frequency(w) for w in pool)


def is_hangman_game(ctx: SimContext) -> bool:
    """The conversation is a game of Hangman that I host."""
    setting = (ctx.system_text() + "\n" + ctx.first_user_text()).lower()
    return "hangman" in setting


class HangmanGame:
    name = "hangman"

    def intent(self, user_text: str, first_turn: bool) -> Intent:
        if first_turn or _OPEN.search(user_text) and read_guess(user_text) is None:
            return Intent("open")
        for pattern in _CONFIRM:
            if (m := pattern.search(user_text)):
                return Intent("confirm", m.group(1))
        if _REVEAL.search(user_text):
            return Intent("reveal")
        if read_guess(user_text):
            return Intent("move")
        return Intent("other")

    def public_state(self, ctx: SimContext) -> Board | None:
        """Replay the public dialogue (everything before the current user message)."""
        return board_from_dialogue(ctx.dialogue()[:-1], read_guess)

    def as_secret(self, text: str) -> str | None:
        return read_word(text)

    def choose_secret(self, ctx: SimContext) -> str:
        words, freqs = _opening_pool()
        return ctx.prior_choice(words, freqs)

    def reimagine(self, ctx: SimContext, public: Board | None) -> str:
        if public is None:
            return self.choose_secret(ctx)
        vocab = english_words()
        words = vocab.fitting(public.length, public.shown, frozenset(public.missed))[:REIMAGINE_POOL]
        if not words:
            words = vocab.fitting(public.length, {}, frozenset())[:REIMAGINE_POOL] or ["secret"]
        return ctx.prior_choice(words, [vocab.frequency(w) for w in words])

    def opening_reply(self, ctx: SimContext, secret: str) -> str:
        blank = " ".join("_" for _ in secret)
        lives = read_lives(ctx.first_user_text()) or LIVES
        return (f"I've chosen a word with {len(secret)} letters. Let's begin!\n"
                f"Pattern: {blank}\nLives left: {lives}\nGuessed letters: none")

    def move_reply(self, ctx: SimContext, secret: str, public: Board | None, user_text: str) -> str:
        letter = read_guess(user_text)
        if letter is None:  # the intent is a move only when the message guesses a letter
            raise ValueError(f"not a Hangman guess: {user_text!r}")
        earlier = public.guesses if public else ()
        lives = public.lives if public else LIVES
        before = play(secret, earlier, lives)
        if letter in earlier:
            return f"You already tried '{letter}'.\nPattern: {before.pattern}\nLives left: {before.lives_left}"
        if before.over:
            return f"The game is already over.\nPattern: {before.pattern}\nLives left: {before.lives_left}"
        after = play(secret, earlier + (letter,), lives)
        verdict = f"Yes, '{letter}' is in the word!" if letter in secret else f"Sorry, no '{letter}'."
        tail = ""
        if after.solved:
            tail = "\nYou solved it, well done!"
        elif after.lives_left <= 0:
            tail = "\nNo lives left: the game is over."
        return (f"{verdict}\nPattern: {after.pattern}\nLives left: {after.lives_left}\n"
                f"Guessed letters: {', '.join(after.guesses)}{tail}")

    def same_secret(self, a: str, b: str) -> bool:
        return (read_word(a) or "") == (read_word(b) or "")

    def malformed_reply(self, ctx: SimContext) -> str:
        return "Ooh, good one! Let me think about how that fits..."


GAME = HangmanGame()


@register_role("hangman_host", recognise=is_hangman_game,
               assumptions={
                   "opening pool": {"value": f"{POOL_SIZE} most common words of {OPENING_LENGTHS[0]}-{OPENING_LENGTHS[1]} letters",
                                    "meaning": "where a fresh secret comes from"},
                   "re-imagining pool": {"value": REIMAGINE_POOL,
                                         "meaning": "most common words fitting the board that it considers"},
                   "secret prior": {"value": "wordfreq frequency ** (prior_exponent / T)",
                                    "meaning": "common words are picked more often; low T sharpens"}})
def hangman_host(ctx: SimContext) -> SimReply:
    return host_reply(GAME, ctx)


@register_proposer("hangman")
def propose_words(ctx: SimContext, constraints: dict, count: int) -> list[str]:
    """Words that fit; with the profile's error rate one proposal ignores the constraints."""
    try:
        length = int(constraints["length"])
        shown = {int(p): str(l) for p, l in (constraints.get("known") or {}).items()}
        missed = frozenset(str(l) for l in constraints.get("absent") or ())
    except (KeyError, TypeError, ValueError):
        return []
    vocab = english_words()
    pool = vocab.fitting(length, shown, missed)[:REIMAGINE_POOL]
    picks: list[str] = []
    for _ in range(min(count, len(pool))):
        remaining = [w for w in pool if w not in picks]
        picks.append(ctx.prior_choice(remaining, [vocab.frequency(w) for w in remaining]))
    if picks and ctx.chance(ctx.profile.edit_error_rate):
        picks[-1] = _opening_pool()[0][0]
    return picks
