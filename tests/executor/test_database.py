"""db_query on real SQLite files: the SQL authorizer (SECURITY.md Q1) and the time budget."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from aios_protocol.errors import AiosError
from executor.tools.db_query import MAX_ROWS, dsn_path, run_query
from tests.executor.conftest import OTHER_TOKEN, Harness


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "data.db"
    run_query(
        str(path), "create table t (id integer primary key, name text, b blob)", None, 5
    )
    return str(path)


def test_insert_select_with_bound_params(db: str) -> None:
    assert (
        run_query(db, "insert into t (name) values (?)", ["a'; drop table t; --"], 5)[
            "rowcount"
        ]
        == 1
    )
    run_query(db, "insert into t (name, b) values (:n, :b)", {"n": "b", "b": None}, 5)
    result = run_query(db, "select id, name from t order by id", None, 5)
    assert result["columns"] == ["id", "name"]
    assert result["rows"] == [[1, "a'; drop table t; --"], [2, "b"]]
    assert result["rowcount"] == 2


def test_rows_are_capped(db: str) -> None:
    result = run_query(
        db,
        f"with recursive c(x) as (select 1 union all select x+1 from c "
        f"limit {MAX_ROWS + 50}) select x from c",
        None,
        5,
    )
    assert len(result["rows"]) == MAX_ROWS
    assert result["truncated"] is True


@pytest.mark.parametrize(
    "sql",
    [
        "ATTACH DATABASE '/tmp/other_app.db' AS other",
        "VACUUM INTO '/tmp/copy-of-db.db'",
        "PRAGMA writable_schema = 1",
        "SELECT load_extension('/tmp/evil.so')",
    ],
)
def test_q1_escapes_are_refused(db: str, sql: str, tmp_path: Path) -> None:
    """Q1: ATTACH, VACUUM INTO, PRAGMA writable_schema, load_extension → refused."""
    with pytest.raises(AiosError) as caught:
        run_query(db, sql, None, 5)
    assert caught.value.code == "sql_not_allowed"
    assert not Path("/tmp/copy-of-db.db").exists()


def test_q1_runaway_query_is_stopped_within_its_budget(db: str) -> None:
    """Q1: a runaway recursive query is interrupted at the tool timeout."""
    endless = "with recursive c(x) as (select 1 union all select x+1 from c) select count(*) from c"
    with pytest.raises(AiosError) as caught:
        run_query(db, endless, None, 0.3)
    assert caught.value.code == "tool_timeout"
    assert run_query(db, "select 1 as one", None, 5)["rows"] == [[1]]  # still usable


def test_bad_sql_and_two_statements_are_db_errors(db: str) -> None:
    for sql in ("selec nonsense", "select 1; select 2"):
        with pytest.raises(AiosError) as caught:
            run_query(db, sql, None, 5)
        assert caught.value.code == "db_error"


def test_dsn_forms() -> None:
    assert dsn_path("sqlite:///data.db") == "data.db"
    assert dsn_path("workspace/data.db") == "workspace/data.db"
    with pytest.raises(AiosError):
        dsn_path(":memory:")


def test_db_query_tool_is_confined_to_the_workdir(harness: Harness) -> None:
    ok = harness.call("db_query", dsn="sqlite:///data.db", sql="create table n (x)")
    assert ok["status"] == "ok"
    harness.call(
        "db_query", dsn="workspace/data.db", sql="insert into n values (?)", params=[7]
    )
    rows = harness.call("db_query", dsn="data.db", sql="select x from n")
    assert rows["result"] == {"columns": ["x"], "rows": [[7]], "rowcount": 1}
    assert sqlite3.connect(harness.workdir / "data.db").execute(
        "select x from n"
    ).fetchall() == [(7,)]
    outside = harness.call(
        "db_query", dsn=str(harness.other_workdir / "x.db"), sql="select 1"
    )
    assert outside["code"] == "path_outside_workdir"
    assert not (harness.other_workdir / "x.db").exists()
    escape = harness.call("db_query", dsn="../app1/y.db", sql="select 1", token=OTHER_TOKEN)
    assert escape["code"] == "path_outside_workdir"
