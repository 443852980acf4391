"""Scheduling inside a user's boundary (the scheduler's logic, an injected clock):
a job belongs to the user who made it, runs in their sandbox, and a user's command
jobs never overlap."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from aios_protocol.errors import NotFound
from aios_protocol.messages import ScheduleJob, ScheduleJobPatch
from scheduler import JobRunner, JobStore, Scheduler
from tests.scheduler.conftest import (  # noqa: F401  (fixtures)
    Clock,
    FakeExecutor,
    FakePipeline,
    clock,
    executor,
    pipeline,
)


def _job(**kw: Any) -> ScheduleJob:
    fields = {
        "name": "echo",
        "execution_type": "command",
        "schedule_type": "interval",
        "interval_s": 1,
        "app_id": "code_app",
        "command": ["echo", "hi"],
    }
    return ScheduleJob(**{**fields, **kw})


def _scheduler(tmp_path, clock, executor, pipeline, **runner: Any) -> Scheduler:  # noqa: F811
    return Scheduler(
        JobStore(tmp_path / "state"),
        JobRunner(executor, pipeline, **runner),
        clock=clock,
    )


def test_a_users_jobs_are_theirs_alone(tmp_path, clock, executor, pipeline) -> None:  # noqa: F811
    scheduler = _scheduler(tmp_path, clock, executor, pipeline)
    alices = scheduler.create(_job(name="a"), user="alice")
    bobs = scheduler.create(_job(name="b", user_id="alice"), user="bob")
    assert alices["user_id"] == "alice" and bobs["user_id"] == "bob"
    assert [j["id"] for j in scheduler.jobs(user="alice")] == [alices["id"]]
    assert [j["id"] for j in scheduler.jobs(user="bob")] == [bobs["id"]]
    assert scheduler.jobs(user="default") == []
    for act in (
        lambda: scheduler.get(alices["id"], user="bob"),
        lambda: scheduler.update(alices["id"], ScheduleJobPatch(name="x"), user="bob"),
        lambda: scheduler.run_now(alices["id"], user="bob"),
        lambda: scheduler.runs(alices["id"], user="bob"),
        lambda: scheduler.delete(alices["id"], user="bob"),
    ):
        with pytest.raises(NotFound):
            act()
    assert scheduler.get(alices["id"])["name"] == "a"  # untouched
    assert len(scheduler.jobs()) == 2  # the desktop (the owner) sees every job
    # kept across a restart, with their users
    again = _scheduler(tmp_path, clock, executor, pipeline)
    assert [j["id"] for j in again.jobs(user="alice")] == [alices["id"]]


def test_a_command_job_runs_in_its_users_sandbox(
    tmp_path,
    clock: Clock,  # noqa: F811
    executor: FakeExecutor,  # noqa: F811
    pipeline: FakePipeline,  # noqa: F811
) -> None:
    scheduler = _scheduler(tmp_path, clock, executor, pipeline)
    job = scheduler.create(_job(), user="alice")
    scheduler.run_now(job["id"], user="alice")
    assert scheduler.wait_idle()
    assert executor.bodies[0]["user_id"] == "alice"


def test_an_agent_job_runs_in_a_session_of_its_user(
    tmp_path,
    clock: Clock,  # noqa: F811
    executor: FakeExecutor,  # noqa: F811
    pipeline: FakePipeline,  # noqa: F811
) -> None:
    claimed: list[tuple[str, str | None]] = []
    scheduler = _scheduler(
        tmp_path,
        clock,
        executor,
        pipeline,
        claim_session=lambda sid, user: claimed.append((sid, user)),
    )
    job = scheduler.create(
        _job(execution_type="agent", command=None, instruction="提醒我喝水"), user="bob"
    )
    scheduler.run_now(job["id"], user="bob")
    assert scheduler.wait_idle()
    assert claimed == [(pipeline.said[0][1], "bob")]


class _CountingExecutor:
    """`/run` that holds each command until released, counting how many run at once."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.users: list[str | None] = []
        self.release = threading.Event()
        self.started = threading.Semaphore(0)
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.users.append(body.get("user_id"))
        self.started.release()
        self.release.wait(10)
        with self._lock:
            self.running -= 1
        result = {"returncode": 0, "stdout": "ok\n", "stderr": ""}
        return {
            "tool_results": {
                "step_1": {"tool": "shell_exec", "status": "ok", "result": result}
            }
        }


def test_one_users_command_jobs_take_turns_and_other_users_are_not_held(
    tmp_path,
    clock: Clock,  # noqa: F811
    pipeline: FakePipeline,  # noqa: F811
) -> None:
    counting = _CountingExecutor()
    scheduler = _scheduler(tmp_path, clock, counting, pipeline)
    first = scheduler.create(_job(name="one"), user="alice")
    second = scheduler.create(_job(name="two"), user="alice")
    bobs = scheduler.create(_job(name="bob's"), user="bob")
    scheduler.run_now(first["id"], user="alice")
    scheduler.run_now(bobs["id"], user="bob")
    assert counting.started.acquire(timeout=10) and counting.started.acquire(timeout=10)
    scheduler.run_now(second["id"], user="alice")  # waits for alice's lock
    assert not counting.started.acquire(timeout=0.5)
    assert counting.running == 2  # alice's first and bob's, side by side
    counting.release.set()
    assert scheduler.wait_idle()
    assert counting.most == 2 and sorted(map(str, counting.users)) == [
        "alice",
        "alice",
        "bob",
    ]
    for job in (first, second, bobs):
        (run,) = scheduler.runs(job["id"])
        assert run["status"] == "ok"
