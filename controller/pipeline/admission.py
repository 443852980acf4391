"""Bounded work in the controller: overflow is a clear 503, at once.

Each instruction, app open, action or confirmation holds a slot while it runs:
at most `max_instructions` instructions at once, and at most `max_app_calls` calls
to any one app (open, action, confirmation). A request that finds no free slot
waits in a bounded first-come-first-served queue — at most `max_waiting` requests
wait for each kind of slot, each at most `queue_wait` seconds — so an ordinary burst
is served in turn; past that it is answered 503 `overloaded` at once instead of
piling up behind a slow app. A flood aimed at one app never starves the others, and the server's
threads (more than running + waiting) stay free for health checks, the event
stream and other apps.

Limits come from config.json's `admission` section
(`aios_runtime.settings.AdmissionSettings`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aios_protocol.errors import Overloaded
from aios_runtime.settings import AdmissionSettings

__all__ = ["Admission", "AdmissionSettings"]


# the old name of config.json's `admission` section, as aios/system.py imports it


class _Gate:
    """`size` slots and a first-come-first-served queue of at most `max_waiting`.

    A newcomer never overtakes a waiter: while anyone waits it queues too, and a
    released slot passes straight to the longest waiter. So a request waits about
    its place in the queue times the time a slot is held, never starved past
    `queue_wait` by later arrivals.
    """

    def __init__(self, size: int, max_waiting: int):
        self._size = size
        self._free = size
        self._max_waiting = max_waiting
        self._queue: deque[threading.Event] = deque()
        self._lock = threading.Lock()

    @property
    def waiting(self) -> int:
        """How many requests wait for a slot now."""
        with self._lock:
            return len(self._queue)

    def acquire(self, timeout: float) -> bool:
        with self._lock:
            if self._free > 0 and not self._queue:
                self._free -= 1
                return True
            if len(self._queue) >= self._max_waiting:
                return False  # the queue is full: refuse at once
            ticket = threading.Event()
            self._queue.append(ticket)
        if ticket.wait(timeout):
            return True
        with self._lock:
            if ticket.is_set():  # the slot came just as the wait ended
                return True
            self._queue.remove(ticket)
            return False

    def release(self) -> None:
        with self._lock:
            if self._queue:
                self._queue.popleft().set()  # the slot passes to the longest waiter
            elif self._free < self._size:
                self._free += 1
            else:
                raise ValueError("released more slots than were taken")


class Admission:
    """Gates for instructions and per app; `_hold` raises `Overloaded` on overflow."""

    def __init__(self, limits: AdmissionSettings | None = None):
        self.limits = limits or AdmissionSettings()
        self._instructions = _Gate(self.limits.max_instructions, self.limits.max_waiting)
        self._apps: dict[str, _Gate] = {}
        self._guard = threading.Lock()

    @property
    def threads_needed(self) -> int:
        """Server threads that running and waiting instructions may hold at once."""
        return self.limits.max_instructions + self.limits.max_waiting

    def _app_gate(self, app_id: str) -> _Gate:
        with self._guard:
            gate = self._apps.get(app_id)
            if gate is None:
                gate = _Gate(self.limits.max_app_calls, self.limits.max_app_calls)
                self._apps[app_id] = gate
            return gate

    @contextmanager
    def _hold(
        self, gate: _Gate, what: str, placeholders: dict[str, str] | None = None
    ) -> Iterator[None]:
        if not gate.acquire(timeout=self.limits.queue_wait):
            raise Overloaded(
                f"{what} is busy; retry shortly",
                detail="busy, retry shortly",
                placeholders=placeholders,
            )
        try:
            yield
        finally:
            gate.release()

    def instruction(self) -> Any:
        """A slot for one `POST /api/instruction`."""
        return self._hold(self._instructions, "the controller")

    def app(self, app_id: str) -> Any:
        """A slot for one call aimed at `app_id` (open, action, confirmation)."""
        return self._hold(self._app_gate(app_id), f"app {app_id}", {"app": app_id})
