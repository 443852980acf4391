"""Tool calls started while the model is still writing its turn.

An app's agent loop names, with its turn (`LLMTurnRequest.early`), the tools whose
calls may start at once: the concurrency-safe ones it would run directly, now. As
the stream goes, a call is complete when the model starts the next one; a complete
call is started through the executor (as a one-step plan for that app, session and
turn and user: the same confinement, sandbox, skill limits and audit) when it and every call before it
in the message may start early, and its arguments are a JSON object. The same call
twice starts once. The results go back with the turn (`early_results`, by call id);
the loop uses them instead of running those calls again.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from aios_runtime.users import OWNER

__all__ = ["EarlyCalls"]

log = logging.getLogger("aios.controller.early_calls")

RunSteps = Callable[[dict[str, Any], float], dict[str, Any]]
CALL_TIMEOUT = 60.0
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="early-call")


class EarlyCalls:
    """The streamed calls of one turn and the ones started early."""

    def __init__(
        self,
        run_steps: RunSteps,
        app_id: str,
        tools: frozenset[str],
        session_id: str | None,
        turn_id: str | None,
        *,
        user_id: str | None = None,
    ):
        self._run_steps = run_steps
        self._app_id = app_id
        self._tools = tools
        self._session_id = session_id
        self._turn_id = turn_id
        self._user_id = user_id if user_id and user_id != OWNER else None
        self._calls: dict[int, dict[str, Any]] = {}
        self._checked = 0  # calls below this index were looked at
        self._blocked = False  # a call before could not start early: none after may
        self._started: dict[str, Future[dict[str, Any]]] = {}  # call id → its run
        self._keys: dict[tuple[str, str], str] = {}  # (tool, args) → first call id
        self._lock = threading.Lock()

    def piece(self, index: int, call_id: str, name: str, arguments: str) -> None:
        """One streamed piece of call `index`; the calls before it are complete."""
        with self._lock:
            call = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
            call["id"] = call["id"] or call_id
            call["name"] += name
            call["arguments"] += arguments
            while self._checked < index:
                self._consider(self._calls.get(self._checked))
                self._checked += 1

    def _consider(self, call: dict[str, Any] | None) -> None:
        if self._blocked or call is None or call["name"] not in self._tools:
            self._blocked = True
            return
        try:
            args = json.loads(call["arguments"] or "{}")
        except ValueError:
            args = None
        if not isinstance(args, dict) or not call["id"]:
            self._blocked = True
            return
        key = (call["name"], json.dumps(args, sort_keys=True))
        if key in self._keys:  # the same call again: it runs once
            self._started[call["id"]] = self._started[self._keys[key]]
            return
        self._keys[key] = call["id"]
        body = {
            "steps": [{"step_id": 1, "tool": call["name"], "args": args}],
            "app_id": self._app_id,
            "session_id": self._session_id,
        }
        if self._turn_id:
            body["turn_id"] = self._turn_id
        if self._user_id:  # the executor works in that user's sandbox
            body["user_id"] = self._user_id
        self._started[call["id"]] = _pool.submit(self._run, body)

    def _run(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = self._run_steps(body, CALL_TIMEOUT)
        results = answer.get("tool_results") if isinstance(answer, dict) else None
        entry = results.get("step_1") if isinstance(results, dict) else None
        if not isinstance(entry, dict):
            raise ValueError("the executor's answer has no result")
        return entry

    def results(self) -> dict[str, dict[str, Any]]:
        """The results of the calls started early (the ones that failed to run at all
        are left out: the loop runs them itself)."""
        done: dict[str, dict[str, Any]] = {}
        for call_id, future in list(self._started.items()):
            try:
                done[call_id] = future.result(timeout=CALL_TIMEOUT)
            except Exception as exc:  # the loop runs it again, the usual way
                log.warning("an early call did not run: %s", exc)
        return done
