"""`aios_runtime.warmup`: work a service does after its start, ahead of the request
that would need it."""

from __future__ import annotations

import logging
import threading

import pytest

from aios_runtime.warmup import warm_up_later


def test_the_work_waits_for_its_signal_and_its_delay() -> None:
    found_up = threading.Event()
    done = threading.Event()
    thread = warm_up_later(done.set, after=found_up, delay=0.05)
    assert not done.wait(0.2)  # the service was not found up yet
    found_up.set()
    assert done.wait(5)
    thread.join(5)
    assert not thread.is_alive()


def test_a_failing_warm_up_is_logged_and_ends(caplog: pytest.LogCaptureFixture) -> None:
    def fails() -> None:
        raise RuntimeError("cannot warm up")

    with caplog.at_level(logging.ERROR, logger="aios_runtime.warmup"):
        warm_up_later(fails, delay=0, name="tools").join(5)
    assert "tools failed" in caplog.text and "cannot warm up" in caplog.text
