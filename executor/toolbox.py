"""Running tools: one call (`/call`) or a step plan (`/run`), recorded and timed.

`ExecutorToolbox` holds the executor's shared services (sandbox, background processes,
cache, event queue, call log) and its one tool source (`executor.providers.registry.
ToolSource`: the atomic provider, one provider per registered app, and whatever else
is added) and turns every tool call into a `ToolResult`: the tool found in the
calling app's listing, arguments checked against its schema, the per-tool timeout
applied (an argument `timeout` may lower it, never raise it), a result over the
tool's `max_result_size_chars` cut with a marker, failures returned as data with a
stable code, and a line in the audit log (`executor.audit`) with the provider's
summaries of the arguments and the result. An app calling directly (not through a plan the controller reviewed)
may not run a tool that `requires_confirmation`, nor the calls `consent.py` judges
risky. A step plan runs in order with `{{step_N…}}` templating; a run of
consecutive concurrency-safe steps (none using another's result) runs side by side,
its results, keys and log lines the same and in the same step order as if run one
by one. A failed step does not stop later steps, except those that use its result
(they fail with `template_error` and do not run).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aios_protocol.errors import AiosError, NeedsConfirmation
from aios_protocol.messages import Step, ToolResult
from aios_protocol.tools import generic_input_summary, generic_result_summary
from aios_runtime.settings import Settings
from aios_runtime.users import (
    OWNER,
    private_folder,
    user_app_workdir,
    user_skills_dir,
)
from executor.audit import CallRecords, ToolCallLog
from executor.consent import check_consent
from executor.providers.apps import AppToolsProvider, app_provider_name
from executor.providers.atomic import AtomicProvider, import_implementations
from executor.providers.base import ToolCall, ToolEntry
from executor.providers.registry import ToolSource
from executor.providers.skills import SkillsProvider
from executor.registry import AppRecord, AppRegistry
from executor.sandbox.background import BackgroundProcesses
from executor.sandbox.runner import ProcessSandbox
from executor.skills.scope import SkillScopes, sub_turn
from executor.templating import TemplateError, references, render_args
from executor.tools.cache import ToolCache
from executor.tools.catalog import InvalidArgs
from executor.tools.notify import EventQueue

__all__ = ["MAX_PARALLEL_STEPS", "ToolContext", "ExecutorToolbox"]

log = logging.getLogger("aios.executor")

# steps of one plan running side by side at most, and threads the executor lends to them
MAX_PARALLEL_STEPS = 8

# tools that work in the executor's memory or on a workspace file and end within
# milliseconds; a plan's log lines are written before any other step (a process,
# the network, a database, an app's custom tool)
_QUICK_TOOLS = frozenset(
    {"file_read", "file_write", "file_list", "cache_get", "cache_set", "notify"}
)


@dataclass(frozen=True)
class ToolContext:
    """Everything one tool call may use: the calling app and the shared services."""

    app: AppRecord
    settings: Settings
    session_id: str | None
    timeout: float
    toolbox: ExecutorToolbox

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
        """Other apps' workdirs (and, for a user other than the owner, the owner's
        of this app): hidden from this call's processes under bubblewrap."""
        return self.toolbox.hidden_from(self.app)


def _step_turn(step: Step) -> str | None:
    """The turn a step says it belongs to, when it is a short text: a sub-agent's call
    that waited for the user's yes, which the controller runs without a turn of its
    own (a skill's sub-agent stays held to its skill's tools)."""
    value = (step.model_extra or {}).get("turn_id")
    return value if isinstance(value, str) and 0 < len(value) <= 100 else None


def _summaries(
    args: dict[str, Any], result: ToolResult, found: tuple[Any, ToolEntry] | None
) -> tuple[str, str | None]:
    """The audit log's summaries of a call (its provider's, the generic ones for a
    tool not found or a provider failing at it); a failure that answered nothing
    has no result summary."""
    value = result.result
    answered = result.status == "ok" or value is not None
    if found is not None:
        provider, entry = found
        try:
            summary = provider.input_summary(entry, args)
            return summary, provider.result_summary(
                entry, args, value
            ) if answered else None
        except Exception:
            log.exception("tool %s has no audit summary", entry.name)
    return generic_input_summary(args), (
        generic_result_summary(args, value) if answered else None
    )


