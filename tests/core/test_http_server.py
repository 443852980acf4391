"""aios_sdk.http_server.LoopbackServer over real sockets: keep-alive and pipelining,
request bodies, refusals of hostile or unsupported bytes, the environ the app sees,
how answers are framed, the connection/thread/idle limits and the server's life.

Raw bytes over `socket` where the point is the wire; `aios_sdk.loopback_http`,
`http.client` and `requests` as the real clients. No timing asserts: waits are on
Events or polls with generous timeouts.
"""

from __future__ import annotations

import ctypes
import http.client
import json
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psutil
import pytest
import requests

from aios_sdk.http_server import MAX_DRAIN, LoopbackServer
from aios_sdk.loopback_http import Connection

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


def _json(start_response: Callable[..., Any], status: str, value: Any) -> list[bytes]:
    body = json.dumps(value).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    )
    return [body]


def _environ_view(environ: dict[str, Any]) -> dict[str, Any]:
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


def _echo_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    """The module's general app: one behaviour per path."""
    path = environ["PATH_INFO"]
    body = environ["wsgi.input"]
    if path.startswith("/environ"):
        return _json(start_response, "200 OK", _environ_view(environ))
    if path == "/read":
        return _json(start_response, "200 OK", {"body": body.read().decode("latin-1")})
    if path == "/read-pieces":
        pieces = []
        while piece := body.read(3):
            pieces.append(piece.decode("latin-1"))
        return _json(start_response, "200 OK", {"pieces": pieces})
    if path == "/readline":
        lines = [body.readline().decode("latin-1"), body.readline(4).decode("latin-1")]
        lines += [line.decode("latin-1") for line in body]
        return _json(start_response, "200 OK", {"lines": lines})
    if path == "/ignore-body":  # answers without touching wsgi.input
        return _json(start_response, "200 OK", {"ignored": True})
    if path == "/too-large":
        return _json(start_response, "413 Payload Too Large", {"status": "error"})
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
    return _json(start_response, "200 OK", {"path": path})


@pytest.fixture(scope="module")
def echo() -> Iterator[int]:
    server = LoopbackServer(_echo_app, 0, threads=4)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.port
    server.stop()
    thread.join(timeout=WAIT)


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


def _request(
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


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.01)


def _assert_error_shape(answer: RawAnswer, status: int) -> None:
    assert answer.status == status
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["connection"] == "close"
    document = json.loads(answer.body)
    assert document["status"] == "error"
    assert set(document["error"]) == {"code", "message"}
    assert document["error"]["code"] and document["error"]["message"]


# --------------------------------------------------------------- keep-alive


def test_several_requests_share_one_connection(echo: int) -> None:
    conn = Connection("127.0.0.1", echo, timeout=WAIT)
    try:
        first = conn.request("GET", "/one", None, {"Host": "127.0.0.1"})
        sock = conn._sock  # noqa: SLF001 - the socket identity is the point
        second = conn.request("POST", "/read", b"payload", {"Host": "127.0.0.1"})
        third = conn.request("GET", "/three", None, {"Host": "127.0.0.1"})
        assert conn._sock is sock  # noqa: SLF001
    finally:
        conn.close()
    assert json.loads(first.body) == {"path": "/one"}
    assert json.loads(second.body) == {"body": "payload"}
    assert json.loads(third.body) == {"path": "/three"}


def test_http_client_keeps_the_connection(echo: int) -> None:
    client = http.client.HTTPConnection("127.0.0.1", echo, timeout=WAIT)
    try:
        client.request("GET", "/a")
        first = client.getresponse()
        assert json.loads(first.read()) == {"path": "/a"}
        local = client.sock.getsockname()
        client.request("GET", "/unknown-length")
        second = client.getresponse()
        assert second.getheader("Transfer-Encoding") == "chunked"
        assert second.read() == b"first,second"
        assert client.sock.getsockname() == local
    finally:
        client.close()


