"""aios_sdk.loopback_http against real servers on ephemeral ports: waitress (length
and chunked bodies, keep-alive), a raw HTTP/1.0 peer, a peer that went away."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from waitress.server import create_server

from aios_sdk.loopback_http import Connection, ProtocolViolation


def _app(environ: dict, start_response) -> list[bytes]:
    path = environ["PATH_INFO"]
    size = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(size) if size else b""
    if path == "/chunked":  # no Content-Length: waitress sends it chunked
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"part one, ", b"", b"part two"]
    if path == "/empty":
        start_response("204 No Content", [])
        return []
    port = environ["SERVER_PORT"]
    answer = f"{environ['REQUEST_METHOD']} {path} {port} ".encode() + body
    start_response("201 Created", [("Content-Length", str(len(answer)))])
    return [answer]


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    srv = create_server(_app, host="127.0.0.1", port=0, threads=2)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    yield srv.effective_port
    srv.close()


def _peer_sockets(conn: Connection) -> tuple[int, int] | None:
    return conn._sock.getsockname() if conn._sock else None  # noqa: SLF001


def test_length_bodies_over_one_kept_connection(server: int) -> None:
    conn = Connection("127.0.0.1", server, timeout=5)
    first = conn.request("POST", "/a?x=1", b'{"k": "\xe4\xbd\xa0"}', {"Host": "127.0.0.1"})
    assert first.status == 201
    assert first.body == f"POST /a {server} ".encode() + b'{"k": "\xe4\xbd\xa0"}'
    assert first.headers["content-length"] == str(len(first.body))
    local = _peer_sockets(conn)
    second = conn.request("GET", "/b", None, {"Host": "127.0.0.1"})
    assert second.body == f"GET /b {server} ".encode()
    assert _peer_sockets(conn) == local  # the same socket: kept alive
    conn.close()


def test_chunked_empty_and_closing_answers(server: int) -> None:
    conn = Connection("127.0.0.1", server, timeout=5)
    assert conn.request("GET", "/chunked", None, {"Host": "x"}).body == (
        b"part one, part two"
    )
    assert conn.request("GET", "/empty", None, {"Host": "x"}).status == 204
    closing = conn.request("GET", "/close", None, {"Host": "x", "Connection": "close"})
    assert closing.headers["connection"] == "close" and _peer_sockets(conn) is None
    assert conn.request("GET", "/again", None, {"Host": "x"}).status == 201


def _one_shot_server(reply: bytes) -> tuple[int, threading.Thread]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def serve() -> None:
        peer, _ = listener.accept()
        peer.recv(65536)
        peer.sendall(reply)
        peer.close()
        listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread


def test_http10_body_until_close() -> None:
    port, thread = _one_shot_server(
        b"HTTP/1.0 404 NOT FOUND\r\nContent-Type: text/html\r\n\r\n<p>no</p>"
    )
    conn = Connection("127.0.0.1", port, timeout=5)
    answer = conn.request("POST", "/handle", b"{}", {"Host": "x"})
    assert (answer.status, answer.body) == (404, b"<p>no</p>")
    assert _peer_sockets(conn) is None
    thread.join(5)


def test_garbage_and_silence_are_errors() -> None:
    port, thread = _one_shot_server(b"SSH-2.0-OpenSSH\r\n\r\n")
    with pytest.raises(ProtocolViolation):
        Connection("127.0.0.1", port, timeout=5).request("GET", "/", None, {})
    thread.join(5)
    port, thread = _one_shot_server(b"")
    with pytest.raises(ConnectionResetError):
        Connection("127.0.0.1", port, timeout=5).request("GET", "/", None, {})
    thread.join(5)


def test_a_connection_the_peer_closed_is_replaced(server: int) -> None:
    srv = create_server(_app, host="127.0.0.1", port=0, threads=1)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    port = srv.effective_port
    conn = Connection("127.0.0.1", port, timeout=5)
    assert conn.request("GET", "/x", None, {"Host": "x"}).status == 201
    for channel in list(srv._map.values()):  # noqa: SLF001 — the server drops it
        if channel is not srv:
            channel.close()
    srv.close()
    thread.join(5)
    srv = create_server(_app, host="127.0.0.1", port=port, threads=1)  # back again
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    assert conn.request("GET", "/y", None, {"Host": "x"}).body == f"GET /y {port} ".encode()
    srv.close()


def test_a_late_peer_times_out() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    conn = Connection("127.0.0.1", listener.getsockname()[1], timeout=0.2)
    with pytest.raises(TimeoutError):
        conn.request("GET", "/", None, {})
    listener.close()
