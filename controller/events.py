"""The controller's event bus and the Server-Sent Events stream built on it.

`EventBus` numbers every event (`seq`, starting at 1), keeps the latest ones in a
ring buffer bounded both in events and in bytes (a `task_done` carries the app's
whole reply, which may be megabytes) and wakes waiting subscribers; a subscriber that
fell behind the buffer simply gets what is left. A published event is a `BusEvent`: the fields of
`protocol.Event`, whose `dump()` is that model's wire form. `sse_stream` turns the
bus into the `text/event-stream` of `GET /api/events` (each `data:` an
`protocol.Event`, each `id:` its seq,
so a reconnecting EventSource resumes via `Last-Event-ID`). `ExecutorEventRelay`
long-polls the executor's `GET /events` and republishes its `notify` events.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, get_args

from aios_protocol.messages import Event, EventType

__all__ = ["BusEvent", "EventBus", "ExecutorEventRelay", "sse_stream"]

log = logging.getLogger("aios.controller.events")

_EVENT_TYPES = frozenset(get_args(EventType))
# the size of an event's data as JSON text, which is what the buffer is bounded by
_SIZE_OF = json.JSONEncoder(ensure_ascii=False, default=str).encode


@dataclass(slots=True)
class BusEvent:
    """One published event, with the fields of `protocol.Event`.

    Several are published per instruction and most are never read, so the pydantic
    model is built only to `dump()` one for the wire (the SSE stream).
    """

    type: str
    seq: int
    app_id: str | None
    session_id: str | None
    data: dict[str, Any]
    size: int = 0  # characters of `data` as JSON text, counted against the bound

    def dump(self) -> dict[str, Any]:
        """`protocol.Event`'s JSON-ready dict of this event."""
        # built by the controller itself: the type is the only field worth
        # checking (`publish` did), so pydantic's validation is skipped
        return Event.model_construct(
            type=self.type,
            seq=self.seq,
            app_id=self.app_id,
            session_id=self.session_id,
            data=self.data,
        ).dump()


class EventBus:
    """In-process publish/subscribe with sequence numbers and a ring buffer.

    The buffer keeps at most `capacity` events and, of their data, at most
    `max_bytes` (as JSON text, counted in characters): the oldest go first; the
    latest event always stays.
    """

    def __init__(self, capacity: int = 1000, max_bytes: int = 16 << 20):
        self._events: deque[BusEvent] = deque()
        self._capacity = capacity
        self._max_bytes = max_bytes
        self._bytes = 0  # the sizes of the buffered events' data
        self._seq = 0
        self._cond = threading.Condition()
        self._closed = False
        self._streams = 0  # open SSE streams, so shutdown can let them end first
        self._waiting = 0  # subscribers waiting in `wait_since`

    @property
    def last_seq(self) -> int:
        with self._cond:
            return self._seq

    def publish(
        self,
        type: str,
        data: dict[str, Any] | None = None,
        *,
        app_id: str | None = None,
        session_id: str | None = None,
    ) -> BusEvent:
        if type not in _EVENT_TYPES:
            raise ValueError(f"unknown event type {type!r}")
        data = data or {}
        size = len(_SIZE_OF(data)) if data else 0  # outside the lock
        with self._cond:
            self._seq += 1
            event = BusEvent(type, self._seq, app_id, session_id, data, size)
            events = self._events
            events.append(event)
            self._bytes += size
            while len(events) > self._capacity or (
                self._bytes > self._max_bytes and len(events) > 1
            ):
                self._bytes -= events.popleft().size
            if self._waiting:  # several events per instruction: wake only if waited for
                self._cond.notify_all()
        return event

    def buffered(self) -> tuple[int, int]:
        """(events, bytes of their data) in the buffer now."""
        with self._cond:
            return len(self._events), self._bytes

    def since(self, seq: int) -> list[BusEvent]:
        """Buffered events with a sequence number above `seq`."""
        with self._cond:
            return [e for e in self._events if e.seq > seq]

    def wait_since(self, seq: int, timeout: float) -> list[BusEvent]:
        """Events after `seq`, waiting up to `timeout` seconds for the first one."""
        with self._cond:
            if self._seq <= seq and not self._closed:
                self._waiting += 1
                try:
                    self._cond.wait_for(lambda: self._seq > seq or self._closed, timeout)
                finally:
                    self._waiting -= 1
            return [e for e in self._events if e.seq > seq]

    def close(self) -> None:
        """Wake every waiting subscriber for good (shutdown)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def _stream_opened(self) -> None:
        with self._cond:
            self._streams += 1

    def _stream_closed(self) -> None:
        with self._cond:
            self._streams -= 1
            self._cond.notify_all()

    def wait_streams_closed(self, timeout: float) -> bool:
        """After `close()`: until every SSE stream has ended (or `timeout`)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._streams <= 0, timeout)


def sse_stream(
    bus: EventBus, since: int, *, keepalive: float = 15.0, limit: int | None = None
) -> Iterator[str]:
    """SSE frames of every event after `since`, with keep-alive comments.

    Stops when the bus closes, or after `limit` events (used by tests).
    """
    bus._stream_opened()
    try:
        yield "retry: 1000\n\n"
        sent = 0
        cursor = since
        while not bus.closed:
            events = bus.wait_since(cursor, keepalive)
            if bus.closed:
                return
            if not events:
                yield ": keepalive\n\n"
                continue
            for event in events:
                cursor = event.seq
                payload = json.dumps(event.dump(), ensure_ascii=False)
                yield f"id: {event.seq}\nevent: message\ndata: {payload}\n\n"
                sent += 1
                if limit is not None and sent >= limit:
                    return
    finally:
        bus._stream_closed()


class ExecutorEventRelay:
    """A thread that long-polls the executor's `/events` and republishes them.

    `fetch(since, wait)` returns `(events, next)` as the executor's `EventsPage`;
    errors back off (up to 5 s) and never end the thread.
    """

    def __init__(
        self,
        bus: EventBus,
        fetch: Callable[[int, float], tuple[list[dict[str, Any]], int]],
        *,
        wait: float = 20.0,
    ):
        self._bus = bus
        self._fetch = fetch
        self._wait = wait
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="executor-event-relay", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        cursor = 0
        delay = 0.25
        while not self._stop.is_set():
            try:
                events, cursor = self._fetch(cursor, self._wait)
                delay = 0.25
            except Exception as exc:  # the executor may be restarting
                log.debug("executor events: %s", exc)
                self._stop.wait(delay)
                delay = min(delay * 2, 5.0)
                continue
            for raw in events:
                if self._stop.is_set():
                    return
                self._bus.publish(
                    str(raw.get("type") or "notify"),
                    raw.get("data") or {},
                    app_id=raw.get("app_id"),
                    session_id=raw.get("session_id"),
                )
