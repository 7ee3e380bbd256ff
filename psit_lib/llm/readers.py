"""Reading a yes/no decision out of a free-text model reply.

Hosts and fork branches are asked to "answer only yes or no", but real replies come as
"**Answer:** no", "Yes – I do have that", "Nope", or echo the instruction back
("Answer (yes/no): no"). The fork test records each branch as yes, no or unreadable, so the
reader must be generous with phrasing yet never guess: the first *decisive* yes/no expression
wins, echoed "yes or no" instructions and hedges ("not sure", "I don't know") are ignored,
and a reply with no decision gives None. The function is task-neutral (Hangman and the
diagnosis task both use it).
"""

from __future__ import annotations

import re
import unicodedata

_REASONING_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)

# "yes or no", "yes/no", "Y/N", "no or yes" echoed from the instruction carry no decision.
_ECHO = re.compile(r"\b(?:yes\s*(?:/|\||\bor\b)\s*no|no\s*(?:/|\||\bor\b)\s*yes|y\s*/\s*n)\b")

# Hedges that contain a negative word but do not answer the question.
_HEDGE = re.compile(
    r"\b(?:(?:i\s*(?:am|'m|m)\s+)?not\s+(?:sure|certain)|unsure"
    r"|(?:i\s+)?(?:do\s+not|don't|dont)\s+(?:know|remember|recall)"
    r"|(?:can't|cannot|can\s+not)\s+(?:say|tell|answer)|no\s+idea|no\s+comment)\b"
)

_NEGATIVE = (
    r"(?:absolutely|definitely|certainly|surely|of\s+course)\s+not",
    r"(?:i\s+am|i'm|im)\s+afraid\s+not|afraid\s+not",
    r"not\s+(?:really|at\s+all|that\s+i\s+know\s+of|true|correct|right|the\s+case)",
    r"(?:i\s+(?:have|had)|i've|ive)\s+(?:no|never|not)\b",
    r"i\s+(?:do|am|did|was)\s+not|i\s+never",
    r"i\s+(?:don't|dont|haven't|havent|hadn't|didn't|didnt|wasn't|wasnt)",
    r"i'm\s+not|im\s+not",
    r"(?:it|that|this)\s+(?:is\s+not|isn't|isnt|was\s+not|wasn't|does\s+not|doesn't)",
    r"(?:it's|its|that's|thats)\s+not",
    r"no+pe|nah|no+|negative|false|incorrect|never|none",
)
_POSITIVE = (
    r"ye+s+|yeah|yep|yup|yea|aye",
    r"(?:that's|thats|that\s+is)\s+(?:right|correct)|afraid\s+so",
    r"correct|affirmative|true|indeed|absolutely|definitely|certainly|of\s+course|sure",
    r"i\s+(?:do|did|have|had)|i've",
    r"(?:i\s+am|i'm)(?=\s*(?:[.!;,]|$))",
)
# At each position the negative forms are tried first, so "I do not" never reads as "I do".
_DECISION = re.compile(
    r"\b(?:(?P<no>" + "|".join(_NEGATIVE) + r")|(?P<yes>" + "|".join(_POSITIVE) + r"))\b"
)

_LONE_LETTER = {"y": True, "n": False}


def _clean(text: str) -> str:
    """Lower-case, unify apostrophes/dashes, drop markdown, quotes and private reasoning blocks."""
    text = _REASONING_BLOCK.sub(" ", text)
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")
    text = re.sub(r"[*_#>\"\u201c\u201d\[\]{}~]", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def parse_yes_no(text: str) -> bool | None:
    """True for yes, False for no, None when the reply makes no yes/no decision."""
    if not isinstance(text, str):
        return None
    cleaned = _clean(text)
    bare = cleaned.strip(" .!?,;:'()-")
    if bare in _LONE_LETTER:
        return _LONE_LETTER[bare]
    cleaned = _ECHO.sub(" ", cleaned)
    cleaned = _HEDGE.sub(" ", cleaned)
    match = _DECISION.search(cleaned)
    if match is None:
        return None
    return match.group("yes") is not None
