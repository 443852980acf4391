"""`aios_runtime.json_client` against real peers on ephemeral ports: waitress in this
process (kept-alive connections, many threads, idle timeout, chunked and oversized
answers), a Flask peer in its own process that is restarted between two calls, and
raw sockets for late, garbled or HTTP/1.0 answers."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from waitress.server import create_server

from aios_protocol.errors import AppUnreachable, BadAppReply
from aios_runtime.json_client import (
    MAX_IDLE_PER_PEER,
    TOKEN_HEADER,
    PeerTimeout,
    close_pools,
    new_pool,
    pool_for,
    request_json,
    send_json,
)
from tests.procs import PYTHON, free_port, spawn, stop, wait_healthy


class Peer:
    """A WSGI app that records every request and can hold requests until released.

    `/echo` answers the request (method, path, query, token, body, client port) as
    JSON; `/chunked` a body without a length; `/big/<n>` n bytes (with a length);
    `/text` and `/empty` a body that is not JSON and none at all."""

    def __init__(self) -> None:
        self.client_ports: list[str] = []
        self.arrived = threading.Semaphore(0)
        self.release = threading.Event()
        self.release.set()
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        import json

        with self._lock:
            self.client_ports.append(environ["REMOTE_PORT"])
        self.arrived.release()
        self.release.wait(10)
        path = environ["PATH_INFO"]
        if path == "/chunked":  # no Content-Length: waitress sends it chunked
            start_response("200 OK", [("Content-Type", "application/json")])
            return [b'{"parts": ', b"", b'["one", "two"]}']
        if path.startswith("/big/"):
            body = b'"' + b"x" * (int(path[5:]) - 2) + b'"'
        elif path == "/text":
            body = b"\xff<html>not json</html>"
        elif path == "/empty":
            start_response("204 No Content", [])
            return []
        else:
            size = int(environ.get("CONTENT_LENGTH") or 0)
            sent = environ["wsgi.input"].read(size) if size else b""
            body = json.dumps(
                {
                    "method": environ["REQUEST_METHOD"],
                    "path": path,
                    "query": environ.get("QUERY_STRING", ""),
                    "token": environ.get("HTTP_X_AIOS_TOKEN"),
                    "type": environ.get("CONTENT_TYPE"),
                    "body": json.loads(sent) if sent else None,
                },
                ensure_ascii=False,
            ).encode()
        start_response(
            "200 OK",
            [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
        )
        return [body]


def _serve(app: Peer, **options: Any) -> Iterator[tuple[Peer, str]]:
    # poll(): closing the server from this thread cannot break its select() (EBADF)
    server = create_server(app, host="127.0.0.1", port=0, asyncore_use_poll=True, **options)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield app, f"http://127.0.0.1:{server.effective_port}"
    finally:
        close_pools()
        server.close()


@pytest.fixture
def peer() -> Iterator[tuple[Peer, str]]:
    yield from _serve(Peer(), threads=MAX_IDLE_PER_PEER + 8)


@pytest.fixture(autouse=True)
def _fresh_pools() -> Iterator[None]:
    yield
    close_pools()


def _call_from_new_thread(url: str) -> Any:
    answers: list[Any] = []
    worker = threading.Thread(target=lambda: answers.append(request_json("GET", url)))
    worker.start()
    worker.join(10)
    return answers[0]


# ------------------------------------------------------------------ the wire


def test_json_goes_out_and_comes_back_with_the_token(peer) -> None:
    _, url = peer
    sent = {"text": "你好", "n": [1, None]}
    answer = request_json("POST", url + "/echo?a=1&b=%E4%BD%A0", sent, token="tk")
    assert answer.status == 200
    assert answer.body == {
        "method": "POST",
        "path": "/echo",
        "query": "a=1&b=%E4%BD%A0",
        "token": "tk",
        "type": "application/json",
        "body": sent,
    }
    assert answer.raw.startswith(b'{"method": "POST"')
    plain = request_json("GET", url + "/echo")
    assert (plain.body["token"], plain.body["type"], plain.body["body"]) == (
        None,
        None,
        None,
    )
    assert TOKEN_HEADER == "X-AIOS-Token"


def test_answers_without_json_chunked_and_empty(peer) -> None:
    _, url = peer
    text = request_json("GET", url + "/text")
    assert (text.status, text.body, text.raw) == (200, None, b"\xff<html>not json</html>")
    assert request_json("GET", url + "/chunked").body == {"parts": ["one", "two"]}
    empty = request_json("GET", url + "/empty")
    assert (empty.status, empty.body, empty.raw) == (204, None, b"")
    assert request_json("GET", url + "/echo").status == 200  # the connection still works


def test_a_body_that_is_not_json_is_refused_before_sending(peer) -> None:
    app, url = peer
    with pytest.raises(TypeError):
        request_json("POST", url + "/echo", {"x": object()})
    assert app.client_ports == []


# ------------------------------------------------------------ kept connections


def test_one_connection_serves_calls_from_many_threads(peer) -> None:
    app, url = peer
    for _ in range(10):
        assert _call_from_new_thread(url + "/echo").body["method"] == "GET"
    # each thread ended after its call: the peer still saw a single connection
    assert len(set(app.client_ports)) == 1
    assert pool_for("127.0.0.1", int(url.rsplit(":", 1)[1])).num_connections == 1


def test_concurrent_calls_open_as_many_connections_then_reuse_them(peer) -> None:
    app, url = peer
    app.release.clear()
    workers = [
        threading.Thread(target=request_json, args=("GET", url + "/hold")) for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    for _ in workers:  # all three are inside the app at once
        assert app.arrived.acquire(timeout=10)
    app.release.set()
    for worker in workers:
        worker.join(10)
    opened = set(app.client_ports)
    assert len(opened) == 3
    for _ in range(6):  # later calls take pooled connections, none new
        _call_from_new_thread(url + "/again")
    assert set(app.client_ports) == opened


def test_a_connection_the_peer_closed_when_idle_is_replaced() -> None:
    for app, url in _serve(Peer(), threads=2, channel_timeout=1, cleanup_interval=1):
        assert request_json("GET", url + "/echo").status == 200
        time.sleep(3.5)  # waitress drops the idle connection
        assert request_json("GET", url + "/echo").status == 200
        assert len(set(app.client_ports)) == 2


_RESTARTABLE_PEER = """
import os, sys
from flask import Flask
from waitress import serve

