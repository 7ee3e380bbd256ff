"""A scriptable loopback HTTP server for the model layer's network tests."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from psit_lib.sim.engine import handle_http


@dataclass
class Scripted:
    """One scripted reply: HTTP status, extra headers, optional delay before answering."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class FaultServer:
    """Loopback server that plays a script of faults, then answers from the simulator."""

    def __init__(self) -> None:
        self.script: list[Scripted] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                with outer._lock:
                    outer.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": raw,
                                           "time": time.monotonic()})
                    step = outer.script.pop(0) if outer.script else Scripted()
                if step.delay:
                    time.sleep(step.delay)
                if step.status == 200:
                    status, payload = handle_http("POST", self.path, dict(self.headers.items()), raw)
                else:
                    status, payload = step.status, {"error": {"message": f"scripted {step.status}"}}
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for k, v in step.headers.items():
                        self.send_header(k, v)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


