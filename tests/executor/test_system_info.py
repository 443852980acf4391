"""The `system_info` atomic tool: the computer's facts, read-only.

Its declared facts (read risk, no confirmation, concurrency-safe, a bounded `limit`),
each `what` answered from the host this test runs on, an app calling it with its own
token, and what it never shows: a process's arguments and environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

from aios_protocol.messages import ATOMIC_TOOLS
from aios_protocol.tools import declared_tools
from executor.tools import system_info
from executor.tools.catalog import ATOMIC_SCHEMAS, InvalidArgs
from executor.tools.system_info import read_system
from tests.apps.test_system_status_host import BUSY_SHARE, busy_process
from tests.executor.conftest import APP_TOKEN, Harness

ROW_KEYS = {"pid", "name", "user", "cpu", "memory"}
SECRET_ARG = "arg-s3cr3t-7f3a"
SECRET_ENV = "env-s3cr3t-91c2"
real_sleep = time.sleep


def test_it_is_an_atomic_tool_that_reads_and_may_run_beside_others() -> None:
    assert "system_info" in ATOMIC_TOOLS
    info = next(t for t in declared_tools(1000, 1000) if t.name == "system_info")
    assert info.risk_level == "read" and info.provider == "atomic"
    assert info.concurrency_safe and not info.requires_confirmation
    schema = info.input_schema
    assert schema["properties"]["what"]["enum"] == [
        "overview",
        "processes",
        "memory",
        "disk",
        "cpu",
    ]
    assert schema["properties"]["limit"]["maximum"] == 500


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"what": "network"},
            "system_info: argument 'what' must be one of "
            "['overview', 'processes', 'memory', 'disk', 'cpu']",
        ),
        ({"limit": 0}, "system_info: argument 'limit'"),
        ({"limit": 501}, "system_info: argument 'limit'"),
        ({"limit": "all"}, "system_info: argument 'limit' must be integer, got string"),
        ({"pid": 1}, "system_info: unknown argument 'pid'"),
    ],
)
def test_its_arguments_are_checked(args: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidArgs) as err:
        ATOMIC_SCHEMAS["system_info"].check(args)
    assert err.value.message.startswith(message), err.value.message


def test_each_question_is_answered_from_this_computer() -> None:
    overview = read_system("overview", 3)
    assert set(overview) == {"time", "cpu", "memory", "disk", "processes", "process_count"}
    assert len(overview["processes"]) == 3
    assert overview["process_count"] > 3
    assert 0 <= overview["cpu"]["percent"] <= 100
    assert len(overview["cpu"]["per_cpu"]) == overview["cpu"]["count"] == psutil.cpu_count()
    assert overview["memory"]["total_gb"] > 0 and overview["disk"]["path"] == "/"
    processes = read_system("processes", 500)
    assert set(processes) == {"time", "processes", "process_count"}
    assert len(processes["processes"]) == processes["process_count"]
    assert os.getpid() in [row["pid"] for row in processes["processes"]]
    assert all(set(row) == ROW_KEYS for row in processes["processes"])
    cpu = [row["cpu"] for row in processes["processes"]]
    assert cpu == sorted(cpu, reverse=True)  # busiest first
    assert set(read_system("memory")) == {"time", "memory"}
    assert set(read_system("disk")["disk"]) == {
        "path",
        "percent",
        "used_gb",
        "free_gb",
        "total_gb",
    }
    assert set(read_system("cpu")) == {"time", "cpu"}
    assert len(read_system("processes")["processes"]) == 10  # the default limit


@pytest.fixture
def secretive() -> Iterator[subprocess.Popen[bytes]]:
    """A process holding a secret in its arguments and in its environment."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", f"--token={SECRET_ARG}"],
        env={**os.environ, "AIOS_TEST_SECRET": SECRET_ENV},
    )
    try:
        yield child
    finally:
        child.kill()
        child.wait(5)


def test_an_app_reads_the_computers_processes_but_no_secrets(
    harness: Harness, secretive: subprocess.Popen[bytes]
) -> None:
    answer = harness.call("system_info", token=APP_TOKEN, what="processes", limit=500)
    assert answer["status"] == "ok", answer
    rows = answer["result"]["processes"]
    mine = {row["pid"]: row for row in rows}
    assert os.getpid() in mine and secretive.pid in mine
    assert mine[secretive.pid]["name"].startswith("python")
    assert mine[secretive.pid]["user"] == psutil.Process().username()
    text = json.dumps(answer)
    assert SECRET_ARG not in text and SECRET_ENV not in text and "--token" not in text


