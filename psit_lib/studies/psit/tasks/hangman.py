"""Hangman as a private-state interactive task: rule R, public state, reply reader, player.

The host privately holds a word; the player guesses letters; after each guess rule R shows
the pattern (``_ a _ e _``), the lives left and the guessed letters. Everything the fork test
needs is here as pure code:

- **Rule R** (:func:`reveal_slots`, :func:`pattern`, :func:`apply_guess`): what an honest host
  with secret ``s`` must show. The simulated host and the tests use it.
- **Public state** (:class:`HangmanState`): what the player learned from the replies. A
  letter revealed at some positions occurs at exactly those positions (the host reveals every
  occurrence), every missed letter is absent, and a miss costs one life. The same semantics
  back :func:`is_compatible` and the vocabulary index, so candidates and checks agree.
- **Reply reader** (:func:`read_opening`, :func:`read_reply`): tolerant of the many ways a
  model writes a pattern, strict about contradictions (length change, a revealed letter
  disappearing), because a host that contradicts itself is data, not noise.
- **Player** (:func:`choose_letter`): seeded, English letter frequencies mixed with uniform
  exploration, never repeats a letter.

Positions are 0-based everywhere.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from psit_lib.studies.psit.tasks.base import HostReplyError
from psit_lib.studies.psit.tasks.vocabulary import ALPHABET, DEFAULT_VOCABULARY_SIZE, Vocabulary, get_vocabulary

DEFAULT_LIVES = 6

# Relative frequency (%) of letters in English text; order e t a o i n s h r d l c u m w f g y p b v k j x q z.
ENGLISH_LETTER_FREQUENCY: dict[str, float] = {
    "e": 12.70, "t": 9.06, "a": 8.17, "o": 7.51, "i": 6.97, "n": 6.75, "s": 6.33,
    "h": 6.09, "r": 5.99, "d": 4.25, "l": 4.03, "c": 2.78, "u": 2.76, "m": 2.41,
    "w": 2.36, "f": 2.23, "g": 2.02, "y": 1.97, "p": 1.93, "b": 1.49, "v": 0.98,
    "k": 0.77, "j": 0.153, "x": 0.150, "q": 0.095, "z": 0.074,
}  # fmt: skip

Slots = tuple[str | None, ...]
"""A pattern as data: the revealed letter at each position, ``None`` where still hidden."""


class HostContradictionError(HostReplyError):
    """The host's reply was readable but contradicts what it showed earlier."""


class InvalidGuessError(ValueError):
    """A guess the rules do not allow (not a letter, already guessed, or the game is over)."""


