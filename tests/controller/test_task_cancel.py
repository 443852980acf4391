"""TaskCancels (controller/pipeline/cancel.py): a cancel abandons the running call at
once and stops the work's later calls; other work and calls outside work run on."""

from __future__ import annotations

import threading
import time

import pytest

from aios_runtime.edge import create_service
from aios_runtime.json_client import request_json
from controller.api.tasks import tasks_blueprint
from controller.pipeline.cancel import Cancelled, TaskCancels


def test_cancel_abandons_the_running_call_and_the_next_ones(slow_peer: str) -> None:
    cancels = TaskCancels()
    outcome: dict[str, object] = {}

    def work() -> None:
        with cancels.running("s1", "slow_app", "t1"):
            try:
                cancels.guard(lambda: request_json("POST", f"{slow_peer}/slow", {}))
            except Cancelled as exc:
                outcome["first"] = exc.code
            try:
                cancels.guard(lambda: "never runs")
            except Cancelled:
                outcome["second"] = "refused"

    thread = threading.Thread(target=work)
    thread.start()
    time.sleep(0.3)  # the request is on the wire, waiting for its answer
    assert cancels.cancel_task("other", "s1") == 0
    started = time.monotonic()
    assert cancels.cancel_task("t1", "s1") == 1
    thread.join(2)
    assert time.monotonic() - started < 1
    assert outcome == {"first": "cancelled", "second": "refused"}
    assert cancels.cancel_task("t1", "s1") == 0  # ended work is forgotten


def test_a_task_id_names_work_only_within_its_session_and_app() -> None:
    # every instruction's plan numbers its tasks from "t1"
    cancels = TaskCancels()
    with (
        cancels.running("s1", "music_app", "t1") as mine,
        cancels.running("s2", "music_app", "t1") as other_session,
        cancels.running("s1", "hello_app", "t1") as other_app,
    ):
        assert cancels.cancel_task("t1", "s3") == 0
        assert cancels.cancel_task("t1", "s1", "music_app") == 1
        assert mine.cancelled.is_set()
        assert not other_session.cancelled.is_set()
        assert not other_app.cancelled.is_set()
        assert cancels.cancel_task("t1", "s1") == 2  # no app named: the session's "t1"s
        assert not other_session.cancelled.is_set()


def test_the_cancel_route_needs_the_session_of_the_task() -> None:
    cancels = TaskCancels()
    app = create_service("controller", lambda presented: "desktop")
    app.register_blueprint(tasks_blueprint(cancels))
    client = app.test_client()
    headers = {"X-AIOS-Token": "any", "Host": "127.0.0.1"}
    with (
        cancels.running("s1", "music_app", "t1") as mine,
        cancels.running("s2", "music_app", "t1") as other,
    ):
        refused = client.post("/api/tasks/t1/cancel", json={}, headers=headers)
        assert refused.status_code == 400
        assert "session_id" in refused.get_json()["error"]["message"]
        assert not mine.cancelled.is_set() and not other.cancelled.is_set()
        answer = client.post(
            "/api/tasks/t1/cancel",
            json={"session_id": "s1", "app_id": "music_app"},
            headers=headers,
        )
        assert answer.get_json() == {"status": "ok", "cancelled": 1}
        assert mine.cancelled.is_set() and not other.cancelled.is_set()


def test_a_call_that_is_not_cancelled_answers_normally(slow_peer: str) -> None:
    cancels = TaskCancels()
    with cancels.running("s1", "app", "t2"):
        assert cancels.guard(lambda: 7) == 7


def test_cancel_by_app_and_session_only_touches_that_work() -> None:
    cancels = TaskCancels()
    with cancels.running("s1", "app", None) as mine:
        assert cancels.cancel_app("app", "s2") == 0
        assert cancels.cancel_app("other", "s1") == 0
        assert not mine.cancelled.is_set()
        assert cancels.guard(lambda: 42) == 42
        assert cancels.cancel_app("app", "s1") == 1
        with pytest.raises(Cancelled):
            cancels.guard(lambda: 42)


def test_outside_any_work_the_call_runs_on_the_calling_thread() -> None:
    cancels = TaskCancels()
    assert cancels.guard(threading.get_ident) == threading.get_ident()
