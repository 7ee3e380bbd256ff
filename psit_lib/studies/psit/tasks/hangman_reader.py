"""Reading a Hangman host's replies: the pattern, lives and guessed letters, and a revealed word.

Tolerant of the many ways a model writes a pattern, strict about contradictions (length
change, a revealed letter disappearing), because a host that contradicts itself is data, not
noise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from psit_lib.llm.readers import split_reasoning
from psit_lib.studies.psit.tasks.base import HostReplyError
from psit_lib.studies.psit.tasks.hangman_rules import (DEFAULT_LIVES, HangmanState, HostContradictionError, InvalidGuessError, Slots,
                                                       format_slots, observe_pattern)

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


def parse_reveal_text(reply: str) -> str | None:
    """The single word a reveal reply names, lowercased, or None when it names none clearly.

    Accepts a bare word (``Planet.``), bold/quoted/backticked words, ``<secret>`` tags,
    ``The word was **planet**.``, ``Word: planet``, a bare word on its own line amid small
    talk, and spelled-out ``P L A N E T``.
    """
    text = split_reasoning(reply)[0]
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
    # A bare word on a line of its own, with small talk around it ("planet\n\nHope that helps!");
    # two such lines ("Sure!\n\nplanet") are ambiguous.
    alone = {m.group(1).lower() for line in text.splitlines() if (m := _REVEAL_WHOLE.fullmatch(line.strip()))}
    if len(alone) == 1 and "\n" in text:
        return alone.pop()
    spelled = re.fullmatch(r"[\s*`\"'.]*((?:[A-Za-z][\s\-]+)+[A-Za-z])[\s*`\"'.!]*", text)
    if spelled:
        return re.sub(r"[\s\-]", "", spelled.group(1)).lower()
    return None


def normalise_word(secret: str) -> str:
    """Canonical Hangman secret: trimmed of whitespace, quotes and markdown, lowercase."""
    return secret.strip().strip("*_`\"'\u201c\u201d\u2018\u2019.!?,;: \t\n").lower()


