"""A fake of Google's free web speech service (what SpeechRecognition's
`recognize_google` posts to), on 127.0.0.1: it records each request (query, content
type, body) and answers in Google's format, one JSON object per line with an empty
`result` first."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["FakeGoogleSpeech"]


class FakeGoogleSpeech:
    def __init__(self, transcript: str):
        self.transcript = transcript
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                query = parse_qs(urlsplit(self.path).query)
                fake.requests.append(
                    {
                        "path": urlsplit(self.path).path,
                        "lang": query.get("lang", [""])[0],
                        "type": self.headers.get("Content-Type", ""),
                        "body": body,
                    }
                )
                best = {"transcript": fake.transcript, "confidence": 0.93}
                lines = [
                    {"result": []},
                    {"result": [{"alternative": [best], "final": True}], "result_index": 0},
                ]
                payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{port}/speech-api/v2/recognize"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