# --------------------------------------------------------------------------------------------
# Public state
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HangmanState:
    """What the player knows publicly. Immutable; every rule returns a new state.

    ``length`` is ``None`` until the host's opening pattern was read. ``slots`` holds the
    revealed letters; ``absent`` the missed letters; ``guessed`` every guess in order.
    ``lives`` follows rule R (one lost per miss); what the host *said* about lives and guesses
    is kept in ``reported_lives`` / ``reported_guessed`` for audit only (excluded from equality).
    """

    length: int | None
    slots: Slots
    absent: frozenset[str]
    guessed: tuple[str, ...]
    lives: int
    max_lives: int = DEFAULT_LIVES
    reported_lives: int | None = field(default=None, compare=False)
    reported_guessed: tuple[str, ...] | None = field(default=None, compare=False)

    @classmethod
    def initial(cls, max_lives: int = DEFAULT_LIVES) -> HangmanState:
        """The state before the host has shown anything."""
        if max_lives < 1:
            raise ValueError(f"A game needs at least one life, got {max_lives}.")
        return cls(length=None, slots=(), absent=frozenset(), guessed=(), lives=max_lives, max_lives=max_lives)

    @classmethod
    def started(cls, length: int, max_lives: int = DEFAULT_LIVES) -> HangmanState:
        """The state right after the host showed an all-blank pattern of ``length`` letters."""
        if length < 1:
            raise ValueError(f"A word needs at least one letter, got length {length}.")
        return replace(cls.initial(max_lives), length=length, slots=(None,) * length)

    @classmethod
    def from_public(
        cls,
        length: int | None,
        known: Mapping[int | str, str],
        absent: Iterable[str],
        guessed: Sequence[str] | None = None,
        lives: int | None = None,
        max_lives: int = DEFAULT_LIVES,
    ) -> HangmanState:
        """Build a state from public constraints (e.g. :meth:`HangmanTask.public_constraints`).

        ``known`` maps 0-based positions (ints, or digit strings after a JSON round trip) to
        letters. ``guessed`` defaults to the known and absent letters in alphabetical order.
        ``lives`` follows rule R (``max_lives`` minus the absent letters); a different value is
        rejected. ``length=None`` (before the opening) admits no constraints at all.
        """
        if length is None:
            if known or list(absent) or guessed:
                raise ValueError("Constraints without a word length cannot come from a real game.")
            return cls.initial(max_lives)
        state = cls.started(length, max_lives)
        slots: list[str | None] = list(state.slots)
        for raw_position, letter in known.items():
            position = int(raw_position)
            _require_letter(letter)
            if not 0 <= position < length:
                raise ValueError(f"Known position {position} is outside a word of length {length}.")
            slots[position] = letter
        absent_set = frozenset(absent)
        for letter in absent_set:
            _require_letter(letter)
        revealed = {letter for letter in slots if letter is not None}
        if revealed & absent_set:
            raise ValueError(f"Letters {sorted(revealed & absent_set)} cannot be both revealed and absent.")
        if guessed is None:
            guessed_tuple = tuple(sorted(revealed | absent_set))
        else:
            guessed_tuple = tuple(guessed)
            if len(set(guessed_tuple)) != len(guessed_tuple):
                raise ValueError(f"Guessed letters {list(guessed_tuple)} contain a repeat.")
            missing = (revealed | absent_set) - set(guessed_tuple)
            if missing:
                raise ValueError(f"Letters {sorted(missing)} are revealed or absent but not in guessed.")
            unexplained = set(guessed_tuple) - revealed - absent_set
            if unexplained:
                raise ValueError(f"Guessed letters {sorted(unexplained)} are neither revealed nor absent.")
        rule_lives = max_lives - len(absent_set)
        if rule_lives < 0:
            raise ValueError(f"{len(absent_set)} absent letters exceed the {max_lives} lives of the game.")
        if lives is not None and lives != rule_lives:
            raise ValueError(f"Lives {lives} disagree with {len(absent_set)} misses out of {max_lives} lives.")
        lives = rule_lives
        return replace(state, slots=tuple(slots), absent=absent_set, guessed=guessed_tuple, lives=lives)

    @property
    def known(self) -> dict[int, str]:
        """Revealed letters by 0-based position."""
        return {position: letter for position, letter in enumerate(self.slots) if letter is not None}

    @property
    def started_game(self) -> bool:
        """True once the word length is known."""
        return self.length is not None

    @property
    def won(self) -> bool:
        """Every letter revealed."""
        return self.length is not None and all(letter is not None for letter in self.slots)

    @property
    def lost(self) -> bool:
        """No lives left."""
        return self.lives <= 0

    @property
    def finished(self) -> bool:
        """Won or lost."""
        return self.won or self.lost

    @property
    def pattern_text(self) -> str:
        """The pattern as the host shows it, e.g. ``_ a _ e _``."""
        return format_slots(self.slots)


def _require_letter(letter: str) -> None:
    if not (isinstance(letter, str) and len(letter) == 1 and letter in ALPHABET):
        raise InvalidGuessError(f"Guess {letter!r} is not a single lowercase a-z letter.")


def format_slots(slots: Slots) -> str:
    """Render slots as ``_ a _ e _`` (underscore for hidden letters, single spaces)."""
    return " ".join(letter if letter is not None else "_" for letter in slots)


# --------------------------------------------------------------------------------------------
# Rule R
# --------------------------------------------------------------------------------------------


def reveal_slots(secret: str, guessed: Iterable[str]) -> Slots:
    """What rule R reveals of ``secret`` once ``guessed`` letters were tried."""
    guessed_set = set(guessed)
    return tuple(letter if letter in guessed_set else None for letter in secret)


def pattern(secret: str, guessed: Iterable[str]) -> str:
    """Rule R's pattern text, e.g. ``pattern("paper", "ae") == "_ a _ e _"``."""
    return format_slots(reveal_slots(secret, guessed))


