"""Hidden model calls: the calls a memory library makes on its own, counted per agent turn.

A baseline's private cost is not only the retrieved block: the library also calls the model
to extract facts, decide updates, summarise or tag. Those calls never appear in the public
dialogue, so each adapter records them here (kind, token usage, success) and the agent puts
them in its state (``hidden_calls``), one list per conversation lineage.

Real libraries make the calls through their own OpenAI client; :class:`CountingOpenAI` is the
client handed to them: it forwards each ``chat.completions.create`` to the configured endpoint
and appends a :class:`HiddenCall` to the current :class:`CallLedger`.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from types import SimpleNamespace
from typing import Any

from psit_lib.studies.psit.agents.baselines.endpoint import LibraryEndpoint, openai_client


@dataclass(frozen=True)
class HiddenCall:
    """One model call a memory library made that the user never sees."""

    library: str
    kind: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ok: bool = True
    error: str | None = None

    def as_record(self, turn: int) -> dict[str, Any]:
        return {"turn": turn, **asdict(self)}


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

    def failures(self) -> list[HiddenCall]:
        return [c for c in self.calls if not c.ok]


def _classify(messages: Any, response_format: Any) -> str:
    from psit_lib.sim.roles.memory_libraries import classify_request

    return classify_request(list(messages or []), response_format) or "unrecognised"


class CountingOpenAI:
    """Looks like ``openai.OpenAI`` to a library (``.chat.completions.create``); counts calls.

    The library's own model name is replaced by the endpoint's, so a library configured for
    e.g. ``gpt-4o-mini`` talks to whatever model the run uses. Swap :attr:`ledger` between
    operations to attribute calls to the turn that caused them.
    """

    def __init__(self, endpoint: LibraryEndpoint, library: str, ledger: CallLedger | None = None) -> None:
        self.endpoint = endpoint
        self.library = library
        self.ledger = ledger or CallLedger()
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, **params: Any) -> Any:
        params["model"] = self.endpoint.model
        kind = _classify(params.get("messages"), params.get("response_format"))
        ledger = self.ledger
        try:
            response = openai_client(self.endpoint).chat.completions.create(**params)
        except Exception as exc:
            ledger.add(HiddenCall(self.library, kind, ok=False, error=f"{type(exc).__name__}: {exc}"[:300]))
            raise
        usage = getattr(response, "usage", None)
        ledger.add(HiddenCall(self.library, kind,
                              prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                              completion_tokens=getattr(usage, "completion_tokens", 0) or 0))
        return response


def summarise_hidden_calls(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over hidden-call records: count, failures, tokens, and count per kind."""
    by_kind: dict[str, int] = {}
    for rec in records:
        by_kind[rec["kind"]] = by_kind.get(rec["kind"], 0) + 1
    return {"calls": len(records), "failed": sum(not r["ok"] for r in records),
            "prompt_tokens": sum(r["prompt_tokens"] for r in records),
            "completion_tokens": sum(r["completion_tokens"] for r in records),
            "by_kind": dict(sorted(by_kind.items()))}