def on_another_thread(what: str) -> dict[str, Any]:
    """`read_system(what)` as the executor runs a tool: on a worker thread."""
    answers: list[dict[str, Any]] = []
    worker = threading.Thread(target=lambda: answers.append(read_system(what, 500)))
    worker.start()
    worker.join(30)
    return answers[0]


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """A fresh set of CPU windows, and the waits of the readings (each one waited)."""
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(system_info, "_WINDOWS", system_info._Windows())
    monkeypatch.setattr(system_info.time, "sleep", wait)
    yield waits


def test_a_busy_core_is_measured_on_whichever_thread_reads_it(
    windows: list[float],
) -> None:
    """Issue 38 item 1: the executor keeps its CPU window open on a thread of its
    own and answers on worker threads; the figures read there are the busy core's
    (psutil's `cpu_percent(None)` answered 0.0 on a thread that had not called it),
    and a process that started since the window opened is measured too."""
    stopped = threading.Event()
    stopped.set()  # one pass, then it returns
    system_info.keep_window_open(stopped)
    with busy_process() as busy:
        cpu = on_another_thread("cpu")["cpu"]
        assert sum(cpu["per_cpu"]) >= 50, cpu  # half a core at least
        assert cpu["percent"] * cpu["count"] >= 50, cpu
        overview = on_another_thread("overview")
        assert sum(overview["cpu"]["per_cpu"]) >= 50, overview["cpu"]
        rows = {row["pid"]: row for row in on_another_thread("processes")["processes"]}
        assert rows[busy.pid]["cpu"] >= BUSY_SHARE, rows[busy.pid]


def test_a_reading_soon_after_another_measures_again(windows: list[float]) -> None:
    """Issue 38 item 1: a refresh a moment later measures anew (it repeated the
    previous figures, and a process that started since was listed at 0 %)."""
    first = read_system("processes", 500)
    with busy_process() as busy:
        again = read_system("processes", 500)
    assert busy.pid not in {row["pid"] for row in first["processes"]}
    rows = {row["pid"]: row for row in again["processes"]}
    assert rows[busy.pid]["cpu"] >= BUSY_SHARE, rows[busy.pid]


def test_only_a_reading_with_no_recent_window_waits(windows: list[float]) -> None:
    """The system app opened again answers at once: only a reading with no window
    at least `SAMPLE` old waits for one, once; a later reading measures from the
    window the one before began."""
    first = read_system("overview")
    assert len(windows) == 1 and 0 < windows[0] <= system_info.SAMPLE
    again = read_system("overview")
    later = read_system("cpu")
    assert len(windows) == 1  # neither waited
    for answer in (first, again, later):
        assert 0 <= answer["cpu"]["percent"] <= 100
        assert len(answer["cpu"]["per_cpu"]) == psutil.cpu_count()
    assert {row["pid"] for row in again["processes"]} <= set(psutil.pids()) | {
        row["pid"] for row in first["processes"]
    }


def test_a_window_kept_open_from_the_start_spares_a_cpu_reading_its_wait(
    windows: list[float],
) -> None:
    """The executor keeps a CPU window open from its start (`keep_window_open`), so
    the CPU card's first answer does not wait `SAMPLE` for one."""
    stopped = threading.Event()
    stopped.set()  # one pass, then it returns
    system_info.keep_window_open(stopped)
    real_sleep(system_info.SAMPLE)  # the window has lasted long enough
    first = read_system("cpu")
    assert windows == []  # no wait: the window was open already
    assert 0 <= first["cpu"]["percent"] <= 100


def test_old_windows_are_let_go(windows: list[float]) -> None:
    """Readings keep only the snapshots a later reading can measure from: those
    younger than `SAMPLE`, the newest older one and the newest older one with the
    processes' times."""
    for _ in range(5):
        read_system("processes")
        read_system("cpu")
    real_sleep(system_info.SAMPLE)
    read_system("cpu")
    kept = system_info._WINDOWS.snapshots
    assert 2 <= len(kept) <= 3, [round(s.at, 2) for s in kept]
    assert kept[0].processes is not None