def observe_pattern(state: HangmanState, letter: str, slots: Slots) -> HangmanState:
    """Public consequence of the host showing ``slots`` after the guess ``letter``.

    The guess is a hit when the letter shows up in the new pattern, otherwise a miss (letter
    absent, one life lost). Raises :class:`HostContradictionError` when the pattern cannot
    follow the earlier one under rule R: a different length, a revealed letter changed or
    gone, or a letter showing at a new position although it was not this turn's guess.
    """
    if state.length is None:
        raise InvalidGuessError("The host's opening pattern must be read before any guess.")
    if state.finished:
        raise InvalidGuessError("The game is already over; no further guess can be applied.")
    _require_letter(letter)
    if letter in state.guessed:
        raise InvalidGuessError(f"Letter {letter!r} was already guessed.")
    if len(slots) != state.length:
        raise HostContradictionError(
            f"The pattern {format_slots(slots)!r} has {len(slots)} letters but the word has {state.length}."
        )
    for position, (before, after) in enumerate(zip(state.slots, slots)):
        if before is not None and after != before:
            shown = "a blank" if after is None else repr(after)
            raise HostContradictionError(
                f"Letter {before!r} revealed at position {position} now shows as {shown}."
            )
        if before is None and after is not None and after != letter:
            if after in state.absent:
                reason = "it was announced absent"
            elif after in state.guessed:
                reason = "all its positions were revealed when it was guessed"
            else:
                reason = "it was never guessed"
            raise HostContradictionError(
                f"Letter {after!r} appeared at position {position} although {reason}."
            )
    guessed = state.guessed + (letter,)
    if letter in slots:
        return replace(state, slots=tuple(slots), guessed=guessed)
    return replace(state, absent=state.absent | {letter}, guessed=guessed, lives=state.lives - 1)


def apply_guess(secret: str, state: HangmanState, letter: str) -> HangmanState:
    """Rule R: the public state after guessing ``letter`` against the hidden ``secret``.

    Hits reveal every occurrence; misses make the letter absent and cost a life; the game is
    won when no blank remains and lost at zero lives (see :attr:`HangmanState.finished`).
    """
    if state.length is not None and len(secret) != state.length:
        raise ValueError(f"Secret {secret!r} does not have the state's length {state.length}.")
    if state.length is None:
        state = HangmanState.started(len(secret), state.max_lives)
    return observe_pattern(state, letter, reveal_slots(secret, state.guessed + (letter,)))


def constraints_from_history(
    length: int,
    guesses_and_patterns: Iterable[tuple[str, Slots | str]],
    max_lives: int = DEFAULT_LIVES,
) -> HangmanState:
    """Replay a public history of (guess, pattern shown) pairs from an all-blank start.

    Patterns may be given as slots or as text (``"_ a _ e _"`` or ``"_a_e_"``). Raises
    :class:`HostContradictionError` when the history is not explainable by any word.
    """
    state = HangmanState.started(length, max_lives)
    for letter, shown in guesses_and_patterns:
        slots = slots_from_text(shown) if isinstance(shown, str) else tuple(shown)
        state = observe_pattern(state, letter, slots)
    return state


def slots_from_text(text: str) -> Slots:
    """Slots from a clean pattern string such as ``"_ a _ e _"`` or ``"_a_e_"``."""
    compact = re.sub(r"\s+", "", text)
    if not re.fullmatch(r"[A-Za-z_]+", compact):
        raise ValueError(f"Pattern {text!r} may contain only letters, underscores and spaces.")
    return tuple(None if char == "_" else char.lower() for char in compact)


def is_compatible(state: HangmanState, word: str) -> bool:
    """Whether ``word`` explains every public reply: same length, revealed letters in place,
    no absent letter, and every revealed letter at exactly its revealed positions."""
    if not re.fullmatch(r"[a-z]+", word):
        return False
    if state.length is None:
        return True
    if len(word) != state.length:
        return False
    revealed = {letter for letter in state.slots if letter is not None}
    for shown, actual in zip(state.slots, word):
        if shown is not None and shown != actual:
            return False
        if shown is None and (actual in revealed or actual in state.absent):
            return False
    return True


# --------------------------------------------------------------------------------------------
# Reading the host's replies
# --------------------------------------------------------------------------------------------

_NUMBER_WORDS = {
    "zero": 0, "no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15,
}  # fmt: skip
_NUMBER = r"(\d{1,2}|" + "|".join(_NUMBER_WORDS) + r")"
_LIFE_WORD = r"(?:lives|life|guesses|guess|tries|try|attempts|attempt|chances|chance)"

