"""A-Mem (Xu et al., 2025) as a small, faithful reimplementation of its memory policy.

Why not the library: ``a-mem`` 0.2.6 costs about 600 MB, about 13 s per import, and caps
``openai`` below 3, which this workbench cannot take. Its steps (note analysis over the last
m = 30 messages, memory evolution with 5 neighbours, top k = 8 retrieval) are small, so they are
reimplemented in our own prompt wording.

Deviation from the reference set-up: an in-memory vector list instead of ChromaDB (same
cosine ranking; ties broken by age), and a synthetic clock for note timestamps.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from psit_lib.studies.psit.prompt_book import PROMPTS
from psit_lib.llm.errors import ModelOutputError

from psit_lib.studies.psit.agents.baselines.base import BaselineSettings, Memorized, Recall, TurnInput, turn_time
from psit_lib.studies.psit.agents.baselines.calls import HiddenCall, read_call
from psit_lib.studies.psit.agents.baselines.embedder import embed_async, embed_many, require_embedder
from psit_lib.studies.psit.agents.baselines.similarity import recall_top_k, top_k

AMEM_SETTINGS = BaselineSettings(window=30, top_k=8)
ANALYSIS_ROLE, EVOLUTION_ROLE = "amem_note_analysis", "amem_evolution"
EVOLUTION_NEIGHBOURS = 5

ANALYSIS_FORMAT = {"type": "json_schema", "json_schema": {"name": "note_analysis", "strict": True, "schema": {
    "type": "object", "additionalProperties": False, "required": ["keywords", "context", "tags"],
    "properties": {"keywords": {"type": "array", "items": {"type": "string"}},
                   "context": {"type": "string"},
                   "tags": {"type": "array", "items": {"type": "string"}}}}}}

EVOLUTION_FORMAT = {"type": "json_schema", "json_schema": {"name": "memory_evolution", "strict": True, "schema": {
    "type": "object", "additionalProperties": False,
    "required": ["should_evolve", "actions", "suggested_connections", "tags_to_update",
                 "new_context_neighborhood", "new_tags_neighborhood"],
    "properties": {"should_evolve": {"type": "boolean"},
                   "actions": {"type": "array", "items": {"type": "string", "enum": ["strengthen", "update_neighbor"]}},
                   "suggested_connections": {"type": "array", "items": {"type": "string"}},
                   "tags_to_update": {"type": "array", "items": {"type": "string"}},
                   "new_context_neighborhood": {"type": "array", "items": {"type": "string"}},
                   "new_tags_neighborhood": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}}}}}


def _dialogue_lines(messages: list[dict[str, str]]) -> str:
    return "\n".join(f"{m['role'].capitalize()}: {m['content']}" for m in messages)


def analysis_messages(content: str, recent: list[dict[str, str]]) -> list[dict[str, str]]:
    user = (f"<recent_dialogue>\n{_dialogue_lines(recent)}\n</recent_dialogue>\n\n"
            f"<note>\n{content}\n</note>\n\nAnalyse the note.")
    return [{"role": "system", "content": PROMPTS.render("baseline.amem_analysis")}, {"role": "user", "content": user}]


def _public_view(note: dict[str, Any]) -> dict[str, Any]:
    return {k: note[k] for k in ("id", "content", "context", "keywords", "tags")}


def evolution_messages(note: dict[str, Any], neighbours: list[dict[str, Any]]) -> list[dict[str, str]]:
    user = (f"<new_note>\n{json.dumps(_public_view(note))}\n</new_note>\n\n"
            f"<neighbours>\n{json.dumps([_public_view(n) for n in neighbours])}\n</neighbours>\n\n"
            "Decide how the memory evolves.")
    return [{"role": "system", "content": PROMPTS.render("baseline.amem_evolution")}, {"role": "user", "content": user}]


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def parse_analysis(text: str) -> dict[str, Any]:
    """keywords / context / tags from the model's JSON; ModelOutputError when unusable."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelOutputError(f"note analysis is not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ModelOutputError("note analysis must be a JSON object")
    return {"keywords": _strings(data.get("keywords")), "context": str(data.get("context", "")),
            "tags": _strings(data.get("tags"))}


