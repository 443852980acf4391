"""Issue 27 item 3: system status shows the computer, not the app's sandbox.

The shipped system-control app runs confined (bubblewrap, its own PID namespace),
so what it can see of processes by itself is its sandbox: `bwrap` and `python3`.
Its status answers come from the executor's read-only `system_info` tool, which
reads the host. While this test process keeps one core busy, "列出进程" lists it
(by its pid) among many processes; the overview's busiest processes are this
computer's: each pid runs here under the name shown.
"""

from __future__ import annotations

import copy
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psutil
import pytest

from tests.controller.system import TEST_CONFIG, RunningSystem, copy_shipped_apps, serving
from tests.security.conftest import HAS_BWRAP

pytestmark = pytest.mark.slow

APP = "system_agent"


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("system_status_host")
    apps = copy_shipped_apps(root / "apps", (APP,))
    with serving(root, apps, (APP,), config=copy.deepcopy(TEST_CONFIG)) as running:
        yield running


@contextmanager
def busy_here() -> Iterator[None]:
    """Keep this process busy on one core, so it ranks among the busiest."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(1000))

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)


_WORK = re.compile(r"[-+]")


def named_here(rows: list[list[Any]]) -> tuple[int, list[list[Any]]]:
    """How many (pid, name) rows are this computer's processes, and the rows whose pid
    runs here under another name (a process that ended meanwhile is neither)."""
    found, other = 0, []
    for row in rows:
        try:
            name = psutil.Process(int(row[0])).name()
        except psutil.Error:
            continue
        # a kernel worker names its current work after a dash or a plus
        # ("kworker/u8:0-events", "kworker/u8:0+netns"): that part may change
        if _WORK.split(name)[0] == _WORK.split(str(row[1]))[0]:
            found += 1
        else:
            other.append(row)
    return found, other


def reply_to(system: RunningSystem, text: str, language: str = "zh-CN") -> dict[str, Any]:
    response = system.post("/api/instruction", {"text": text, "language": language})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert len(answer["tasks"]) == 1, answer
    task = answer["tasks"][0]
    assert task["app_id"] == APP, task
    result: dict[str, Any] = task["result"]
    return result


def test_the_app_stays_confined(system: RunningSystem) -> None:
    expected = "bubblewrap" if HAS_BWRAP else "none"
    assert system.apps()[APP]["sandbox"] == expected


def test_the_process_list_is_the_computers(system: RunningSystem) -> None:
    with busy_here():
        table = reply_to(system, "列出进程")
    assert table["status"] == "ok" and table["view_type"] == "table", table
    rows = table["data"]["rows"]
    pids = [row[0] for row in rows]
    names = {row[1] for row in rows}
    assert os.getpid() in pids, rows
    assert len(rows) > 2 and len(names) > 2, rows
    found, other = named_here(rows)
    assert found > len(rows) // 2 and not other, other
    found = re.search(r"共 (\d+) 个进程", table["message"])
    assert found, table["message"]
    count, here = int(found.group(1)), len(psutil.pids())
    assert count > 2
    assert abs(count - here) <= max(20, here // 3), (count, here)


def test_the_overviews_busiest_processes_are_the_computers(system: RunningSystem) -> None:
    with busy_here():
        dashboard = reply_to(system, "查看系统状态")
    assert dashboard["view_type"] == "dashboard", dashboard
    busiest = next(w for w in dashboard["data"]["widgets"] if w["type"] == "table")
    rows = busiest["data"]["rows"]
    assert len(rows) == 8, rows
    found, other = named_here(rows)
    assert found >= 4 and not other, rows


def test_english_counts_the_computers_processes(system: RunningSystem) -> None:
    table = reply_to(system, "list processes", "en-US")
    found = re.search(r"(\d+) processes", table["message"])
    assert found and int(found.group(1)) > 2, table["message"]
