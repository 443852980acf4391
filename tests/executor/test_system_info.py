"""The `system_info` atomic tool: the computer's facts, read-only.

Its declared facts (read risk, no confirmation, concurrency-safe, a bounded `limit`),
each `what` answered from the host this test runs on, an app calling it with its own
token, and what it never shows: a process's arguments and environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import psutil
import pytest

from aios_protocol.messages import ATOMIC_TOOLS
from aios_protocol.tools import declared_tools
from executor.tools import system_info
from executor.tools.catalog import ATOMIC_SCHEMAS, InvalidArgs
from executor.tools.system_info import read_system
from tests.apps.test_system_status_host import busy_process
from tests.executor.conftest import APP_TOKEN, Harness
from tests.procs import wait_for

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


@dataclass
class Read:
    """One reading of the watched process's times by the tool, seen from outside:
    the clocks and its CPU seconds (user + system) just before and just after."""

    before: float  # time.monotonic()
    before_wall: float  # time.time()
    cpu_before: float
    after: float = 0.0
    after_wall: float = 0.0
    cpu_after: float = 0.0


@dataclass
class Watched:
    """The tool's readings of one process: each `Read`, and the windows
    (base snapshot, new snapshot) its CPU shares were measured over. From them, the
    bounds the process's share must lie in, whatever else the computer runs: at
    least the CPU time it surely used between the two readings over the longest the
    window can be, at most the most it can have used over the shortest."""

    proc: psutil.Process
    reads: list[Read] = field(default_factory=list)
    windows: list[tuple[Any, Any]] = field(default_factory=list)
    taken: dict[int, int] = field(default_factory=dict)  # snapshot → its read
    kept: list[Any] = field(default_factory=list)  # those snapshots (ids stay theirs)

    def cpu(self) -> float:
        return sum(self.proc.cpu_times()[:2])

    def share_bounds(self, window: int = -1) -> tuple[float, float]:
        """The lowest and the highest share (%) the process can have had over
        `window` (the last by default)."""
        base, now = self.windows[window]
        j = self.reads[self.taken[id(now)]]
        if id(base) in self.taken and self.proc.pid in (base.processes or {}):
            i = self.reads[self.taken[id(base)]]
            lower = (j.cpu_before - i.cpu_after) / (j.after - i.before)
            upper = (j.cpu_after - i.cpu_before) / (j.before - i.after)
        else:  # started within the window: measured over its life
            started = self.proc.create_time()
            lower = j.cpu_before / max(system_info.SAMPLE, j.after_wall - started)
            upper = j.cpu_after / max(system_info.SAMPLE, j.before_wall - started)
        return 100 * lower, 100 * upper

    def assert_measured(self, share: float, window: int = -1) -> None:
        lower, upper = self.share_bounds(window)
        assert lower - 0.05 <= share <= upper + 0.05, (lower, share, upper)  # rounded


@contextlib.contextmanager
def watching(
    monkeypatch: pytest.MonkeyPatch,
    proc: psutil.Process,
    slow_walk: Callable[[int], None] = lambda n: None,
) -> Iterator[Watched]:
    """Watch the tool read `proc`; `slow_walk(n)` runs before its `n`th reading (a
    walk over the processes that reaches it late, as on a busy computer)."""
    watched = Watched(proc)
    real_row, real_rows = system_info._process_row, system_info._process_rows
    real_take = system_info._Windows._take

    def row(seen: psutil.Process) -> Any:
        if seen.pid != proc.pid:
            return real_row(seen)
        slow_walk(len(watched.reads))
        read = Read(time.monotonic(), time.time(), watched.cpu())
        found = real_row(seen)
        read.cpu_after, read.after, read.after_wall = (
            watched.cpu(),
            time.monotonic(),
            time.time(),
        )
        watched.reads.append(read)
        return found

    def rows(base: Any, now: Any) -> list[dict[str, Any]]:
        watched.windows.append((base, now))
        return real_rows(base, now)

    def take(windows: Any, with_processes: bool) -> Any:
        index = len(watched.reads)
        snapshot = real_take(windows, with_processes)
        if with_processes and len(watched.reads) > index:
            watched.taken[id(snapshot)] = index
            watched.kept.append(snapshot)
        return snapshot

    monkeypatch.setattr(system_info, "_process_row", row)
    monkeypatch.setattr(system_info, "_process_rows", rows)
    monkeypatch.setattr(system_info._Windows, "_take", take)
    yield watched


def test_a_busy_core_is_measured_on_whichever_thread_reads_it(
    windows: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The executor keeps its CPU window open on a thread of its own and answers on
    worker threads; the figures read there are the busy core's (psutil's
    `cpu_percent(None)` answered 0.0 on a thread that had not called it), and a
    process that started since the window opened is measured too: its share is the
    CPU time it used over the window, however little the computer's other work
    left it (a fixed bar such as 5 % failed on a loaded machine)."""
    stopped = threading.Event()
    stopped.set()  # one pass, then it returns
    system_info.keep_window_open(stopped)
    with busy_process() as busy, watching(monkeypatch, busy) as watched:
        cpu = on_another_thread("cpu")["cpu"]
        # a core is busy all along: the busy loop runs, or something else does
        assert sum(cpu["per_cpu"]) >= 50, cpu  # half a core at least
        assert cpu["percent"] * cpu["count"] >= 50, cpu
        overview = on_another_thread("overview")
        assert sum(overview["cpu"]["per_cpu"]) >= 50, overview["cpu"]
        rows = {row["pid"]: row for row in on_another_thread("processes")["processes"]}
        watched.assert_measured(rows[busy.pid]["cpu"])


def test_a_reading_soon_after_another_measures_again(
    windows: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refresh a moment later measures anew (it repeated the previous figures,
    and a process that started since was listed at 0 %): the new process over its
    life, which used a quarter of a second of CPU at least."""
    first = read_system("processes", 500)
    with busy_process() as busy, watching(monkeypatch, busy) as watched:
        again = read_system("processes", 500)
    assert busy.pid not in {row["pid"] for row in first["processes"]}
    rows = {row["pid"]: row for row in again["processes"]}
    watched.assert_measured(rows[busy.pid]["cpu"])
    assert watched.share_bounds()[0] > 0


def test_a_process_read_late_in_a_slow_walk_is_measured_between_its_readings(
    windows: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot walks the processes one by one, and on a busy computer it reaches
    one late: its share is its CPU time over the time between its own two readings,
    at least `SAMPLE` apart. It was divided by the time between the snapshots'
    starts, which held the slow walk, and read far below what it used (4.2 % for a
    process that kept a core busy)."""
    with busy_process() as busy:
        spent = sum(busy.cpu_times()[:2])

        def slow_walk(reads: int) -> None:
            if reads == 0:  # the first snapshot reaches it after a while
                wait_for(
                    lambda: sum(busy.cpu_times()[:2]) >= spent + 0.3,
                    60,
                    "the busy process to run on",
                )

        with watching(monkeypatch, busy, slow_walk) as watched:
            rows = {row["pid"]: row for row in read_system("processes", 500)["processes"]}
    assert len(watched.windows) == 1
    first, second = watched.reads
    assert second.before - first.after >= system_info.SAMPLE
    watched.assert_measured(rows[busy.pid]["cpu"])


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
