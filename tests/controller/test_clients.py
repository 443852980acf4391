"""The controller's clients (`controller.clients`) against a real Flask peer on waitress:
connections are pooled per peer and shared by all threads, failures are typed
(`AppUnreachable`, `BadAppReply`, the peer's own code), app replies are capped."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, Response, request
from waitress.server import create_server

from aios_protocol.errors import AiosError, AppUnreachable, BadAppReply
from aios_runtime.json_client import MAX_IDLE_PER_PEER, close_pools, request_json
from controller.clients import (
    MAX_APP_REPLY,
    AppClient,
    ExecutorClient,
    json_call,
    peer_error,
)
from tests.procs import PYTHON, free_port, spawn, start_executor, stop, wait_healthy


class Peer:
    """A Flask app that records the client port of every request and can hold
    requests until released; it plays both an app and the executor."""

    def __init__(self) -> None:
        self.client_ports: list[str] = []
        self.tokens: list[str | None] = []
        self.arrived = threading.Semaphore(0)
        self.release = threading.Event()
        self.release.set()
        self.reply: Any = {"ok": True}
        self.app = Flask("peer")
        self.app.before_request(self._record)
        self.app.add_url_rule("/<path:path>", view_func=self._answer, methods=["GET"])
        self.app.add_url_rule("/handle", view_func=self._handle, methods=["POST"])
        self.app.add_url_rule("/refuse", view_func=self._refuse, methods=["POST"])
        self.app.add_url_rule("/events", view_func=self._events)

    def _record(self) -> None:
        self.client_ports.append(request.environ["REMOTE_PORT"])
        self.tokens.append(request.headers.get("X-AIOS-Token"))
        self.arrived.release()
        self.release.wait(10)

    def _answer(self, path: str) -> Any:
        if path == "manifest":
            return {"error": "no manifest"}, 404
        if path == "crash":
            return Response("Internal Server Error: boom", 500, mimetype="text/plain")
        return {"ok": True}

    def _handle(self) -> Any:
        reply = self.reply
        return reply(request.get_json()) if callable(reply) else reply

    def _refuse(self) -> Any:
        error = {"code": "path_outside_workdir", "message": "not in the workdir"}
        return {"status": "error", "error": error}, 403

    def _events(self) -> Any:
        since = int(request.args["since"])
        return {"events": [{"n": since + 1}, "junk"], "next": since + 1}


@pytest.fixture
def peer() -> Iterator[tuple[Peer, str]]:
    app = Peer()
    server = create_server(
        app.app,
        host="127.0.0.1",
        port=0,
        threads=MAX_IDLE_PER_PEER + 8,
        asyncore_use_poll=True,  # closing from this thread cannot break its loop
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield app, f"http://127.0.0.1:{server.effective_port}"
    finally:
        close_pools()
        server.close()


def _call_from_new_thread(url: str) -> Any:
    answers: list[Any] = []
    worker = threading.Thread(target=lambda: answers.append(request_json("GET", url)))
    worker.start()
    worker.join(10)
    return answers[0]


def test_one_connection_serves_calls_from_many_threads(peer) -> None:
    app, url = peer
    for _ in range(10):
        assert _call_from_new_thread(url + "/x").body == {"ok": True}
    # each thread ended after its call: the peer still saw a single connection
    assert len(set(app.client_ports)) == 1


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


_PEER_PROGRAM = """
import sys
from flask import Flask
from waitress import serve

