"""Reading a Hangman host's replies: the pattern (or the stated length), and a revealed word.

Tolerant of the many ways a model writes a pattern, strict about contradictions (length
change, a revealed letter disappearing), because a host that contradicts itself is data, not
noise. It never guesses: a reply is read only when it shows one board (two different ones
are unreadable, whichever comes last), and nothing from a chat-template token on is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from psit_lib.llm.non_answers import MAX_WORD_LETTERS, Reading, reply_non_answer, word_non_answer
from psit_lib.studies.psit.tasks.base import HostReplyError, readable_text
from psit_lib.studies.psit.tasks.hangman_rules import (DEFAULT_LIVES, HangmanState, InvalidGuessError, Slots,
                                                       format_slots, observe_pattern)

# --------------------------------------------------------------------------------------------
# Reading the host's replies
# --------------------------------------------------------------------------------------------

_NUMBER_WORDS = {
    "zero": 0, "no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15,
}  # fmt: skip
_LENGTH_NUMBER = r"(\d{1,2}|" + "|".join(word for word, value in _NUMBER_WORDS.items() if value > 0) + r")"
_STATED_LENGTH = re.compile(
    rf"\b{_LENGTH_NUMBER}[\s-]*letter\s+(?:word|secret)\b|\b{_LENGTH_NUMBER}\s+letters\s+long\b|"
    rf"\(\s*{_LENGTH_NUMBER}\s+letters?\s*\)|"
    rf"\b(?:word|secret|it)\b(?:\s+[\w']+){{0,4}}?\s+(?:has|contains|is\s+made\s+of|of)\s+{_LENGTH_NUMBER}\s+letters\b",
    re.I,
)
_ITALIC_PROSE = re.compile(r"(?<![\w])(_{1,2})(?=[A-Za-z0-9])([^_\n]*\s[^_\n]*?)(?<=[A-Za-z0-9.!?)])\1(?![\w])")
_TOKEN = re.compile(r"[A-Za-z_]+")
_TWO_LETTERS = re.compile(r"[A-Za-z]{2}")
_INLINE_GAP = re.compile(r"[ \t\u00a0]+")
_COUNT_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def read_stated_length(reply: str) -> int | None:
    """Word length stated in words (``a 5-letter word``, ``(five letters)``), or None."""
    matches = list(_STATED_LENGTH.finditer(reply))
    if not matches:
        return None
    stated = next(group for group in matches[-1].groups() if group)
    return int(stated) if stated.isdigit() else _NUMBER_WORDS[stated.lower()]


_PROSE_LEFT = frozenset("ia")
"""One-letter English words that lead into a board in prose ("Got it. I _ _ _ _", "a _ _ _ _
word"): at the opening they are words, not slots. Any other letter in a run is a slot."""
_PROSE_RIGHT = frozenset("i")
"""One-letter words that may follow a board in prose ("_ _ _ _ _ I hope you like it")."""


@dataclass(frozen=True)
class PatternRun:
    """A stretch of the reply that looks like a pattern: tokens of blanks and single letters."""

    tokens: tuple[str, ...]

    def shown(self) -> Slots:
        """Every token of the run as a slot, nothing trimmed."""
        return _tokens_to_slots(self.tokens)

    def opening_slots(self) -> Slots:
        """The opening board without prose words at its edges: ``_ h e l l o`` is 6 slots; a leading
        ``a``/``I`` is prose only before blanks ("a _ _ _ _ word", but "(1) a _ e _" starts with a slot)."""
        tokens = list(self.tokens)
        while (tokens and tokens[0].lower() in _PROSE_LEFT
               and all(set(token) == {"_"} or token.lower() in _PROSE_RIGHT for token in tokens[1:])):
            tokens.pop(0)
        while tokens and tokens[-1].lower() in _PROSE_RIGHT:
            tokens.pop()
        return _tokens_to_slots(tokens)

    def fits(self, length: int) -> list[Slots]:
        """Every distinct board of exactly ``length`` slots the run can show, trimming stray
        one-letter words at its edges (``I _ _ _``, or the guess echoed as in ``e _ a _ e _``).
        More than one means the run itself is ambiguous."""
        lefts = _edge_letters(self.tokens)
        rights = _edge_letters(self.tokens[::-1])
        found: list[Slots] = []
        for left in range(lefts + 1):
            for right in range(rights + 1):
                slots = _tokens_to_slots(self.tokens[left : len(self.tokens) - right])
                if len(slots) == length and slots not in found:
                    found.append(slots)
        return found


def _edge_letters(tokens: Sequence[str]) -> int:
    """How many one-letter tokens lead ``tokens`` (a run always keeps its blank token)."""
    count = 0
    while count < len(tokens) and len(tokens[count]) == 1 and tokens[count] != "_":
        count += 1
    return count


def _tokens_to_slots(tokens: Sequence[str]) -> Slots:
    return tuple(None if char == "_" else char.lower() for token in tokens for char in token)


def _clean_reply(reply: str) -> str:
    text = readable_text(reply).replace("\\_", "_").replace("\uff3f", "_")
    return _ITALIC_PROSE.sub(lambda match: match.group(2), text)


def find_pattern_runs(reply: str) -> list[PatternRun]:
    """Every run of space-separated one-letter or underscore tokens (with an underscore) in ``reply``;
    longer words end a run, so prose around the pattern is not swallowed."""
    text = _clean_reply(reply)
    runs: list[PatternRun] = []
    current: list[re.Match[str]] = []

    def close() -> None:
        if current and any("_" in match.group() for match in current):
            runs.append(PatternRun(tuple(m.group() for m in current)))
        current.clear()

    for match in _TOKEN.finditer(text):
        token = match.group()
        # a blank, a letter, or blanks with single letters between them ("_a_e_"); a word that
        # holds an underscore ("working_memory") is prose, never a board
        is_pattern_token = len(token) == 1 or ("_" in token and not _TWO_LETTERS.search(token))
        if not is_pattern_token:
            close()
            continue
        if current and not _INLINE_GAP.fullmatch(text[current[-1].end() : match.start()]):
            close()
        current.append(match)
    close()
    return runs


def _distinct(boards: Iterable[Slots]) -> list[Slots]:
    """The boards in order of first appearance, each once (a board repeated is one board)."""
    return list(dict.fromkeys(boards))


def _several(boards: Sequence[Slots]) -> str:
    """``two different patterns ('_ a _ _ _' and '_ a _ e _')``, for an unreadable reply."""
    shown = [repr(format_slots(board)) for board in boards]
    listed = ", ".join(shown[:-1]) + f" and {shown[-1]}"
    return f"{_COUNT_WORDS.get(len(boards), str(len(boards)))} different patterns ({listed})"


def _answer_text(reply: str) -> str:
    """The readable text of a host's reply; raises :class:`HostReplyError` saying why when the
    reply answers nothing (a tool call written as JSON, a runaway of underscores or letters),
    so no board or length is read out of it."""
    text = readable_text(reply)
    if reason := reply_non_answer(text):
        raise HostReplyError(f"The host's reply is {reason}: {reply[:200]!r}.")
    return text


def read_opening(reply: str, max_lives: int = DEFAULT_LIVES) -> HangmanState:
    """The started state: the length of the one pattern shown, else the stated length. Only the length
    is kept: a letter shown before any guess was never guessed, so showing it later contradicts the rules."""
    text = _answer_text(reply)
    boards = _distinct(run.opening_slots() for run in find_pattern_runs(text))
    stated = read_stated_length(text)
    if len(boards) > 1:
        raise HostReplyError(f"The opening shows {_several(boards)}: {reply[:200]!r}.")
    if boards:
        length = len(boards[0])
        if stated is not None and stated != length:
            raise HostReplyError(f"The opening's pattern length {length} ({format_slots(boards[0])!r}) "
                                 f"disagrees with its stated length {stated}.")
    elif stated:
        length = stated
    else:
        raise HostReplyError(f"The opening reply shows no pattern and states no word length: {reply[:200]!r}.")
    return HangmanState.started(length, max_lives)


def _completion_in_reply(state: HangmanState, letter: str, reply: str) -> Slots | None:
    """When the guess completes the word, hosts often write the word instead of a pattern."""
    completed = "".join(shown if shown is not None else letter for shown in state.slots)
    spaced = r"[\s\-]*".join(completed)  # "planet" or "P L A N E T"
    if re.search(rf"(?<![a-z]){spaced}(?![a-z])", reply.lower()):
        return tuple(completed)
    return None


def read_reply(state: HangmanState, letter: str, reply: str) -> HangmanState:
    """The public state after the host answered ``letter``: the reply must show one board (or the
    completed word); it is never guessed which of several boards is meant."""
    if state.length is None:
        raise InvalidGuessError("The host's opening pattern must be read before any guess.")
    text = _answer_text(reply)
    runs = find_pattern_runs(text)
    boards = _distinct(board for run in runs for board in (run.fits(state.length) or [run.shown()]))
    if len(boards) > 1:
        raise HostReplyError(f"The reply to {letter!r} shows {_several(boards)}: {reply[:200]!r}.")
    if boards and len(boards[0]) == state.length:
        new_state = observe_pattern(state, letter, boards[0])  # raises the contradiction, if any
    elif (completed := _completion_in_reply(state, letter, text)) is not None:
        new_state = observe_pattern(state, letter, completed)
    elif boards:
        observe_pattern(state, letter, boards[0])  # raises: the one pattern shown has another length
        raise AssertionError("unreachable: a pattern of another length was accepted")
    else:
        raise HostReplyError(f"No pattern found in the host's reply to {letter!r}: {reply[:200]!r}.")
    return new_state


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
_QUOTE_CHARS = "*_`\"'\u201c\u2018"
_NOT_A_SECRET = {"a", "an", "the", "not", "still", "hidden", "secret", "my", "your", "that", "this", "it"}


MIN_SECRET_LETTERS = 2
"""A one-letter reveal is a quoted letter ("the first letter is always "A""), never a word."""


def _word(word: str, *, in_sentence: bool = False) -> Reading[str]:
    """``word`` as the secret, or the reason it is none (a function word, the alphabet, a runaway
    of letters, a lone letter)."""
    lowered = word.lower()
    if reason := word_non_answer(lowered, in_sentence=in_sentence):
        return Reading(None, reason)
    if len(lowered) < MIN_SECRET_LETTERS:
        return Reading(None, f"{lowered!r} is a single letter, not a word")
    return Reading(lowered)


def read_reveal(reply: str) -> Reading[str]:
    """The single word a reveal reply names, lowercased, or None with the reason: a function word
    pulled from a sentence ("The first letter is always "A"") or several words name no secret."""
    text = readable_text(reply)
    if not text:
        return Reading(None, "an empty reply")
    if reason := reply_non_answer(text):
        return Reading(None, reason)
    if whole := _REVEAL_WHOLE.fullmatch(text):
        return _word(whole.group(1))
    if tagged := _REVEAL_TAG.search(text):
        return _word(tagged.group(1))
    phrased = [
        match
        for regex in _REVEAL_PHRASES
        for match in regex.finditer(text)
        if match.group(1).lower() not in _NOT_A_SECRET
    ]
    if phrased:
        last = phrased[-1]
        quoted = last.start(1) > 0 and text[last.start(1) - 1] in _QUOTE_CHARS
        return _word(last.group(1), in_sentence=not quoted)
    emphasised = {
        next(group for group in match.groups() if group).lower() for match in _REVEAL_EMPHASIS.finditer(text)
    }
    if len(emphasised) == 1:
        return _word(emphasised.pop())
    if len(emphasised) > 1:
        return Reading(None, f"names several words ({', '.join(sorted(emphasised))})")
    # A bare word on a line of its own, with small talk around it ("planet\n\nHope that helps!");
    # two such lines ("Sure!\n\nplanet") are ambiguous.
    alone = {m.group(1).lower() for line in text.splitlines() if (m := _REVEAL_WHOLE.fullmatch(line.strip()))}
    if len(alone) == 1 and "\n" in text:
        return _word(alone.pop())
    spelled = re.fullmatch(r"[\s*`\"'.]*((?:[A-Za-z][\s\-]+)+[A-Za-z])[\s*`\"'.!]*", text)
    if spelled:
        word = re.sub(r"[\s\-]", "", spelled.group(1)).lower()
        if len(word) > MAX_SPELLED_LETTERS:
            return Reading(None, f"a runaway of {len(word)} spelled letters, not a word")
        return _word(word)
    return Reading(None, "names no single word")


MAX_SPELLED_LETTERS = MAX_WORD_LETTERS
"""The longest spelled-out reveal read as a word; a longer run of single letters is a reply that
ran away (seen with a 0.5B model), never a secret."""


def normalise_word(secret: str) -> str:
    """Canonical Hangman secret: trimmed of whitespace, quotes and markdown, lowercase."""
    return secret.strip().strip("*_`\"'\u201c\u201d\u2018\u2019.!?,;: \t\n").lower()