app = Flask("peer")

@app.get("/health")
def health():
    return {"pid": os.getpid()}

serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=2)
"""


@pytest.mark.process
def test_a_restarted_peer_is_reached_without_a_failed_call() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/health"
    first = spawn([PYTHON, "-c", _RESTARTABLE_PEER, str(port)])
    try:
        wait_healthy(url, first)
        before = request_json("GET", url).body["pid"]
        assert request_json("GET", url).body["pid"] == before  # kept alive
    finally:
        stop(first)
    second = spawn([PYTHON, "-c", _RESTARTABLE_PEER, str(port)])
    try:
        wait_healthy(url, second)
        # the pooled connection to the first process is dead: noticed, replaced
        after = request_json("GET", url)
        assert after.status == 200 and after.body["pid"] not in (before, None)
    finally:
        stop(second)


# ------------------------------------------------------------------- failures


def test_nothing_listening_is_unreachable() -> None:
    with pytest.raises(AppUnreachable) as err:
        request_json("GET", f"http://127.0.0.1:{free_port()}/x", what="app demo")
    assert err.value.code == "app_unreachable"
    assert "app demo" in err.value.message and "ConnectionRefusedError" in err.value.message
    assert not isinstance(err.value, PeerTimeout)


def test_a_late_answer_is_a_peer_timeout() -> None:
    with socket.socket() as listener:  # accepts (the backlog) but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/x"
        started = time.monotonic()
        with pytest.raises(PeerTimeout) as err:
            request_json("POST", url, {"a": 1}, timeout=0.3, what="the executor")
    assert time.monotonic() - started < 3
    assert isinstance(err.value, AppUnreachable) and err.value.code == "app_unreachable"
    assert err.value.message == "the executor did not answer within 0.3 s"


def test_a_peer_that_holds_the_request_times_out_then_serves_again(peer) -> None:
    app, url = peer
    app.release.clear()
    with pytest.raises(PeerTimeout):
        request_json("GET", url + "/echo", timeout=0.3)
    app.release.set()
    assert request_json("GET", url + "/echo").status == 200


def _one_shot_server(reply: bytes) -> tuple[str, threading.Thread]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(reply)
        conn.close()
        listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}", thread


def test_garbage_and_hang_ups_are_unreachable() -> None:
    for reply in (b"SSH-2.0-OpenSSH\r\n\r\n", b""):
        url, thread = _one_shot_server(reply)
        with pytest.raises(AppUnreachable) as err:
            request_json("GET", url + "/", timeout=5, what="app rogue")
        assert "app rogue is not reachable" in err.value.message, reply
        thread.join(5)
    # headers cut off by a hang-up: http.client keeps what came, no JSON body
    url, thread = _one_shot_server(b"HTTP/1.1 200 OK\r\nContent-Le")
    assert request_json("GET", url + "/", timeout=5).body is None
    thread.join(5)


def test_a_cut_off_body_is_unreachable() -> None:
    url, thread = _one_shot_server(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}")
    with pytest.raises(AppUnreachable):
        request_json("GET", url + "/", timeout=5)
    thread.join(5)


def test_an_http10_body_runs_until_the_peer_closes() -> None:
    url, thread = _one_shot_server(
        b'HTTP/1.0 404 NOT FOUND\r\nContent-Type: application/json\r\n\r\n{"no": 1}'
    )
    answer = request_json("GET", url + "/handle")
    assert (answer.status, answer.body) == (404, {"no": 1})
    thread.join(5)


# --------------------------------------------------------------- answer size


def test_an_oversized_answer_is_refused_and_the_pool_recovers(peer) -> None:
    app, url = peer
    assert request_json("GET", url + "/big/1000", max_bytes=1000).body == "x" * 998
    with pytest.raises(BadAppReply) as err:  # a declared length over the cap
        request_json("GET", url + "/big/1001", max_bytes=1000, what="app big")
    assert err.value.code == "bad_app_reply"
    assert err.value.message == "app big answered 1001 bytes; at most 1000 are read"
    with pytest.raises(BadAppReply) as err:  # no length: read up to the cap
        request_json("GET", url + "/chunked", max_bytes=10, what="app big")
    assert err.value.message == "app big answered more than 10 bytes"
    # the half-read connections were dropped, not handed to the next call
    assert request_json("GET", url + "/echo").body["path"] == "/echo"
    assert request_json("GET", url + "/chunked").body == {"parts": ["one", "two"]}


# --------------------------------------------------------------- own pools


def test_send_json_over_a_pool_of_ones_own(peer) -> None:
    app, url = peer
    port = int(url.rsplit(":", 1)[1])
    pool = new_pool("127.0.0.1", port, maxsize=1)
    try:
        for n in range(3):
            answer = send_json(pool, "POST", "/echo?n=1", {"n": n}, token="own")
            assert answer.body["body"] == {"n": n} and answer.body["token"] == "own"
        assert request_json("GET", url + "/echo").status == 200  # the shared pool
        assert len(set(app.client_ports)) == 2  # one connection each
        assert pool.num_connections == 1
    finally:
        pool.close()
