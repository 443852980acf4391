"""aios_runtime.serving over real sockets: waitress with our adjustments.

Keep-alive, streamed answers flushed chunk by chunk (Server-Sent Events), the thread,
connection and idle limits, slow clients holding no worker thread, more than 1024
connections at once (poll), readable refusals beyond the limits, no `_` header posing
as a `-` one, stop(), and worker threads kept for the child processes their requests
start. No timing asserts beyond generous waits on events and polls.
"""

from __future__ import annotations

import ctypes
import http.client
import json
import os
import resource
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pytest
import requests

from aios_runtime.serving import ServerHandle, start_server
from tests.procs import wait_for

WAIT = 10.0


def json_answer(start_response: Callable[..., Any], status: str, value: Any) -> list[bytes]:
    body = json.dumps(value).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    )
    return [body]


def echo_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    path = environ["PATH_INFO"]
    if path == "/read":
        body = environ["wsgi.input"].read()
        return json_answer(start_response, "200 OK", {"body": body.decode("latin-1")})
    if path == "/headers":
        seen = {k: v for k, v in environ.items() if k.startswith("HTTP_")}
        return json_answer(start_response, "200 OK", seen)
    return json_answer(start_response, "200 OK", {"path": path})


class Servers:
    """Servers started by one test; the fixture stops them."""

    def __init__(self) -> None:
        self.running: list[ServerHandle] = []

    def start(self, app: Callable[..., Any], **options: Any) -> ServerHandle:
        handle = start_server(app, 0, **options)
        self.running.append(handle)
        return handle


@pytest.fixture
def servers() -> Iterator[Servers]:
    started = Servers()
    yield started
    for handle in started.running:
        handle.stop()


class Wire:
    """One raw client socket: exact bytes out, an HTTP/1.1 answer read back."""

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

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            self._fill()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def head(self) -> tuple[int, dict[str, str]]:
        status = int(self._line().split(b" ", 2)[1])
        headers: dict[str, str] = {}
        while line := self._line():
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    def take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._fill()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def chunk(self) -> bytes:
        size = int(self._line(), 16)
        data = self.take(size)
        assert self.take(2) == b"\r\n"
        return data

    def answer(self) -> tuple[int, dict[str, str], bytes]:
        status, headers = self.head()
        if headers.get("transfer-encoding") == "chunked":
            parts = []
            while part := self.chunk():
                parts.append(part)
            return status, headers, b"".join(parts)
        return status, headers, self.take(int(headers.get("content-length", "0")))

    def closed_by_server(self) -> bool:
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return True
                self.buffer += data
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False


def request_bytes(
    method: str, path: str, headers: list[tuple[str, str]] | None = None, body: bytes = b""
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in headers or []]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


# ------------------------------------------------------------------- serving


def test_serves_on_loopback_with_keep_alive_and_no_banner(servers: Servers) -> None:
    handle = servers.start(echo_app)
    assert handle.url == f"http://127.0.0.1:{handle.port}"
    conn = http.client.HTTPConnection("127.0.0.1", handle.port, timeout=WAIT)
    conn.request("GET", "/one")
    first = conn.getresponse()
    assert json.loads(first.read()) == {"path": "/one"}
    assert first.getheader("Server") is None  # ident off
    sock = conn.sock
    conn.request("POST", "/read", body=b"same connection")
    assert json.loads(conn.getresponse().read()) == {"body": "same connection"}
    assert conn.sock is sock
    conn.close()


def test_a_port_in_use_raises(servers: Servers) -> None:
    handle = servers.start(echo_app)
    with pytest.raises(OSError):
        start_server(echo_app, handle.port)


def test_underscore_headers_never_pose_as_dashed_ones(servers: Servers) -> None:
    handle = servers.start(echo_app)
    with Wire(handle.port) as wire:
        wire.send(request_bytes("GET", "/headers", [("X_AIOS_Token", "forged")]))
        _, _, body = wire.answer()
        assert "HTTP_X_AIOS_TOKEN" not in json.loads(body)
        wire.send(request_bytes("GET", "/headers", [("X-AIOS-Token", "real")]))
        assert json.loads(wire.answer()[2])["HTTP_X_AIOS_TOKEN"] == "real"


