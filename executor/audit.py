"""The tool-call log (the session's `tool_calls_log`): one JSON line per call.

Lines go to `<state_dir>/tool_calls/<session_id>.jsonl` (`no_session.jsonl` when
the call names no session): time, app, session, tool, the one-line summaries of the
arguments and of the result that the tool's provider gives (`ToolProvider.
input_summary` / `result_summary`: paths, sizes, counts, exit codes, never the
content), status, error code, step and duration. Session ids are sanitized before
they become file names.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from io import FileIO
from pathlib import Path
from typing import Any

__all__ = ["CallRecords", "ToolCallLog", "safe_session_name"]

log = logging.getLogger("aios.executor.audit")

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_OPEN_LOGS = 16  # sessions whose log file stays open between calls
# one encoder for every line (json.dumps with options builds a new one per call)
_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def safe_session_name(session_id: str | None) -> str:
    """A file-name-safe form of `session_id` (`no_session` when empty)."""
    name = _UNSAFE.sub("_", session_id or "")[:100].lstrip(".")
    return name or "no_session"


class ToolCallLog:
    """Appends call records to per-session JSONL files.

    The files of the most recent sessions (at most `_OPEN_LOGS`) stay open between
    calls; a file removed meanwhile is started anew. A request's lines are
    collected in a `CallRecords` and written with one write when it ends (or
    earlier, `CallRecords.write`), so a reader sees them then.
    """

    def __init__(self, state_dir: Path):
        self._dir = Path(state_dir) / "tool_calls"
        self._lock = threading.Lock()
        # file name → the file, unbuffered (each write is one write(2), O_APPEND)
        self._open: OrderedDict[str, FileIO] = OrderedDict()

    def records(self, session_id: str | None) -> CallRecords:
        """The lines of one request for `session_id`; use it as a context manager."""
        return CallRecords(self, session_id)

    def path_for(self, session_id: str | None) -> Path:
        return self._dir / f"{safe_session_name(session_id)}.jsonl"

    def append(self, session_id: str | None, lines: list[str]) -> None:
        """Append `lines` to the session's file in one write."""
        data = "".join(lines).encode("utf-8")
        name = safe_session_name(session_id)
        try:
            with self._lock:
                file = self._file(name)
                while data:  # a regular file takes it all at once; loop to be sure
                    data = data[file.write(data) :]
        except OSError:
            log.exception("cannot write the tool-call log")

    def _file(self, name: str) -> FileIO:
        """The open log file `name` (call with the lock held)."""
        file = self._open.get(name)
        # a removed file has no links left: start a new one
        if file is not None and os.fstat(file.fileno()).st_nlink == 0:
            self._open.pop(name).close()
            file = None
        if file is None:
            self._dir.mkdir(parents=True, exist_ok=True)
            file = self._open[name] = FileIO(self._dir / f"{name}.jsonl", "a")
            while len(self._open) > _OPEN_LOGS:
                self._open.popitem(last=False)[1].close()
        else:
            self._open.move_to_end(name)
        return file

    def close(self) -> None:
        with self._lock:
            for file in self._open.values():
                file.close()
            self._open.clear()


class CallRecords:
    """The log lines of one request (`/call` or `/run`), written together.

    `with log.records(session_id) as records:` — every `add` before the block ends
    is written when it ends, exceptions included; `write` writes what is pending
    now (before a step that may take long, so the earlier ones are on disk).
    """

    def __init__(self, log: ToolCallLog, session_id: str | None):
        self._log = log
        self._session_id = session_id
        self._lines: list[str] = []

    def add(
        self,
        *,
        app_id: str,
        tool: str,
        input_summary: str,
        status: str,
        duration_ms: float,
        result_summary: str | None = None,
        code: str | None = None,
        step_id: int | None = None,
    ) -> None:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "app_id": app_id,
            "session_id": self._session_id,
            "tool": tool,
            "input_summary": input_summary,
            "status": status,
            "duration_ms": round(duration_ms, 1),
        }
        if result_summary is not None:
            entry["result_summary"] = result_summary
        if code:
            entry["code"] = code
        if step_id is not None:
            entry["step_id"] = step_id
        self._lines.append(_LINE_ENCODER.encode(entry) + "\n")

    def write(self) -> None:
        if self._lines:
            self._log.append(self._session_id, self._lines)
            self._lines = []

    def __enter__(self) -> CallRecords:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.write()
