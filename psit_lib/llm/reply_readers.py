"""Reading what real models write: reasoning mixed into replies, yes/no decisions, JSON.

A yes/no reads only when it leads the reply: a refusal, a deflection or a hedge that only later
turns into an answer is unreadable (None), never a guessed yes.
"""

from __future__ import annotations

import re
import unicodedata

from psit_lib.llm.non_answers import Reading, reply_non_answer

_TAGS = "think|thinking|reasoning"
_REASONING_BLOCK = re.compile(rf"<({_TAGS})>(.*?)</\1>", re.IGNORECASE | re.DOTALL)
_UNCLOSED_OPEN = re.compile(rf"<({_TAGS})>(.*)$", re.IGNORECASE | re.DOTALL)
_LONE_CLOSE = re.compile(rf"^(.*?)</({_TAGS})>", re.IGNORECASE | re.DOTALL)


def split_reasoning(text: str | None) -> tuple[str, str]:
    """(public reply, reasoning written inline) of a model's reply text."""
    if not text:
        return "", ""
    found: list[str] = []

    def keep(match: re.Match) -> str:
        found.append(match.group(2).strip())
        return " "

    public = _REASONING_BLOCK.sub(keep, text)
    lone = _LONE_CLOSE.match(public)
    if lone and not re.search(rf"<({_TAGS})>", lone.group(1), re.I):
        found.insert(0, lone.group(1).strip())
        public = public[lone.end():]
    unclosed = _UNCLOSED_OPEN.search(public)
    if unclosed:
        found.append(unclosed.group(2).strip())
        public = public[:unclosed.start()]
    return public.strip(), "\n".join(r for r in found if r)


# A reply that refuses or deflects carries no decision, whatever words it contains.
_DEFLECTION = re.compile(
    r"\b(?:secret|can't\s+(?:tell|say|reveal|share)|cannot\s+(?:tell|say|reveal|share)|won't\s+(?:tell|say|reveal)"
    r"|not\s+(?:allowed|able)\s+to|already\s+(?:chosen|picked|decided)|keep\s+(?:it|that|this|my\s+\w+)\s+(?:to\s+myself|private|hidden|a\s+secret))\b")
_LABEL = re.compile(r"^(?:final\s+)?answer\s*(?:\([^)]*\))?\s*[:=\-]\s*")

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
    r"correct|affirmative|true|indeed|absolutely|definitely|certainly|of\s+course",
    r"i\s+(?:do|did|have|had)(?!\s+to\b)|i've(?!\s+(?:already|just|got\s+to)\b)",
    r"(?:i\s+am|i'm)(?=\s*(?:[.!;,]|$))",
)
# At each position the negative forms are tried first, so "I do not" never reads as "I do".
_DECISION = re.compile(
    r"\b(?:(?P<no>" + "|".join(_NEGATIVE) + r")|(?P<yes>" + "|".join(_POSITIVE) + r"))\b"
)

_LONE_LETTER = {"y": True, "n": False}


