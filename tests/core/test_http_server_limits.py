"""aios_sdk.http_server.LoopbackServer under load and over its life: the
connection, thread and idle limits, clients that send slowly (heads and bodies),
the 503 beyond the connection limit, stop(), and the worker threads kept for the
processes their requests start. No timing asserts: waits are on Events or polls
with generous timeouts.
"""

from __future__ import annotations

import ctypes
import json
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import psutil
import pytest
import requests

from aios_sdk import http_server
from aios_sdk.http_server import TURN_AWAY_THREADS, LoopbackServer
from aios_sdk.loopback_http import Connection

# before the import, so that the harness's asserts explain their failures too
pytest.register_assert_rewrite("tests.core.http_server_harness")

from tests.core.http_server_harness import (  # noqa: E402
    WAIT,
    Servers,
    Wire,
    assert_error_shape,
    echo_app,
    json_answer,
    request_bytes,
    wait_for,
)

pytest_plugins = ["tests.core.http_server_harness"]


# -------------------------------------------------------------------- limits


def test_one_connection_beyond_the_limit_is_turned_away(servers: Servers) -> None:
    server = servers.start(echo_app, connection_limit=2)
    with Wire(server.port) as first, Wire(server.port) as second:
        for n, wire in enumerate((first, second)):
            wire.send(request_bytes("GET", f"/held{n}"))
            assert wire.answer().status == 200
        upload = b"x" * (16 << 20)  # more than socket buffers hold
        with Wire(server.port) as third:
            # the whole request first: closing on it unread would reset the 503
            third.send(request_bytes("POST", "/read", body=upload))
            answer = third.answer()
            assert_error_shape(answer, 503)
            assert json.loads(answer.body)["error"]["code"] == "overloaded"
            assert third.closed_by_server()
        url = f"http://127.0.0.1:{server.port}/read"
        refused = requests.post(url, data=upload, timeout=WAIT)
        assert (refused.status_code, refused.json()["error"]["code"]) == (503, "overloaded")
        for n, wire in enumerate((first, second)):
            wire.send(request_bytes("GET", f"/still{n}"))
            assert json.loads(wire.answer().body) == {"path": f"/still{n}"}
    # both closed: once the server noticed, a new connection is served again

    def served() -> bool:
        try:
            with Wire(server.port) as wire:
                wire.send(request_bytes("GET", "/again", [("Connection", "close")]))
                return wire.answer().status == 200
        except (OSError, EOFError):
            return False

    wait_for(served, "a free connection slot")


def test_turning_away_holds_a_bounded_number_of_threads(servers: Servers) -> None:
    server = servers.start(echo_app, connection_limit=1)
    busy = f"http-busy-{server.port}"
    with Wire(server.port) as held:
        held.send(request_bytes("GET", "/held"))
        assert held.answer().status == 200
        turned_away = [Wire(server.port) for _ in range(TURN_AWAY_THREADS + 4)]
        try:
            for wire in turned_away:  # each stays open: its thread lingers
                assert_error_shape(wire.answer(), 503)
            alive = [t for t in threading.enumerate() if t.name == busy]
            assert 0 < len(alive) <= TURN_AWAY_THREADS
        finally:
            for wire in turned_away:
                wire.sock.close()
    wait_for(
        lambda: not any(t.name == busy for t in threading.enumerate()),
        "the 503 threads to end",
    )


def test_threads_bound_the_requests_running_at_once(servers: Servers) -> None:
    entered = {"/slow": threading.Event(), "/fast": threading.Event()}
    release = threading.Event()

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ["PATH_INFO"]
        entered[path].set()
        if path == "/slow":
            assert release.wait(WAIT)
        return json_answer(start_response, "200 OK", {"path": path})

    server = servers.start(app, threads=1)
    with Wire(server.port) as slow, Wire(server.port) as fast:
        slow.send(request_bytes("GET", "/slow"))
        assert entered["/slow"].wait(WAIT)
        fast.send(request_bytes("GET", "/fast"))
        # the only slot is taken: /fast must wait, however long we look
        assert not entered["/fast"].wait(0.5)
        release.set()
        assert json.loads(slow.answer().body) == {"path": "/slow"}
        assert json.loads(fast.answer().body) == {"path": "/fast"}
        assert entered["/fast"].is_set()


def test_an_idle_connection_is_closed_after_the_idle_timeout(servers: Servers) -> None:
    server = servers.start(echo_app, idle_timeout=0.5)
    with Wire(server.port) as wire:
        wire.send(request_bytes("GET", "/once"))
        assert wire.answer().status == 200
        assert wire.closed_by_server()  # the socket's own timeout (10 s) would fail it
    with Wire(server.port) as silent:
        assert silent.closed_by_server()


def test_a_slowloris_head_is_cut_off_at_the_idle_timeout(servers: Servers) -> None:
    server = servers.start(echo_app, idle_timeout=0.5)
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


