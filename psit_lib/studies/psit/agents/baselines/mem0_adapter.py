"""Mem0, the real library (``mem0ai==1.0.11``), configured as in the reference study.

Why 1.0.11: the last release whose ``add`` extracts facts and then decides ADD / UPDATE / DELETE
with the model, as the study describes (2.x makes one additive call). The ``openai`` provider is
used (its LiteLLM route rejects unknown model names), with its client replaced by
:class:`~psit_lib.studies.psit.agents.baselines.calls.LibraryClient`. Recall searches k = 10
memories; memorize adds the last m = 10 messages (the hidden calls).

Forking: a ``Memory`` object is a scratch workspace from a process-wide pool, loaded from the
store snapshot and exported back (ids re-keyed by position, wall-clock ``updated_at`` dropped,
so snapshots are deterministic). Mem0 swallows a failed model call and stores nothing: every call
is recorded and a failed one raises :class:`BaselineLibraryError`; a reply it cannot parse is
reported to the episode's diagnostics (:data:`MEM0_READERS`).
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

from psit_lib.studies.psit.agents.baselines import env  # noqa: F401  (offline switches first)
from psit_lib.studies.psit.agents.baselines.base import BaselineSettings, Memorized, Recall, TurnInput, turn_time
from psit_lib.studies.psit.agents.baselines.calls import BaselineLibraryError, CallLedger, LibraryClient, LibraryLink, in_library_thread
from psit_lib.studies.psit.agents.baselines.embedder import (EMBEDDING_DIMS, library_model, model_path,
                                                            without_sentence_transformers)

try:
    with without_sentence_transformers():
        import mem0.embeddings.huggingface as _mem0_hf
        from mem0 import Memory
        from mem0.memory.storage import SQLiteManager
        from mem0.memory.utils import extract_json, remove_code_blocks
except ImportError as exc:  # pragma: no cover - exercised only without the optional packages
    from psit_lib.studies.psit.agents.baselines.embedder import BaselineUnavailableError

    raise BaselineUnavailableError("the mem0 baseline needs mem0ai==1.0.11, qdrant-client and "
                                   "sentence-transformers (see the install script)") from exc

MEM0_SETTINGS = BaselineSettings(window=10, top_k=10)
USER_ID = "player"
COLLECTION = "psit_mem0"
_ID_NAMESPACE = uuid.UUID("6f1c2a52-4d55-4c8e-9d2e-8c3b5a0e7f11")
_MAX_POINTS = 100_000
_UNUSED_URL = "http://library-calls-go-through-the-harness.invalid/v1"


def _mem0_json(text: str) -> Any:
    """A reply as Mem0 1.0.11 parses it: the unfenced text, else the JSON found inside it."""
    try:
        return json.loads(remove_code_blocks(text), strict=False)
    except json.JSONDecodeError:
        return json.loads(extract_json(text), strict=False)


def _list_field(text: str, key: str, what: str) -> str | None:
    """The problem with a reply that must be a JSON object with a list under ``key``, or None."""
    try:
        value = _mem0_json(text or "")
    except (json.JSONDecodeError, TypeError, ValueError) as exc:
        return f"mem0's {what} reply is not JSON ({exc})"
    if not isinstance(value, dict) or not isinstance(value.get(key), list):
        return f"mem0's {what} reply has no {key!r} list, so Mem0 stores nothing from it"
    return None


MEM0_READERS = {
    "mem0.fact_extraction": lambda text: _list_field(text, "facts", "fact extraction"),
    "mem0.memory_update": lambda text: _list_field(text, "memory", "memory update"),
}
"""What Mem0 needs from its two calls (``Memory.add``): the extracted facts, then the ADD /
UPDATE / DELETE decisions; anything else it logs and drops."""


_mem0_hf.SentenceTransformer = library_model  # Mem0's HuggingFace embedder: the process's shared encoder


class _Workspace:
    """One Mem0 ``Memory`` (Qdrant in memory) used as scratch space for one operation at a time."""

    def __init__(self) -> None:
        self.memory = Memory.from_config({
            "llm": {"provider": "openai", "config": {"model": "run-model", "api_key": "not-used",
                                                     "openai_base_url": _UNUSED_URL}},
            "embedder": {"provider": "huggingface", "config": {"model": model_path(),
                                                               "embedding_dims": EMBEDDING_DIMS}},
            "vector_store": {"provider": "qdrant", "config": {"collection_name": COLLECTION, "path": ":memory:",
                                                              "embedding_model_dims": EMBEDDING_DIMS}},
            "history_db_path": ":memory:",
        })
        self.client = LibraryClient("mem0", MEM0_READERS)
        self.memory.llm.client = self.client

    def load(self, store: dict[str, Any], link: LibraryLink) -> CallLedger:
        """Replace the collection's contents with the snapshot and route this operation's model
        calls to ``link``; returns a fresh call ledger."""
        vs = self.memory.vector_store
        vs.delete_col()
        vs.create_col(EMBEDDING_DIMS, False)
        self.memory.db.close()  # a fresh history log (SQLiteManager.reset deadlocks in 1.0.11)
        self.memory.db = SQLiteManager(":memory:")
        entries = store.get("memories", [])
        if entries:
            vs.insert(vectors=[e["vector"] for e in entries], payloads=[dict(e["payload"]) for e in entries],
                      ids=[e["id"] for e in entries])
        self.client.link = link
        self.client.ledger = CallLedger()
        return self.client.ledger

    def export(self) -> dict[str, Any]:
        vs = self.memory.vector_store
        points, _ = vs.client.scroll(collection_name=vs.collection_name, limit=_MAX_POINTS,
                                     with_payload=True, with_vectors=True)
        points = sorted(points, key=lambda p: (str(p.payload.get("created_at", "")), str(p.payload.get("data", ""))))
        memories = []
        for i, point in enumerate(points):
            payload = {k: v for k, v in point.payload.items() if k != "updated_at"}
            memories.append({"id": str(uuid.uuid5(_ID_NAMESPACE, f"{i}:{payload.get('hash', '')}")),
                             "vector": [float(x) for x in point.vector], "payload": payload})
        return {"memories": memories}


_pool: list[_Workspace] = []
_pool_lock = threading.Lock()


def _acquire() -> _Workspace:
    with _pool_lock:
        if _pool:
            return _pool.pop()
    return _Workspace()


def _release(workspace: _Workspace) -> None:
    workspace.client.link = None
    with _pool_lock:
        _pool.append(workspace)


def _check(ledger: CallLedger) -> None:
    """Mem0 swallows a failed update call: raise instead."""
    ledger.raise_if_failed("Mem0 would have continued with its memory silently unchanged")


class Mem0Backend:
    """The real Mem0 over a store ``{"memories": [{"id", "vector", "payload"}]}``."""

    name = "mem0"

    def __init__(self, settings: BaselineSettings = MEM0_SETTINGS) -> None:
        self.settings = settings

    def empty_store(self) -> dict[str, Any]:
        return {"memories": []}

    def _recall(self, link: LibraryLink, store: dict[str, Any], query: str) -> Recall:
        workspace = _acquire()
        try:
            ledger = workspace.load(store, link)
            found = workspace.memory.search(query, user_id=USER_ID, limit=self.settings.top_k)["results"]
        finally:
            _release(workspace)
        _check(ledger)
        return Recall("\n".join(f"- {m['memory']}" for m in found), store, ledger.calls)

    def _memorize(self, link: LibraryLink, store: dict[str, Any], messages: list[dict[str, str]],
                  created_at: str) -> Memorized:
        workspace = _acquire()
        try:
            ledger = workspace.load(store, link)
            try:
                workspace.memory.add(messages, user_id=USER_ID, metadata={"created_at": created_at})
            except Exception as exc:  # a failed extraction call propagates out of Memory.add
                _check(ledger)
                raise BaselineLibraryError(f"mem0 failed while adding memories: {exc}") from exc
            new_store = workspace.export()
        finally:
            _release(workspace)
        _check(ledger)
        return Memorized(new_store, ledger.calls)

    async def recall(self, store: dict[str, Any], turn: TurnInput) -> Recall:
        if not store.get("memories"):
            return Recall("", store)
        link = LibraryLink.here(turn.session, f"mem0/recall/{turn.turn}")
        return await in_library_thread(turn.session, self._recall, link, store, turn.user)

    async def memorize(self, store: dict[str, Any], turn: TurnInput, reply: str) -> Memorized:
        messages = [*turn.history, {"role": "user", "content": turn.user},
                    {"role": "assistant", "content": reply}][-self.settings.window:]
        link = LibraryLink.here(turn.session, f"mem0/memorize/{turn.turn}")
        return await in_library_thread(turn.session, self._memorize, link, store,
                                       [dict(m) for m in messages], turn_time(turn.turn).isoformat())
