"""Running tools: one call (`/call`) or a step plan (`/run`), recorded and timed.

`Toolbox` holds the executor's shared services (sandbox, background processes,
cache, event queue, call log) and turns every tool call into a `ToolResult`:
arguments checked against the tool's schema, the per-tool timeout applied (an
argument `timeout` may lower it, never raise it), failures returned as data with a
stable code. A step plan runs in order with `{{step_N…}}` templating; a failed
step does not stop later steps, except those that use its result (they fail with
`template_error` and do not run). The ten atomic tools live in their own modules,
imported on first use to keep the executor's start fast.
"""

from __future__ import annotations

import functools
import importlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aios_runtime.settings import Settings
from aios_sdk.errors import AiosError, UnknownTool
from aios_sdk.protocol import ATOMIC_TOOLS, Step, ToolResult
from executor.audit import CallRecords, ToolCallLog
from executor.consent import check_consent
from executor.registry import AppRecord, AppRegistry
from executor.sandbox.background import BackgroundProcesses
from executor.sandbox.runner import ProcessSandbox
from executor.templating import TemplateError, render_args
from executor.tools.cache import ToolCache
from executor.tools.catalog import ATOMIC_SPECS, check_args
from executor.tools.notify import EventQueue

__all__ = ["ToolContext", "Toolbox"]

log = logging.getLogger("aios.executor")

ToolFunction = Callable[["ToolContext", dict[str, Any]], Any]

# tool name → (module, function); imported lazily.
_IMPLEMENTATIONS: dict[str, tuple[str, str]] = {
    "http_request": ("executor.tools.http_request", "http_request"),
    "file_read": ("executor.tools.files", "file_read"),
    "file_write": ("executor.tools.files", "file_write"),
    "file_list": ("executor.tools.files", "file_list"),
    "shell_exec": ("executor.tools.commands", "shell_exec"),
    "process_start": ("executor.tools.commands", "process_start"),
    "db_query": ("executor.tools.db_query", "db_query"),
    "cache_get": ("executor.tools.cache", "cache_get"),
    "cache_set": ("executor.tools.cache", "cache_set"),
    "notify": ("executor.tools.notify", "notify"),
}
assert tuple(_IMPLEMENTATIONS) == ATOMIC_TOOLS

# tools that work in the executor's memory or on a workspace file and end within
# milliseconds; a plan's log lines are written before any other step (a process,
# the network, a database, an app's custom tool)
_QUICK_TOOLS = frozenset(
    {"file_read", "file_write", "file_list", "cache_get", "cache_set", "notify"}
)


@functools.cache
def _implementation(tool: str) -> ToolFunction:
    module, name = _IMPLEMENTATIONS[tool]
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class ToolContext:
    """Everything one tool call may use: the calling app and the shared services."""

    app: AppRecord
    settings: Settings
    session_id: str | None
    timeout: float
    toolbox: Toolbox

    @property
    def sandbox(self) -> ProcessSandbox:
        return self.toolbox.sandbox

    @property
    def processes(self) -> BackgroundProcesses:
        return self.toolbox.processes

    @property
    def cache(self) -> ToolCache:
        return self.toolbox.cache

    @property
    def events(self) -> EventQueue:
        return self.toolbox.events

    def hidden_dirs(self) -> list[str]:
        """Other apps' workdirs: hidden from this app's processes under bubblewrap."""
        return [
            str(r.workdir)
            for r in self.toolbox.registry.all()
            if r.app_id != self.app.app_id
        ]