class ExecutorToolbox:
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
        self.state_dir = state_dir
        self.sandbox = ProcessSandbox(
            settings.limits,
            use_bubblewrap=settings.tool_sandbox.use_bubblewrap,
            hidden_dirs=[str(state_dir), *(hidden_dirs or [])],
        )
        self.processes = BackgroundProcesses(self.sandbox, settings.limits.max_processes)
        self.cache = ToolCache()
        self.events = EventQueue()
        self.call_log = ToolCallLog(state_dir)
        # a skill's allowed-tools, per loop turn (kept over a restart)
        self.skill_scopes = SkillScopes(state_dir / "skill_scopes.json")
        self.tools = ToolSource()
        self.tools.add(AtomicProvider(self))
        # the owner's shared skills (`<state_dir>/users/default/skills/`), each other
        # user's own, and the apps' `skills/` (executor/providers/skills.py)
        self.tools.add(SkillsProvider(self, user_skills_dir(state_dir, OWNER)))
        if settings.mcp_servers:  # the mcp package is imported only when it is used
            from executor.providers.mcp_users import add_mcp_servers

            # one provider per config.json `mcp_servers` entry
            add_mcp_servers(
                self.tools,
                settings,
                state_dir=state_dir,
                hidden_dirs=[str(state_dir), *(hidden_dirs or [])],
                log_dir=state_dir / "logs",
            )
        self._apps_lock = threading.Lock()
        self._steps_pool = ThreadPoolExecutor(
            max_workers=MAX_PARALLEL_STEPS, thread_name_prefix="aios-step"
        )

    def warm_up(self) -> None:
        """What the first call of each atomic tool would do (import its module, compile
        its argument check), done ahead, so the first open of an app after a start
        does not wait for it."""
        import_implementations()
        self.tools.warm(AtomicProvider.name)

    # ------------------------------------------------------------ users

    def user_workdir(self, user_id: str, app_id: str) -> Path:
        """`app_id`'s workdir in `user_id`'s sandbox, made (mode 700) on first use."""
        workdir = user_app_workdir(self.state_dir, user_id, app_id)
        return private_folder(workdir, f"the workdir of {app_id} for {user_id}")

    def hidden_from(self, app: AppRecord) -> list[str]:
        """Every registered workdir but the one `app` works in (see `ToolContext`)."""
        return [str(r.workdir) for r in self.registry.all() if r.workdir != app.workdir]

    # ------------------------------------------------------------ listing

    def sync_app(self, app_id: str) -> None:
        """Hold `app:<app_id>` while a process of the app is registered (none once the
        last left); a call reaches the process serving its user (`ToolCall.app`)."""
        name = app_provider_name(app_id)
        record = self.registry.find(app_id)
        with self._apps_lock:
            provider = self.tools.get(name)
            if record is None:
                if provider is not None:
                    self.tools.remove(name)
            elif provider is None or provider.config is not record:
                self.tools.add(AppToolsProvider(record))

    def listing(self, app_id: str | None, user_id: str = OWNER) -> list[ToolEntry]:
        """Every tool `app_id` may call for `user_id` (with None: the tools every app
        has)."""
        if app_id:
            self.sync_app(app_id)
        return self.tools.listing(app_id, user_id)

    def _find(self, app: AppRecord, tool: str) -> tuple[Any, ToolEntry]:
        self.sync_app(app.app_id)
        return self.tools.find(tool, app.app_id, app.user_id)

    def _found(self, app: AppRecord, steps: list[Step]) -> dict[int, tuple[Any, ToolEntry]]:
        """The provider and entry of each step's tool, looked up once per plan (an
        unknown tool is left out: its step looks again when it runs, and fails there)."""
        self.sync_app(app.app_id)
        found = {}
        for step in steps:
            try:
                found[step.step_id] = self.tools.find(step.tool, app.app_id, app.user_id)
            except Exception:  # UnknownTool, or a provider's bug
                continue
        return found

    # -------------------------------------------------------------- calls

    def timeout_for(self, tool: str, args: dict[str, Any]) -> float:
        """The configured timeout, lowered (never raised) by an argument `timeout`."""
        configured = self.settings.timeout_for(tool)
        wanted = args.get("timeout")
        if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) and wanted > 0:
            return min(float(wanted), configured)
        return configured

    def _invoke(
        self,
        app: AppRecord,
        tool: str,
        args: dict[str, Any],
        session_id: str | None,
        found: tuple[Any, ToolEntry] | None = None,
        turn_id: str | None = None,
    ) -> Any:
        if not isinstance(args, dict):
            raise InvalidArgs("args must be an object")
        self.skill_scopes.check(app.app_id, session_id, turn_id, tool)
        provider, entry = found or self._find(app, tool)
        timeout = self.timeout_for(tool, args)
        args = self.tools.checked_args(provider, entry, args)
        if not app.reviewed:
            if entry.requires_confirmation:
                raise NeedsConfirmation(
                    f"{tool} needs the user's confirmation; plan it with plan_steps "
                    "(the controller asks the user) instead of calling it directly"
                )
            if entry.provider == AtomicProvider.name:
                check_consent(tool, args)
        value = self.tools.call(
            provider, entry, ToolCall(app, tool, args, timeout, session_id)
        )
        if tool == "skill" and entry.provider == SkillsProvider.name:
            allowed = value.get("allowed_tools") if isinstance(value, dict) else None
            if turn_id and isinstance(value, dict) and value.get("context") == "fork":
                # the sub-agent that follows it has a turn of its own, held to the list
                sub = value["sub_turn_id"] = sub_turn(turn_id)
                self.skill_scopes.fork(app.app_id, session_id, turn_id, sub)
                turn_id = sub
            self.skill_scopes.begin(
                app.app_id, session_id, turn_id, str(args.get("name")), allowed
            )
        return value

    def call(
        self,
        app: AppRecord,
        tool: str,
        args: dict[str, Any],
        session_id: str | None = None,
        turn_id: str | None = None,
    ) -> ToolResult:
        """Run one tool; every outcome, failures included, is a `ToolResult`.
        `turn_id` names the request of an agent loop the call belongs to (a skill's
        `allowed-tools` hold for the rest of it)."""
        with self.call_log.records(session_id) as records:
            found = self._lookup(app, tool)
            result = self._outcome(app, tool, args, session_id, found, turn_id)
            self._record(app, tool, args, records, None, result, found)
            return result

    def _lookup(self, app: AppRecord, tool: str) -> tuple[Any, ToolEntry] | None:
        """The provider and entry of `tool` for `app`, None when there is none (the
        call looks again when it runs, and fails there)."""
        try:
            return self._find(app, tool)
        except Exception:  # UnknownTool, ToolUnavailable, or a provider's bug
            return None

    def _outcome(
        self,
        app: AppRecord,
        tool: str,
        args: dict[str, Any],
        session_id: str | None,
        found: tuple[Any, ToolEntry] | None = None,
        turn_id: str | None = None,
    ) -> ToolResult:
        """Run one tool, timed; failures as data."""
        started = time.monotonic()
        try:
            value = self._invoke(app, tool, args, session_id, found, turn_id)
            result = ToolResult(tool=tool, status="ok", result=value)
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
                tool=tool,
                status="error",
                error=f"{type(exc).__name__}: {exc}",
                code="internal_error",
            )
        result.duration_ms = round((time.monotonic() - started) * 1000, 1)
        return result

    def _record(
        self,
        app: AppRecord,
        tool: str,
        args: Any,
        records: CallRecords,
        step_id: int | None,
        result: ToolResult,
        found: tuple[Any, ToolEntry] | None = None,
    ) -> ToolResult:
        args = args if isinstance(args, dict) else {}
        input_summary, result_summary = _summaries(args, result, found)
        records.add(
            app_id=app.app_id,
            tool=tool,
            input_summary=input_summary,
            result_summary=result_summary,
            status=result.status,
            code=result.code,
            duration_ms=result.duration_ms,
            step_id=step_id,
        )
        return result

    # -------------------------------------------------------------- plans

    @staticmethod
    def _concurrency_safe(step: Step, found: tuple[Any, ToolEntry] | None) -> bool:
        if found is None:  # an unknown tool: runs alone, and fails there
            return False
        provider, entry = found
        try:
            return entry.available and provider.is_concurrency_safe(entry, step.args)
        except Exception:  # a provider's bug: runs alone, and fails there
            return False

    def _batches(
        self, steps: list[Step], found: dict[int, tuple[Any, ToolEntry]]
    ) -> list[list[Step]]:
        """The plan cut into runs: a run of consecutive concurrency-safe steps none of
        which uses another's result, or a single step."""
        batches: list[list[Step]] = []
        ids: set[int] = set()
        for step in steps:
            safe = self._concurrency_safe(step, found.get(step.step_id))
            current = batches[-1] if batches else None
            if (
                current is not None
                and safe
                and ids
                and len(current) < MAX_PARALLEL_STEPS
                and not references(step.args) & ids
            ):
                current.append(step)
                ids.add(step.step_id)
                continue
            batches.append([step])
            ids = {step.step_id} if safe else set()
        return batches

    def run(
        self,
        app: AppRecord,
        steps: list[Step],
        session_id: str | None = None,
        turn_id: str | None = None,
    ) -> dict[str, ToolResult]:
        """Run a plan; answer `{"step_<id>": ToolResult}` in step order.

        The plan's log lines are written together when it ends, and before any
        step that may take long, so that a reader sees the steps before it; they are
        in step order whether or not steps ran side by side.
        """
        done: dict[int, ToolResult] = {}
        found = self._found(app, steps)
        with self.call_log.records(session_id) as records:
            for batch in self._batches(steps, found):
                rendered: list[tuple[Step, dict[str, Any] | None, ToolResult | None]] = []
                for step in batch:
                    try:
                        rendered.append((step, render_args(step.args, done), None))
                    except TemplateError as exc:
                        failed = ToolResult(
                            tool=step.tool, status="error", error=exc.message, code=exc.code
                        )
                        rendered.append((step, None, failed))
                if any(s.tool not in _QUICK_TOOLS for s, a, f in rendered if f is None):
                    records.write()
                outcomes = self._run_batch(app, rendered, session_id, found, turn_id)
                for (step, args, _failed), result in zip(rendered, outcomes, strict=True):
                    logged_args = step.args if args is None else args
                    done[step.step_id] = self._record(
                        app,
                        step.tool,
                        logged_args,
                        records,
                        step.step_id,
                        result,
                        found.get(step.step_id),
                    )
        return {f"step_{step_id}": done[step_id] for step_id in (s.step_id for s in steps)}

    def _run_batch(
        self,
        app: AppRecord,
        rendered: list[tuple[Step, dict[str, Any] | None, ToolResult | None]],
        session_id: str | None,
        found: dict[int, tuple[Any, ToolEntry]],
        turn_id: str | None = None,
    ) -> list[ToolResult]:
        """The outcome of each step of a run, in order; side by side (all but the first
        on the pool) unless every step is a quick one."""
        # quick tools end within microseconds: a thread hand-off would cost more
        side_by_side = any(s.tool not in _QUICK_TOOLS for s, _a, f in rendered if f is None)

        def run(step: Step, args: dict[str, Any] | None) -> ToolResult:
            turn = _step_turn(step) or turn_id
            return self._outcome(
                app, step.tool, args or {}, session_id, found.get(step.step_id), turn
            )

        pending: list[Future[ToolResult] | ToolResult | None] = []
        for index, (step, args, failed) in enumerate(rendered):
            if failed is not None:
                pending.append(failed)
            elif not side_by_side:
                pending.append(run(step, args))
            elif index == 0:
                pending.append(None)  # the first step runs below, in this thread
            else:
                pending.append(self._steps_pool.submit(run, step, args))
        if pending[0] is None:
            pending[0] = run(rendered[0][0], rendered[0][1])
        return [p if isinstance(p, ToolResult) else p.result() for p in pending]  # type: ignore[union-attr]

    def shutdown(self) -> None:
        """Stop every process we started (the executor is exiting)."""
        self.tools.stop_all()
        self._steps_pool.shutdown(wait=False, cancel_futures=True)
        self.processes.stop_all()
        self.sandbox.stop_all()
        self.call_log.close()