def test_slow_bodies_do_not_hold_the_request_slots(servers: Servers) -> None:
    """Clients dribbling bodies on as many connections as there are slots: the
    bodies are read before a slot is taken, so a third client is still served."""
    server = servers.start(echo_app, threads=2)
    bodies = [b"first slow body", b"second slow body"]
    slow = [Wire(server.port) for _ in bodies]
    try:
        for wire, body in zip(slow, bodies, strict=True):
            request = request_bytes("POST", "/read", body=body)
            wire.send(request[: -len(body)])
            for byte in body[:5]:
                wire.send(bytes([byte]))
        time.sleep(0.2)  # the heads are read: a server taking slots now holds both
        with Wire(server.port) as other:
            other.send(request_bytes("GET", "/other", [("Connection", "close")]))
            assert json.loads(other.answer().body) == {"path": "/other"}
        for wire, body in zip(slow, bodies, strict=True):
            for byte in body[5:]:
                wire.send(bytes([byte]))
            assert json.loads(wire.answer().body) == {"body": body.decode()}
    finally:
        for wire in slow:
            wire.sock.close()


def test_a_dribbled_body_is_cut_off_at_the_idle_timeout(servers: Servers) -> None:
    """The whole body must come within idle_timeout, however often bytes come."""
    seen: list[str] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        seen.append(environ["PATH_INFO"])
        return json_answer(start_response, "200 OK", {})

    server = servers.start(app, idle_timeout=0.5)
    with Wire(server.port) as wire:
        wire.send(b"POST /dribbled HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
        wire.sock.settimeout(0.1)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and not wire.buffer:
            try:
                wire.send(b"a")  # one byte, well within the idle timeout each time
                wire.buffer += wire.sock.recv(65536)
            except TimeoutError:
                continue
        assert wire.buffer, "a client dribbling its body was waited for ever"
        wire.sock.settimeout(WAIT)
        assert_error_shape(wire.answer(), 408)
        assert wire.closed_by_server()
    assert seen == []


# ----------------------------------------------------------------- lifecycle


def test_stop_closes_idle_connections_and_ends_accepting(servers: Servers) -> None:
    server = servers.start(echo_app)
    accept_thread = servers.thread_of(server)
    with Wire(server.port) as idle:
        idle.send(request_bytes("GET", "/kept"))
        assert idle.answer().status == 200
        server.stop()
        assert idle.closed_by_server()
    accept_thread.join(timeout=WAIT)
    assert not accept_thread.is_alive()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=WAIT).close()
    worker_name = f"http-{server.port}"
    wait_for(
        lambda: not any(t.name == worker_name for t in threading.enumerate()),
        "the workers to end",
    )


def test_a_port_in_use_raises_at_construction(echo: int) -> None:
    with pytest.raises(OSError):
        LoopbackServer(echo_app, echo)


def _all_workers_idle(server: LoopbackServer) -> bool:
    with server._lock:  # noqa: SLF001 - the test waits for the server's bookkeeping
        return server._idle_workers == server._workers  # noqa: SLF001


def test_workers_are_reused_across_connections(servers: Servers) -> None:
    before = threading.active_count()
    server = servers.start(echo_app)
    rounds = 20
    for n in range(rounds):
        conn = Connection("127.0.0.1", server.port, timeout=WAIT)
        assert conn.request("GET", f"/round{n}", None, {"Host": "x"}).status == 200
        conn.close()
        wait_for(lambda: _all_workers_idle(server), "the worker to finish")
    workers = [t for t in threading.enumerate() if t.name == f"http-{server.port}"]
    assert len(workers) == 1
    assert threading.active_count() - before <= 2  # the accept thread and one worker


def test_no_thread_to_be_had_turns_the_connection_away_and_keeps_serving(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_thread = threading.Thread
    refused: list[str] = []

    class ScarceThread(real_thread):  # type: ignore[misc, valid-type]
        """The first worker cannot be started (as when the system is out of threads)."""

        def start(self) -> None:
            worker = self.name.startswith("http-") and not self.name.startswith("http-busy")
            if worker and not refused:
                refused.append(self.name)
                raise RuntimeError("can't start new thread")
            super().start()

    server = servers.start(echo_app)
    monkeypatch.setattr(http_server.threading, "Thread", ScarceThread)
    turned_away = Connection("127.0.0.1", server.port, timeout=WAIT)
    answer = turned_away.request("GET", "/first", None, {"Host": "x"})
    assert answer.status == 503 and refused
    served = Connection("127.0.0.1", server.port, timeout=WAIT)
    assert served.request("GET", "/second", None, {"Host": "x"}).status == 200
    served.close()
    turned_away.close()


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
        return json_answer(start_response, "200 OK", {"pid": child.pid})

    server = servers.start(app)
    try:
        with Wire(server.port) as wire:
            wire.send(request_bytes("GET", "/spawn", [("Connection", "close")]))
            pid = json.loads(wire.answer().body)["pid"]
            assert wire.closed_by_server()
        wait_for(lambda: _all_workers_idle(server), "the worker to finish")
        # a second connection, then a moment for a death signal to land
        with Wire(server.port) as wire:
            wire.send(request_bytes("GET", "/spawn"))
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
