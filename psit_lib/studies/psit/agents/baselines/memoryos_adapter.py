"""MemoryOS, the real library (``memoryos-pro==0.1.0``), configured as in the reference study.

Short-term m = 10 question-answer pairs, retrieval of up to k = 7 mid-term pages plus knowledge.
With m = 10 a 4-move Hangman fork test makes no hidden calls at all: that is the library's behaviour.

Forking: each operation rebuilds a ``Memoryos`` in a fresh temporary directory from the store
snapshot and exports the files back, ids re-keyed by position so snapshots are deterministic.

Guarded faults (library-wide patches, installed once): a topic summary that is a JSON object
crashed the updater (:func:`normalise_summaries`); a failed call is returned as an error string it
would store as memory (every call is recorded; a failed one raises :class:`BaselineLibraryError`);
replies it silently misreads are reported through :data:`MEMORYOS_READERS`; its prints go to debug
logging and its clock is frozen at the episode start, so heat recency stays 1.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from psit_lib.studies.psit.agents.baselines import env  # noqa: F401  (offline switches first)
from psit_lib.studies.psit.agents.baselines.base import CLOCK_START, BaselineSettings, Memorized, Recall, TurnInput, turn_time
from psit_lib.studies.psit.agents.baselines.calls import LibraryClient, LibraryLink, in_library_thread
from psit_lib.studies.psit.agents.baselines.embedder import library_model, without_sentence_transformers

try:
    with without_sentence_transformers():
        import memoryos.long_term
        import memoryos.memoryos
        import memoryos.mid_term
        import memoryos.retriever
        import memoryos.short_term
        import memoryos.updater
        import memoryos.utils
except ImportError as exc:  # pragma: no cover - exercised only without the optional packages
    from psit_lib.studies.psit.agents.baselines.embedder import BaselineUnavailableError

    raise BaselineUnavailableError("the memoryos baseline needs memoryos-pro==0.1.0 (installed with "
                                   "--no-deps), faiss-cpu and sentence-transformers (see the install "
                                   "script)") from exc

MEMORYOS_SETTINGS = BaselineSettings(window=10, top_k=7)
USER_ID = "player"
ASSISTANT_ID = "host"
FROZEN_CLOCK = CLOCK_START.strftime("%Y-%m-%d %H:%M:%S")
_FILES = {"short_term": ("users", USER_ID, "short_term.json"),
          "mid_term": ("users", USER_ID, "mid_term.json"),
          "long_term_user": ("users", USER_ID, "long_term_user.json"),
          "long_term_assistant": ("assistants", ASSISTANT_ID, "long_term_assistant.json")}
_MODULES = (memoryos.memoryos, memoryos.utils, memoryos.short_term, memoryos.mid_term,
            memoryos.long_term, memoryos.updater, memoryos.retriever)
_log = logging.getLogger("psit.memoryos")


def normalise_summaries(parsed: Any) -> list[dict[str, Any]]:
    """The list of topic dicts MemoryOS iterates, from whatever JSON the model returned."""
    if isinstance(parsed, dict):
        inner = next((v for v in parsed.values()
                      if isinstance(v, list) and any(isinstance(x, dict) for x in v)), None)
        parsed = inner if inner is not None else [parsed]
    if not isinstance(parsed, list):
        return []
    return [item for item in parsed if isinstance(item, dict)]


def _summary_problem(text: str) -> str | None:
    """The problem with a topic-summary reply (MemoryOS ``json.loads`` it as it is), or None."""
    try:
        parsed = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        return f"MemoryOS's topic summary is not JSON ({exc}), so it keeps no topics"
    if parsed and not normalise_summaries(parsed):
        return "MemoryOS's topic summary holds no topic objects"
    return None


def _continuity_problem(text: str) -> str | None:
    """The problem with a continuity verdict (MemoryOS reads anything but 'true' as false), or None."""
    if (text or "").strip().lower() in ("true", "false"):
        return None
    return "MemoryOS's continuity verdict is neither 'true' nor 'false', so it reads as 'not continuous'"


MEMORYOS_READERS = {"memoryos.multi_summary": _summary_problem, "memoryos.continuity": _continuity_problem}
"""The replies MemoryOS parses (its other calls' replies are stored as free text)."""


def _quiet_print(*args: Any, **_: Any) -> None:
    _log.debug(" ".join(str(a) for a in args))


class _HarnessClient(memoryos.utils.OpenAIClient):
    """MemoryOS's client without the ``openai.OpenAI`` its constructor builds: an HTTP client with a TLS
    context, about 20 ms of CPU per operation (a workspace is built for each), for a client the adapter
    replaces with its :class:`LibraryClient` at once."""

    def __init__(self, api_key: str, base_url: str | None = None, max_workers: int = 5) -> None:
        self.api_key, self.base_url, self.client = api_key, base_url, None
        self.executor = ThreadPoolExecutor(max_workers=max_workers)
        self._lock = threading.Lock()


def _install_patches() -> None:
    if getattr(memoryos.utils, "_psit_patched", False):
        return
    original_summary = memoryos.utils.gpt_generate_multi_summary

    def guarded_multi_summary(text: str, client: Any, model: str = "gpt-4o-mini") -> dict[str, Any]:
        result = original_summary(text, client, model=model)
        return {**result, "summaries": normalise_summaries(result.get("summaries"))}

    for module in _MODULES:
        module.print = _quiet_print
        if hasattr(module, "get_timestamp"):
            module.get_timestamp = lambda: FROZEN_CLOCK
    memoryos.updater.gpt_generate_multi_summary = guarded_multi_summary
    memoryos.utils.SentenceTransformer = library_model  # the process's shared encoder
    memoryos.memoryos.OpenAIClient = _HarnessClient
    memoryos.utils._psit_patched = True


def rekey(files: dict[str, Any], last_page: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Rename session and page ids by position (``session_0001``, ``page_0001``), everywhere."""
    mid = files.get("mid_term") or {}
    sessions = mid.get("sessions", {})
    session_ids = {sid: f"session_{i:04d}" for i, sid in enumerate(sessions, 1)}
    page_ids: dict[str | None, str] = {}  # a page without an id (None) gets one too
    for session in sessions.values():
        for detail in session.get("details", []):
            page_ids.setdefault(detail.get("page_id"), f"page_{len(page_ids) + 1:04d}")
    if last_page and last_page.get("page_id") not in page_ids:
        page_ids[last_page.get("page_id")] = f"page_{len(page_ids) + 1:04d}"

    def page(p: dict[str, Any]) -> dict[str, Any]:
        return {**p, **{k: page_ids.get(p[k], p[k]) for k in ("page_id", "pre_page", "next_page") if k in p}}

    new_sessions = {session_ids[sid]: {**s, "id": session_ids[sid], "details": [page(p) for p in s.get("details", [])]}
                    for sid, s in sessions.items()}
    frequency = {session_ids.get(sid, sid): n for sid, n in mid.get("access_frequency", {}).items()}
    files = {**files, "mid_term": {**mid, "sessions": new_sessions, "access_frequency": frequency}}
    return files, (page(last_page) if last_page else None)


class _Workspace:
    """A ``Memoryos`` rebuilt from a snapshot in a temporary directory, for one operation."""

    def __init__(self, link: LibraryLink, settings: BaselineSettings, store: dict[str, Any]) -> None:
        _install_patches()
        self._dir = tempfile.TemporaryDirectory(prefix="psit-memoryos-")
        for key, parts in _FILES.items():
            if key in store.get("files", {}):
                path = os.path.join(self._dir.name, *parts)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(store["files"][key], f)
        self.mos = memoryos.memoryos.Memoryos(
            user_id=USER_ID, assistant_id=ASSISTANT_ID, openai_api_key="not-used",
            openai_base_url="http://library-calls-go-through-the-harness.invalid/v1",
            data_storage_path=self._dir.name, short_term_capacity=settings.window,
            retrieval_queue_capacity=settings.top_k, llm_model="run-model")
        client = LibraryClient("memoryos", MEMORYOS_READERS)
        client.link = link
        self.ledger = client.ledger
        self.mos.client.client = client
        self.mos.updater.last_evicted_page_for_continuity = store.get("last_evicted_page")

    def export(self) -> dict[str, Any]:
        m = self.mos
        for part in (m.short_term_memory, m.mid_term_memory, m.user_long_term_memory, m.assistant_long_term_memory):
            part.save()
        files = {}
        for key, parts in _FILES.items():
            with open(os.path.join(self._dir.name, *parts), encoding="utf-8") as f:
                files[key] = json.load(f)
        files, last = rekey(files, m.updater.last_evicted_page_for_continuity)
        return {"files": files, "last_evicted_page": last}

    def check(self) -> None:
        self.ledger.raise_if_failed("MemoryOS would have stored its error message as memory")

    def close(self) -> None:
        self.mos.client.executor.shutdown(wait=False)
        self._dir.cleanup()


def memory_block(mos: Any, retrieved: dict[str, Any]) -> str:
    """The library's prompt context (as in ``Memoryos.get_response``), in our layout."""
    parts = []
    history = mos.short_term_memory.get_all()
    if history:
        parts.append("Recent conversation (short-term memory):\n" + "\n".join(
            f"User: {qa.get('user_input', '')}\nAssistant: {qa.get('agent_response', '')} (Time: {qa.get('timestamp', '')})"
            for qa in history))
    if retrieved["retrieved_pages"]:
        parts.append("Related earlier conversation (mid-term memory):\n" + "\n".join(
            f"User: {p.get('user_input', '')}\nAssistant: {p.get('agent_response', '')}\nTime: {p.get('timestamp', '')}"
            f"\nConversation chain overview: {p.get('meta_info', 'N/A')}" for p in retrieved["retrieved_pages"]))
    profile = mos.user_long_term_memory.get_raw_user_profile(USER_ID)
    if profile and profile.lower() != "none":
        parts.append(f"User profile:\n{profile}")
    for title, key in (("Relevant user knowledge", "retrieved_user_knowledge"),
                       ("Assistant knowledge", "retrieved_assistant_knowledge")):
        if retrieved[key]:
            parts.append(f"{title}:\n" + "\n".join(f"- {k['knowledge']} (Recorded: {k['timestamp']})"
                                                  for k in retrieved[key]))
    return "\n\n".join(parts)


class MemoryOSBackend:
    """The real MemoryOS over a store ``{"files": {...}, "last_evicted_page": ...}``."""

    name = "memoryos"

    def __init__(self, settings: BaselineSettings = MEMORYOS_SETTINGS) -> None:
        self.settings = settings

    def empty_store(self) -> dict[str, Any]:
        return {"files": {}, "last_evicted_page": None}

    def _recall(self, link: LibraryLink, store: dict[str, Any], query: str) -> Recall:
        workspace = _Workspace(link, self.settings, store)
        try:
            retrieved = workspace.mos.retriever.retrieve_context(user_query=query, user_id=USER_ID)
            block, new_store = memory_block(workspace.mos, retrieved), workspace.export()
        finally:
            workspace.close()
        workspace.check()
        return Recall(block, new_store, workspace.ledger.calls)

    def _memorize(self, link: LibraryLink, store: dict[str, Any], user: str, reply: str,
                  timestamp: str) -> Memorized:
        workspace = _Workspace(link, self.settings, store)
        try:
            workspace.mos.add_memory(user_input=user, agent_response=reply, timestamp=timestamp)
            new_store = workspace.export()
        finally:
            workspace.close()
        workspace.check()
        return Memorized(new_store, workspace.ledger.calls)

    async def recall(self, store: dict[str, Any], turn: TurnInput) -> Recall:
        link = LibraryLink.here(turn.session, f"memoryos/recall/{turn.turn}")
        return await in_library_thread(turn.session, self._recall, link, store, turn.user)

    async def memorize(self, store: dict[str, Any], turn: TurnInput, reply: str) -> Memorized:
        link = LibraryLink.here(turn.session, f"memoryos/memorize/{turn.turn}")
        return await in_library_thread(turn.session, self._memorize, link, store, turn.user,
                                       reply, turn_time(turn.turn).strftime("%Y-%m-%d %H:%M:%S"))