def test_pipelined_requests_are_answered_in_order(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(
            _request("GET", "/p1")
            + _request("POST", "/read", body=b"second body")
            + b"\r\n"  # an empty line between requests is allowed
            + _request("GET", "/sized")
            + _request("GET", "/p4", [("Connection", "close")])
        )
        assert json.loads(wire.answer().body) == {"path": "/p1"}
        assert json.loads(wire.answer().body) == {"body": "second body"}
        assert wire.answer().body == b"sized"
        last = wire.answer()
        assert json.loads(last.body) == {"path": "/p4"}
        assert last.headers["connection"] == "close"
        assert wire.closed_by_server()


def test_connection_close_is_honoured(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/bye", [("Connection", "close")]))
        answer = wire.answer()
        assert answer.status == 200
        assert answer.headers["connection"] == "close"
        assert wire.closed_by_server()


def test_http_1_0_closes_unless_asked_to_keep_alive(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/old", version="HTTP/1.0"))
        answer = wire.answer()
        assert json.loads(answer.body) == {"path": "/old"}
        assert answer.headers["connection"] == "close"
        assert wire.closed_by_server()
    with Wire(echo) as wire:
        for n in range(2):
            wire.send(
                _request(
                    "GET", f"/kept{n}", [("Connection", "keep-alive")], version="HTTP/1.0"
                )
            )
            answer = wire.answer()
            assert json.loads(answer.body) == {"path": f"/kept{n}"}
            assert answer.headers["connection"] == "keep-alive"


# -------------------------------------------------------------------- bodies


def test_a_content_length_body_reaches_the_app_exactly(echo: int) -> None:
    data = "héllo\r\nwörld\x00 \xff".encode("latin-1")
    with Wire(echo) as wire:
        wire.send(
            _request("POST", "/read", body=data)
            + _request("POST", "/read-pieces", body=b"abcdefgh")
        )
        assert json.loads(wire.answer().body)["body"].encode("latin-1") == data
        assert json.loads(wire.answer().body) == {"pieces": ["abc", "def", "gh"]}
        wire.send(_request("POST", "/readline", body=b"line one\nline two\nthree\nlast"))
        assert json.loads(wire.answer().body) == {
            "lines": ["line one\n", "line", " two\n", "three\n", "last"]
        }


def test_a_body_split_across_packets_is_read_whole(echo: int) -> None:
    with Wire(echo) as wire:
        request = _request("POST", "/read", body=b"0123456789" * 1000)
        head_end = request.index(b"\r\n\r\n") + 4
        wire.send(request[:head_end])
        wire.send(request[head_end : head_end + 10])
        wire.send(request[head_end + 10 :])
        assert json.loads(wire.answer().body)["body"] == "0123456789" * 1000


def test_an_unread_body_is_drained_for_the_next_request(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(
            _request("POST", "/ignore-body", body=b"GET /smuggled HTTP/1.1\r\n\r\n" * 100)
        )
        first = wire.answer()
        assert json.loads(first.body) == {"ignored": True}
        assert "connection" not in first.headers
        wire.send(_request("GET", "/after"))
        assert json.loads(wire.answer().body) == {"path": "/after"}


def test_an_early_answer_to_a_large_upload_reaches_the_client(echo: int) -> None:
    upload = b"x" * (MAX_DRAIN * 3)  # too much to skip: the server closes after it
    answer = requests.post(f"http://127.0.0.1:{echo}/too-large", data=upload, timeout=WAIT)
    assert answer.status_code == 413
    with Wire(echo) as wire:
        wire.send(_request("POST", "/too-large", body=upload))
        early = wire.answer()
        assert early.status == 413
        assert early.headers.get("connection") == "close"
        assert wire.closed_by_server()


def test_expect_100_continue_is_answered_before_the_body(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(
            b"POST /read HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n"
            b"Expect: 100-continue\r\n\r\n"
        )
        interim = wire.answer()
        assert interim.status == 100
        assert interim.headers == {}
        wire.send(b"body")
        assert json.loads(wire.answer().body) == {"body": "body"}
        wire.send(_request("GET", "/next"))  # the connection still works
        assert json.loads(wire.answer().body) == {"path": "/next"}


def test_no_100_continue_after_a_final_answer(echo: int) -> None:
    """The app answered without reading: a late 100 would be taken for the next
    answer, and a body the client then withholds would swallow the next request."""
    with Wire(echo) as wire:
        wire.send(
            b"POST /ignore-body HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n"
            b"Expect: 100-continue\r\n\r\n"
        )
        final = wire.answer()
        assert final.status == 200
        assert final.headers["connection"] == "close"
        wire.send(b"body")  # the client may still send it; it is dropped
        assert wire.closed_by_server()


# ------------------------------------------------------------------ refusals

LONG_TARGET = "/" + "a" * (9 << 10)
REFUSED = {
    "chunked": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"4\r\nbody\r\n0\r\n\r\n",
        501,
    ),
    "te-and-cl": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
        b"Transfer-Encoding: chunked\r\n\r\nbody",
        501,
    ),
    "two-lengths": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nbody!",
        400,
    ),
    "length-list": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 4, 4\r\n\r\nbody",
        400,
    ),
    "length-word": (b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: four\r\n\r\n", 400),
    "length-negative": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        400,
    ),
    "length-plus": (
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: +4\r\n\r\nbody",
        400,
    ),
    "line-two-parts": (b"GET /\r\nHost: x\r\n\r\n", 400),
    "line-double-space": (b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "line-bad-method": (b"G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "line-bad-version": (b"GET / HTCPCP/1.0\r\nHost: x\r\n\r\n", 400),
    "line-control-in-target": (b"GET /a\x01b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "http2": (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    "request-line-too-long": (
        f"GET {LONG_TARGET} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
        414,
    ),
    "head-too-large": (
        b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"b" * (70 << 10) + b"\r\n\r\n",
        431,
    ),
    "too-many-headers": (
        b"GET / HTTP/1.1\r\n" + b"".join(b"X-H%d: v\r\n" % n for n in range(101)) + b"\r\n",
        431,
    ),
    "space-before-colon": (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
    "space-in-name": (b"GET / HTTP/1.1\r\nHost: x\r\nX Token: y\r\n\r\n", 400),
    "no-colon": (b"GET / HTTP/1.1\r\nHost: x\r\nJustAName\r\n\r\n", 400),
    "folded": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: one\r\n two\r\n\r\n", 400),
    "folded-tab": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: one\r\n\ttwo\r\n\r\n", 400),
    "control-in-value": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: o\x01ne\r\n\r\n", 400),
    "nul-in-value": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: o\x00ne\r\n\r\n", 400),
    "bare-lf-in-value": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: one\nX-B: two\r\n\r\n", 400),
    "bare-cr-in-value": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: one\rX-B: two\r\n\r\n", 400),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_requests_get_a_json_error_and_a_closed_connection(
    echo: int, case: str
) -> None:
    data, status = REFUSED[case]
    with Wire(echo) as wire:
        wire.send(data)
        answer = wire.answer()
        _assert_error_shape(answer, status)
        assert wire.closed_by_server()


@pytest.mark.parametrize("case", ["request-line-too-long", "head-too-large"])
def test_size_limits_hold_however_the_head_is_cut(echo: int, case: str) -> None:
    """Sent in small pieces, the limit is met while the head is still incomplete."""
    data, status = REFUSED[case]
    with Wire(echo) as wire:
        try:
            for start in range(0, len(data), 1000):
                wire.send(data[start : start + 1000])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server refused before the end; its answer is still readable
        _assert_error_shape(wire.answer(), status)
        assert wire.closed_by_server()


def test_limits_are_not_too_strict(echo: int) -> None:
    target = "/" + "a" * ((8 << 10) - 40)
    headers = [(f"X-H{n}", "v" * 500) for n in range(98)]
    with Wire(echo) as wire:
        wire.send(_request("GET", target, headers))
        answer = wire.answer()
        assert answer.status == 200
        assert json.loads(answer.body) == {"path": target}


def test_a_refused_request_reaches_no_app_and_smuggles_nothing(servers: Servers) -> None:
    seen: list[str] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        seen.append(environ["PATH_INFO"])
        return _json(start_response, "200 OK", {})

    server = servers.start(app)
    with Wire(server.port) as wire:
        wire.send(
            b"POST /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Length: 30\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n"
        )
        assert wire.answer().status == 501
        assert wire.closed_by_server()
    assert seen == []


# ------------------------------------------------------------ header mapping


def test_underscore_headers_never_pose_as_dashed_ones(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/environ", [("X_AIOS_Token", "forged")]))
        environ = json.loads(wire.answer().body)
        assert "HTTP_X_AIOS_TOKEN" not in environ
        assert "forged" not in json.dumps(environ)
        wire.send(
            _request(
                "GET", "/environ", [("X_AIOS_Token", "forged"), ("X-AIOS-Token", "real")]
            )
        )
        assert json.loads(wire.answer().body)["HTTP_X_AIOS_TOKEN"] == "real"
        wire.send(
            _request(
                "GET", "/environ", [("X-AIOS-Token", "real"), ("X_AIOS_Token", "forged")]
            )
        )
        assert json.loads(wire.answer().body)["HTTP_X_AIOS_TOKEN"] == "real"


def test_header_mapping_into_environ(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(
            _request(
                "POST",
                "/environ",
                [
                    ("Accept", "text/html"),
                    ("accept", "application/json"),
                    ("Content-Type", "application/json"),
                    ("X-Spaced", "  padded value\t"),
                    ("X-Latin", "caf\xe9"),
                ],
                body=b"{}",
            )
        )
        environ = json.loads(wire.answer().body)
    assert environ["HTTP_ACCEPT"] == "text/html,application/json"
    assert environ["CONTENT_TYPE"] == "application/json"
    assert environ["CONTENT_LENGTH"] == "2"
    assert "HTTP_CONTENT_TYPE" not in environ
    assert "HTTP_CONTENT_LENGTH" not in environ
    assert environ["HTTP_X_SPACED"] == "padded value"
    assert environ["HTTP_X_LATIN"] == "caf\xe9"
    assert environ["HTTP_HOST"] == "127.0.0.1"
    assert environ["SERVER_PROTOCOL"] == "HTTP/1.1"


def test_content_length_key_only_when_a_length_came(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/environ"))
        assert "CONTENT_LENGTH" not in json.loads(wire.answer().body)
        wire.send(_request("POST", "/environ", [("Content-Length", "0")]))
        assert json.loads(wire.answer().body)["CONTENT_LENGTH"] == "0"


def test_path_is_percent_decoded_and_query_kept_raw(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/environ/a%20b/%E4%BD%A0/%2F?q=a%20b&x=%E4%BD%A0+c&e="))
        environ = json.loads(wire.answer().body)
    assert environ["PATH_INFO"] == "/environ/a b/\xe4\xbd\xa0//"  # latin-1, as WSGI wants
    assert environ["PATH_INFO"].encode("latin-1").decode("utf-8") == "/environ/a b/你//"
    assert environ["QUERY_STRING"] == "q=a%20b&x=%E4%BD%A0+c&e="


def test_absolute_form_target(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "http://127.0.0.1:1/environ?x=1"))
        environ = json.loads(wire.answer().body)
        assert environ["PATH_INFO"] == "/environ"
        assert environ["QUERY_STRING"] == "x=1"
        wire.send(_request("GET", "http://127.0.0.1:1"))
        assert json.loads(wire.answer().body) == {"path": "/"}


# ------------------------------------------------------------------- answers


def test_unknown_length_is_chunked_for_http_1_1(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/unknown-length"))
        status, headers, _ = wire.head()
        assert status == 200
        assert headers["transfer-encoding"] == "chunked"
        assert "content-length" not in headers
        assert [wire.chunk(), wire.chunk(), wire.chunk()] == [b"first,", b"second", b""]
        wire.send(_request("GET", "/still-open"))
        assert json.loads(wire.answer().body) == {"path": "/still-open"}


def test_unknown_length_is_close_delimited_for_http_1_0(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(
            _request(
                "GET", "/unknown-length", [("Connection", "keep-alive")], version="HTTP/1.0"
            )
        )
        status, headers, _ = wire.head()
        assert status == 200
        assert "transfer-encoding" not in headers
        assert headers["connection"] == "close"
        assert wire.rest() == b"first,second"


def test_streamed_chunks_arrive_before_the_generator_ends(servers: Servers) -> None:
    go = threading.Event()
    ended = threading.Event()

    def events(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        def stream() -> Iterator[bytes]:
            start_response("200 OK", [("Content-Type", "text/event-stream")])
            yield b"data: one\n\n"
            assert go.wait(WAIT)
            yield b"data: two\n\n"
            ended.set()

        return stream()

    server = servers.start(events)
    with Wire(server.port) as wire:
        wire.send(_request("GET", "/api/events"))
        status, headers, _ = wire.head()
        assert (status, headers["content-type"]) == (200, "text/event-stream")
        assert wire.chunk() == b"data: one\n\n"
        assert not ended.is_set()
        go.set()
        assert wire.chunk() == b"data: two\n\n"
        assert wire.chunk() == b""
        assert ended.is_set()


def test_requests_reads_a_stream_as_it_comes(servers: Servers) -> None:
    steps = [threading.Event() for _ in range(3)]

    def events(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        def stream() -> Iterator[bytes]:
            start_response("200 OK", [("Content-Type", "text/event-stream")])
            for n, step in enumerate(steps):
                yield f"data: {n}\n\n".encode()
                assert step.wait(WAIT)

        return stream()

    server = servers.start(events)
    url = f"http://127.0.0.1:{server.port}/api/events"
    with requests.get(url, stream=True, timeout=WAIT) as answer:
        lines = answer.iter_lines(chunk_size=1)
        for n, step in enumerate(steps):
            assert next(lines) == f"data: {n}".encode()
            assert next(lines) == b""
            step.set()


def test_head_keeps_the_length_and_sends_no_body(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("HEAD", "/sized") + _request("GET", "/after-head"))
        head = wire.answer("HEAD")
        assert head.status == 200
        assert head.headers["content-length"] == "5"
        assert head.repeated == []
        assert json.loads(wire.answer().body) == {"path": "/after-head"}  # no stray body


def test_no_content_has_no_body(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/no-content") + _request("GET", "/after-204"))
        answer = wire.answer()
        assert answer.status == 204
        assert "transfer-encoding" not in answer.headers
        assert json.loads(wire.answer().body) == {"path": "/after-204"}


def test_content_length_of_the_app_is_sent_once(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/sized"))
        answer = wire.answer()
        assert answer.headers["content-length"] == "5"
        assert answer.repeated == []
        assert answer.body == b"sized"


def test_an_app_sending_less_than_it_declared_ends_the_connection(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/short-length"))
        status, headers, _ = wire.head()
        assert (status, headers["content-length"]) == (200, "10")
        assert wire.rest() == b"short"  # then the close: the client sees the cut


def test_an_app_sending_more_than_it_declared_is_cut_and_closed(echo: int) -> None:
    """The surplus must not reach the wire, where it would pass for the next answer."""
    with Wire(echo) as wire:
        wire.send(_request("GET", "/long-length") + _request("GET", "/next"))
        answer = wire.answer()
        assert (answer.status, answer.body) == (200, b"long")
        assert wire.rest() == b""


def test_an_app_raising_early_gets_a_json_500_and_a_close(echo: int) -> None:
    for path in ("/raise-before", "/raise-in-first"):
        with Wire(echo) as wire:
            wire.send(_request("GET", path))
            answer = wire.answer()
            _assert_error_shape(answer, 500)
            assert json.loads(answer.body)["error"]["code"] == "internal_error"
            assert wire.closed_by_server()


def test_an_app_raising_mid_stream_ends_the_connection(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/raise-mid"))
        status, headers, _ = wire.head()
        assert (status, headers["transfer-encoding"]) == (200, "chunked")
        assert wire.chunk() == b"half of it"
        assert wire.rest() == b""  # no last chunk: the client knows it is cut
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        requests.get(f"http://127.0.0.1:{echo}/raise-mid", timeout=WAIT)


def test_hop_by_hop_headers_of_the_app_are_not_passed_on(echo: int) -> None:
    with Wire(echo) as wire:
        wire.send(_request("GET", "/hop-by-hop"))
        answer = wire.answer()
        assert answer.body == b"hop"
        assert answer.headers["x-kept"] == "yes"
        for name in ("connection", "transfer-encoding", "keep-alive"):
            assert name not in answer.headers
        wire.send(_request("GET", "/after-hop"))  # the server, not the app, decided
        assert json.loads(wire.answer().body) == {"path": "/after-hop"}


class _Tracked:
    """A WSGI result whose close() the server must call; it yields until told not to."""

    def __init__(self, forever: bool) -> None:
        self.forever = forever
        self.closed = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        yield b"x" * 1000
        while self.forever:
            yield b"x" * 65536

    def close(self) -> None:
        self.closed.set()


def test_the_result_is_closed_after_a_full_answer_and_a_disconnect(
    servers: Servers,
) -> None:
    results: list[_Tracked] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        start_response("200 OK", [("Content-Type", "text/plain")])
        results.append(_Tracked(forever=environ["PATH_INFO"] == "/forever"))
        return results[-1]

    server = servers.start(app)
    with Wire(server.port) as wire:
        wire.send(_request("GET", "/once"))
        assert wire.answer().body == b"x" * 1000
        assert results[0].closed.wait(WAIT)
    with Wire(server.port) as wire:
        wire.send(_request("GET", "/forever"))
        wire.head()
        wire.chunk()
        _wait_for(lambda: len(results) == 2, "the endless answer")
    # the client is gone: the server's next write fails and it must close the result
    assert results[1].closed.wait(WAIT)
    with Wire(server.port) as wire:  # and the server still serves
        wire.send(_request("GET", "/once", [("Connection", "close")]))
        assert wire.answer().body == b"x" * 1000


def test_a_legacy_write_callable_is_sent_in_order(servers: Servers) -> None:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        write = start_response("200 OK", [("Content-Type", "text/plain")])
        write(b"written ")
        return [b"then returned"]

    server = servers.start(app)
    assert requests.get(f"http://127.0.0.1:{server.port}/", timeout=WAIT).content == (
        b"written then returned"
    )


# -------------------------------------------------------------------- limits


def test_one_connection_beyond_the_limit_is_turned_away(servers: Servers) -> None:
    server = servers.start(_echo_app, connection_limit=2)
    with Wire(server.port) as first, Wire(server.port) as second:
        for n, wire in enumerate((first, second)):
            wire.send(_request("GET", f"/held{n}"))
            assert wire.answer().status == 200
        with Wire(server.port) as third:
            answer = third.answer()
            _assert_error_shape(answer, 503)
            assert json.loads(answer.body)["error"]["code"] == "overloaded"
            assert third.closed_by_server()
        for n, wire in enumerate((first, second)):
            wire.send(_request("GET", f"/still{n}"))
            assert json.loads(wire.answer().body) == {"path": f"/still{n}"}
    # both closed: once the server noticed, a new connection is served again

    def served() -> bool:
        try:
            with Wire(server.port) as wire:
                wire.send(_request("GET", "/again", [("Connection", "close")]))
                return wire.answer().status == 200
        except (OSError, EOFError):
            return False

    _wait_for(served, "a free connection slot")


def test_threads_bound_the_requests_running_at_once(servers: Servers) -> None:
    entered = {"/slow": threading.Event(), "/fast": threading.Event()}
    release = threading.Event()

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ["PATH_INFO"]
        entered[path].set()
        if path == "/slow":
            assert release.wait(WAIT)
        return _json(start_response, "200 OK", {"path": path})

    server = servers.start(app, threads=1)
    with Wire(server.port) as slow, Wire(server.port) as fast:
        slow.send(_request("GET", "/slow"))
        assert entered["/slow"].wait(WAIT)
        fast.send(_request("GET", "/fast"))
        # the only slot is taken: /fast must wait, however long we look
        assert not entered["/fast"].wait(0.5)
        release.set()
        assert json.loads(slow.answer().body) == {"path": "/slow"}
        assert json.loads(fast.answer().body) == {"path": "/fast"}
        assert entered["/fast"].is_set()


def test_an_idle_connection_is_closed_after_the_idle_timeout(servers: Servers) -> None:
    server = servers.start(_echo_app, idle_timeout=0.5)
    with Wire(server.port) as wire:
        wire.send(_request("GET", "/once"))
        assert wire.answer().status == 200
        assert wire.closed_by_server()  # the socket's own timeout (10 s) would fail it
    with Wire(server.port) as silent:
        assert silent.closed_by_server()


def test_a_slowloris_head_is_cut_off_at_the_idle_timeout(servers: Servers) -> None:
    server = servers.start(_echo_app, idle_timeout=0.5)
    with Wire(server.port) as wire:
        wire.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        wire.sock.settimeout(0.1)
        deadline = time.monotonic() + WAIT
        cut = False
        while time.monotonic() < deadline and not cut:
            try:
                wire.send(b"a")  # one byte, well within the idle timeout each time
                cut = wire.sock.recv(65536) == b""
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                cut = True
        assert cut, "a client dribbling its head was served for ever"


# ----------------------------------------------------------------- lifecycle


def test_stop_closes_idle_connections_and_ends_accepting(servers: Servers) -> None:
    server = servers.start(_echo_app)
    accept_thread = servers.thread_of(server)
    with Wire(server.port) as idle:
        idle.send(_request("GET", "/kept"))
        assert idle.answer().status == 200
        server.stop()
        assert idle.closed_by_server()
    accept_thread.join(timeout=WAIT)
    assert not accept_thread.is_alive()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=WAIT).close()
    worker_name = f"http-{server.port}"
    _wait_for(
        lambda: not any(t.name == worker_name for t in threading.enumerate()),
        "the workers to end",
    )


def test_a_port_in_use_raises_at_construction(echo: int) -> None:
    with pytest.raises(OSError):
        LoopbackServer(_echo_app, echo)


def _all_workers_idle(server: LoopbackServer) -> bool:
    with server._lock:  # noqa: SLF001 - the test waits for the server's bookkeeping
        return server._idle_workers == server._workers  # noqa: SLF001


def test_workers_are_reused_across_connections(servers: Servers) -> None:
    before = threading.active_count()
    server = servers.start(_echo_app)
    rounds = 20
    for n in range(rounds):
        conn = Connection("127.0.0.1", server.port, timeout=WAIT)
        assert conn.request("GET", f"/round{n}", None, {"Host": "x"}).status == 200
        conn.close()
        _wait_for(lambda: _all_workers_idle(server), "the worker to finish")
    workers = [t for t in threading.enumerate() if t.name == f"http-{server.port}"]
    assert len(workers) == 1
    assert threading.active_count() - before <= 2  # the accept thread and one worker


_PR_SET_PDEATHSIG = 1


def _die_with_parent_thread() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def test_a_child_bound_to_its_worker_outlives_the_connection(servers: Servers) -> None:
    """PR_SET_PDEATHSIG kills a child when the *thread* that started it ends: a
    worker that ended with its connection would kill the app's processes."""
    children: list[subprocess.Popen[bytes]] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        child = subprocess.Popen(["sleep", "30"], preexec_fn=_die_with_parent_thread)
        children.append(child)
        return _json(start_response, "200 OK", {"pid": child.pid})

    server = servers.start(app)
    try:
        with Wire(server.port) as wire:
            wire.send(_request("GET", "/spawn", [("Connection", "close")]))
            pid = json.loads(wire.answer().body)["pid"]
            assert wire.closed_by_server()
        _wait_for(lambda: _all_workers_idle(server), "the worker to finish")
        # a second connection, then a moment for a death signal to land
        with Wire(server.port) as wire:
            wire.send(_request("GET", "/spawn"))
            assert wire.answer().status == 200
        time.sleep(0.3)
        child = psutil.Process(pid)
        assert child.is_running()
        assert child.status() != psutil.STATUS_ZOMBIE
        assert children[0].poll() is None
    finally:
        for child in children:
            child.kill()
            child.wait(timeout=WAIT)