@pytest.mark.parametrize(
    "data",
    [
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nbody!",
        b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: four\r\n\r\n",
        b"POST /read HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked, x\r\n\r\n",
    ],
    ids=["two-lengths", "length-word", "unknown-coding"],
)
def test_ambiguous_requests_are_refused_and_reach_no_app(
    servers: Servers, data: bytes
) -> None:
    seen: list[str] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        seen.append(environ["PATH_INFO"])
        return json_answer(start_response, "200 OK", {})

    handle = servers.start(app)
    with Wire(handle.port) as wire:
        wire.send(data + request_bytes("GET", "/smuggled"))
        status, headers = wire.head()
        assert status in (400, 501), status
        assert wire.closed_by_server()
    assert seen == []


def test_a_body_over_the_ceiling_is_refused_before_it_is_read(servers: Servers) -> None:
    handle = servers.start(echo_app, max_request_body_size=1 << 20)
    with Wire(handle.port) as wire:
        head = b"POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (64 << 20)
        wire.send(head)  # the body never comes: the refusal does not wait for it
        status, _ = wire.head()
        assert status == 413
    small = requests.post(handle.url + "/read", data=b"x" * 1000, timeout=WAIT)
    assert small.json() == {"body": "x" * 1000}


def test_a_head_over_the_limit_is_refused_readably(servers: Servers) -> None:
    handle = servers.start(echo_app)
    with Wire(handle.port) as wire:
        try:
            wire.send(
                b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * (300 << 10) + b"\r\n\r\n"
            )
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the end; the answer is still readable
        assert wire.head()[0] == 431


# ---------------------------------------------------------------- streaming


def test_streamed_chunks_are_flushed_as_they_are_yielded(servers: Servers) -> None:
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

    handle = servers.start(events)
    with Wire(handle.port) as wire:
        wire.send(request_bytes("GET", "/api/events"))
        status, headers = wire.head()
        assert (status, headers["content-type"]) == (200, "text/event-stream")
        assert wire.chunk() == b"data: one\n\n"  # while the generator still waits
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

    handle = servers.start(events)
    with requests.get(handle.url + "/api/events", stream=True, timeout=WAIT) as answer:
        lines = answer.iter_lines(chunk_size=1)
        for n, step in enumerate(steps):
            assert next(lines) == f"data: {n}".encode()
            assert next(lines) == b""
            step.set()


