"""`notify` and the executor's event queue, long-polled by the controller.

`notify(title, body, level)` queues an `Event(type="notify")` with a sequence
number; `GET /events?since=N&wait=S` answers the events after `N`, waiting up to
`S` seconds (bounded) for the first one. The queue keeps the newest `max_events`;
a slow reader misses old ones rather than growing our memory.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import TYPE_CHECKING, Any

from aios_protocol.messages import Event, EventsPage

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["MAX_WAIT", "EventQueue", "notify"]

MAX_WAIT = 25.0
_TITLE_MAX = 200
_BODY_MAX = 4000


class EventQueue:
    """A bounded, numbered queue of events with a blocking read."""

    def __init__(self, max_events: int = 1000):
        self._events: deque[Event] = deque(maxlen=max_events)
        self._seq = 0
        self._changed = threading.Condition()

    def publish(self, event: Event) -> Event:
        with self._changed:
            self._seq += 1
            event.seq = self._seq
            self._events.append(event)
            self._changed.notify_all()
        return event

    def read(self, since: int, wait: float = 0.0) -> EventsPage:
        """Events with `seq > since`; waits up to `wait` seconds (≤ MAX_WAIT) for one."""
        wait = max(0.0, min(wait, MAX_WAIT))
        with self._changed:
            if since > self._seq:  # the reader knew an older executor: start over
                since = 0
            self._changed.wait_for(lambda: self._seq > since, timeout=wait)
            events = [e for e in self._events if e.seq > since]
            return EventsPage(events=events, next=self._seq)


def notify(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    data = {
        "title": args["title"][:_TITLE_MAX],
        "body": (args.get("body") or "")[:_BODY_MAX],
        "level": args.get("level") or "info",
    }
    event = ctx.events.publish(
        Event(type="notify", app_id=ctx.app.app_id, session_id=ctx.session_id, data=data)
    )
    return {"queued": True, "seq": event.seq}