class Toolbox:
    """Runs tool calls and step plans for registered apps."""

    def __init__(
        self,
        settings: Settings,
        registry: AppRegistry,
        state_dir: Path,
        *,
        hidden_dirs: list[str] | None = None,
    ):
        self.settings = settings
        self.registry = registry
        self.sandbox = ProcessSandbox(
            settings.limits,
            use_bubblewrap=settings.tool_sandbox.use_bubblewrap,
            hidden_dirs=[str(state_dir), *(hidden_dirs or [])],
        )
        self.processes = BackgroundProcesses(self.sandbox, settings.limits.max_processes)
        self.cache = ToolCache()
        self.events = EventQueue()
        self.call_log = ToolCallLog(state_dir)

    def timeout_for(self, tool: str, args: dict[str, Any]) -> float:
        """The configured timeout, lowered (never raised) by an argument `timeout`."""
        configured = self.settings.timeout_for(tool)
        wanted = args.get("timeout")
        if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) and wanted > 0:
            return min(float(wanted), configured)
        return configured

    def _invoke(self, app: AppRecord, tool: str, args: dict[str, Any], session_id: str | None) -> Any:  # fmt: skip
        if not isinstance(args, dict):
            raise AiosError("args must be an object", code="invalid_args")
        context = ToolContext(
            app, self.settings, session_id, self.timeout_for(tool, args), self
        )
        if tool in ATOMIC_SPECS:
            check_args(ATOMIC_SPECS[tool].parameters, args, tool)
            if not app.reviewed:
                check_consent(tool, args)
            return _implementation(tool)(context, args)
        if tool in app.custom_tools:
            from executor.tools.app_tools import call_custom_tool

            return call_custom_tool(context, tool, args)
        raise UnknownTool(f"unknown tool {tool!r}")

    def call(
        self,
        app: AppRecord,
        tool: str,
        args: dict[str, Any],
        session_id: str | None = None,
    ) -> ToolResult:
        """Run one tool; every outcome, failures included, is a `ToolResult`."""
        with self.call_log.records(session_id) as records:
            return self._call(app, tool, args, session_id, records)

    def _call(self, app: AppRecord, tool: str, args: dict[str, Any], session_id: str | None,
              records: CallRecords, step_id: int | None = None) -> ToolResult:  # fmt: skip
        started = time.monotonic()
        try:
            result = ToolResult(tool=tool, status="ok", result=self._invoke(app, tool, args, session_id))  # fmt: skip
        except AiosError as exc:
            result = ToolResult(
                tool=tool,
                status="error",
                error=exc.message,
                code=exc.code,
                result=exc.detail,
            )
        except Exception as exc:  # a bug in a tool must not crash the request
            log.exception("tool %s failed unexpectedly", tool)
            result = ToolResult(
                tool=tool, status="error", error=f"{type(exc).__name__}: {exc}",
                code="internal_error",
            )  # fmt: skip
        return self._finish(app, tool, args, records, step_id, result, started)

    def _finish(self, app: AppRecord, tool: str, args: Any, records: CallRecords,
                step_id: int | None, result: ToolResult, started: float) -> ToolResult:  # fmt: skip
        result.duration_ms = round((time.monotonic() - started) * 1000, 1)
        records.add(
            app_id=app.app_id,
            tool=tool,
            args=args if isinstance(args, dict) else {},
            status=result.status,
            code=result.code,
            duration_ms=result.duration_ms,
            step_id=step_id,
        )
        return result

    def run(
        self, app: AppRecord, steps: list[Step], session_id: str | None = None
    ) -> dict[str, ToolResult]:
        """Run a plan in order; answer `{"step_<id>": ToolResult}` (S-57).

        The plan's log lines are written together when it ends, and before any
        step that may take long, so that a reader sees the steps before it.
        """
        done: dict[int, ToolResult] = {}
        with self.call_log.records(session_id) as records:
            for step in steps:
                started = time.monotonic()
                try:
                    args = render_args(step.args, done)
                except TemplateError as exc:
                    failed = ToolResult(tool=step.tool, status="error", error=exc.message,
                                        code=exc.code)  # fmt: skip
                    done[step.step_id] = self._finish(
                        app, step.tool, step.args, records, step.step_id, failed, started
                    )
                    continue
                if step.tool not in _QUICK_TOOLS:
                    records.write()
                done[step.step_id] = self._call(
                    app, step.tool, args, session_id, records, step.step_id
                )
        return {f"step_{step_id}": result for step_id, result in done.items()}

    def shutdown(self) -> None:
        """Stop every process we started (the executor is exiting)."""
        self.processes.stop_all()
        self.sandbox.stop_all()
        self.call_log.close()
