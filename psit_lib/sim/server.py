"""The simulator as a loopback HTTP server (``psit sim serve``; README.md, "Serving it on a port"), serving
the same engine as the in-process transport."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

from .engine import handle_http


class LoopbackHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    default_profile = "default"

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes: without TCP_NODELAY, Nagle plus delayed
        # ACKs add ~40 ms to every keep-alive request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _respond(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = dict(self.headers.items())
        headers.setdefault("X-PSIT-Profile", self.default_profile)
        status, payload = handle_http(self.command, self.path, headers, raw)
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _respond

    def log_message(self, format: str, *args) -> None:
        pass


class LoopbackServer(ThreadingHTTPServer):
    """A threading server with a listen backlog for hundreds of simultaneous clients (the
    stdlib default of 5 makes connection 6 onwards wait for a SYN retry, about a second)."""

    request_queue_size = 1024
    daemon_threads = True


def make_server(host: str = "127.0.0.1", port: int = 0, profile: str = "default") -> ThreadingHTTPServer:
    handler = type("SimHandler", (LoopbackHandler,), {"default_profile": profile})
    return LoopbackServer((host, port), handler)


@contextlib.contextmanager
def running_server(profile: str = "default") -> Iterator[str]:
    """Yield the base URL (``http://127.0.0.1:PORT/v1``) of a simulator server in a thread."""
    server = make_server(port=0, profile=profile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def serve(host: str = "127.0.0.1", port: int = 8765, profile: str = "default") -> None:
    server = make_server(host, port, profile)
    print(f"psit simulator (simulated model, profile {profile!r}) on http://{host}:{port}/v1 — Ctrl-C stops")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