def test_a_client_leaving_a_stream_ends_the_generator(servers: Servers) -> None:
    closed = threading.Event()

    def events(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ["PATH_INFO"] != "/api/events":
            return echo_app(environ, start_response)

        def stream() -> Iterator[bytes]:
            start_response("200 OK", [("Content-Type", "text/event-stream")])
            try:
                while True:
                    yield b": keep-alive\n\n"
                    time.sleep(0.05)
            finally:
                closed.set()

        return stream()

    handle = servers.start(events, threads=1)
    with Wire(handle.port) as wire:
        wire.send(request_bytes("GET", "/api/events"))
        assert wire.head()[0] == 200
    assert closed.wait(WAIT)  # the worker thread is free again
    assert requests.get(handle.url + "/after", timeout=WAIT).status_code == 200


# ------------------------------------------------------------------- limits


def test_threads_bound_the_requests_running_at_once(servers: Servers) -> None:
    entered = {"/slow": threading.Event(), "/fast": threading.Event()}
    release = threading.Event()

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ["PATH_INFO"]
        entered[path].set()
        if path == "/slow":
            assert release.wait(WAIT)
        return json_answer(start_response, "200 OK", {"path": path})

    handle = servers.start(app, threads=1)
    with Wire(handle.port) as slow, Wire(handle.port) as fast:
        slow.send(request_bytes("GET", "/slow"))
        assert entered["/slow"].wait(WAIT)
        fast.send(request_bytes("GET", "/fast"))
        assert not entered["/fast"].wait(0.5)  # the only thread is taken: it waits
        release.set()
        assert json.loads(slow.answer()[2]) == {"path": "/slow"}
        assert json.loads(fast.answer()[2]) == {"path": "/fast"}


def test_a_connection_beyond_the_limit_waits_until_one_closes(servers: Servers) -> None:
    handle = servers.start(echo_app, connection_limit=2)
    first, second = Wire(handle.port), Wire(handle.port)
    for n, wire in enumerate((first, second)):
        wire.send(request_bytes("GET", f"/held{n}"))
        assert wire.answer()[0] == 200
    with Wire(handle.port, timeout=0.5) as third:
        third.send(request_bytes("GET", "/third"))
        with pytest.raises(TimeoutError):
            third.head()  # not served while two connections are open...
        first.sock.close()
        third.sock.settimeout(WAIT)
        status, _, body = third.answer()  # ...served, not dropped, once one closes
        assert (status, json.loads(body)) == (200, {"path": "/third"})
    second.send(request_bytes("GET", "/still"))
    assert json.loads(second.answer()[2]) == {"path": "/still"}
    second.sock.close()


def test_more_than_1024_connections_at_once(servers: Servers) -> None:
    """`select()` cannot watch a descriptor above 1023; waitress polls instead."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1200
    if soft < 2 * wanted + 100:
        if hard != resource.RLIM_INFINITY and hard < 2 * wanted + 100:
            pytest.skip(f"the open-files limit ({hard}) is too low for this test")
        resource.setrlimit(resource.RLIMIT_NOFILE, (2 * wanted + 100, hard))
    try:
        handle = servers.start(echo_app, connection_limit=wanted + 10)
        wires = [Wire(handle.port) for _ in range(wanted)]
        try:
            for wire in wires:
                wire.send(request_bytes("GET", "/many"))
            for wire in wires:
                assert json.loads(wire.answer()[2]) == {"path": "/many"}
            assert max(wire.sock.fileno() for wire in wires) > 1024
        finally:
            for wire in wires:
                wire.sock.close()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_an_idle_connection_is_closed_after_the_idle_timeout(servers: Servers) -> None:
    handle = servers.start(echo_app, idle_timeout=1)
    with Wire(handle.port) as wire:
        wire.send(request_bytes("GET", "/once"))
        assert wire.answer()[0] == 200
        assert wire.closed_by_server()  # within the socket's own timeout (10 s)
    with Wire(handle.port) as silent:
        assert silent.closed_by_server()


def test_slow_clients_hold_no_worker_thread(servers: Servers) -> None:
    """Heads and bodies dribbled on more connections than there are threads: they
    are read by the event loop, so another client is still served at once."""
    handle = servers.start(echo_app, threads=2)
    bodies = [b"first slow body", b"second slow body", b"third slow body"]
    slow = [Wire(handle.port) for _ in bodies]
    dribbling_head = Wire(handle.port)
    try:
        dribbling_head.send(b"GET /never HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        for wire, body in zip(slow, bodies, strict=True):
            request = request_bytes("POST", "/read", body=body)
            wire.send(request[: -len(body)])
            for byte in body[:5]:
                wire.send(bytes([byte]))
        time.sleep(0.2)
        other = requests.get(handle.url + "/other", timeout=WAIT)
        assert other.json() == {"path": "/other"}
        for wire, body in zip(slow, bodies, strict=True):
            for byte in body[5:]:
                wire.send(bytes([byte]))
            assert json.loads(wire.answer()[2]) == {"body": body.decode()}
    finally:
        for wire in [*slow, dribbling_head]:
            wire.sock.close()


# ---------------------------------------------------------------- lifecycle


def test_stop_closes_connections_and_ends_the_threads(servers: Servers) -> None:
    before = {t.ident for t in threading.enumerate()}
    handle = start_server(echo_app, 0, threads=3)
    with Wire(handle.port) as idle:
        idle.send(request_bytes("GET", "/kept"))
        assert idle.answer()[0] == 200
        handle.stop()
        assert idle.closed_by_server()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", handle.port), timeout=WAIT).close()
    wait_for(
        lambda: {t.ident for t in threading.enumerate()} <= before,
        WAIT,
        "the loop and worker threads to end",
        every=0.02,
    )


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _holding_app(entered: threading.Event, release: threading.Event) -> Callable[..., Any]:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        entered.set()
        release.wait(WAIT)
        return json_answer(start_response, "200 OK", {"released": True})

    return app


def test_stop_keeps_the_trigger_until_the_last_worker_has_finished() -> None:
    # waitress's workers write to the trigger's pipe by its number, unchecked: closed
    # under a worker still finishing, that number is soon another file's
    entered, release = threading.Event(), threading.Event()
    handle = start_server(_holding_app(entered, release), 0, threads=2)
    fds = list(handle._server.trigger._fds)  # type: ignore[attr-defined]
    stopper = threading.Thread(target=handle.stop, kwargs={"timeout": WAIT})
    with Wire(handle.port) as client:
        client.send(request_bytes("GET", "/hold"))
        assert entered.wait(WAIT)
        stopper.start()
        assert client.closed_by_server()  # connections close at once
        assert all(_is_open(fd) for fd in fds), "trigger closed under a running worker"
        release.set()
        stopper.join(WAIT)
    assert not stopper.is_alive()
    assert not any(_is_open(fd) for fd in fds), "trigger left open after the workers"


def test_a_worker_outliving_the_stop_leaves_the_trigger_open_not_reused() -> None:
    entered, release = threading.Event(), threading.Event()
    handle = start_server(_holding_app(entered, release), 0, threads=2)
    trigger = handle._server.trigger  # type: ignore[attr-defined]
    fds = list(trigger._fds)
    with Wire(handle.port) as client:
        client.send(request_bytes("GET", "/hold"))
        assert entered.wait(WAIT)
        handle.stop(timeout=0.3)  # the worker is still held
        assert client.closed_by_server()
    assert all(_is_open(fd) for fd in fds)  # not closed: no other file can take them
    trigger.pull_trigger()  # a late worker's pull lands in its own pipe
    release.set()


def test_stop_from_another_thread_ends_a_foreground_server() -> None:
    started: list[ServerHandle] = []
    original = ServerHandle.serve_forever

    def serve(handle: ServerHandle) -> None:
        started.append(handle)
        original(handle)

    runner = threading.Thread(
        target=lambda: start_server(echo_app, 0, background=False), daemon=True
    )
    ServerHandle.serve_forever = serve  # type: ignore[method-assign]
    try:
        runner.start()
        wait_for(lambda: bool(started), WAIT, "the server to start", every=0.02)
    finally:
        ServerHandle.serve_forever = original  # type: ignore[method-assign]
    handle = started[0]
    assert requests.get(handle.url + "/x", timeout=WAIT).status_code == 200
    handle.stop()
    runner.join(WAIT)
    assert not runner.is_alive()


_PR_SET_PDEATHSIG = 1


def _die_with_parent_thread() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def test_a_child_bound_to_its_worker_outlives_the_connection(servers: Servers) -> None:
    """PR_SET_PDEATHSIG kills a child when the *thread* that started it ends: the
    worker threads must outlive the connections they serve."""
    children: list[subprocess.Popen[bytes]] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        child = subprocess.Popen(["sleep", "30"], preexec_fn=_die_with_parent_thread)
        children.append(child)
        return json_answer(start_response, "200 OK", {"pid": child.pid})

    handle = servers.start(app, threads=2)
    try:
        with Wire(handle.port) as wire:
            wire.send(request_bytes("GET", "/spawn", [("Connection", "close")]))
            pid = json.loads(wire.answer()[2])["pid"]
            assert wire.closed_by_server()
        for _ in range(3):  # more connections, then a moment for a signal to land
            assert requests.get(handle.url + "/spawn", timeout=WAIT).status_code == 200
        time.sleep(0.3)
        child = psutil.Process(pid)
        assert child.is_running() and child.status() != psutil.STATUS_ZOMBIE
        assert children[0].poll() is None
    finally:
        for child in children:
            child.kill()
            child.wait(timeout=WAIT)
