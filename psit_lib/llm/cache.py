"""Persistent response cache (SQLite).

The key is a canonical hash of everything that determines a reply — model, endpoint, role,
messages, tools, sampling parameters and seed — and never the credentials. Modes:

* ``off``: every call goes to the model;
* ``rw``: hits are served from the cache (marked ``cached``), misses are stored;
* ``replay``: hits only; a miss raises :class:`CacheMissError` naming the request, so a
  published run can be re-executed bit for bit without a model.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path

from psit_lib.llm.errors import CacheMissError
from psit_lib.llm.types import ChatRequest, ChatResult


def request_key(request: ChatRequest) -> str:
    """Canonical SHA-256 of the request (model and wire body, plus the harness's role label);
    equal requests give equal keys across processes. The replica that served it is not part of
    the key: any replica of the model may answer a cached request. On the simulator the model
    name carries the profile (``psit-sim:<profile>``), so profiles never share entries."""
    return hashlib.sha256(request.canonical.encode()).hexdigest()


class ResponseCache:
    """A small thread-safe SQLite key/value store of ChatResults."""

    def __init__(self, path: str | Path, mode: str = "rw") -> None:
        if mode not in ("off", "rw", "replay"):
            raise ValueError(f"cache mode must be off, rw or replay, not {mode!r}")
        self.mode = mode
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        if mode != "off":
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, role TEXT, "
                "request TEXT, result TEXT, created REAL)")

    def get(self, request: ChatRequest) -> ChatResult | None:
        """The cached result (marked cached, with the usage the endpoint reported when it was
        made), None on a miss in ``rw`` mode. Records keep the call's size either way; the
        client's statistics count only tokens actually spent."""
        if self._conn is None:
            return None
        key = request_key(request)
        with self._lock:
            row = self._conn.execute("SELECT result FROM responses WHERE key=?", (key,)).fetchone()
        if row is None:
            if self.mode == "replay":
                raise CacheMissError(
                    f"replay-only cache {self.path} has no entry for {request.describe()} "
                    f"(key {key[:16]}); run once with PSIT_CACHE=rw to record it")
            return None
        data = json.loads(row[0])
        data.update(cached=True)
        return ChatResult.from_json(data)

    def put(self, request: ChatRequest, result: ChatResult) -> None:
        if self._conn is None or self.mode != "rw":
            return
        key = request_key(request)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?)",
                (key, request.role, request.canonical, json.dumps(dataclasses.asdict(result)), time.time()))

    def close(self) -> None:
        if self._conn is not None:
            with self._lock:
                self._conn.close()
            self._conn = None
