"""The memory libraries' own model calls, simulated: valid, minimal replies in the formats they parse.

Every reply follows fixed rules from the request text alone, with no randomness (SPEC §8), so a
prompt that embeds today's date (Mem0's does) still gets the same reply on every day.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from typing import Any

from ..formats import json_or_none
from ..context import SimContext, SimReply, message_text as _text
from ..registry import minimal_reply, register_role

LIBRARY_ROLE = "memory_library"
MAX_FACTS = 8

STOPWORDS = frozenset("""
a about after again all also am an and any are as at be because been before being both but by
can could did do does doing don down during each few for from further had has have having he
her here hers him his how i if in into is it its itself just let lets me more most my myself
no nor not now of off on once only or other our ours out over own same she should so some such
than that the their theirs them then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your yours
yourself one next show tell know like please answer only want okay sure yes well good great
user assistant said says time timestamp none get got make made still conversation discussion exchange
""".split())

_WORD = re.compile(r"[a-z][a-z'-]+")
_FENCE = re.compile(r"```[a-zA-Z]*\n?(.*?)```", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


# --------------------------------------------------------------------------------------------
# Pure text rules
# --------------------------------------------------------------------------------------------

def content_words(text: str) -> list[str]:
    """Lowercase words of three letters or more that carry meaning, in order of appearance."""
    return [w.strip("'-") for w in _WORD.findall(text.lower())
            if len(w.strip("'-")) >= 3 and w.strip("'-") not in STOPWORDS]


def keywords(text: str, n: int = 5) -> list[str]:
    """The ``n`` most frequent content words (ties: first appearance first)."""
    words = content_words(text)
    counts = Counter(words)
    first = {w: i for i, w in reversed(list(enumerate(words)))}
    return sorted(counts, key=lambda w: (-counts[w], first[w]))[:n]


def sentences(text: str) -> list[str]:
    """Lines split into sentences, stripped of list markers; fragments under 3 chars dropped."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip().lstrip("-*• ").strip()
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if len(s.strip()) >= 3)
    return out


def subject_key(fact: str) -> str | None:
    """``'lives left'`` for ``'Lives left: 5'``: the subject of a ``Subject: value`` fact."""
    head, sep, tail = fact.partition(":")
    words = head.strip().lower().split()
    if not sep or not tail.strip() or not 1 <= len(words) <= 4:
        return None
    return " ".join(words)


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .")


# --------------------------------------------------------------------------------------------
# Recognising a library's request
# --------------------------------------------------------------------------------------------

_MEMORYOS_SYSTEMS: tuple[tuple[str, str], ...] = (
    ("expert in keyword extraction", "memoryos.keywords"),
    ("conversation continuity detector", "memoryos.continuity"),
    ("conversation meta-summary updater", "memoryos.meta_info"),
    ("expert in analyzing dialogue topics", "memoryos.multi_summary"),
    ("user preference analysis assistant", "memoryos.profile"),
    ("knowledge extraction assistant", "memoryos.knowledge"),
    ("expert in summarizing dialogue topics", "memoryos.summary"),
    ("expert in merging and updating user profiles", "memoryos.update_profile"),
    ("expert in extracting the main theme", "memoryos.theme"),
    ("as a communication expert", "memoryos.response"),
)