app = Flask("peer")
app.get("/health")(lambda: {"ok": True})
serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=2)
"""


@pytest.mark.process
def test_a_stopped_peer_is_unreachable_and_its_connection_is_not_kept() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/health"
    proc = spawn([PYTHON, "-c", _PEER_PROGRAM, str(port)])
    try:
        wait_healthy(url, proc)
        assert request_json("GET", url).status == 200  # a connection is kept
    finally:
        stop(proc)
    with pytest.raises(AppUnreachable) as err:
        request_json("GET", url, what="app demo", timeout=2)
    assert "app demo" in err.value.message
    assert isinstance(err.value, AiosError) and err.value.code == "app_unreachable"
    with pytest.raises(AppUnreachable):
        request_json("GET", f"http://127.0.0.1:{free_port()}/x", timeout=2)
    close_pools()


def test_a_late_answer_is_unreachable(peer) -> None:
    app, url = peer
    app.release.clear()
    started = time.monotonic()
    with pytest.raises(AppUnreachable) as err:
        AppClient("slow", url, "tk").handle({"instruction": "x"}, timeout=0.3)
    assert err.value.code == "app_unreachable" and "app slow" in err.value.message
    assert time.monotonic() - started < 3
    app.release.set()


def test_json_call_keeps_the_peers_error_code_and_refuses_what_is_not_json(peer) -> None:
    _, url = peer
    assert json_call("GET", url + "/x", token="tk", timeout=5, what="the executor") == {
        "ok": True
    }
    with pytest.raises(AiosError) as err:
        json_call("POST", url + "/refuse", {}, token="tk", timeout=5, what="the executor")
    assert (err.value.code, err.value.message) == (
        "path_outside_workdir",
        "not in the workdir",
    )
    with pytest.raises(BadAppReply) as bad:
        json_call("GET", url + "/crash", token="tk", timeout=5, what="the executor")
    assert (
        bad.value.message == "the executor answered HTTP 500: Internal Server Error: boom"
    )
    answer = request_json("GET", url + "/crash")
    assert isinstance(peer_error(answer, "x"), BadAppReply)


def test_app_client_health_manifest_and_handle(peer) -> None:
    app, url = peer
    client = AppClient("demo", url, "app-token")
    assert client.health(timeout=2)  # any answer below 500 is alive
    assert client.manifest_tools() == []  # 404: no custom tools
    assert client.first_answer(timeout=2) == (
        True,
        [],
    )  # a starting app's probe: alive, no tools
    assert client.handle({"instruction": "hi"}, timeout=5) == {"ok": True}
    assert set(app.tokens) == {"app-token"}
    app.reply = {"status": "error", "view_type": "error", "data": {"code": "x"}}
    assert client.handle({}, timeout=5)["view_type"] == "error"  # kept as the view
    app.reply = ["not", "an", "object"]
    with pytest.raises(BadAppReply):
        client.handle({}, timeout=5)
    gone = AppClient("gone", f"http://127.0.0.1:{free_port()}", "t")
    assert not gone.health(timeout=1)
    assert gone.first_answer(timeout=1) == (False, None)


def test_an_app_reply_over_the_cap_is_refused_and_the_next_call_works(peer) -> None:
    app, url = peer
    client = AppClient("big", url, "tk")
    app.reply = {"status": "ok", "data": "x" * MAX_APP_REPLY}
    with pytest.raises(BadAppReply) as err:
        client.handle({}, timeout=10)
    assert (
        "app big answered" in err.value.message and str(MAX_APP_REPLY) in err.value.message
    )
    app.reply = {"status": "ok"}
    assert client.handle({}, timeout=5) == {"status": "ok"}


def test_executor_client_calls_with_the_master_token(peer) -> None:
    app, url = peer
    executor = ExecutorClient(url, "master")
    assert executor.healthy()
    assert executor.events(since=4, wait=0) == ([{"n": 5}], 5)
    assert app.tokens[-1] == "master"
    assert not ExecutorClient(f"http://127.0.0.1:{free_port()}", "m").healthy(timeout=1)


@pytest.mark.process
def test_the_executor_probe_takes_only_the_spawned_process_for_the_executor(
    peer, tmp_path: Path
) -> None:
    """A port handed out for the executor can be taken by another service before the
    executor binds it (another launch's app, say): that one answers `/health` too,
    and must not be taken for the executor, whose registrations it would refuse."""
    _app, other_url = peer
    proc, url, token = start_executor(tmp_path)
    try:
        executor = ExecutorClient(url, token)
        assert executor.healthy(pid=proc.pid)
        assert not executor.healthy(pid=proc.pid + 100_000)
        assert ExecutorClient(other_url, token).healthy()  # it does answer
        assert not ExecutorClient(other_url, token).healthy(pid=proc.pid)
    finally:
        stop(proc)
