"""`db_query`: one SQL statement on a SQLite file inside the app's workdir.

`dsn` is `data.db`, `workspace/data.db` or `sqlite:///data.db` (always relative to
the workdir; confined like every path). Parameters are bound, never spliced. An
authorizer refuses what could reach outside the file or corrupt it —
`ATTACH`/`DETACH` (which also covers `VACUUM INTO`), `load_extension`,
`PRAGMA writable_schema` and the directory-setting pragmas (SECURITY.md Q1) — and
a progress handler interrupts a statement that runs past the tool's timeout.
Result: `{"columns", "rows", "rowcount"}` with rows as lists, at most `MAX_ROWS`.
"""

from __future__ import annotations

import base64
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from aios_protocol.errors import AiosError, ToolTimeout
from aios_runtime.workdir import resolve_in_workdir
from executor.tools.catalog import InvalidArgs

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["MAX_ROWS", "authorize", "db_query", "dsn_path", "run_query"]

MAX_ROWS = 1000
_FORBIDDEN_PRAGMAS = frozenset(
    {"writable_schema", "temp_store_directory", "data_store_directory", "trusted_schema"}
)
_FORBIDDEN_FUNCTIONS = frozenset({"load_extension"})


def authorize(
    action: int, arg1: str | None, arg2: str | None, db: str | None, _src: Any
) -> int:
    """The SQLite authorizer callback: deny escapes, allow everything else."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _FORBIDDEN_PRAGMAS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _FORBIDDEN_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def dsn_path(dsn: str) -> str:
    """The workdir-relative file a DSN names (`sqlite:///x.db` → `x.db`)."""
    for prefix in ("sqlite:///", "sqlite://", "sqlite:", "file:"):
        if dsn.startswith(prefix):
            dsn = dsn[len(prefix) :]
            break
    if not dsn or dsn == ":memory:" or "?" in dsn:
        raise InvalidArgs("dsn must name a SQLite file in the workdir, e.g. data.db")
    return dsn


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


def _db_error(exc: Exception) -> AiosError:
    if "not authorized" in str(exc) or "authorization denied" in str(exc):
        return AiosError(f"refused by the SQL policy: {exc}", code="sql_not_allowed")
    return AiosError(f"SQLite: {exc}", code="db_error")


def run_query(path: str, sql: str, params: Any, timeout: float) -> dict[str, Any]:
    """Run one statement on the SQLite file at `path` (already confined)."""
    if params is not None and not isinstance(params, (list, dict)):
        raise InvalidArgs("params must be a list or an object")
    deadline = time.monotonic() + timeout
    conn = sqlite3.connect(path, timeout=min(timeout, 5.0), isolation_level=None)
    try:
        conn.set_authorizer(authorize)
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
        cursor = conn.execute(sql, params if params is not None else ())
        columns = [d[0] for d in cursor.description] if cursor.description else []
        rows = [[_cell(v) for v in row] for row in cursor.fetchmany(MAX_ROWS + 1)]
        truncated = len(rows) > MAX_ROWS
        rows = rows[:MAX_ROWS]
        rowcount = len(rows) if cursor.description else cursor.rowcount
        result: dict[str, Any] = {"columns": columns, "rows": rows, "rowcount": rowcount}
        if truncated:
            result["truncated"] = True
        return result
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc) and time.monotonic() > deadline:
            raise ToolTimeout(f"query stopped after {timeout:g}s") from exc
        raise _db_error(exc) from exc
    except (sqlite3.Error, sqlite3.Warning, ValueError, OverflowError) as exc:
        raise _db_error(exc) from exc
    finally:
        conn.close()


def db_query(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    real = resolve_in_workdir(ctx.app.workdir, dsn_path(args["dsn"]), arg="dsn")
    if real.is_dir():
        raise InvalidArgs("dsn names a directory")
    real.parent.mkdir(parents=True, exist_ok=True)
    return run_query(str(real), args["sql"], args.get("params"), ctx.timeout)
