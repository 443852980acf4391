"""Bounded work in the controller (SECURITY.md D2): overflow is a clear 503, at once.

Each instruction, app open, action or confirmation holds a slot while it runs:
at most `max_instructions` instructions at once, and at most `max_app_calls` calls
to any one app (open, action, confirmation). A request that finds no free slot
within `queue_wait` seconds is answered 503 `overloaded` instead of piling up
behind a slow app — so a flood aimed at one app never starves the others, and the
server's threads stay free for health checks, the event stream and other apps.

Limits come from config.json's optional `admission` object (defaults below).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

from aios_sdk.errors import Overloaded

__all__ = ["Admission", "AdmissionLimits"]


@dataclass(frozen=True)
class AdmissionLimits:
    max_instructions: int = 8
    max_app_calls: int = 4
    queue_wait: float = 0.5

    @classmethod
    def from_mapping(cls, raw: dict[str, Any] | None) -> AdmissionLimits:
        values: dict[str, Any] = {}
        for f in fields(cls):
            if raw and f.name in raw:
                value = type(getattr(cls, f.name))(raw[f.name])
                if value <= 0:
                    raise ValueError(f"admission.{f.name} must be positive")
                values[f.name] = value
        return cls(**values)


class Admission:
    """Semaphores for instructions and per app; `slot` raises `Overloaded` on overflow."""

    def __init__(self, limits: AdmissionLimits | None = None):
        self.limits = limits or AdmissionLimits()
        self._instructions = threading.BoundedSemaphore(self.limits.max_instructions)
        self._apps: dict[str, threading.BoundedSemaphore] = {}
        self._guard = threading.Lock()

    def _app_semaphore(self, app_id: str) -> threading.BoundedSemaphore:
        with self._guard:
            semaphore = self._apps.get(app_id)
            if semaphore is None:
                semaphore = threading.BoundedSemaphore(self.limits.max_app_calls)
                self._apps[app_id] = semaphore
            return semaphore

    @contextmanager
    def _hold(self, semaphore: threading.BoundedSemaphore, what: str) -> Iterator[None]:
        if not semaphore.acquire(timeout=self.limits.queue_wait):
            raise Overloaded(f"{what}正忙，请稍后再试 (busy, retry shortly)")
        try:
            yield
        finally:
            semaphore.release()

    def instruction(self) -> Any:
        """A slot for one `POST /api/instruction`."""
        return self._hold(self._instructions, "主控")

    def app(self, app_id: str) -> Any:
        """A slot for one call aimed at `app_id` (open, action, confirmation)."""
        return self._hold(self._app_semaphore(app_id), f"应用 {app_id} ")
