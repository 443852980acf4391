"""SECURITY.md Q1 (db_query through a real executor) and Q2 (hostile strings from an
app rendered by the real desktop in Debian's Chromium)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.controller.system import RunningSystem
from tests.procs import stop
from tests.security.conftest import (
    RunningExecutor,
    open_desktop,
    say_in_desktop,
    start_test_executor,
)

pytestmark = pytest.mark.process

CONFIG = {"tool_timeout": {"db_query": 2, "shell_exec": 5, "file_read": 5}}
RUNAWAY = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningExecutor]:
    running = start_test_executor(tmp_path_factory.mktemp("sql"), CONFIG)
    other = sqlite3.connect(running.other_workdir / "other.db")
    other.execute("CREATE TABLE secrets(v)")
    other.execute("INSERT INTO secrets VALUES ('app2 private row')")
    other.commit()
    other.close()
    yield running
    stop(running.proc)


def query(executor: RunningExecutor, sql: str, dsn: str = "data.db") -> dict:
    return executor.call("db_query", dsn=dsn, sql=sql)


# ---------------------------------------------------------------------- Q1


@pytest.mark.parametrize(
    "sql",
    [
        "ATTACH DATABASE '{other}' AS o",
        "ATTACH DATABASE '../app2/other.db' AS o",
        "ATTACH DATABASE 'file:{other}?mode=ro' AS o",
        "SELECT load_extension('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0')",
        "PRAGMA writable_schema = ON",
        "PRAGMA writable_schema",
        "VACUUM INTO '/tmp/aios-q1-copy.db'",
        "VACUUM INTO '../app2/copy.db'",
    ],
)
def test_q1_attach_extensions_writable_schema_and_vacuum_into_are_refused(
    executor: RunningExecutor, sql: str
) -> None:
    other = executor.other_workdir / "other.db"
    before = other.read_bytes()
    query(executor, "CREATE TABLE IF NOT EXISTS mine(v)")
    result = query(executor, sql.format(other=other))
    assert result["status"] == "error" and result["code"] == "sql_not_allowed", result
    assert "app2 private row" not in str(result)
    assert other.read_bytes() == before
    assert not Path("/tmp/aios-q1-copy.db").exists()
    assert not (executor.other_workdir / "copy.db").exists()


def test_q1_a_dsn_outside_the_workdir_is_refused(executor: RunningExecutor) -> None:
    for dsn in ("../app2/other.db", str(executor.other_workdir / "other.db"), ":memory:"):
        result = query(executor, "SELECT * FROM secrets", dsn=dsn)
        assert result["status"] == "error", result
        assert result["code"] in ("path_outside_workdir", "invalid_args"), result


def test_q1_a_runaway_query_is_stopped_in_budget_and_the_service_still_answers(
    executor: RunningExecutor,
) -> None:
    answered: list[int] = []
    done = threading.Event()

    def probe() -> None:  # health while the query burns CPU
        while not done.is_set():
            answered.append(requests.get(f"{executor.url}/health", timeout=5).status_code)
            time.sleep(0.2)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    try:
        result = query(executor, RUNAWAY)
    finally:
        done.set()
        thread.join(5)
    assert result["status"] == "error" and result["code"] == "tool_timeout", result
    assert answered and set(answered) == {200}
    assert query(executor, "SELECT 1 + 1")["result"]["rows"] == [[2]]


# ---------------------------------------------------------------------- Q2

PAYLOAD = '<img src=x onerror="window.__pwned=(window.__pwned||0)+1">'
SCRIPT = "<script>window.__pwned=(window.__pwned||0)+1</script>"


@pytest.mark.browser
@pytest.mark.slow
def test_q2_hostile_strings_in_data_labels_and_notify_are_shown_as_text(
    browser: object, shared_system: RunningSystem
) -> None:
    desktop = open_desktop(browser, shared_system)
    page = desktop.page
    try:
        say_in_desktop(desktop, "脚本应用 注入")
        win = page.locator("#win_xss_app")
        win.locator(".view-list").wait_for()
        # the notify event (title and body) arrives as a toast, as text
        toast = page.locator("#toasts")
        toast.get_by_text(SCRIPT + PAYLOAD).wait_for()
        assert PAYLOAD in toast.inner_text()
        # data, item, button label, select option, form label, status line: all text
        text = win.inner_text()
        assert text.count(PAYLOAD) >= 4, text
        assert SCRIPT in text
        button = win.get_by_role("button", name=PAYLOAD)
        assert button.count() == 1
        button.click()  # an action with a hostile label is sent like any other
        say_in_desktop(desktop, "脚本应用 注入卡片")
        win.locator(".view-card").wait_for()
        assert PAYLOAD in win.inner_text()
        page.wait_for_timeout(300)  # give any injected handler the time to fire
        assert page.evaluate("window.__pwned") is None
        assert page.locator('img[src="x"]').count() == 0
        assert page.locator("script:not([src])").count() == 0
        images = page.eval_on_selector_all(
            "img", "imgs => imgs.map(i => i.getAttribute('src') || '')"
        )
        assert not [src for src in images if src.lower().startswith("javascript:")]
        assert desktop.dialogs == []
        assert desktop.errors == []
    finally:
        page.context.close()
