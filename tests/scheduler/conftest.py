"""Shared pieces of the scheduler tests: a clock the tests move, and fakes of the
executor's `/run` and the pipeline (functions from request to answer)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scheduler import JobRunner, JobStore, Scheduler


class Clock:
    """An aware clock that moves only when told."""

    def __init__(self, start: datetime | None = None):
        self.now = start or datetime(2030, 5, 6, 8, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


class FakeExecutor:
    """`/run` answering every `shell_exec` with exit code 0 (or what a test sets)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.answer: dict[str, Any] = {
            "status": "ok",
            "result": {"returncode": 0, "stdout": "hi\n", "stderr": ""},
        }
        self.gate: threading.Event | None = None

    def __call__(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.bodies.append(body)
        if self.gate is not None:
            self.gate.wait(10)
        return {"tool_results": {"step_1": {"tool": "shell_exec", **self.answer}}}


class FakePipeline:
    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []
        self.delay: threading.Event | None = None

    def __call__(
        self, text: str, session_id: str, language: str | None = None
    ) -> dict[str, Any]:
        self.said.append((text, session_id))
        if self.delay is not None:
            self.delay.wait(10)
        reply = {
            "status": "ok",
            "view_type": "text",
            "data": {},
            "message": f"done: {text}",
        }
        return {
            "session_id": session_id,
            "message": f"done: {text}",
            "tasks": [{"task_id": "t1", "app_id": "a", "result": reply}],
        }


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def executor() -> FakeExecutor:
    return FakeExecutor()


@pytest.fixture
def pipeline() -> FakePipeline:
    return FakePipeline()


@pytest.fixture
def toasts() -> list[tuple[str, str, str, str]]:
    return []


@pytest.fixture
def make_scheduler(tmp_path, clock, executor, pipeline, toasts):
    def make(**kw: Any) -> Scheduler:
        notify = lambda *a: toasts.append(a)  # noqa: E731
        return Scheduler(
            JobStore(tmp_path / "state"),
            JobRunner(executor, pipeline, notify),
            clock=clock,
            notify=notify,
            **kw,
        )

    return make
