"""Stopping an app's running work on the user's request (the desktop's cancel button).

`TaskCancels` knows the work in progress — one entry per `Pipeline.drive`, found by
(session id, task id) or by (session id, app id) — and lets a blocking hop of that work (the
app's HTTP call, the executor's `/run`) be abandoned: `guard(call)` runs the call on
the calling thread and raises `Cancelled` as soon as `cancel_task` / `cancel_app` is
called for the current work, by shutting down the connection the call waits on
(`aios_runtime.json_client.watched` / `abort`). After a cancel no further app call or
step round of that work starts. A request already sent is not recalled: the
executor finishes (or times out) the step it is running, and its result is dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from urllib3.connection import HTTPConnection

from aios_protocol.errors import AiosError
from aios_runtime.json_client import abort, watched

__all__ = ["Cancelled", "TaskCancels", "Work"]

_T = TypeVar("_T")


class Cancelled(AiosError):
    """The user cancelled the work; the task's reply is this error."""

    code = "cancelled"
    http_status = 409


@dataclass(eq=False)
class Work:
    """One running `drive`: which task, session and app it serves."""

    session_id: str
    app_id: str
    task_id: str | None = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    _connections: set[HTTPConnection] = field(default_factory=set)

    def cancel(self) -> None:
        self.cancelled.set()
        for connection in list(self._connections):
            abort(connection)

    def _watch(self, connection: HTTPConnection) -> None:
        self._connections.add(connection)
        if self.cancelled.is_set():  # cancelled between the check and the send
            abort(connection)


class TaskCancels:
    """The running work of the pipeline and the cancel requests against it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._works: set[Work] = set()
        self._current = threading.local()

    @contextmanager
    def running(
        self, session_id: str, app_id: str, task_id: str | None = None
    ) -> Iterator[Work]:
        """Register the calling thread's work for the duration of the block."""
        work = Work(session_id, app_id, task_id)
        outer = getattr(self._current, "work", None)
        with self._lock:
            self._works.add(work)
        self._current.work = work
        try:
            yield work
        finally:
            self._current.work = outer
            with self._lock:
                self._works.discard(work)

    def cancel_task(self, task_id: str, session_id: str, app_id: str | None = None) -> int:
        """Cancel the work of the instruction task `task_id` of `session_id` (and of
        `app_id` when given: task ids repeat across instructions); how many were running."""
        return self._cancel(
            lambda w: (
                w.task_id == task_id
                and w.session_id == session_id
                and app_id in (None, w.app_id)
            )
        )

    def cancel_app(self, app_id: str, session_id: str | None) -> int:
        """Cancel what `app_id` is doing for `session_id` (any session when None)."""
        return self._cancel(
            lambda w: w.app_id == app_id and session_id in (None, w.session_id)
        )

    def _cancel(self, matches: Callable[[Work], bool]) -> int:
        with self._lock:
            found = [w for w in self._works if matches(w)]
        for work in found:
            work.cancel()
        return len(found)

    def guard(self, call: Callable[[], _T]) -> _T:
        """`call()`, abandoned with `Cancelled` when the current work is cancelled.

        Outside `running` the call runs unguarded."""
        work: Work | None = getattr(self._current, "work", None)
        if work is None:
            return call()
        if work.cancelled.is_set():
            raise Cancelled("the work was cancelled")
        try:
            with watched(work._watch):
                result = call()
        except AiosError:
            if work.cancelled.is_set():
                raise Cancelled("the work was cancelled") from None
            raise
        finally:
            work._connections.clear()
        if work.cancelled.is_set():
            raise Cancelled("the work was cancelled")
        return result
