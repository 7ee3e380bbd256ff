"""Non-answers: replies (and words) that look readable but answer nothing, each with its reason.

Small models write tool calls as JSON, the alphabet, runaways, or a sentence whose function word
a tolerant reader would take for the secret ("the first letter is always "A""): every reader
asks here first, and the reason says why the reply was not read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

FUNCTION_WORDS = frozenset("""
a an the this that these those some any no none every each either neither all both
i me my mine we us our you your yours he him his she her it its they them their theirs
is am are was were be been being do does did done have has had having will would shall should
can could may might must not never always often sometimes usually also too very just only
still already yet again ever here there then than now when where why how what which who whom whose
and or but nor so if because as of in on at to for from with without by about into onto over under
up down out off per via
yes yeah yep no nope ok okay sure hmm hi thanks thank please sorry well oh ah
json python code tool function call arguments parameters name null true false
""".split())
"""Words no host chooses as its secret and no sentence about the game leaves as one: closed-class
English words (articles, pronouns, auxiliaries, prepositions, conjunctions, frequency adverbs),
discourse words (yes, okay, sure) and the words of a tool call or code fence (json, name,
arguments). A reveal of one of these is read as nothing, with the reason."""

DISCOURSE_WORDS = frozenset("""
a an the yes yeah yep yup no nope nah ok okay sure hmm hi hey none null true json
""".split())
"""The function words refused even when they are the whole reply or its one emphasised word:
"Yes.", "**Sure**", a ``json`` fence label. (A bare "Always." may be a chosen word; "always"
pulled out of "the word is always "A"" is not: :data:`FUNCTION_WORDS` apply to words read
out of a sentence.)"""

ALPHABET = "abcdefghijklmnopqrstuvwxyz"
MIN_ALPHABET_RUN = 4
"""Letters in alphabetical order from this many on (``abcd``, ``abcdefg``) are the alphabet
recited, never a chosen word."""
MAX_WORD_LETTERS = 24
"""The longest word read as a secret; longer is a reply that ran away."""
RUNAWAY_REPEAT = 25
"""One character (or one short token) repeated this many times in a row is a runaway reply."""

_RUNAWAY_CHAR = re.compile(rf"(_|[A-Za-z])(?:[ \t]?\1){{{RUNAWAY_REPEAT - 1},}}")
_RUNAWAY_TOKEN = re.compile(rf"\b(\w{{1,12}})\b(?:[\s,.;:!-]+\1\b){{{RUNAWAY_REPEAT - 1},}}", re.I)
_TOOL_TAG = re.compile(r"</?tool_call>|<\|?(?:tool_call|function_call|python_tag)\|?>|\[TOOL_CALLS\]", re.I)
_TOOL_KEYS = frozenset({"arguments", "parameters", "args", "function", "function_call", "tool_calls",
                        "tool", "tool_name", "tool_call", "action", "action_input"})


@dataclass(frozen=True)
class Reading(Generic[T]):
    """What a reader read (``value``), or None with why not (``reason``)."""

    value: T | None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.value is not None


def _json_values(text: str) -> list[object]:
    """Every JSON object or array that starts somewhere in ``text`` (first few starts only)."""
    decoder = json.JSONDecoder()
    found: list[object] = []
    for start in [i for i, ch in enumerate(text) if ch in "{["][:8]:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        found.append(value)
    return found


def _is_tool_call(value: object) -> str | None:
    """The called name (or ``"a tool"``) when ``value`` has the shape of a tool call."""
    calls = value if isinstance(value, list) else [value]
    for call in calls:
        if not isinstance(call, dict):
            continue
        keys = {str(k).lower() for k in call}
        if keys & _TOOL_KEYS:
            function = call.get("function")
            inner: dict = function if isinstance(function, dict) else call
            name = inner.get("name") or inner.get("tool") or inner.get("tool_name") or inner.get("action")
            return str(name) if isinstance(name, str) and name else "a tool"
    return None


def tool_call_reason(text: str | None) -> str | None:
    """Why ``text`` is a tool call rather than an answer (any tool name, fenced or not), or None."""
    text = text or ""
    if _TOOL_TAG.search(text):
        return "a tool call written as text, not an answer"
    for value in _json_values(text):
        if (name := _is_tool_call(value)) is not None:
            return f"a tool call ({name}) written as JSON, not an answer"
    return None


def runaway_reason(text: str | None) -> str | None:
    """Why ``text`` is a runaway reply (one character or token repeated on and on), or None."""
    text = text or ""
    if (found := _RUNAWAY_CHAR.search(text)) is not None:
        count = sum(1 for ch in found.group(0) if not ch.isspace())
        return f"a runaway of {count} {found.group(1)!r}, not an answer"
    if (found := _RUNAWAY_TOKEN.search(text)) is not None:
        return f"a runaway repeating {found.group(1)!r}, not an answer"
    return None


def reply_non_answer(text: str | None) -> str | None:
    """The reason a whole reply answers nothing (a tool call, a runaway), or None."""
    return tool_call_reason(text) or runaway_reason(text)


def word_non_answer(word: str, *, in_sentence: bool = False) -> str | None:
    """The reason ``word`` (read out of a reply) is not a secret, or None when it may be one.
    ``in_sentence``: the word was pulled out of a sentence unquoted ("the word is always ..."),
    so every :data:`FUNCTION_WORDS` word is refused, not only :data:`DISCOURSE_WORDS`."""
    lowered = word.strip().lower()
    if not lowered:
        return "an empty word"
    if lowered in DISCOURSE_WORDS or (in_sentence and lowered in FUNCTION_WORDS):
        return f"{lowered!r} is a function word, not a chosen secret"
    if len(lowered) > MAX_WORD_LETTERS:
        return f"a runaway of {len(lowered)} letters, not a word"
    if any(ALPHABET[i:i + MIN_ALPHABET_RUN] in lowered for i in range(len(ALPHABET) - MIN_ALPHABET_RUN + 1)):
        return f"{lowered!r} is the alphabet in order, not a word"
    if len(set(lowered)) == 1 and len(lowered) > 2:
        return f"{lowered!r} repeats one letter, not a word"
    return None
