"""A fake music catalogue shaped like Apple's iTunes Search API, for tests.

`FakeMusicCatalogue` is a real HTTP server on 127.0.0.1 (an ephemeral port, its own
thread). `GET /search?term=…&media=music&entity=song&limit=N` answers
`{"resultCount": n, "results": [{"trackId", "trackName", "artistName",
"collectionName", "trackTimeMillis", "previewUrl", "artworkUrl100"}]}` for the songs
whose title, artist or album contain every word of `term`; each `previewUrl` serves
a small real WAV file. Set `catalogue.down = True` to answer every request with 503,
as a catalogue that is out of service would. `make_wav` builds a WAV file (with
RIFF INFO title/artist tags, which tinytag reads) for local-library tests.
"""

from __future__ import annotations

import io
import json
import math
import struct
import threading
import wave
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

__all__ = ["CATALOGUE", "FakeMusicCatalogue", "FakeSong", "make_wav"]


@dataclass(frozen=True)
class FakeSong:
    track_id: int
    title: str
    artist: str
    album: str
    millis: int


CATALOGUE: tuple[FakeSong, ...] = (
    FakeSong(1001, "七里香", "周杰伦", "七里香", 299_000),
    FakeSong(1002, "稻香", "周杰伦", "魔杰座", 223_000),
    FakeSong(1003, "晴天", "周杰伦", "叶惠美", 269_000),
    FakeSong(1004, "青花瓷", "周杰伦", "我很忙", 239_000),
    FakeSong(1005, "十年", "陈奕迅", "黑白灰", 205_000),
    FakeSong(2001, "Yesterday", "The Beatles", "Help!", 125_000),
    FakeSong(2002, "Love Story", "Taylor Swift", "Fearless", 235_000),
    FakeSong(2003, "Shake It Off", "Taylor Swift", "1989", 219_000),
)


def make_wav(
    seconds: float = 0.25,
    *,
    title: str | None = None,
    artist: str | None = None,
    rate: int = 8000,
    tone_hz: float = 440.0,
) -> bytes:
    """A mono 8-bit PCM WAV of a sine tone, optionally with RIFF INFO tags."""
    frames = int(seconds * rate)
    samples = bytes(
        int(128 + 100 * math.sin(2 * math.pi * tone_hz * i / rate)) for i in range(frames)
    )
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(samples)
    data = buffer.getvalue()
    tags = [(b"INAM", title), (b"IART", artist)]
    info = b"".join(_info_chunk(key, value) for key, value in tags if value)
    if not info:
        return data
    chunk = b"LIST" + struct.pack("<I", 4 + len(info)) + b"INFO" + info
    body = data[8:] + chunk  # "WAVE" + fmt + data, then the LIST chunk
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _info_chunk(key: bytes, value: str) -> bytes:
    raw = value.encode("utf-8") + b"\x00"
    if len(raw) % 2:
        raw += b"\x00"
    return key + struct.pack("<I", len(raw)) + raw


class FakeMusicCatalogue:
    """The fake catalogue server. Use as a context manager or call start()/stop()."""

    content_type = "text/javascript; charset=utf-8"  # what iTunes really sends

    def __init__(self, songs: tuple[FakeSong, ...] = CATALOGUE):
        self.songs = songs
        self.down = False
        self.requests: list[str] = []
        self.preview = make_wav(0.25)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "catalogue not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def preview_url(self, track_id: int) -> str:
        return f"{self.base_url}/preview/{track_id}.wav"

    def search(self, term: str, limit: int = 50) -> dict[str, Any]:
        words = [w.lower() for w in term.split() if w]
        results = []
        for song in self.songs:
            haystack = f"{song.title} {song.artist} {song.album}".lower()
            if words and all(w in haystack for w in words):
                results.append(
                    {
                        "wrapperType": "track",
                        "kind": "song",
                        "trackId": song.track_id,
                        "trackName": song.title,
                        "artistName": song.artist,
                        "collectionName": song.album,
                        "trackTimeMillis": song.millis,
                        "previewUrl": self.preview_url(song.track_id),
                        "artworkUrl100": f"{self.base_url}/art/{song.track_id}.jpg",
                    }
                )
        results = results[: max(0, limit)]
        return {"resultCount": len(results), "results": results}

    def start(self) -> FakeMusicCatalogue:
        catalogue = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                catalogue.requests.append(self.path)
                if catalogue.down:
                    self._send(503, b"Service Unavailable", "text/plain")
                    return
                url = urlparse(self.path)
                query = parse_qs(url.query)
                if url.path == "/search":
                    term = query.get("term", [""])[0]
                    try:
                        limit = int(query.get("limit", ["50"])[0])
                    except ValueError:
                        limit = 50
                    body = json.dumps(catalogue.search(term, limit), ensure_ascii=False)
                    self._send(200, body.encode("utf-8"), catalogue.content_type)
                elif url.path.startswith("/preview/") and url.path.endswith(".wav"):
                    self._send(200, catalogue.preview, "audio/wav")
                else:
                    self._send(404, b"not found", "text/plain")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeMusicCatalogue:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
