"""A fake web server on 127.0.0.2 for the SSRF and path tests (SECURITY.md R1–R5, P4).

127.0.0.2 is loopback; the test configs allow exactly that host
(`http_allow_private_hosts`), so every other loopback form stays refused. Routes:
`/ok` and `/dl/<name>` (JSON), `/redirect?to=URL`, `/hop/N` (N redirects, then
`/ok`), `/endless` (no length, never ends), `/huge` (announces 1 GB), `/drip` (one
byte every 50 ms).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ALLOWED_HOST = "127.0.0.2"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        **headers: str,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        path = parts.path
        try:
            if path == "/ok" or path.startswith("/dl/"):
                self._send(200, json.dumps({"ok": True}).encode())
            elif path == "/redirect":
                self._send(302, b"", "text/plain", Location=query["to"])
            elif path.startswith("/hop/"):
                left = int(path.rsplit("/", 1)[1])
                self._send(
                    302,
                    b"",
                    "text/plain",
                    Location="/ok" if left <= 1 else f"/hop/{left - 1}",
                )
            elif path == "/endless":  # no length, never ends
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                while True:
                    self.wfile.write(b"e" * 65536)
            elif path == "/huge":  # announces 1 GB
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(1 << 30))
                self.end_headers()
                for _ in range(1 << 14):
                    self.wfile.write(b"h" * 65536)
            elif path == "/drip":
                self.send_response(200)
                self.send_header("Content-Type", "audio/mpeg")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                for _ in range(10000):
                    self.wfile.write(b"d")
                    self.wfile.flush()
                    time.sleep(0.05)
            else:
                self._send(404, b"{}")
        except OSError:
            pass  # the executor hung up: what these tests want


@contextmanager
def serve_fake() -> Iterator[str]:
    """The fake server on 127.0.0.2; yields its base URL."""
    server = ThreadingHTTPServer((ALLOWED_HOST, 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://{ALLOWED_HOST}:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
