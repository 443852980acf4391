"""Fixtures shared by every tier of the suite.

No test may reach the internet: an autouse fixture refuses any connection from the
test process to a non-loopback address.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator

import pytest
from flask import Flask

from aios_runtime.serving import start_server
from tests.browser import launch_chromium

_real_connect = socket.socket.connect


def _is_loopback(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX and friends
    host = str(address[0])
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _no_internet(monkeypatch: pytest.MonkeyPatch) -> None:
    def guarded_connect(self: socket.socket, address: object) -> None:
        if not _is_loopback(address):
            raise AssertionError(f"test tried to reach the internet: {address!r}")
        return _real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)


@pytest.fixture()
def slow_peer() -> Iterator[str]:
    """A real HTTP peer whose `/slow` answers only when released (or after 10 s)."""
    app = Flask("slow_peer")
    release = threading.Event()

    @app.post("/slow")
    def slow() -> dict[str, bool]:
        return {"released": release.wait(10)}

    server = start_server(app, 0, threads=4)
    try:
        yield server.url
    finally:
        release.set()
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's Chromium, one per test module (tests/browser.py)."""
    yield from launch_chromium()