def _clean(text: str) -> str:
    """Lower-case, unify apostrophes/dashes, drop markdown, quotes and private reasoning blocks."""
    text = split_reasoning(text)[0]
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")
    text = re.sub(r"[*_#>\"\u201c\u201d\[\]{}~]", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def _decision(cleaned: str) -> Reading[bool]:
    """The decision leading one cleaned answer, or None with why not."""
    bare = cleaned.strip(" .!?,;:'()-")
    if bare in _LONE_LETTER:
        return Reading(_LONE_LETTER[bare])
    if _DEFLECTION.search(cleaned):
        return Reading(None, "a refusal or deflection, not a yes or no")
    cleaned = _ECHO.sub(" ", cleaned)
    cleaned = _HEDGE.sub(" ", cleaned)
    cleaned = _LABEL.sub("", cleaned.lstrip(" .!?,;:'()->"))
    cleaned = cleaned.lstrip(" .!?,;:'()->")
    match = _DECISION.match(cleaned)  # the decision must lead the reply
    if match is None:
        return Reading(None, "no yes or no leads the reply")
    return Reading(match.group("yes") is not None)


# "(1) yes", "1. no", "1) Yes (2) yes": a numbered list of answers.
_LIST_MARKER = re.compile(r"(?:^|(?<=\s))\(?\d{1,2}[.)]\s*")


def read_yes_no(text: str | None) -> Reading[bool]:
    """True for yes, False for no, or None with the reason the reply makes no yes/no decision.

    A numbered list of answers ("(1) yes", "1. No\n2. No") reads when every item reads and
    all agree; items that disagree ("(1) yes (2) no") are unreadable. A tool call written as
    JSON or a runaway is no decision, whatever words it holds."""
    if not isinstance(text, str):
        return Reading(None, "no reply")
    if reason := reply_non_answer(split_reasoning(text)[0]):
        return Reading(None, reason)
    cleaned = _clean(text)
    if not cleaned:
        return Reading(None, "an empty reply")
    if _LIST_MARKER.match(cleaned):
        items = [item for item in _LIST_MARKER.split(cleaned) if item.strip(" .!?,;:'()-")]
        readings = [_decision(item) for item in items]
        values = {r.value for r in readings}
        if not readings or None in values:
            return Reading(None, "a numbered list whose items are not all a yes or no")
        if len(values) > 1:
            return Reading(None, "a numbered list that answers both yes and no")
        return readings[0]
    return _decision(cleaned)


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_MAX_STARTS = 8


def read_json_value(text: str | None,
                    kinds: tuple[type[dict] | type[list], ...] = (dict, list)) -> dict | list | None:
    """The JSON value (of ``kinds``) of a reply: the whole reply, a fenced block, or the first
    one that starts in prose and may be followed by more prose (reasoning stripped first);
    None when there is none."""
    import json

    public = split_reasoning(text)[0]
    for candidate in (public, *(m.group(1) for m in _FENCE.finditer(public))):
        try:
            value = json.loads(candidate.strip())
        except (ValueError, TypeError):
            continue
        if isinstance(value, kinds):
            return value
    decoder = json.JSONDecoder()
    openers = "".join(o for o, kind in (("{", dict), ("[", list)) if kind in kinds)
    starts = [i for i, ch in enumerate(public) if ch in openers][:_MAX_STARTS]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(public, start)
        except ValueError:
            if _never_closes(public, start):
                return None  # cut at its max_tokens: every later opener is a fragment inside it
            continue
        if isinstance(value, kinds):
            return value
    return None


_JSON_OPENING = re.compile(r'\{\s*(?:"|\}|\Z)|\[\s*(?:[\[{"\]\d-]|true|false|null|\Z)')


def _never_closes(text: str, start: int) -> bool:
    """Whether a JSON value opens at ``start`` and the reply ends before it closes (strings respected)."""
    if not _JSON_OPENING.match(text, start):
        return False
    depth, in_string, escaped = 0, False, False
    for ch in text[start:]:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return False
    return True


def json_breaks_off(text: str | None) -> bool:
    """Whether the reply's JSON is cut: its first JSON value opens and never closes (a reply stopped
    at its ``max_tokens``), so no object inside it may be read as the reply's."""
    public = split_reasoning(text)[0]
    first = _JSON_OPENING.search(public)
    return first is not None and _never_closes(public, first.start())


def read_json_object(text: str | None) -> dict | None:
    """The JSON object of a reply wrapped in fences or prose (see :func:`read_json_value`)."""
    value = read_json_value(text, (dict,))
    return value if isinstance(value, dict) else None


def tool_call_in_text(text: str | None, tool_names: "set[str] | frozenset[str]") -> str | None:
    """The known tool a reply names in a JSON tool call written as text (bare, fenced or in prose;
    ``{"name": ...}``, OpenAI's ``{"function": {"name": ...}}`` or a list of them), or None: servers
    without a tool-call parser return calls as content. Only a known tool's name counts."""
    value = read_json_value(text, (dict, list))
    calls = value if isinstance(value, list) else [value]
    for call in calls:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        inner = function if isinstance(function, dict) else call
        name = inner.get("name") or inner.get("tool") or inner.get("tool_name")
        if isinstance(name, str) and name in tool_names:
            return name
    return None


# Chat-template control tokens a server left in the text: ChatML and Llama-3/Phi style ``<|...|>``
# (``<|im_end|>``, ``<|im_start|>``, ``<|endoftext|>``, ``<|eot_id|>``), Gemma's turn markers and
# ``<eos>``/``<bos>``, and Llama-2/Mistral's ``</s>``, ``[INST]``, ``[/INST]``, ``<<SYS>>``.
_TEMPLATE_TOKEN = re.compile(
    r"<\|[^|<>\s]{1,40}\|>|</?(?:start_of_turn|end_of_turn|eos|bos)>|</s>|\[/?INST\]|<</?SYS>>", re.I)


def strip_template_debris(text: str | None) -> str:
    """``text`` cut at its first chat-template token (``<|im_end|>``, ``<end_of_turn>``, ``</s>``,
    ``[INST]``...), stripped: what follows is the model running on past its turn (writing the next
    user message), never its reply; a reply of nothing but debris becomes empty (unreadable)."""
    text = text or ""
    found = _TEMPLATE_TOKEN.search(text)
    return (text[: found.start()] if found else text).strip()