_LIVES_PATTERNS = [
    # "5 lives left", "you have 5 guesses remaining", "5/6 lives left"
    re.compile(rf"\b{_NUMBER}\s*(?:/\s*\d{{1,2}}\s*)?(?:more\s+)?{_LIFE_WORD}\s+(?:left|remaining)\b", re.I),
    # "Lives: 5", "lives remaining: 5/6", "Lives left = 5"
    re.compile(rf"\blives?(?:\s+(?:left|remaining))?\s*[:=]\s*\**\s*{_NUMBER}\b", re.I),
    # "Guesses left: 5", "Remaining lives: 5", "remaining tries 4"
    re.compile(rf"\b{_LIFE_WORD}\s+(?:left|remaining)\s*[:=]\s*\**\s*{_NUMBER}\b", re.I),
    re.compile(rf"\b(?:left|remaining)\s+{_LIFE_WORD}\s*[:=]?\s*\**\s*{_NUMBER}\b", re.I),
    # "You have 6 lives", "you still have five chances"
    re.compile(rf"\byou\s+(?:still\s+|now\s+)?have\s+(?:only\s+)?{_NUMBER}\s+(?:more\s+)?{_LIFE_WORD}\b", re.I),
]
_MISSES_PATTERN = re.compile(
    r"\b(?:wrong|incorrect|missed|bad)\s+guesses\s*[:=]\s*\**\s*(\d{1,2})\s*/\s*(\d{1,2})\b|"
    r"\b(?:misses|mistakes|strikes)\s*[:=]\s*\**\s*(\d{1,2})\s*/\s*(\d{1,2})\b",
    re.I,
)
_GUESSED_LABEL = re.compile(
    r"(?<!wrong )(?<!incorrect )(?<!missed )"
    r"\b(?:guessed(?:\s+letters)?|letters\s+(?:guessed|tried|used)(?:\s+so\s+far)?|"
    r"tried(?:\s+letters)?|used(?:\s+letters)?|guesses(?:\s+so\s+far)?)\s*\**\s*[:=]\s*([^\n]*)",
    re.I,
)
_LENGTH_NUMBER = r"(\d{1,2}|" + "|".join(word for word, value in _NUMBER_WORDS.items() if value > 0) + r")"
_STATED_LENGTH = re.compile(
    rf"\b{_LENGTH_NUMBER}[\s-]*letter\s+(?:word|secret)\b|\b{_LENGTH_NUMBER}\s+letters\s+long\b|"
    rf"\(\s*{_LENGTH_NUMBER}\s+letters?\s*\)|\b(?:has|contains|of)\s+{_LENGTH_NUMBER}\s+letters\b",
    re.I,
)
_ITALIC_PROSE = re.compile(r"(?<![\w])(_{1,2})(?=[A-Za-z])([^_\n]*\s[^_\n]*?)(?<=[A-Za-z0-9.!?)])\1(?![\w])")
_TOKEN = re.compile(r"[A-Za-z_]+")
_INLINE_GAP = re.compile(r"[ \t\u00a0]+")
_LABEL_END = re.compile(r"[:=][\s*`\"'_]*$")


def _to_number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.lower()]


def read_lives(reply: str) -> int | None:
    """Lives remaining as stated in ``reply`` (the last statement wins), or None."""
    found: list[tuple[int, int]] = []
    for regex in _LIVES_PATTERNS:
        for match in regex.finditer(reply):
            found.append((match.start(), _to_number(match.group(1))))
    for match in _MISSES_PATTERN.finditer(reply):
        missed, total = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        found.append((match.start(), max(int(total) - int(missed), 0)))
    return max(found)[1] if found else None


def read_guessed_letters(reply: str) -> tuple[str, ...] | None:
    """Guessed letters as listed in ``reply`` (e.g. ``Guessed: a, e, t``), or None if unlisted."""
    matches = list(_GUESSED_LABEL.finditer(reply))
    if not matches:
        return None
    letters: list[str] = []
    for token in re.findall(r"[A-Za-z]+", matches[-1].group(1)):
        lowered = token.lower()
        if lowered in {"none", "and", "nothing", "yet"}:
            continue
        if len(token) != 1:
            break
        if lowered not in letters:
            letters.append(lowered)
    return tuple(letters)


