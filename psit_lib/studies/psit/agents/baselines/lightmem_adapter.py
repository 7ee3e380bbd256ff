"""LightMem (Fang et al., 2025) as a reimplementation of its memory policy.

Why not the library: the PyPI package ``lightmem`` is an empty placeholder, and the real project
needs LLMLingua-2 weights from the Hugging Face hub, which cannot be fetched offline. The stages
(topic segments, one extraction call per segment, top k = 10) are LightMem's, in our own wording;
extraction is forced every turn, as in the reference code (registry: "LightMem's extraction during play").

Deviations (state them with any result): no LLMLingua-2 pre-compression of messages, no
offline ("sleep-time") consolidation of the long-term store, an in-memory vector list instead
of Qdrant (same cosine ranking), and a synthetic clock for timestamps.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from psit_lib.studies.psit.prompt_book import PROMPTS
from psit_lib.llm.errors import ModelOutputError

from psit_lib.studies.psit.agents.baselines.base import BaselineSettings, Memorized, Recall, TurnInput, turn_time
from psit_lib.studies.psit.agents.baselines.calls import HiddenCall, read_call
from psit_lib.studies.psit.agents.baselines.embedder import embed_many, require_embedder
from psit_lib.studies.psit.agents.baselines.similarity import cosine_scores, recall_top_k

LIGHTMEM_SETTINGS = BaselineSettings(window=10, top_k=10)
EXTRACTION_ROLE = "lightmem_extraction"
SEGMENT_THRESHOLD = 0.5

EXTRACTION_FORMAT = {"type": "json_schema", "json_schema": {"name": "memory_entries", "strict": True, "schema": {
    "type": "object", "additionalProperties": False, "required": ["facts"],
    "properties": {"facts": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["source_id", "fact"],
        "properties": {"source_id": {"type": "integer"}, "fact": {"type": "string"}}}}}}}}


def topic_segments(vectors: Sequence[Sequence[float]], threshold: float = SEGMENT_THRESHOLD) -> list[list[int]]:
    """Split consecutive items into runs; a new run starts where similarity < ``threshold``."""
    segments: list[list[int]] = []
    for i in range(len(vectors)):
        if segments and cosine_scores(vectors[i - 1], [vectors[i]])[0] >= threshold:
            segments[-1].append(i)
        else:
            segments.append([i])
    return segments


def extraction_messages(segment: list[dict[str, Any]]) -> list[dict[str, str]]:
    items = [{"source_id": m["source_id"], "role": m["role"], "content": m["content"]} for m in segment]
    user = f"<segment>\n{json.dumps(items)}\n</segment>\n\nExtract the memory entries."
    return [{"role": "system", "content": PROMPTS.render("baseline.lightmem_extraction")}, {"role": "user", "content": user}]


def parse_facts(text: str, source_ids: set[int]) -> list[tuple[int, str]]:
    """(source_id, fact) pairs; facts citing an unknown source are dropped."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelOutputError(f"memory extraction is not JSON ({exc.msg})") from None
    facts = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(facts, list):
        raise ModelOutputError("memory extraction needs a 'facts' list")
    out = []
    for item in facts:
        if isinstance(item, dict) and isinstance(item.get("source_id"), int) and item["source_id"] in source_ids:
            fact = str(item.get("fact", "")).strip()
            if fact:
                out.append((item["source_id"], fact))
    return out


def format_entry(entry: dict[str, Any]) -> str:
    return f"{entry['time']} {entry['weekday']} {entry['fact']}"


def _exchanges(buffer: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    groups: list[list[dict[str, Any]]] = []
    for message in buffer:
        if message["role"] == "user" or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


class LightMemBackend:
    """LightMem's policy over ``{"buffer": [...], "entries": [...], "next_source": n}``."""

    name = "lightmem"

    def __init__(self, settings: BaselineSettings = LIGHTMEM_SETTINGS, force_extract: bool = True) -> None:
        require_embedder()
        self.settings = settings
        self.force_extract = force_extract

    def empty_store(self) -> dict[str, Any]:
        return {"buffer": [], "entries": [], "next_source": 0}

    async def recall(self, store: dict[str, Any], turn: TurnInput) -> Recall:
        block = await recall_top_k(store.get("entries", []), turn.user, self.settings.top_k, format_entry)
        return Recall(block, store)

    async def memorize(self, store: dict[str, Any], turn: TurnInput, reply: str) -> Memorized:
        source = store.get("next_source", 0)
        buffer = [*store.get("buffer", []),
                  {"source_id": source, "role": "user", "content": turn.user, "turn": turn.turn},
                  {"source_id": source + 1, "role": "assistant", "content": reply, "turn": turn.turn}]
        entries = list(store.get("entries", []))
        calls: list[HiddenCall] = []
        if self.force_extract or len(buffer) >= self.settings.window:
            groups = _exchanges(buffer)
            vectors = await embed_many(["\n".join(m["content"] for m in g) for g in groups])
            for run in topic_segments(vectors):
                segment = [m for i in run for m in groups[i]]
                entries.extend(await self._extract(segment, turn, calls))
            buffer = []
        return Memorized({"buffer": buffer, "entries": entries, "next_source": source + 2}, calls)

    async def _extract(self, segment: list[dict[str, Any]], turn: TurnInput,
                       calls: list[HiddenCall]) -> list[dict[str, Any]]:
        result = await turn.session.chat(extraction_messages(segment), role=EXTRACTION_ROLE,
                                         response_format=EXTRACTION_FORMAT)
        by_source = {m["source_id"]: m for m in segment}
        try:
            facts, problem = parse_facts(result.content, set(by_source)), None
        except ModelOutputError as exc:  # the segment yields no entries
            facts, problem = [], str(exc)
        calls.append(read_call(turn.session, self.name, EXTRACTION_ROLE, "lightmem.extraction", result, problem))
        entries: list[dict[str, Any]] = []
        for (source_id, fact), vector in zip(facts, await embed_many([fact for _, fact in facts])):
            when = turn_time(by_source[source_id]["turn"])
            entries.append({"id": f"e{source_id:04d}-{len(entries):02d}", "source_id": source_id,
                            "time": when.strftime("%Y-%m-%d %H:%M"), "weekday": when.strftime("%A"),
                            "fact": fact, "vector": vector})
        return entries
