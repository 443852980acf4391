"""Risky calls run only for the controller, which asked the user first (executor/consent.py).

An app holds its own token and could reach `/call` or `/run` directly, around the
controller's review; starting a program or writing SQL that way is refused with
`needs_confirmation`, while the controller's reviewed plans run.
"""

from __future__ import annotations

import pytest

from executor.consent import sql_writes
from tests.executor.conftest import APP_TOKEN, Harness


@pytest.mark.parametrize(
    ("sql", "writes"),
    [
        ("SELECT 1", False),
        ("select 'insert into x' as text", False),
        ("-- delete everything\nSELECT 2", False),
        ("INSERT INTO t VALUES (1)", True),
        ("update t set a = 1", True),
        ("CREATE TABLE t (a)", True),
        ("with x as (select 1) delete from t", True),
    ],
)
def test_sql_writes(sql: str, writes: bool) -> None:
    assert sql_writes(sql) is writes


def test_app_cannot_start_a_program_directly(harness: Harness) -> None:
    result = harness.call("process_start", token=APP_TOKEN, cmd=["echo", "hi"])
    assert result["status"] == "error"
    assert result["code"] == "needs_confirmation"
    assert "plan_steps" in result["error"]


def test_app_cannot_write_sql_directly_but_may_read(harness: Harness) -> None:
    write = harness.call(
        "db_query", token=APP_TOKEN, dsn="data.db", sql="CREATE TABLE t (a)"
    )
    assert write["code"] == "needs_confirmation"
    tables = harness.call("db_query", dsn="data.db", sql="SELECT name FROM sqlite_master")
    assert tables["result"]["rows"] == []  # nothing was created
    read = harness.call("db_query", token=APP_TOKEN, dsn="data.db", sql="SELECT 1 AS one")
    assert read["status"] == "ok" and read["result"]["rows"] == [[1]]


def test_app_plan_sent_straight_to_run_is_refused_step_by_step(harness: Harness) -> None:
    results = harness.run(
        [
            {"step_id": 1, "tool": "process_start", "args": {"cmd": ["echo", "x"]}},
            {
                "step_id": 2,
                "tool": "file_write",
                "args": {"path": "a.txt", "content": "ok"},
            },
        ],
        token=APP_TOKEN,
    )
    assert results["step_1"]["code"] == "needs_confirmation"
    assert results["step_2"]["status"] == "ok"


def test_the_controllers_reviewed_calls_run(harness: Harness) -> None:
    started = harness.call("process_start", cmd=["echo", "reviewed"])
    assert started["status"] == "ok", started
    assert "reviewed" in started["result"]["stdout"]
    created = harness.call("db_query", dsn="data.db", sql="CREATE TABLE t (a)")
    assert created["status"] == "ok", created
