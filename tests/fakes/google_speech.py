"""A fake of Google's free web speech service (what SpeechRecognition's
`recognize_google` posts to), served on 127.0.0.1: it records each request (path,
`lang`, content type, body) and answers in Google's format, one JSON object per line
with an empty `result` first."""

from __future__ import annotations

import json
from typing import Any

from flask import Flask, Response, request

from aios_runtime.serving import start_server

__all__ = ["FakeGoogleSpeech"]

PATH = "/speech-api/v2/recognize"


class FakeGoogleSpeech:
    def __init__(self, transcript: str):
        self.transcript = transcript
        self.requests: list[dict[str, Any]] = []
        app = Flask("fake_google_speech")
        app.add_url_rule(PATH, "recognize", self._recognize, methods=["POST"])
        self._server = start_server(app, 0)
        self.url = self._server.url + PATH

    def _recognize(self) -> Response:
        self.requests.append(
            {
                "path": request.path,
                "lang": request.args.get("lang", ""),
                "type": request.headers.get("Content-Type", ""),
                "body": request.get_data(),
            }
        )
        best = {"transcript": self.transcript, "confidence": 0.93}
        lines = [
            {"result": []},
            {"result": [{"alternative": [best], "final": True}], "result_index": 0},
        ]
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        return Response(text, mimetype="application/json")

    def close(self) -> None:
        self._server.stop()
