"""Work a service does once it has started, ahead of the request that would need it.

`warm_up_later(work)` runs `work` in a daemon thread once `after` is set (when given)
and `delay` more seconds have passed: after the launch, so it is not in the way of the
start, and before a person's first click or first question. A failure is logged and
the service goes on; the work is then done by the first request that needs it, as it
would have been without a warm-up.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["WARM_UP_AFTER_S", "warm_up_later"]

log = logging.getLogger(__name__)

# the pause after the service was found up (its start is over by then)
WARM_UP_AFTER_S = 0.5


def warm_up_later(
    work: Callable[[], None],
    *,
    after: threading.Event | None = None,
    delay: float = WARM_UP_AFTER_S,
    name: str = "warm-up",
) -> threading.Thread:
    """Start the daemon thread that runs `work` (see the module text)."""

    def run() -> None:
        if after is not None:
            after.wait()
        time.sleep(delay)
        try:
            work()
        except Exception:
            log.exception("%s failed", name)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
