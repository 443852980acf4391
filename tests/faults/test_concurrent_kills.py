"""50 concurrent clients while one app is killed every second.

A real system with echo_app, three renamed echo copies and the victim (a fourth
copy). For 12 s, 50 client threads open apps round-robin on loopback while
another thread `kill -9`s the victim's process every second. Every call to another
app succeeds; the only 5xx anywhere is the victim's `app_unavailable` (a call that
was in flight when it died is that task's error view, never another app's).
"""

from __future__ import annotations

import copy
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator

import pytest
import requests

from tests.controller.system import RunningSystem
from tests.faults.conftest import FAULT_CONFIG, start_fault_system

pytestmark = pytest.mark.slow

CLIENTS = 50
DURATION = 12.0
VICTIM = "victim_app"
# apps that answer without tools: the executor's per-app share of tool slots (a third,
# SECURITY.md D2) would answer a tool-using app's flood `overloaded`, by design
OTHERS = ("echo_app", "echo_one", "echo_two", "echo_three")
CONFIG = {
    **copy.deepcopy(FAULT_CONFIG),
    # enough room for 50 clients: overload is not the fault under test
    "admission": {
        "max_instructions": 64,
        "max_app_calls": 64,
        "max_waiting": 128,
        "queue_wait": 10,
    },
    # the victim dies every second, far more often than a real app: never give up
    "supervisor": {**FAULT_CONFIG["supervisor"], "backoff": [0.2], "max_restarts": 1000},
}


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    running = start_fault_system(
        tmp_path_factory.mktemp("crowd"),
        config=copy.deepcopy(CONFIG),
        echo_copies=("echo_one", "echo_two", "echo_three", VICTIM),
    )
    try:
        for app_id in (*OTHERS, VICTIM):
            running.wait_app(app_id, "running")
        yield running
    finally:
        running.stop()


def test_killing_one_app_every_second_affects_no_other(crowded: RunningSystem) -> None:
    system = crowded
    stop = threading.Event()
    outcomes: Counter[tuple[str, str]] = Counter()
    bad: list[str] = []
    lock = threading.Lock()
    kills = 0

    def client(number: int) -> None:
        session = requests.Session()
        session.headers.update(system.headers)
        apps = (*OTHERS, VICTIM)
        turn = number
        while not stop.is_set():
            app_id = apps[turn % len(apps)]
            turn += 1
            try:
                response = session.post(
                    f"{system.url}/api/apps/{app_id}/open", json={}, timeout=20
                )
            except requests.RequestException as exc:
                with lock:
                    bad.append(f"{app_id}: {exc}")
                continue
            body = response.json()
            code = (body.get("error") or {}).get("code") or (body.get("data") or {}).get(
                "code", ""
            )
            with lock:
                outcomes[
                    (app_id, f"{response.status_code} {body.get('status')} {code}")
                ] += 1
                if app_id != VICTIM and (
                    response.status_code != 200 or body["status"] != "ok"
                ):
                    bad.append(f"{app_id}: {response.status_code} {body}")
                if (
                    app_id == VICTIM
                    and response.status_code >= 500
                    and code != "app_unavailable"
                ):
                    bad.append(f"{app_id}: {response.status_code} {body}")

    def killer() -> None:
        nonlocal kills
        while not stop.wait(1.0):
            pid = system.apps()[VICTIM]["pid"]
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                    kills += 1
                except ProcessLookupError:
                    pass

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    threads.append(threading.Thread(target=killer))
    for thread in threads:
        thread.start()
    time.sleep(DURATION)
    stop.set()
    for thread in threads:
        thread.join(30)
    assert time.monotonic() - started < 60
    assert not bad, (bad[:5], dict(outcomes))
    assert kills >= DURATION - 2, kills
    for app_id in OTHERS:
        assert sum(n for (a, _), n in outcomes.items() if a == app_id) > 20, outcomes
    assert system.apps()[VICTIM]["restarts"] >= kills - 1
    for app_id in OTHERS:
        assert system.apps()[app_id]["restarts"] == 0
