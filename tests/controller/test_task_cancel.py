"""TaskCancels (controller/pipeline/cancel.py): a cancel abandons the running call at
once and stops the work's later calls; other work and calls outside work run on."""

from __future__ import annotations

import threading
import time

import pytest

from aios_runtime.json_client import request_json
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
    assert cancels.cancel_task("other") == 0
    started = time.monotonic()
    assert cancels.cancel_task("t1") == 1
    thread.join(2)
    assert time.monotonic() - started < 1
    assert outcome == {"first": "cancelled", "second": "refused"}
    assert cancels.cancel_task("t1") == 0  # ended work is forgotten


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