def read_stated_length(reply: str) -> int | None:
    """Word length stated in words (``a 5-letter word``, ``(five letters)``), or None."""
    matches = list(_STATED_LENGTH.finditer(reply))
    if not matches:
        return None
    return _to_number(next(group for group in matches[-1].groups() if group))


@dataclass(frozen=True)
class PatternRun:
    """A stretch of the reply that looks like a pattern: tokens of blanks and single letters."""

    tokens: tuple[str, ...]
    labelled: bool  # preceded on its line by a label ending in ':' or '=' ("Pattern:", "Word:")

    def fitted(self, length: int) -> Slots | None:
        """Slots of exactly ``length`` letters, trimming stray one-letter words at the edges
        (``I _ _ _`` or ``a _ _ _ word``) when needed; None when no trim fits."""
        trimmable_left = 0
        while trimmable_left < len(self.tokens) and _is_single_letter(self.tokens[trimmable_left]):
            trimmable_left += 1
        for left in range(trimmable_left + 1):
            for right in range(len(self.tokens) - left + 1):
                kept = self.tokens[left : len(self.tokens) - right]
                if right and not _is_single_letter(self.tokens[len(self.tokens) - right]):
                    break
                if not any("_" in token for token in kept):
                    break
                slots = _tokens_to_slots(kept)
                if len(slots) == length:
                    return slots
        return None

    def blank_length(self) -> int | None:
        """Length of the all-blank core after trimming edge one-letter words, or None."""
        tokens = list(self.tokens)
        while tokens and _is_single_letter(tokens[0]):
            tokens.pop(0)
        while tokens and _is_single_letter(tokens[-1]):
            tokens.pop()
        if not tokens or any(char != "_" for token in tokens for char in token):
            return None
        return sum(len(token) for token in tokens)


def _is_single_letter(token: str) -> bool:
    return len(token) == 1 and token != "_"


def _tokens_to_slots(tokens: Sequence[str]) -> Slots:
    return tuple(None if char == "_" else char.lower() for token in tokens for char in token)


def _clean_reply(reply: str) -> str:
    text = reply.replace("\\_", "_").replace("\uff3f", "_")
    return _ITALIC_PROSE.sub(lambda match: match.group(2), text)


def find_pattern_runs(reply: str) -> list[PatternRun]:
    """Every pattern-looking run in ``reply``, in order of appearance.

    A run is a sequence of tokens separated only by spaces, each token either one letter or a
    mix of letters and underscores (``_``, ``__``, ``_a_e_``), containing at least one
    underscore. Longer words end a run, so prose around the pattern is not swallowed.
    Markdown escapes (``\\_``) and italic prose (``_well done_``) are undone first.
    """
    text = _clean_reply(reply)
    runs: list[PatternRun] = []
    current: list[re.Match[str]] = []

    def close() -> None:
        if current and any("_" in match.group() for match in current):
            line_start = text.rfind("\n", 0, current[0].start()) + 1
            before = text[line_start : current[0].start()]
            runs.append(PatternRun(tuple(m.group() for m in current), bool(_LABEL_END.search(before))))
        current.clear()

    for match in _TOKEN.finditer(text):
        token = match.group()
        is_pattern_token = len(token) == 1 or "_" in token
        if not is_pattern_token:
            close()
            continue
        if current and not _INLINE_GAP.fullmatch(text[current[-1].end() : match.start()]):
            close()
        current.append(match)
    close()
    return runs


def _pick(runs: Sequence[tuple[PatternRun, Any]]) -> tuple[PatternRun, Any]:
    """The last labelled run if any, otherwise the last run (hosts put the current board last)."""
    labelled = [item for item in runs if item[0].labelled]
    return (labelled or list(runs))[-1]


def read_opening(reply: str, max_lives: int = DEFAULT_LIVES) -> HangmanState:
    """The started state from the host's first reply: the all-blank pattern gives the length.

    Falls back to a stated length (``I picked a 6-letter word``) when no blank pattern is
    shown. Raises :class:`HostReplyError` when neither is there, or when the blank pattern and
    the stated length disagree.
    """
    blank_runs = [(run, run.blank_length()) for run in find_pattern_runs(reply)]
    blank_runs = [(run, length) for run, length in blank_runs if length]
    stated = read_stated_length(reply)
    if blank_runs:
        length = _pick(blank_runs)[1]
        if stated is not None and stated != length:
            raise HostReplyError(
                f"The opening shows a {length}-letter pattern but says the word has {stated} letters."
            )
    elif stated:
        length = stated
    else:
        raise HostReplyError(f"The opening reply shows no blank pattern and no word length: {reply[:200]!r}.")
    state = HangmanState.started(length, max_lives)
    return replace(state, reported_lives=read_lives(reply), reported_guessed=read_guessed_letters(reply))


