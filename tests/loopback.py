"""A scriptable loopback HTTP server for the model layer's network tests."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from psit_lib.sim.engine import handle_http


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
    """Write one JSON response; a client that already left is not an error."""
    data = json.dumps(payload).encode()
    try:
        handler.send_response(status)
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


class LoopbackServer:
    """A threading HTTP server on a free loopback port, serving ``handler`` until ``close``."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing, so test output stays readable."""

    def log_message(self, *args) -> None:
        pass


class HandlerServer:
    """A test server built around a request handler class: ``url`` while serving, ``close``."""

    _loop: LoopbackServer
    url: str

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._loop = LoopbackServer(handler)
        self.url = self._loop.url

    def close(self) -> None:
        self._loop.close()


FAULT_KINDS = ("http_429", "http_500", "http_503", "reset", "hang", "malformed_json", "empty_choices", "truncated")


@dataclass
class Scripted:
    """One scripted reply: HTTP status, extra headers, optional delay before answering; or a
    ``fault`` of :data:`FAULT_KINDS` that is not an HTTP status (a reset connection, a body that
    is not JSON, a completion without choices, a body cut short)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    fault: str | None = None


def scripted_fault(kind: str, hang_seconds: float = 1.0) -> Scripted:
    """The scripted reply that produces one fault kind."""
    if kind.startswith("http_"):
        status = int(kind.split("_")[1])
        return Scripted(status=status, headers={"retry-after-ms": "10"} if status == 429 else {})
    if kind == "hang":
        return Scripted(delay=hang_seconds)
    return Scripted(fault=kind)


class RandomFaults:
    """Injects a fault of a random kind into a share of requests (seeded; thread-safe)."""

    def __init__(self, rate: float, kinds=FAULT_KINDS, seed: int = 0, hang_seconds: float = 1.0) -> None:
        import random

        self.rate, self.kinds, self.hang_seconds = rate, tuple(kinds), hang_seconds
        self._rng = random.Random(seed)
        self.injected: dict[str, int] = {}

    def next(self) -> Scripted:
        if self._rng.random() >= self.rate:
            return Scripted()
        kind = self._rng.choice(self.kinds)
        self.injected[kind] = self.injected.get(kind, 0) + 1
        return scripted_fault(kind, self.hang_seconds)


class FaultServer(HandlerServer):
    """Loopback server that plays a script of faults, then answers from the simulator."""

    def __init__(self) -> None:
        self.script: list[Scripted] = []
        self.random_faults: RandomFaults | None = None
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                with outer._lock:
                    outer.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": raw,
                                           "time": time.monotonic()})
                    if outer.script:
                        step = outer.script.pop(0)
                    elif outer.random_faults is not None:
                        step = outer.random_faults.next()
                    else:
                        step = Scripted()
                if step.delay:
                    time.sleep(step.delay)
                if step.fault == "reset":
                    self.close_connection = True
                    self.connection.shutdown(2)  # the peer sees the connection reset, no response
                    return
                if step.fault in ("malformed_json", "truncated"):
                    body = b'{"id": "x", "choices": [{"index": 0, "mess'
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    # truncated: the declared length promises more than arrives before the close
                    self.send_header("content-length", str(len(body) + (200 if step.fault == "truncated" else 0)))
                    self.end_headers()
                    self.wfile.write(body)
                    self.close_connection = True
                    return
                if step.fault == "empty_choices":
                    status, payload = 200, {"id": "x", "object": "chat.completion", "created": 0,
                                            "model": "psit-sim", "choices": []}
                elif step.status == 200:
                    status, payload = handle_http("POST", self.path, dict(self.headers.items()), raw)
                else:
                    status, payload = step.status, {"error": {"message": f"scripted {step.status}"}}
                send_json(self, status, payload, step.headers)


        self._serve(Handler)
        self.server, self.thread = self._loop.server, self._loop.thread





class GarbageServer(HandlerServer):
    """An OpenAI-compatible loopback endpoint that answers every chat completion with well-formed
    garbage (seeded word salad), as an adversarial proxy or a broken model would: the wire is
    fine, nothing in the replies can be read."""

    WORDS = ("lorem", "ipsum", "banana", "quantum", "seventeen", "blue", "###", "{", "maybe", "teapot")

    def __init__(self, model: str = "garbage-model", seed: int = 0) -> None:
        import random

        rng, lock = random.Random(seed), threading.Lock()
        self.model, self.calls = model, 0
        outer = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                send_json(self, 200, {"object": "list", "data": [{"id": outer.model, "object": "model"}]})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with lock:
                    outer.calls += 1
                    text = " ".join(rng.choice(outer.WORDS) for _ in range(rng.randint(3, 12)))
                send_json(self, 200, {"id": "g", "object": "chat.completion", "created": 0, "model": outer.model,
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": text}}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 5}})


        self._serve(Handler)

