"""The executor's HTTP API (docs/ARCHITECTURE.md, "Executor HTTP API"): thin routes.

`create_app(settings, token, state_dir)` builds the service on `aios_sdk.wsgi.Service`
(the edge rules of `aios_runtime.edge` without Flask: the executor is on the path of
every step, and Flask cost more per request than a cheap step). The master token is the controller, which names
`app_id` in bodies and alone may register apps, write the `system` cache and read
events; an app token is that app, whatever `app_id` its body names (SECURITY.md
W5). Tool work is bounded: at most `max_concurrent` calls run at once, one app at
most a third of them, and a call that cannot get a slot quickly is answered 503
`overloaded` (D2).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from aios_runtime.settings import Settings
from aios_sdk.errors import Forbidden, InvalidRequest, NotFound, Overloaded
from aios_sdk.protocol import (
    AppRegistration,
    RunRequest,
    SystemCacheWrite,
    ToolCall,
    ToolResult,
    ToolsListing,
)
from aios_sdk.wsgi import Request, Service
from executor.registry import CONTROLLER, AppRecord, AppRegistry
from executor.toolbox import Toolbox
from executor.tools.cache import SYSTEM_NAMESPACE
from executor.tools.catalog import atomic_specs

__all__ = ["MAX_STEPS", "create_app"]

MAX_STEPS = 100
_SLOT_WAIT = 0.5  # seconds a call waits for a free slot before 503
_APP_SLOT_WAIT = 0.1  # … and for one of its app's own share of the slots


def _is_controller(http: Request) -> bool:
    return http.identity == CONTROLLER


def _require_controller(http: Request) -> None:
    if not _is_controller(http):
        raise Forbidden("only the controller (master token) may do this")


def _caller_app(http: Request, registry: AppRegistry, named: str | None) -> AppRecord:
    """The app a request acts for: the caller itself, or the one the controller names."""
    app_id = named if _is_controller(http) else http.identity
    if not app_id:
        raise InvalidRequest("app_id is required when the controller calls")
    record = registry.get(app_id)
    if record is None:
        raise NotFound(f"app {app_id!r} is not registered")
    # the controller's plans were reviewed for risky steps (executor/consent.py)
    return replace(record, reviewed=True) if _is_controller(http) else record


def _result_json(result: ToolResult) -> dict[str, Any]:
    """A `ToolResult` on the wire: `result` always present (null included)."""
    return {**result.dump(), "result": result.result}


def create_app(
    settings: Settings,
    token: str,
    state_dir: str | os.PathLike[str],
    *,
    config_path: str | os.PathLike[str] | None = None,
    max_concurrent: int = 12,
) -> Service:
    """The executor service. `config_path`'s folder is hidden from tool processes."""
    state = Path(state_dir).resolve()
    state.mkdir(parents=True, exist_ok=True)
    registry = AppRegistry(token)
    hidden = [str(Path(config_path).resolve().parent)] if config_path else []
    toolbox = Toolbox(settings, registry, state, hidden_dirs=hidden)
    slots = threading.BoundedSemaphore(max_concurrent)
    # one app may hold at most a third of the slots: a flood from one app leaves
    # room for the others (SECURITY.md D2)
    per_app = max(1, max_concurrent // 3)
    app_slots: dict[str, threading.BoundedSemaphore] = {}
    app_slots_lock = threading.Lock()
    app = Service(
        "executor", registry.authenticate, max_body=settings.limits.request_body_bytes
    )
    app.extensions["aios_toolbox"] = toolbox
    app.extensions["aios_registry"] = registry

    @contextmanager
    def slot(app_id: str) -> Iterator[None]:
        with app_slots_lock:
            mine = app_slots.get(app_id)
            if mine is None:
                mine = app_slots[app_id] = threading.BoundedSemaphore(per_app)
        if not mine.acquire(timeout=_APP_SLOT_WAIT):
            raise Overloaded(f"{app_id} already runs {per_app} tool calls; retry shortly")
        try:
            if not slots.acquire(timeout=_SLOT_WAIT):
                raise Overloaded("the executor is busy; retry shortly")
            try:
                yield
            finally:
                slots.release()
        finally:
            mine.release()

    def health(http: Request) -> Any:
        return {
            "status": "ok",
            "sandbox": toolbox.sandbox.kind,
            "fork_limit": toolbox.sandbox.fork_limit,
            "apps": len(registry),
        }

    def register_app(http: Request, app_id: str) -> Any:
        _require_controller(http)
        registration = http.json(AppRegistration)
        if registration.app_id != app_id:
            raise InvalidRequest(
                f"body app_id {registration.app_id!r} differs from the URL"
            )
        registry.register(AppRecord.from_registration(registration))
        return {"status": "ok"}

    def unregister_app(http: Request, app_id: str) -> Any:
        _require_controller(http)
        if registry.unregister(app_id) is None:
            raise NotFound(f"app {app_id!r} is not registered")
        stopped = toolbox.processes.stop_app(app_id)
        return {"status": "ok", "stopped_processes": stopped}

    def list_tools(http: Request) -> Any:
        named = http.args.get("app_id")
        specs = atomic_specs()
        app_id = ""
        if named or not _is_controller(http):
            record = _caller_app(http, registry, named)
            app_id = record.app_id
            specs += [
                spec.model_copy(update={"custom": True})
                for name, spec in record.custom_tools.items()
                if name not in {s.name for s in specs}
            ]
        return ToolsListing(app_id=app_id, tools=specs).dump()

    def call_tool(http: Request) -> Any:
        call = http.json(ToolCall)
        record = _caller_app(http, registry, call.app_id)
        with slot(record.app_id):
            result = toolbox.call(record, call.tool, call.args, call.session_id)
        return _result_json(result)

    def run_steps(http: Request) -> Any:
        plan = http.json(RunRequest)
        record = _caller_app(http, registry, plan.app_id)
        if len(plan.steps) > MAX_STEPS:
            raise InvalidRequest(f"at most {MAX_STEPS} steps per plan")
        seen: set[int] = set()
        for step in plan.steps:
            if step.step_id in seen:
                raise InvalidRequest(f"duplicate step_id {step.step_id}")
            seen.add(step.step_id)
        if plan.approved_commands and _is_controller(http):
            # the user allowed these programs for this one plan (controller/permissions/policy.py)
            extra = tuple(c for c in plan.approved_commands if c and "/" not in c)
            record = replace(record, shell_whitelist=(*record.shell_whitelist, *extra))
        with slot(record.app_id):
            results = toolbox.run(record, plan.steps, plan.session_id)
        return {"tool_results": {key: _result_json(r) for key, r in results.items()}}

    def write_system_cache(http: Request) -> Any:
        _require_controller(http)
        entry = http.json(SystemCacheWrite)
        toolbox.cache.set(SYSTEM_NAMESPACE, entry.key, entry.value, entry.ttl)
        return {"status": "ok"}

    def events(http: Request) -> Any:
        _require_controller(http)
        try:
            since = int(http.args.get("since", "0"))
            wait = float(http.args.get("wait", "0"))
        except ValueError as exc:
            raise InvalidRequest("since must be an integer and wait a number") from exc
        return toolbox.events.read(since, wait).dump()

    def list_processes(http: Request) -> Any:
        named = http.args.get("app_id")
        if _is_controller(http) and not named:
            return {"app_id": None, "processes": toolbox.processes.list(None)}
        record = _caller_app(http, registry, named)
        return {"app_id": record.app_id, "processes": toolbox.processes.list(record.app_id)}

    def stop_process(http: Request, pid_text: str) -> Any:
        if not pid_text.isdigit():
            raise NotFound(f"no route /processes/{pid_text}")
        pid = int(pid_text)
        owner = toolbox.processes.owner(pid)
        if owner is None or not (_is_controller(http) or owner == http.identity):
            raise NotFound(f"no background process {pid}")
        stopped = toolbox.processes.stop(pid)
        return {"status": "ok", "process": stopped}

    app.route("GET", "/health", health, public=True)
    app.route("PUT", "/apps/<>", register_app)
    app.route("DELETE", "/apps/<>", unregister_app)
    app.route("GET", "/tools", list_tools)
    app.route("POST", "/call", call_tool)
    app.route("POST", "/run", run_steps)
    app.route("POST", "/cache/system", write_system_cache)
    app.route("GET", "/events", events)
    app.route("GET", "/processes", list_processes)
    app.route("DELETE", "/processes/<>", stop_process)
    return app