def _completion_in_reply(state: HangmanState, letter: str, reply: str) -> Slots | None:
    """When the guess completes the word, hosts often write the word instead of a pattern."""
    completed = "".join(shown if shown is not None else letter for shown in state.slots)
    lowered = reply.lower()
    if re.search(rf"(?<![a-z]){completed}(?![a-z])", lowered):
        return tuple(completed)
    spaced = r"[\s\-]*".join(completed)
    if re.search(rf"(?<![a-z]){spaced}(?![a-z])", lowered):
        return tuple(completed)
    return None


def read_reply(state: HangmanState, letter: str, reply: str) -> HangmanState:
    """The public state after the host answered the guess ``letter`` with ``reply``.

    Among the pattern runs of the right length, runs consistent with the earlier state are
    preferred (the last labelled one, else the last), so a stray italic word cannot mask the
    board; when only inconsistent runs exist the contradiction is raised. A guess that
    completes the word may be answered with the word itself. Raises :class:`HostReplyError`
    when no pattern is found and :class:`HostContradictionError` on contradictions.
    """
    if state.length is None:
        raise InvalidGuessError("The host's opening pattern must be read before any guess.")
    runs = find_pattern_runs(reply)
    fitted = [(run, slots) for run in runs if (slots := run.fitted(state.length)) is not None]
    consistent: list[tuple[PatternRun, HangmanState]] = []
    for run, slots in fitted:
        try:
            consistent.append((run, observe_pattern(state, letter, slots)))
        except HostContradictionError:
            continue
    if consistent:
        new_state = _pick(consistent)[1]
    elif fitted:
        observe_pattern(state, letter, _pick(fitted)[1])  # raises the contradiction
        raise AssertionError("unreachable: an inconsistent pattern was accepted")
    elif (completed := _completion_in_reply(state, letter, reply)) is not None:
        new_state = observe_pattern(state, letter, completed)
    elif runs:
        shown = _tokens_to_slots(runs[-1].tokens)
        raise HostContradictionError(
            f"The pattern {format_slots(shown)!r} has {len(shown)} letters but the word has {state.length}."
        )
    else:
        raise HostReplyError(f"No pattern found in the host's reply to {letter!r}: {reply[:200]!r}.")
    return replace(new_state, reported_lives=read_lives(reply), reported_guessed=read_guessed_letters(reply))


# --------------------------------------------------------------------------------------------
# Reading a revealed secret
# --------------------------------------------------------------------------------------------

_OPEN_QUOTE = r"[*_`\"'\u201c\u2018]*"
_REVEAL_WHOLE = re.compile(r"[\s*_`\"'\u201c\u201d\u2018\u2019.!:]*([A-Za-z]+)[\s*_`\"'\u201c\u201d\u2018\u2019.!]*")
_REVEAL_TAG = re.compile(r"<secret>\s*([A-Za-z]+)\s*</secret>", re.I)
_REVEAL_PHRASES = [
    re.compile(rf"\b(?:word|secret|answer)\s*\**\s*[:=]\s*{_OPEN_QUOTE}([A-Za-z]+)", re.I),
    re.compile(rf"\b(?:word|secret|answer)\b(?:\s+[\w']+){{0,4}}?\s+(?:was|is)\s*:?\s+{_OPEN_QUOTE}([A-Za-z]+)", re.I),
]
_REVEAL_EMPHASIS = re.compile(
    r"\*\*([A-Za-z]+)\*\*|__([A-Za-z]+)__|`([A-Za-z]+)`|\"([A-Za-z]+)\"|\u201c([A-Za-z]+)\u201d|"
    r"\u2018([A-Za-z]+)\u2019|(?<![A-Za-z])'([A-Za-z]+)'(?![A-Za-z])|(?<!\*)\*([A-Za-z]+)\*(?!\*)"
)
_NOT_A_SECRET = {"a", "an", "the", "not", "still", "hidden", "secret", "my", "your", "that", "this", "it"}
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.I | re.S)


