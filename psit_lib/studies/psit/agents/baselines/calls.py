"""Hidden model calls: the calls a memory library makes on its own, through the run's client.

A baseline's private cost is not only the retrieved block: the library also calls the model
(facts, updates, summaries, tags). Those calls go through the episode's ``ModelSession`` like any
other (cache, replay, seeds, concurrency, retries, statistics). Real libraries call a synchronous
OpenAI client from their own threads, so :class:`LibraryClient` hands each call to the episode's
event loop; a call's seed comes from its operation's branch and a hash of the request, never a
shared counter, so thread scheduling cannot change it.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from types import SimpleNamespace
from typing import Any, Callable, Mapping, TypeVar

from openai.types.chat import ChatCompletion

from psit_lib.llm.client import ModelSession
from psit_lib.llm.types import ChatResult
from psit_lib.runs.paths import digest

from psit_lib.llm.diagnostics import report_helper_read

LIBRARY_ROLE = "memory_library"


class BaselineLibraryError(RuntimeError):
    """A memory library failed in a way that would otherwise silently corrupt its memory."""


@dataclass(frozen=True)
class HiddenCall:
    """One model call a memory library made that the user never sees."""

    library: str
    kind: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ok: bool = True
    error: str | None = None
    read_error: str | None = None  # the call succeeded, but its reply could not be used

    def as_record(self, turn: int) -> dict[str, Any]:
        """The stored form: a reply that could not be used counts as a failed call, with why."""
        record = {"turn": turn, **asdict(self)}
        read_error = record.pop("read_error")
        if read_error is not None:
            record.update(ok=False, error=self.error or read_error)
        return record


class CallLedger:
    """The hidden calls of one library operation (thread-safe: libraries call from pools)."""

    def __init__(self) -> None:
        self._calls: list[HiddenCall] = []
        self._lock = threading.Lock()

    def add(self, call: HiddenCall) -> None:
        with self._lock:
            self._calls.append(call)

    @property
    def calls(self) -> list[HiddenCall]:
        with self._lock:
            return list(self._calls)

    def raise_if_failed(self, consequence: str) -> None:
        """Raise if a call failed at the endpoint (an unreadable reply is not one: see ``read_error``);
        ``consequence`` says what the library would have done with the failure."""
        failed = [c for c in self.calls if not c.ok]
        if failed:
            raise BaselineLibraryError(f"{failed[0].kind} model call failed ({failed[0].error}); {consequence}")


# What each library's own prompts ask for, recognised from their system prompt or request
# (mem0ai 1.0.11 and memoryos-pro 0.1.0). Used only to label hidden calls in the records.
_KIND_MARKERS: tuple[tuple[str, str], ...] = (
    ("information organizer", "fact_extraction"),
    ("smart memory manager", "memory_update"),
    ("keyword extraction", "keywords"),
    ("continuity detector", "continuity"),
    ("meta-summary", "meta_info"),
    ("analyzing dialogue topics", "multi_summary"),
    ("user preference analysis", "profile"),
    ("knowledge extraction", "knowledge"),
    ("summarizing dialogue topics", "summary"),
    ("merging and updating user profiles", "update_profile"),
    ("extracting the main theme", "theme"),
    ("communication expert", "response"),
)


def call_kind(library: str, messages: Any) -> str:
    """A short label for what a library call asks (``mem0.fact_extraction``), for the records."""
    text = " ".join(str(m.get("content") or "") for m in messages or () if isinstance(m, dict)).lower()
    for marker, kind in _KIND_MARKERS:
        if marker in text:
            return f"{library}.{kind}"
    return f"{library}.other"


def read_call(session: ModelSession, library: str, role: str, kind: str, result: ChatResult,
              problem: str | None) -> HiddenCall:
    """The hidden call of a reply the adapter parsed itself, the parse reported to the episode's diagnostics."""
    report_helper_read(session, role, result.content, problem, agent=library)
    return HiddenCall(library, kind, result.usage.prompt_tokens, result.usage.completion_tokens, read_error=problem)


