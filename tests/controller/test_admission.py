"""Admission (SECURITY.md D2): a bounded queue, waiters served in turn, overflow refused at once."""

from __future__ import annotations

import threading
import time

import pytest

from aios_sdk.errors import Overloaded
from controller.pipeline.admission import Admission, AdmissionLimits


def test_a_waiter_is_served_when_the_slot_frees() -> None:
    admission = Admission(AdmissionLimits(max_instructions=1, max_waiting=1, queue_wait=5))
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


def test_past_the_queue_the_answer_is_overloaded_at_once() -> None:
    admission = Admission(AdmissionLimits(max_instructions=1, max_waiting=1, queue_wait=30))
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


def test_limits_from_config_name_the_bad_key() -> None:
    assert AdmissionLimits.from_mapping({"max_waiting": 4}).max_waiting == 4
    with pytest.raises(ValueError, match="admission.queue_wait"):
        AdmissionLimits.from_mapping({"queue_wait": 0})
