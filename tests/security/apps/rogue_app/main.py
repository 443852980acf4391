"""Test app without the SDK that misbehaves on purpose (SECURITY.md J2).

`POST /handle` answers by the instruction: `乱码` → bytes that are not JSON, `错形` →
JSON of the wrong shape, `崩溃` → HTTP 500, `不答` → never answers (the connection
stays open), `巨大` → a 20 MB JSON string; anything else → a normal text view.
`GET /health` always answers, so the supervisor keeps it running.
"""

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(os.environ.get("APP_PORT", "5001"))
FOREVER = threading.Event()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status, body, content_type="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802
        if self.path == "/health":
            self._send(200, b'{"status": "ok"}')
        else:
            self._send(404, b'{"status": "error"}')

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        payload = json.loads(self.rfile.read(length) or b"{}")
        instruction = payload.get("instruction") or ""
        if "乱码" in instruction:
            self._send(200, b"\x00\xff<html>not json at all", "text/html")
        elif "错形" in instruction:
            self._send(
                200, json.dumps({"status": "maybe", "view": 3, "data": [1]}).encode()
            )
        elif "崩溃" in instruction:
            self._send(500, b"Internal Server Error: boom", "text/plain")
        elif "不答" in instruction:
            FOREVER.wait()
        elif "巨大" in instruction:
            self._send(
                200,
                json.dumps(
                    {
                        "status": "ok",
                        "view_type": "text",
                        "data": {"content": "x" * (20 << 20)},
                    }
                ).encode(),
            )
        else:
            body = {"status": "ok", "view_type": "text", "data": {"content": "rogue ok"}}
            self._send(200, json.dumps(body).encode())


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
    server.daemon_threads = True
    server.serve_forever()