def completion_from_result(result: ChatResult, model: str) -> ChatCompletion:
    """An ``openai`` ChatCompletion carrying a ChatResult, for libraries that parse one."""
    message: dict[str, Any] = {"role": "assistant", "content": result.content}
    if result.tool_calls:
        message["tool_calls"] = [call.to_message() for call in result.tool_calls]
    return ChatCompletion.model_validate({
        "id": "chatcmpl-psit-library", "object": "chat.completion", "created": 0,
        "model": result.model or model,
        "choices": [{"index": 0, "message": message, "finish_reason": result.finish_reason or "stop"}],
        "usage": {"prompt_tokens": result.usage.prompt_tokens, "completion_tokens": result.usage.completion_tokens,
                  "total_tokens": result.usage.prompt_tokens + result.usage.completion_tokens},
    })


@dataclass(frozen=True)
class LibraryLink:
    """Where one library operation's calls go: a branch of the episode's session on its loop."""

    session: ModelSession
    loop: asyncio.AbstractEventLoop

    @classmethod
    def here(cls, session: ModelSession, branch: str) -> "LibraryLink":
        """A link for an operation started from the running event loop."""
        return cls(session.branch(branch), asyncio.get_running_loop())


T = TypeVar("T")

_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def library_threads(size: int) -> ThreadPoolExecutor:
    """The process's threads for memory-library operations, at most ``size`` (one pool per size, its
    threads started as they are needed and kept)."""
    with _POOLS_LOCK:
        if size not in _POOLS:
            _POOLS[size] = ThreadPoolExecutor(max_workers=size, thread_name_prefix=f"psit-library-{size}")
        return _POOLS[size]


async def in_library_thread(session: ModelSession, operation: Callable[..., T], *args: Any) -> T:
    """Run a blocking library operation (Mem0's, MemoryOS's) off the event loop, in a pool as large as the
    session's calls in flight. An operation holds its thread while the library waits for the model, so the
    default pool's min(32, cores + 4) threads (6 on two cores) capped every episode's library work at six
    operations at once, whatever the server could take."""
    pool = library_threads(max(1, session.client.settings.concurrency))
    return await asyncio.get_running_loop().run_in_executor(pool, functools.partial(operation, *args))


def _request_digest(params: dict[str, Any]) -> str:
    wanted = {k: params.get(k) for k in ("messages", "tools", "response_format", "temperature")}
    return digest(wanted)


ReplyReader = Callable[[str], "str | None"]
"""A library's check of one reply: the problem that makes it unusable, or None."""


class LibraryClient:
    """Looks like ``openai.OpenAI`` to a library; every call goes through the episode's session. Set
    :attr:`link` and :attr:`ledger` before each operation (a workspace may be reused across episodes).
    """

    def __init__(self, library: str, readers: Mapping[str, ReplyReader] | None = None) -> None:
        self.library = library
        self.readers = dict(readers or {})
        self.link: LibraryLink | None = None
        self.ledger = CallLedger()
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, **params: Any) -> ChatCompletion:
        link, ledger = self.link, self.ledger
        if link is None:
            raise RuntimeError(f"{self.library} made a model call outside an operation of the harness")
        if params.get("stream"):
            raise RuntimeError(f"{self.library} asked for a streamed completion; the harness does not stream")
        messages = list(params.get("messages") or [])
        kind = call_kind(self.library, messages)
        session = link.session.branch(f"{kind}-{_request_digest(params)}")
        call = session.chat(messages, role=LIBRARY_ROLE, tools=params.get("tools"),
                            tool_choice=params.get("tool_choice"),
                            response_format=params.get("response_format"),
                            temperature=params.get("temperature"),
                            max_tokens=params.get("max_tokens") or params.get("max_completion_tokens"))
        try:
            result, problem = asyncio.run_coroutine_threadsafe(self._read(session, kind, call), link.loop).result()
        except Exception as exc:
            ledger.add(HiddenCall(self.library, kind, ok=False, error=f"{type(exc).__name__}: {exc}"[:300]))
            raise
        ledger.add(HiddenCall(self.library, kind, prompt_tokens=result.usage.prompt_tokens,
                              completion_tokens=result.usage.completion_tokens, read_error=problem))
        return completion_from_result(result, session.model)

    async def _read(self, session: ModelSession, kind: str, call: Any) -> tuple[ChatResult, str | None]:
        """The call's result and the problem the library's reader finds in it. Runs on the
        episode's loop, so the diagnostics and call log are only ever touched from there."""
        result = await call
        reader = self.readers.get(kind)
        if reader is None:
            return result, None
        problem = reader(result.content)
        report_helper_read(session, LIBRARY_ROLE, result.content, problem, agent=self.library)
        return result, problem

