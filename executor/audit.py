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
from pathlib import Path
from typing import Any

__all__ = ["ToolCallLog", "safe_session_name", "summarize_args"]

log = logging.getLogger("aios.executor.audit")

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_BULKY = frozenset({"content", "body", "value"})
_TEXT_MAX = 120


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
    """Appends call records to per-session JSONL files."""

    def __init__(self, state_dir: Path):
        self._dir = Path(state_dir) / "tool_calls"
        self._lock = threading.Lock()

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
                self._dir.mkdir(parents=True, exist_ok=True)
                with open(self.path_for(session_id), "a", encoding="utf-8") as handle:
                    handle.write(line)
        except OSError:
            log.exception("cannot write the tool-call log")
