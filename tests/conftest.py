"""Fixtures shared by every tier of the suite.

No test may reach the internet: an autouse fixture refuses any connection from the
test process to a non-loopback address.

No test starts a process of ours or a browser without its marker (`slow`, `process`,
`browser`; pyproject.toml says which is which), so `make test-fast` leaves out
exactly the tests that start them: every `subprocess.Popen` of the session (the
helpers of tests/procs.py, tests/controller/system.py and tests/browser.py, and
product code run in-process) goes through `tests.procs.may_start`, which fails a test
that starts what its markers do not allow.
"""

from __future__ import annotations

import ipaddress
import socket
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from aios_runtime.serving import start_server
from tests.browser import launch_chromium
from tests.fakes.openai_server import FakeOpenAI
from tests.procs import may_start, running_test, what_starts

_real_connect = socket.socket.connect
_real_popen_init = subprocess.Popen.__init__
_REFUSED = pytest.StashKey[list[str]]()


def _checked_popen_init(self: subprocess.Popen, args: Any, *rest: Any, **kw: Any) -> None:
    started = what_starts(args, kw.get("cwd"))
    if started:
        may_start(*started)
    _real_popen_init(self, args, *rest, **kw)


def pytest_configure(config: pytest.Config) -> None:
    subprocess.Popen.__init__ = _checked_popen_init  # type: ignore[method-assign]


# The modules that take longest (a minute or more on two cores, most of it one test's
# launches), collected first: `make test` hands each module to one worker in the
# order collected, and one of these started last kept the others' workers idle
# while it ran on alone. The order of the tests inside a module is kept.
LONGEST_FIRST = (
    "tests/security/test_processes.py",
    "tests/bench/test_bench.py",
    "tests/desktop/test_walkthrough_one_language.py",
    # each a system and some forty browser pages: half a minute or more
    "tests/journeys/test_apps.py",
    "tests/journeys/test_desktop.py",
    "tests/journeys/test_music.py",
    "tests/journeys/test_assistant.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every other module keeps its place


def pytest_unconfigure(config: pytest.Config) -> None:
    subprocess.Popen.__init__ = _real_popen_init  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Setup, call and teardown of `item` (its module fixtures too) may start only
    what its markers allow."""
    with running_test(item.nodeid, (mark.name for mark in item.iter_markers())) as refused:
        item.stash[_REFUSED] = refused
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A refused start fails the test with its own message, also where the code it
    stopped caught the failure or failed otherwise for want of the process."""
    report = yield
    refused = item.stash.get(_REFUSED, [])
    if refused:
        report.outcome = "failed"
        report.longrepr = "\n".join(refused)
    refused.clear()
    return report


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


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    """The scripted OpenAI-compatible model server, one per module (a module may
    define its own `fake` instead)."""
    with FakeOpenAI() as server:
        yield server