def classify_request(messages: list[dict[str, Any]]) -> str | None:
    """Which library request this is, or None when it is not one this module knows."""
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system").lower()
    user = next((_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "").lower()
    if "information organizer" in system and '"facts"' in system and user.startswith("input:"):
        return "mem0.fact_extraction"
    if "smart memory manager" in user and "new retrieved facts" in user:
        return "mem0.memory_update"
    for marker, kind in _MEMORYOS_SYSTEMS:
        if marker in system:
            return kind
    return None


# --------------------------------------------------------------------------------------------
# Mem0
# --------------------------------------------------------------------------------------------

def _speaker_lines(conversation: str) -> list[tuple[str, str]]:
    """``user: ...`` / ``assistant: ...`` lines of Mem0's parsed messages, continuations joined."""
    turns: list[tuple[str, str]] = []
    for line in conversation.splitlines():
        m = re.match(r"^(user|assistant|system):\s?(.*)$", line)
        if m:
            turns.append((m.group(1), m.group(2)))
        elif turns:
            turns[-1] = (turns[-1][0], turns[-1][1] + "\n" + line)
    return turns


def mem0_facts(system: str, user: str) -> list[str]:
    """Facts as the sentences of the speaker the prompt asks about (the most recent kept)."""
    upper = system.upper()
    if "SOLELY BASED ON THE USER'S MESSAGES" in upper:
        speakers = {"user"}
    elif "SOLELY BASED ON THE ASSISTANT'S MESSAGES" in upper:
        speakers = {"assistant"}
    else:
        speakers = {"user", "assistant"}
    conversation = user.split("\n", 1)[1] if "\n" in user else ""
    facts: list[str] = []
    for speaker, text in _speaker_lines(conversation):
        if speaker in speakers:
            for sentence in sentences(text):
                if len(content_words(sentence)) >= 1 and _norm(sentence) not in map(_norm, facts):
                    facts.append(sentence)
    return facts[-MAX_FACTS:]


def _literal(block: str) -> Any:
    try:
        return ast.literal_eval(block.strip())
    except (ValueError, SyntaxError):
        return json_or_none(block)


def mem0_update(prompt: str) -> dict[str, Any]:
    """ADD new facts, UPDATE a memory whose ``Subject:`` a new fact restates, NONE otherwise."""
    blocks = [_literal(b) for b in _FENCE.findall(prompt)]
    blocks = [b for b in blocks if isinstance(b, list)]
    facts = [str(f) for f in (blocks[-1] if blocks else [])]
    old = [b for b in (blocks[0] if len(blocks) > 1 else []) if isinstance(b, dict)]
    entries = [{"id": str(m.get("id")), "text": str(m.get("text", "")), "event": "NONE"} for m in old]
    known = {_norm(e["text"]) for e in entries}
    next_id = len(entries)
    for fact in facts:
        if _norm(fact) in known:
            continue
        known.add(_norm(fact))
        key = subject_key(fact)
        target = next((e for e in reversed(entries) if key and subject_key(e["text"]) == key), None)
        if target is None:
            entries.append({"id": str(next_id), "text": fact, "event": "ADD"})
            next_id += 1
        elif target["event"] == "ADD":
            target["text"] = fact
        else:
            target.update(old_memory=target.get("old_memory", target["text"]), text=fact, event="UPDATE")
    return {"memory": entries}


# --------------------------------------------------------------------------------------------
# MemoryOS (prompts from memoryos-pro 0.1.0)
# --------------------------------------------------------------------------------------------

def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    i += len(start)
    j = text.find(end, i)
    return text[i:j if j >= 0 else len(text)].strip()


def _topic(words: list[str]) -> str:
    return ", ".join(words) if words else "general conversation"


def memoryos_reply(kind: str, user: str) -> str:
    if kind == "memoryos.keywords":
        text = _between(user, "concise:\n", "\n\nKeywords:") or user
        return ", ".join(keywords(text, 5) or ["conversation"])
    if kind == "memoryos.continuity":
        prev = content_words(_between(user, "Previous Page:", "Current Page:"))
        curr = content_words(_between(user, "Current Page:", "Continuous?"))
        shared = set(prev) & set(curr)
        return "true" if prev and len(shared) >= 2 else "false"
    if kind == "memoryos.meta_info":
        last = _between(user, "Previous Meta-summary:", "New Dialogue:")
        new = _between(user, "New Dialogue:", "Updated Meta-summary:")
        base = "" if last.lower() in ("", "none") else last
        return f"Conversation about {_topic(keywords(base + ' ' + new, 4))}."
    if kind == "memoryos.multi_summary":
        words = keywords(user.split("Conversation content:", 1)[-1], 3)
        return json.dumps([{"theme": (words[0] if words else "conversation").capitalize(),
                            "keywords": words or ["conversation"],
                            "content": f"Discussion of {_topic(words)}."}])
    if kind == "memoryos.profile":
        words = keywords(_between(user, "**Latest User-AI Conversation:**", "**Updated User Profile:**"), 3)
        lines = [f"Cognitive Needs ( Medium ): the user engages in a conversation about {_topic(words)}."]
        if {"game", "play", "guess", "playing"} & set(content_words(user)):
            lines.append("Gaming Interest ( High ): the user plays a game with the assistant.")
        return "\n".join(lines)
    if kind == "memoryos.knowledge":
        words = keywords(_between(user, "Latest User-AI Conversation:", "【User Private Data】"), 3)
        return f"【User Private Data】\n- None\n【Assistant Knowledge】\n- Assistant discussed {_topic(words)}"
    if kind in ("memoryos.summary", "memoryos.theme", "memoryos.update_profile"):
        return f"Conversation about {_topic(keywords(user, 4))}."
    return "OK."


# --------------------------------------------------------------------------------------------
# A-Mem and LightMem reimplementations (psit_lib.studies.psit.agents.baselines): their prompts carry JSON
# inside tags, so the rules read data, not prose.
# --------------------------------------------------------------------------------------------

def _tag_text(text: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, re.S)
    return found.group(1) if found else ""


def _tag_json(text: str, tag: str) -> Any:
    return json_or_none(_tag_text(text, tag))


def _has_tags(ctx: SimContext, *tags: str) -> bool:
    text = ctx.last_user_text()
    return all(re.search(rf"<{tag}>.*?</{tag}>", text, re.S) for tag in tags)


@register_role("amem_note_analysis", tier=0, recognise=lambda ctx: _has_tags(ctx, "note"))
def amem_note_analysis(ctx: SimContext) -> SimReply:
    """Keywords, a one-sentence context and tags for a new note (A-Mem's note construction)."""
    user = ctx.last_user_text()
    note = _tag_text(user, "note")
    words = keywords(note, 5) or ["conversation"]
    recent = keywords(_tag_text(user, "recent_dialogue"), 2)
    tags = list(dict.fromkeys([*words[:2], *recent, "dialogue"]))[:4]
    return SimReply(content=json.dumps({"keywords": words, "context": f"An exchange about {_topic(words[:3])}.",
                                        "tags": tags}))


@register_role("amem_evolution", tier=0, recognise=lambda ctx: _has_tags(ctx, "new_note", "neighbours"))
def amem_evolution(ctx: SimContext) -> SimReply:
    """Strengthen links to neighbours that share a keyword with the new note; else no change."""
    user = ctx.last_user_text()
    note = _tag_json(user, "new_note") or {}
    neighbours = _tag_json(user, "neighbours") or []
    mine = set(note.get("keywords", [])) if isinstance(note, dict) else set()
    linked = [n for n in neighbours if isinstance(n, dict) and mine & set(n.get("keywords", []))]
    shared = sorted({k for n in linked for k in n.get("keywords", []) if k in mine})
    reply = {
        "should_evolve": bool(linked),
        "actions": ["strengthen"] if linked else [],
        "suggested_connections": [n.get("id") for n in linked],
        "tags_to_update": list(dict.fromkeys([*note.get("tags", []), *shared]))[:6] if isinstance(note, dict) else [],
        "new_context_neighborhood": [n.get("context", "") for n in neighbours if isinstance(n, dict)],
        "new_tags_neighborhood": [n.get("tags", []) for n in neighbours if isinstance(n, dict)],
    }
    return SimReply(content=json.dumps(reply))


@register_role("lightmem_extraction", tier=0, recognise=lambda ctx: _has_tags(ctx, "segment"))
def lightmem_extraction(ctx: SimContext) -> SimReply:
    """One fact per sentence of each numbered message of the topic segment (at most 3 each)."""
    messages = _tag_json(ctx.last_user_text(), "segment") or []
    facts = []
    for item in messages:
        if not isinstance(item, dict):
            continue
        speaker = "User" if item.get("role") == "user" else "Assistant"
        for sentence in [s for s in sentences(str(item.get("content", ""))) if content_words(s)][:3]:
            facts.append({"source_id": item.get("source_id"), "fact": f"{speaker}: {sentence}"})
    return SimReply(content=json.dumps({"facts": facts}))


# --------------------------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------------------------

@register_role(LIBRARY_ROLE, tier=0, recognise=lambda ctx: classify_request(ctx.messages) is not None)
def memory_library(ctx: SimContext) -> SimReply:
    """Role sent by the baseline adapters with every library call."""
    kind = classify_request(ctx.messages)
    user = ctx.last_user_text()
    if kind is None:
        return minimal_reply(ctx)
    if kind == "mem0.fact_extraction":
        return SimReply(content=json.dumps({"facts": mem0_facts(ctx.system_text(), user)}))
    if kind == "mem0.memory_update":
        return SimReply(content=json.dumps(mem0_update(user)))
    return SimReply(content=memoryos_reply(kind, user))
