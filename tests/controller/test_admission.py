"""Admission (SECURITY.md D2): a bounded queue, waiters served in turn, overflow refused at once."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from aios_protocol.errors import InvalidRequest, Overloaded
from aios_runtime.settings import AdmissionSettings, load_settings
from controller.pipeline.admission import Admission, _Gate
from tests.procs import wait_for


def test_a_waiter_is_served_when_the_slot_frees() -> None:
    admission = Admission(
        AdmissionSettings(max_instructions=1, max_waiting=1, queue_wait=5)
    )
    release = threading.Event()
    served = threading.Event()

    def holder() -> None:
        with admission.instruction():
            release.wait(5)

    def waiter() -> None:
        with admission.instruction():
            served.set()

    first = threading.Thread(target=holder)
    first.start()
    time.sleep(0.05)
    second = threading.Thread(target=waiter)
    second.start()
    time.sleep(0.05)
    assert not served.is_set()
    release.set()
    assert served.wait(5)
    first.join(5)
    second.join(5)


def test_waiters_are_served_first_come_first_served_and_never_overtaken() -> None:
    gate = _Gate(1, max_waiting=10)
    assert gate.acquire(timeout=0)
    order: list[int] = []
    done = threading.Event()

    def waiter(n: int) -> None:
        assert gate.acquire(timeout=10)
        order.append(n)
        gate.release()
        if len(order) == 5:
            done.set()

    threads = []
    for n in range(5):
        thread = threading.Thread(target=waiter, args=(n,))
        thread.start()
        threads.append(thread)
        wait_for(lambda n=n: gate.waiting == n + 1, 5, f"waiter {n} queued", every=0.005)
    assert not gate.acquire(timeout=0)  # a newcomer queues behind them, no barging
    gate.release()
    assert done.wait(10)
    assert order == [0, 1, 2, 3, 4]
    for thread in threads:
        thread.join(5)
    assert gate.acquire(timeout=0)  # every slot came back


def test_a_waiter_that_gave_up_leaves_the_queue() -> None:
    gate = _Gate(1, max_waiting=1)
    assert gate.acquire(timeout=0)
    assert not gate.acquire(timeout=0.05)  # waited, gave up
    assert gate.waiting == 0
    gate.release()
    assert gate.acquire(timeout=0)  # the slot is free again, not handed to nobody
    gate.release()
    with pytest.raises(ValueError):
        gate.release()


def test_past_the_queue_the_answer_is_overloaded_at_once() -> None:
    admission = Admission(
        AdmissionSettings(max_instructions=1, max_waiting=1, queue_wait=30)
    )
    release = threading.Event()

    def hold() -> None:
        with admission.instruction():
            release.wait(5)

    holder = threading.Thread(target=hold)
    waiter = threading.Thread(target=hold)
    holder.start()
    time.sleep(0.05)
    waiter.start()  # takes the one place in the queue
    time.sleep(0.05)
    started = time.monotonic()
    with pytest.raises(Overloaded), admission.instruction():
        pass
    assert time.monotonic() - started < 5  # refused, not made to wait 30 s
    release.set()
    holder.join(5)
    waiter.join(5)


def test_limits_from_config_name_the_bad_key(tmp_path: Path) -> None:
    # the old name and reader, as aios/system.py still calls them
    assert AdmissionSettings.model_validate({"max_waiting": 4}).max_waiting == 4
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"admission": {"queue_wait": 0}}))
    with pytest.raises(InvalidRequest, match=r"admission\.queue_wait"):
        load_settings(config, env={})
