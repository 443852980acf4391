"""The tool-call log (S-61, S-42 `tool_calls_log`): one JSON line per call.

Lines go to `<state_dir>/tool_calls/<session_id>.jsonl` (`no_session.jsonl` when
the call names no session): time, app, tool, a short summary of the arguments
(never whole file contents or bodies), status, error code and duration. Session
ids are sanitized before they become file names.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import IO, Any

__all__ = ["ToolCallLog", "safe_session_name", "summarize_args"]

log = logging.getLogger("aios.executor.audit")

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_BULKY = frozenset({"content", "body", "value"})
_TEXT_MAX = 120
_OPEN_LOGS = 16  # sessions whose log file stays open between calls


def safe_session_name(session_id: str | None) -> str:
    """A file-name-safe form of `session_id` (`no_session` when empty)."""
    name = _UNSAFE.sub("_", session_id or "")[:100].lstrip(".")
    return name or "no_session"


def _short(value: Any) -> Any:
    if isinstance(value, str):
        return (
            value
            if len(value) <= _TEXT_MAX
            else f"{value[:_TEXT_MAX]}…({len(value)} chars)"
        )
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, default=str)
        return (
            value if len(text) <= _TEXT_MAX else f"{text[:_TEXT_MAX]}…({len(text)} chars)"
        )
    return value


def summarize_args(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the log records them: bulky values reduced to their size."""
    summary: dict[str, Any] = {}
    for key, value in args.items():
        if key in _BULKY and value is not None:
            size = (
                len(value)
                if isinstance(value, str)
                else len(json.dumps(value, default=str))
            )
            summary[key] = f"<{type(value).__name__}, {size} chars>"
        else:
            summary[key] = _short(value)
    return summary


class ToolCallLog:
    """Appends call records to per-session JSONL files.

    The files of the most recent sessions stay open (every line is flushed at once,
    so a reader sees it): opening, appending to and closing the file for each call
    cost more than a cheap tool call itself.
    """

    def __init__(self, state_dir: Path):
        self._dir = Path(state_dir) / "tool_calls"
        self._lock = threading.Lock()
        self._open: OrderedDict[str, IO[str]] = OrderedDict()

    def _handle(self, session_id: str | None) -> IO[str]:
        """The open log file of `session_id` (call with the lock held)."""
        path = self.path_for(session_id)
        key = str(path)
        handle = self._open.get(key)
        if handle is not None and not path.exists():  # removed meanwhile: start anew
            handle.close()
            handle = None
            del self._open[key]
        if handle is None:
            self._dir.mkdir(parents=True, exist_ok=True)
            handle = self._open[key] = open(path, "a", encoding="utf-8")  # noqa: SIM115
            while len(self._open) > _OPEN_LOGS:
                self._open.popitem(last=False)[1].close()
        else:
            self._open.move_to_end(key)
        return handle

    def close(self) -> None:
        with self._lock:
            for handle in self._open.values():
                handle.close()
            self._open.clear()

    def path_for(self, session_id: str | None) -> Path:
        return self._dir / f"{safe_session_name(session_id)}.jsonl"

    def record(
        self,
        *,
        app_id: str,
        tool: str,
        args: dict[str, Any],
        status: str,
        duration_ms: float,
        session_id: str | None,
        code: str | None = None,
        step_id: int | None = None,
    ) -> None:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "app_id": app_id,
            "session_id": session_id,
            "tool": tool,
            "args": summarize_args(args),
            "status": status,
            "duration_ms": round(duration_ms, 1),
        }
        if code:
            entry["code"] = code
        if step_id is not None:
            entry["step_id"] = step_id
        line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
        try:
            with self._lock:
                handle = self._handle(session_id)
                handle.write(line)
                handle.flush()
        except OSError:
            log.exception("cannot write the tool-call log")
