"""What the tests of aios_sdk.http_server share: servers on port 0 and a raw client.

`servers` starts `LoopbackServer`s for one test, `echo` one for a test module
(`echo_app`: one behaviour per path); `Wire` is one client socket sending exact
bytes and parsing answers strictly. A test module takes the fixtures with
`pytest_plugins = ["tests.core.http_server_harness"]`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from aios_sdk.http_server import LoopbackServer

WAIT = 10.0  # seconds any wait may take before the test fails


# ------------------------------------------------------------------ servers


class Servers:
    """Starts `LoopbackServer`s in background threads; the fixture stops them."""

    def __init__(self) -> None:
        self.running: list[tuple[LoopbackServer, threading.Thread]] = []

    def start(self, app: Callable[..., Any], **options: Any) -> LoopbackServer:
        server = LoopbackServer(app, 0, **options)
        thread = threading.Thread(
            target=server.serve_forever, name=f"test-accept-{server.port}", daemon=True
        )
        thread.start()
        self.running.append((server, thread))
        return server

    def thread_of(self, server: LoopbackServer) -> threading.Thread:
        return next(thread for srv, thread in self.running if srv is server)

    def stop_all(self) -> None:
        for server, thread in self.running:
            server.stop()
            thread.join(timeout=WAIT)


@pytest.fixture
def servers() -> Iterator[Servers]:
    started = Servers()
    yield started
    started.stop_all()


def json_answer(start_response: Callable[..., Any], status: str, value: Any) -> list[bytes]:
    body = json.dumps(value).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    )
    return [body]


def environ_view(environ: dict[str, Any]) -> dict[str, Any]:
    keys = ("REQUEST_METHOD", "PATH_INFO", "QUERY_STRING", "SERVER_PROTOCOL")
    view = {k: environ[k] for k in keys}
    view.update(
        {
            k: v
            for k, v in environ.items()
            if k.startswith("HTTP_") or k in ("CONTENT_TYPE", "CONTENT_LENGTH")
        }
    )
    return view


def echo_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    """The module's general app: one behaviour per path."""
    path = environ["PATH_INFO"]
    body = environ["wsgi.input"]
    if path.startswith("/environ"):
        return json_answer(start_response, "200 OK", environ_view(environ))
    if path == "/read":
        return json_answer(
            start_response, "200 OK", {"body": body.read().decode("latin-1")}
        )
    if path == "/read-pieces":
        pieces = []
        while piece := body.read(3):
            pieces.append(piece.decode("latin-1"))
        return json_answer(start_response, "200 OK", {"pieces": pieces})
    if path == "/readline":
        lines = [body.readline().decode("latin-1"), body.readline(4).decode("latin-1")]
        lines += [line.decode("latin-1") for line in body]
        return json_answer(start_response, "200 OK", {"lines": lines})
    if path == "/ignore-body":  # answers without touching wsgi.input
        return json_answer(start_response, "200 OK", {"ignored": True})
    if path == "/too-large":
        return json_answer(start_response, "413 Payload Too Large", {"status": "error"})
    if path == "/unknown-length":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return (part for part in (b"first,", b"", b"second"))
    if path == "/sized":
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "5")])
        return [b"sized"]
    if path == "/no-content":
        start_response("204 No Content", [])
        return []
    if path == "/short-length":  # declares more than it sends
        start_response("200 OK", [("Content-Length", "10")])
        return [b"short"]
    if path == "/long-length":  # declares less than it sends
        start_response("200 OK", [("Content-Length", "4")])
        return [b"long", b"-and-more"]
    if path == "/raise-before":
        raise RuntimeError("the app broke before start_response")
    if path == "/raise-in-first":

        def failing() -> Iterator[bytes]:
            raise RuntimeError("the app broke before its first chunk")
            yield b""  # pragma: no cover

        return failing()
    if path == "/raise-mid":

        def half() -> Iterator[bytes]:
            start_response("200 OK", [("Content-Type", "text/plain")])
            yield b"half of it"
            raise RuntimeError("the app broke mid-stream")

        return half()
    if path == "/hop-by-hop":
        start_response(
            "200 OK",
            [
                ("Content-Length", "3"),
                ("Connection", "close"),
                ("Transfer-Encoding", "chunked"),
                ("Keep-Alive", "timeout=1"),
                ("X-Kept", "yes"),
            ],
        )
        return [b"hop"]
    return json_answer(start_response, "200 OK", {"path": path})


def serve_echo(**options: Any) -> Iterator[int]:
    """A fixture's body: the port of an `echo_app` server, stopped at the end."""
    started = Servers()
    try:
        yield started.start(echo_app, **options).port
    finally:
        started.stop_all()


@pytest.fixture(scope="module")
def echo() -> Iterator[int]:
    yield from serve_echo(threads=4)


# --------------------------------------------------------------------- wire


@dataclass
class RawAnswer:
    status: int
    headers: dict[str, str]  # names lower-cased; repeated names joined with ","
    body: bytes
    repeated: list[str]  # names that came more than once


class Wire:
    """One raw client socket: exact bytes out, answers parsed strictly."""

    def __init__(self, port: int, timeout: float = WAIT):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buffer = b""

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the server closed the connection")
        self.buffer += data

    def _take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._fill()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            self._fill()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def head(self) -> tuple[int, dict[str, str], list[str]]:
        status_line = self._line()
        version, status, *_ = status_line.split(b" ", 2)
        assert version == b"HTTP/1.1", status_line
        headers: dict[str, str] = {}
        repeated: list[str] = []
        while line := self._line():
            name, colon, value = line.decode("latin-1").partition(":")
            assert colon and name == name.strip(), line
            name = name.lower()
            if name in headers:
                repeated.append(name)
                headers[name] += "," + value.strip()
            else:
                headers[name] = value.strip()
        return int(status), headers, repeated

    def chunk(self) -> bytes:
        """One chunk of a chunked body (b"" for the last one, trailers read)."""
        size = int(self._line(), 16)
        if size == 0:
            assert self._line() == b""
            return b""
        data = self._take(size)
        assert self._take(2) == b"\r\n"
        return data

    def answer(self, method: str = "GET") -> RawAnswer:
        status, headers, repeated = self.head()
        if method == "HEAD" or status in (100, 204, 304):
            body = b""
        elif headers.get("transfer-encoding") == "chunked":
            parts = []
            while part := self.chunk():
                parts.append(part)
            body = b"".join(parts)
        elif "content-length" in headers:
            # identical repeats are tolerated here, as by clients; a test looks for them
            (length,) = {value.strip() for value in headers["content-length"].split(",")}
            body = self._take(int(length))
        else:
            body = self.rest()
        return RawAnswer(status, headers, body, repeated)

    def rest(self) -> bytes:
        """Everything until the server closes; a reset counts as the close."""
        try:
            while True:
                self._fill()
        except (EOFError, ConnectionResetError):
            pass
        data, self.buffer = self.buffer, b""
        return data

    def closed_by_server(self) -> bool:
        """The server ends the connection with nothing more to say."""
        return self.rest() == b""


def request_bytes(
    method: str,
    path: str,
    headers: list[tuple[str, str]] | None = None,
    body: bytes = b"",
    version: str = "HTTP/1.1",
) -> bytes:
    lines = [f"{method} {path} {version}", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in headers or []]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.01)


def assert_error_shape(answer: RawAnswer, status: int) -> None:
    assert answer.status == status
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["connection"] == "close"
    document = json.loads(answer.body)
    assert document["status"] == "error"
    assert set(document["error"]) == {"code", "message"}
    assert document["error"]["code"] and document["error"]["message"]
