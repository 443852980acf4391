"""The controller's HTTP client (`controller.clients.http_json`) against a real server:
connections are pooled per peer, shared by all threads, and failures are typed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from aios_runtime.edge import ServerHandle, start_server
from aios_sdk.errors import AiosError, AppUnreachable
from controller.clients import MAX_IDLE_PER_PEER, http_json
from tests.procs import free_port


class Peer:
    """A WSGI echo that records the client port of every request and can hold
    requests until released."""

    def __init__(self) -> None:
        self.client_ports: list[str] = []
        self.arrived = threading.Semaphore(0)
        self.release = threading.Event()
        self.release.set()
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        with self._lock:
            self.client_ports.append(environ["REMOTE_PORT"])
        self.arrived.release()
        self.release.wait(10)
        body = b'{"ok": true}'
        start_response(
            "200 OK",
            [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
        )
        return [body]


@pytest.fixture
def peer() -> Iterator[tuple[Peer, ServerHandle]]:
    app = Peer()
    handle = start_server(app, 0, threads=MAX_IDLE_PER_PEER + 8)
    try:
        yield app, handle
    finally:
        handle.stop()


def _call_from_new_thread(url: str) -> Any:
    answers: list[Any] = []
    worker = threading.Thread(target=lambda: answers.append(http_json("GET", url)))
    worker.start()
    worker.join(10)
    return answers[0]


def test_one_connection_serves_calls_from_many_threads(peer) -> None:
    app, handle = peer
    for _ in range(10):
        assert _call_from_new_thread(handle.url + "/x").body == {"ok": True}
    # each thread ended after its call: the peer still saw a single connection
    assert len(set(app.client_ports)) == 1


def test_concurrent_calls_open_as_many_connections_then_reuse_them(peer) -> None:
    app, handle = peer
    app.release.clear()
    workers = [
        threading.Thread(target=http_json, args=("GET", handle.url + "/hold"))
        for _ in range(3)
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
        _call_from_new_thread(handle.url + "/again")
    assert set(app.client_ports) == opened


def test_a_closed_peer_is_unreachable_and_its_connection_is_not_kept(peer) -> None:
    app, handle = peer
    url = handle.url
    assert http_json("GET", url + "/x").status == 200
    handle.stop()
    with pytest.raises(AppUnreachable) as err:
        http_json("GET", url + "/x", what="app demo", timeout=2)
    assert "app demo" in err.value.message
    assert isinstance(err.value, AiosError) and err.value.code == "app_unreachable"
    with pytest.raises(AppUnreachable):
        http_json("GET", f"http://127.0.0.1:{free_port()}/x", timeout=2)
