"""Processes that fail under the controller: the executor killed in
the middle of a plan, an app that hangs, an app that floods its output.

One shared system (`fault_system`). Each fault is answered with an error view of
that task only, the supervisor brings the process back, and the next request works.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.controller.system import RunningSystem
from tests.faults.conftest import executor_process, task_reply

pytestmark = pytest.mark.slow


def _cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def test_executor_killed_mid_plan_is_a_clear_error_and_the_next_plan_works(
    fault_system: RunningSystem,
) -> None:
    system = fault_system
    executor = executor_process(system)
    answer: dict[str, Any] = {}

    def slow_plan() -> None:
        answer["response"] = system.post("/api/instruction", {"text": "故障应用 慢步骤"})

    worker = threading.Thread(target=slow_plan)
    worker.start()

    # the plan's 5 s step is running inside the executor
    def step_running() -> bool:  # the sandbox may start it in a session of its own
        return any(
            [Path(a).name for a in _cmdline(p)] == ["sleep", "5.37"]
            for p in psutil.process_iter()
        )

    system.wait_for(step_running, 10, "the plan's step")
    executor.kill()
    worker.join(30)
    response = answer["response"]
    assert response.status_code == 200, response.text
    reply = task_reply(response.json())
    assert reply["status"] == "error" and reply["view_type"] == "error", reply
    assert reply["data"]["code"] in ("executor_unreachable", "app_unreachable"), reply
    # said plainly: the executor, not the app, was lost; the technical text folded away
    assert "执行器" in reply["data"]["message"], reply
    assert "executor" in reply["detail"], reply

    def executor_back() -> bool:
        if system.get("/api/health").json()["executor"] != "running":
            return False
        try:
            return executor_process(system).pid != executor.pid
        except AssertionError:  # between two lives
            return False

    system.wait_for(executor_back, 30, "the executor to be restarted")

    def next_plan_works() -> dict[str, Any] | None:
        reply = task_reply(system.say("故障应用 快步骤"))
        return reply if reply["status"] == "ok" else None

    reply = system.wait_for(next_plan_works, 20, "the next plan to work")
    assert reply["data"]["results"]["step_1"]["status"] == "ok", reply


def _assert_restarted_and_answering(system: RunningSystem, before: dict) -> None:
    """fault_app runs again in a new process and answers."""
    after = system.wait_for(
        lambda: (
            (row := system.apps()["fault_app"])["status"] == "running"
            and row["pid"] != before["pid"]
            and row
        ),
        30,
        "fault_app to be restarted",
    )
    assert after["restarts"] > before["restarts"]
    assert task_reply(system.say("故障应用 你好"))["status"] == "ok"


def test_a_hung_app_is_a_timeout_view_and_is_restarted(fault_system: RunningSystem) -> None:
    system = fault_system
    before = system.apps()["fault_app"]
    started = time.monotonic()
    reply = task_reply(system.say("故障应用 挂起"))
    elapsed = time.monotonic() - started
    assert reply["status"] == "error" and reply["view_type"] == "error", reply
    # whichever comes first: the call's timeout (app_timeout 3 s) or the missed health
    # checks (2 × 0.3 s) that make the supervisor kill the frozen app mid-call
    assert reply["data"]["code"] in ("app_unreachable", "app_unavailable"), reply
    assert "fault_app" in reply["data"]["message"] or "故障应用" in reply["data"]["message"]
    assert elapsed < 3 + 5, elapsed
    # the other apps never noticed
    assert task_reply(system.say("回声 还在吗"))["status"] == "ok"
    _assert_restarted_and_answering(system, before)


def test_an_app_whose_call_hangs_while_it_answers_health_is_restarted(
    fault_system: RunningSystem,
) -> None:
    """Its `/health` still answers, so only the call's timeout tells it hung."""
    system = fault_system
    before = system.wait_for(
        lambda: (row := system.apps()["fault_app"])["status"] == "running" and row,
        30,
        "fault_app to run",
    )
    reply = task_reply(system.say("故障应用 卡住"))
    assert reply["status"] == "error" and reply["view_type"] == "error", reply
    assert reply["data"]["code"] == "app_unreachable", reply
    assert "没有及时回答" in reply["data"]["message"], reply  # said plainly
    assert "3 s" in reply["detail"], reply  # the call's timeout, in the details
    _assert_restarted_and_answering(system, before)


def test_an_app_answering_calls_is_not_restarted_for_late_health_checks(
    fault_system: RunningSystem,
) -> None:
    """Its `/health` takes 1 s (the probe's timeout is 0.5 s) while calls answer at once:
    busy with calls, it stays; left without calls, it is restarted."""
    system = fault_system
    before = system.wait_for(
        lambda: (row := system.apps()["fault_app"])["status"] == "running" and row,
        30,
        "fault_app to run",
    )
    assert task_reply(system.say("故障应用 慢体检 3"))["status"] == "ok"
    calls_until = time.monotonic() + 3
    while time.monotonic() < calls_until:  # about six health checks come back late
        assert task_reply(system.say("故障应用 你好"))["status"] == "ok"
        time.sleep(0.1)
    row = system.apps()["fault_app"]
    assert (row["pid"], row["restarts"]) == (before["pid"], before["restarts"]), row
    # the same late checks with no call in between: two misses, and a restart
    assert task_reply(system.say("故障应用 慢体检 3"))["status"] == "ok"
    _assert_restarted_and_answering(system, before)


def test_a_flood_of_output_keeps_the_log_bounded_and_blocks_nothing(
    fault_system: RunningSystem,
) -> None:
    system = fault_system
    log = system.state_dir / "logs" / "fault_app.log"
    pid = system.apps()["fault_app"]["pid"]
    answers: list[dict[str, Any]] = []

    def flood() -> None:
        for _ in range(3):
            answers.append(task_reply(system.say("故障应用 刷屏 8", session_id=None)))
            time.sleep(1)  # a few health intervals: the supervisor trims in between

    worker = threading.Thread(target=flood)
    worker.start()
    biggest = 0
    while worker.is_alive():
        started = time.monotonic()
        assert task_reply(system.say("回声 不受影响"))["status"] == "ok"
        assert time.monotonic() - started < 2.5  # another app answers meanwhile
        biggest = max(biggest, log.stat().st_size)
        time.sleep(0.05)
    worker.join()
    assert [a["status"] for a in answers] == ["ok"] * 3, answers
    # 24 MB written; past 256 KB the log is trimmed at every health interval (0.3 s),
    # so it never holds much more than one flood
    system.wait_for(lambda: log.stat().st_size <= 256 * 1024, 5, "the log to be trimmed")
    assert biggest < 9 * 1024 * 1024, biggest
    row = system.apps()["fault_app"]
    assert row["status"] == "running" and row["pid"] == pid, row  # never restarted
    assert psutil.pid_exists(pid)
