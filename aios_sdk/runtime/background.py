"""Sub-agents that run in the background of an app's process.

`start(task_id, work)` runs `work()` — a forked sub-agent, which writes its whole
output under `task-outputs/` and returns its summary — on a thread of its own, with
this thread's session, turn and user (so its tool calls are audited, held and kept
in the user's sandbox like the parent's); `result(task_id, wait)` answers the
summary once it is done, waiting up to `wait` seconds, or `{"status": "running"}`
until then. A task is known only to calls serving the user who started it. The tasks live as long as the
app's process; a finished task's summary is kept until the process ends, and in the
workspace beside its output (`summary_path`): `stored(task_id, read)` reads it from
there after the process was stopped and started again.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aios_sdk.agent import current_call, within_call

__all__ = ["MAX_WAIT", "output_path", "result", "start", "stored", "summary_path"]

MAX_WAIT = 60.0  # seconds one `task_output` call may wait
OUTPUT_DIR = "task-outputs"
_TASK_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what `AgentLoop` makes of a call id


@dataclass
class _Task:
    done: threading.Event = field(default_factory=threading.Event)
    summary: dict[str, Any] = field(default_factory=dict)


_tasks: dict[tuple[str | None, str], _Task] = {}  # (user, task id) → task
_lock = threading.Lock()


def start(task_id: str, work: Callable[[], dict[str, Any]]) -> None:
    """Run `work` in the background as task `task_id`."""
    task = _Task()
    scope = current_call()
    with _lock:
        _tasks[(scope.user_id, task_id)] = task

    def run() -> None:
        try:
            with within_call(scope):
                task.summary = work()
        except Exception as exc:  # the parent reads why, like any failed sub-task
            task.summary = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
        finally:
            task.done.set()

    threading.Thread(target=run, name=f"sub-agent-{task_id}", daemon=True).start()


def result(task_id: str, wait: float = 0.0) -> dict[str, Any] | None:
    """The summary of task `task_id` (waiting up to `wait` s), `{"status":
    "running"}` before it ends, None for a task this process does not know."""
    with _lock:
        task = _tasks.get((current_call().user_id, task_id))
    if task is None:
        return None
    if not task.done.wait(max(0.0, min(wait, MAX_WAIT))):
        return {"status": "running", "task_id": task_id}
    return {**task.summary, "task_id": task_id}


def output_path(task_id: str) -> str:
    """Where a sub-agent's whole output is written, relative to the workspace."""
    return f"{OUTPUT_DIR}/{task_id}.md"


def summary_path(task_id: str) -> str:
    """Where a background task's summary is kept, relative to the workspace."""
    return f"{OUTPUT_DIR}/{task_id}.json"


def stored(task_id: str, read: Callable[[str], str | None]) -> dict[str, Any] | None:
    """The summary of a finished task as kept in the workspace (`read(path)` gives
    a file's text or None), or None: no such task id, or nothing kept for it."""
    if not _TASK_ID.fullmatch(task_id):
        return None
    text = read(summary_path(task_id))
    try:
        summary = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(summary, dict):
        return None
    return {**summary, "task_id": task_id}