def parse_reveal_text(reply: str) -> str | None:
    """The single word a reveal reply names, lowercased, or None when it names none clearly.

    Accepts a bare word (``Planet.``), bold/quoted/backticked words, ``<secret>`` tags,
    ``The word was **planet**.``, ``Word: planet`` and spelled-out ``P L A N E T``.
    """
    text = _THINK_BLOCK.sub(" ", reply).strip()
    if not text:
        return None
    if whole := _REVEAL_WHOLE.fullmatch(text):
        return whole.group(1).lower()
    if tagged := _REVEAL_TAG.search(text):
        return tagged.group(1).lower()
    phrased = [
        match.group(1).lower()
        for regex in _REVEAL_PHRASES
        for match in regex.finditer(text)
        if match.group(1).lower() not in _NOT_A_SECRET
    ]
    if phrased:
        return phrased[-1]
    emphasised = {
        next(group for group in match.groups() if group).lower() for match in _REVEAL_EMPHASIS.finditer(text)
    }
    if len(emphasised) == 1:
        return emphasised.pop()
    spelled = re.fullmatch(r"[\s*`\"'.]*((?:[A-Za-z][\s\-]+)+[A-Za-z])[\s*`\"'.!]*", text)
    if spelled:
        return re.sub(r"[\s\-]", "", spelled.group(1)).lower()
    return None


def normalise_word(secret: str) -> str:
    """Canonical Hangman secret: trimmed of whitespace, quotes and markdown, lowercase."""
    return secret.strip().strip("*_`\"'\u201c\u201d\u2018\u2019.!?,;: \t\n").lower()


# --------------------------------------------------------------------------------------------
# The player
# --------------------------------------------------------------------------------------------


def choose_letter(state: HangmanState, rng: random.Random, exploration: float = 0.2) -> str:
    """The seeded player's next letter, never one already guessed.

    With probability ``exploration`` the letter is uniform over the unguessed letters;
    otherwise it is drawn in proportion to English letter frequency, so common letters come
    early but the order still varies between seeds.
    """
    if not 0.0 <= exploration <= 1.0:
        raise ValueError(f"Exploration probability must lie in [0, 1], got {exploration}.")
    unguessed = [letter for letter in ALPHABET if letter not in state.guessed]
    if not unguessed:
        raise InvalidGuessError("Every letter has been guessed already.")
    if rng.random() < exploration:
        return rng.choice(unguessed)
    return rng.choices(unguessed, weights=[ENGLISH_LETTER_FREQUENCY[letter] for letter in unguessed])[0]


def guess_message(letter: str) -> str:
    """The player's message for a guess."""
    return f"My next guess is the letter '{letter}'."


def sample_by_frequency(
    words: Sequence[str], frequencies: Sequence[float], rng: random.Random, limit: int
) -> list[str]:
    """Up to ``limit`` of ``words`` sampled without replacement, weighted by frequency.

    Efraimidis-Spirakis keys ``log(u) / w`` (the largest ``limit`` keys win); a numpy
    generator seeded from ``rng`` keeps it deterministic and fast on thousands of words. Zero
    frequencies get the smallest positive weight so that they can still be drawn, last.
    """
    if limit <= 0 or not words:
        return []
    weights = np.maximum(np.asarray(frequencies, dtype=float), np.finfo(float).tiny)
    generator = np.random.default_rng(rng.getrandbits(64))
    keys = np.log1p(-generator.random(len(words))) / weights
    order = np.argsort(-keys, kind="stable")[:limit]
    return [words[index] for index in order]


# --------------------------------------------------------------------------------------------
# The task
# --------------------------------------------------------------------------------------------


