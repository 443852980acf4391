"""What counts as use of an app process for the idle stop.

A call from the controller counts; so does the process's own call of the controller's
model routes (a background sub-agent's turn), but only within `background_max_s` of
the latest call from the controller — an app that calls the model forever is still
stopped. The token names the process whose use it is: the owner's or a user's."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from controller.apps.lifecycle import AppUse
from controller.apps.served import ServedUsers
from controller.apps.supervision import SupervisedChild

IDLE_STOP_S = 60.0
CAP_S = 600.0


def test_a_call_of_its_own_in_flight_keeps_the_process_in_use() -> None:
    called = time.monotonic()
    use = AppUse(last_used=called)
    lock = threading.Lock()
    with use.own_call(lock):
        assert use.idle_for(called + 5 * IDLE_STOP_S, called, CAP_S) == 0.0
    # once it ended, the idle time counts from its end
    ended = use.own_last
    assert use.idle_for(ended + 10.0, called, CAP_S) == 10.0


def test_its_own_calls_count_only_within_the_cap_after_the_controllers_latest_call() -> (
    None
):
    use = AppUse(last_used=100.0, own_in_flight=1)
    late = 100.0 + CAP_S + IDLE_STOP_S
    assert use.idle_for(late, 100.0, CAP_S) == IDLE_STOP_S  # stopped now
    assert use.idle_for(late, 100.0, 0.0) == CAP_S + IDLE_STOP_S  # cap 0: never count
    use.own_in_flight = 0
    use.own_last = late  # a call that just ended, past the cap
    assert use.idle_for(late, 100.0, CAP_S) == IDLE_STOP_S


def test_a_call_from_the_controller_still_counts_whatever_the_cap() -> None:
    use = AppUse(last_used=100.0, in_flight=1)
    assert use.idle_for(100.0 + 10 * CAP_S, 100.0, 0.0) == 0.0


def _served(tmp_path: Path) -> ServedUsers:
    """A `ServedUsers` with the owner's process of an app and alice's."""
    spec = cast(Any, SimpleNamespace(app_id="notes_app"))
    own = SupervisedChild("notes_app", 1, tmp_path / "a.log", spec=spec, token="own")
    alice = SupervisedChild(
        "notes_app@alice",
        2,
        tmp_path / "b.log",
        spec=spec,
        token="alice-token",
        user_id="alice",
    )
    served = ServedUsers()
    served._apps = {"notes_app": own}
    served._served = {"notes_app@alice": alice}
    served._use = {"notes_app": AppUse(), "notes_app@alice": AppUse()}
    served._lock = threading.RLock()
    return served


def test_the_token_names_whose_process_is_in_use(tmp_path: Path) -> None:
    served = _served(tmp_path)
    with served.own_call("alice-token"):
        assert served._use["notes_app@alice"].own_in_flight == 1
        assert served._use["notes_app"].own_in_flight == 0
    with served.own_call("someone-else"):  # no app's token: nobody's use
        assert all(use.own_in_flight == 0 for use in served._use.values())
    assert served._use["notes_app@alice"].own_last > 0.0
    assert served._use["notes_app"].own_last == 0.0