def apply_evolution(note: dict[str, Any], neighbours: list[dict[str, Any]], decision: dict[str, Any]) -> None:
    """Apply an evolution decision in place (A-Mem's strengthen / update_neighbor)."""
    if not decision.get("should_evolve"):
        return
    actions = set(_strings(decision.get("actions")))
    if "strengthen" in actions:
        valid = {n["id"] for n in neighbours}
        links = [i for i in _strings(decision.get("suggested_connections")) if i in valid]
        note["links"] = list(dict.fromkeys([*note["links"], *links]))
        if _strings(decision.get("tags_to_update")):
            note["tags"] = _strings(decision.get("tags_to_update"))
    if "update_neighbor" in actions:
        contexts = _strings(decision.get("new_context_neighborhood"))
        tag_lists = decision.get("new_tags_neighborhood") or []
        for i, neighbour in enumerate(neighbours):
            if i < len(contexts) and contexts[i]:
                neighbour["context"] = contexts[i]
            if i < len(tag_lists) and _strings(tag_lists[i]):
                neighbour["tags"] = _strings(tag_lists[i])


def note_vector_text(note: dict[str, Any]) -> str:
    return " ".join([note["content"], note["context"], " ".join(note["keywords"]), " ".join(note["tags"])])


def format_note(note: dict[str, Any]) -> str:
    content = " ".join(note["content"].split())
    return (f"[{note['timestamp']}] {content} | context: {note['context']} | keywords: "
            f"{', '.join(note['keywords'])} | tags: {', '.join(note['tags'])}")


class AMemBackend:
    """A-Mem's policy over a store ``{"notes": [...]}`` (each note JSON with its vector)."""

    name = "amem"

    def __init__(self, settings: BaselineSettings = AMEM_SETTINGS) -> None:
        require_embedder()
        self.settings = settings

    def empty_store(self) -> dict[str, Any]:
        return {"notes": []}

    async def recall(self, store: dict[str, Any], turn: TurnInput) -> Recall:
        block = await recall_top_k(store.get("notes", []), turn.user, self.settings.top_k, format_note)
        return Recall(block, store)

    async def memorize(self, store: dict[str, Any], turn: TurnInput, reply: str) -> Memorized:
        notes = copy.deepcopy(store.get("notes", []))
        exchange = [{"role": "user", "content": turn.user}, {"role": "assistant", "content": reply}]
        content = _dialogue_lines(exchange)
        recent = [*turn.history, *exchange][-self.settings.window:]
        calls: list[HiddenCall] = []

        result = await turn.session.chat(analysis_messages(content, recent), role=ANALYSIS_ROLE,
                                         response_format=ANALYSIS_FORMAT)
        try:
            analysis, problem = parse_analysis(result.content), None
        except ModelOutputError as exc:  # A-Mem keeps the note with empty metadata
            analysis, problem = {"keywords": [], "context": "General", "tags": []}, str(exc)
        calls.append(read_call(turn.session, self.name, ANALYSIS_ROLE, "amem.note_analysis", result, problem))
        note = {"id": f"n{turn.turn:04d}", "content": content,
                "timestamp": turn_time(turn.turn).strftime("%Y-%m-%d %H:%M"), "links": [], **analysis}

        if notes:
            probe = await embed_async(note_vector_text(note))
            neighbours = [notes[i] for i in top_k(probe, [n["vector"] for n in notes], EVOLUTION_NEIGHBOURS)]
            result = await turn.session.chat(evolution_messages(note, neighbours), role=EVOLUTION_ROLE,
                                             response_format=EVOLUTION_FORMAT)
            try:
                decision = json.loads(result.content)
                if not isinstance(decision, dict):
                    raise ValueError("not a JSON object")
                apply_evolution(note, neighbours, decision)
                problem = None
            except (ValueError, TypeError) as exc:  # A-Mem skips evolution on a bad reply
                problem = f"evolution reply unusable: {exc}"[:300]
            calls.append(read_call(turn.session, self.name, EVOLUTION_ROLE, "amem.evolution", result, problem))
            for neighbour, vector in zip(neighbours, await embed_many([note_vector_text(n) for n in neighbours])):
                neighbour["vector"] = vector  # neighbours' metadata may have changed

        note["vector"] = await embed_async(note_vector_text(note))
        return Memorized({"notes": [*notes, note]}, calls)