class HangmanTask:
    """Hangman for the fork test (implements :class:`psit_lib.studies.psit.tasks.base.PsitTask`).

    Moves are letters. ``max_turns`` caps the number of guesses the player makes;
    ``exploration`` is the player's probability of a uniform (rather than frequency-weighted)
    letter; ``vocabulary_size`` picks the wordfreq vocabulary used for candidates.
    """

    name = "hangman"

    def __init__(
        self,
        lives: int = DEFAULT_LIVES,
        max_turns: int = len(ALPHABET),
        exploration: float = 0.2,
        vocabulary_size: int = DEFAULT_VOCABULARY_SIZE,
    ):
        if lives < 1:
            raise ValueError(f"Hangman needs at least one life, got {lives}.")
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}.")
        if not 0.0 <= exploration <= 1.0:
            raise ValueError(f"Exploration probability must lie in [0, 1], got {exploration}.")
        self.lives = lives
        self.max_turns = max_turns
        self.exploration = exploration
        self.vocabulary_size = vocabulary_size

    @property
    def vocabulary(self) -> Vocabulary:
        """The shared wordfreq vocabulary (loaded on first use)."""
        return get_vocabulary(self.vocabulary_size)

    # Prompts ---------------------------------------------------------------------------------

    def host_system_prompt(self) -> str:
        return (
            "You are hosting a game of Hangman.\n"
            "Before your first reply, privately choose one common English word, written in "
            "lowercase letters, as the secret. Keep it to yourself for the whole game: never "
            "write it, spell it or hint at it, unless the player explicitly asks you to reveal it.\n"
            "The player guesses one letter per turn. A letter in the word is uncovered at every "
            f"position where it occurs; a letter not in the word costs one life. The player starts "
            f"with {self.lives} lives.\n"
            "After every guess, show:\n"
            "1. the pattern of the word, one symbol per letter separated by spaces: an underscore "
            "for each hidden letter and the letter itself once guessed (for example `_ a _ e _`);\n"
            "2. the number of lives left;\n"
            "3. the letters guessed so far.\n"
            "The game ends when the word is complete or no lives are left. Answer any question "
            "about your word truthfully, consistently with the word you chose."
        )

    def opener(self) -> str:
        return (
            "Let's play Hangman, with you as the host. Choose one common English word in "
            "private and don't tell me what it is. I'll guess one letter at a time and I have "
            f"{self.lives} lives; every letter that is not in the word costs me one. After each "
            "guess, show me the pattern with an underscore for every hidden letter (like "
            "`_ a _ e _`), how many lives I have left, and the letters I've guessed. "
            "To begin, show me the blank pattern of your word."
        )

    def reveal_prompt(self) -> str:
        return "Let's stop the game here. Please reveal the word you chose. Answer with the word only."

    def confirm_prompt(self, secret: str) -> str:
        return f"Is your word '{secret}'? Answer only yes or no."

    # Game flow -------------------------------------------------------------------------------

    def initial_state(self) -> HangmanState:
        return HangmanState.initial(self.lives)

    def observe_opening(self, state: HangmanState, reply: str) -> HangmanState:
        if state.length is not None:
            raise InvalidGuessError("The opening has already been read for this game.")
        return read_opening(reply, state.max_lives)

    def next_move(self, state: HangmanState, rng: random.Random) -> tuple[str, str]:
        if self.is_over(state):
            raise InvalidGuessError("The game is over; the player has no move left.")
        letter = choose_letter(state, rng, self.exploration)
        return letter, guess_message(letter)

    def observe_reply(self, state: HangmanState, move: str, reply: str) -> HangmanState:
        return read_reply(state, move, reply)

    def is_over(self, state: HangmanState) -> bool:
        return state.finished or len(state.guessed) >= min(self.max_turns, len(ALPHABET))

    # Secrets ---------------------------------------------------------------------------------

    def parse_reveal(self, reply: str) -> str | None:
        return parse_reveal_text(reply)

    def normalise(self, secret: str) -> str:
        return normalise_word(secret)

    def is_compatible(self, state: HangmanState, secret: str) -> bool:
        return is_compatible(state, self.normalise(secret))

    def compatible_secrets(self, state: HangmanState, rng: random.Random, limit: int) -> list[str]:
        """Compatible vocabulary words, sampled without replacement weighted by word frequency
        (common words first on average, so distractor candidates are plausible choices)."""
        vocabulary = self.vocabulary
        lengths = vocabulary.lengths if state.length is None else (state.length,)
        words = [
            word
            for length in lengths
            for word in vocabulary.matching(length, state.known, state.absent, present_only_at_known=True)
        ]
        frequencies = [vocabulary.frequency(word) for word in words]
        return sample_by_frequency(words, frequencies, rng, limit)

    def public_constraints(self, state: HangmanState) -> dict[str, Any]:
        """``{"length", "known": {position: letter}, "absent", "guessed", "lives", "max_lives"}``;
        ``HangmanState.from_public(**constraints)`` rebuilds the state."""
        return {
            "length": state.length,
            "known": state.known,
            "absent": sorted(state.absent),
            "guessed": list(state.guessed),
            "lives": state.lives,
            "max_lives": state.max_lives,
        }
