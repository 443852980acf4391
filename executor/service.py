"""The executor's HTTP API (docs/ARCHITECTURE.md, "Executor HTTP API"): thin routes.

`create_app(settings, token, state_dir)` builds the service: a Flask app with the edge
of `aios_runtime.edge` installed. The master token is the controller, which names
`app_id` in bodies and alone may register apps, write the `system` cache and read
events; an app token is that app process, whatever `app_id` its body names. A call
acts for one user (`user_id`; none: the owner) and works in that user's sandbox: the
controller names the user; an app process acts for the user it was registered to
serve and no other (another user named: 403 `user_not_allowed`). Tool work is
bounded: at most `max_concurrent` calls run at once, one app at
most a third of them, and a call that cannot get a slot quickly is answered 503
`overloaded`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from flask import Flask, g, request

from aios_protocol.errors import (
    Forbidden,
    InvalidRequest,
    NotFound,
    Overloaded,
    UserNotAllowed,
)
from aios_protocol.messages import (
    AppRegistration,
    RunRequest,
    SystemCacheWrite,
    ToolCall,
    ToolResult,
    ToolsListing,
    TurnStart,
    build_models,
)
from aios_runtime.edge import create_service, public, read_json
from aios_runtime.settings import Settings
from aios_runtime.users import OWNER, check_user_id
from executor.registry import CONTROLLER, AppRecord, AppRegistry
from executor.toolbox import ExecutorToolbox
from executor.tools.cache import SYSTEM_NAMESPACE

__all__ = ["MAX_STEPS", "create_app"]

MAX_STEPS = 100
_SLOT_WAIT = 0.5  # seconds a call waits for a free slot before 503
_APP_SLOT_WAIT = 0.1  # … and for one of its app's own share of the slots


def _is_controller() -> bool:
    return g.identity == CONTROLLER


def _require_controller() -> None:
    if not _is_controller():
        raise Forbidden("only the controller (master token) may do this")


def _caller_app(
    registry: AppRegistry, toolbox: ExecutorToolbox, named: str | None, user_id: str | None
) -> AppRecord:
    """The app process a request acts as, for the user it names (none: the owner).

    An app token is its own process, which acts for the user it serves alone. The
    controller names the app and the user: that user's process of the app when one
    is registered, else a record of the app with that user's workdir and no way to
    reach a process (its own tools then answer that it does not run for them)."""
    named_user = check_user_id(user_id, field="user_id") if user_id else OWNER
    if not _is_controller():
        record = registry.by_identity(g.identity)
        if record is None:
            raise NotFound(f"app {g.identity!r} is not registered")
        if user_id and named_user != record.user_id:
            raise UserNotAllowed(
                f"{record.app_id} serves {record.user_id!r} here and may not act "
                f"for user {named_user!r}"
            )
        return record
    if not named:
        raise InvalidRequest("app_id is required when the controller calls")
    record = registry.get(named, named_user)
    if record is None and named_user != OWNER:
        base = registry.find(named)
        if base is not None:
            workdir = toolbox.user_workdir(named_user, named)
            record = replace(base, workdir=workdir, user_id=named_user, url=None, token="")
    if record is None:
        raise NotFound(f"app {named!r} is not registered")
    # the controller's plans were reviewed for risky steps (executor/consent.py)
    return replace(record, reviewed=True)


def _listed_app(registry: AppRegistry, named: str | None) -> str:
    """The app whose tools a listing shows: the caller's own, or the one the
    controller names (any of its processes will do: they have the same tools)."""
    if not _is_controller():
        record = registry.by_identity(g.identity)
    else:
        if not named:
            raise InvalidRequest("app_id is required when the controller calls")
        record = registry.find(named)
    if record is None:
        raise NotFound(f"app {named or g.identity!r} is not registered")
    return record.app_id


def _turn(value: Any) -> str | None:
    """The `turn_id` of a call (an agent loop's request), when it is a short text."""
    return value if isinstance(value, str) and 0 < len(value) <= 100 else None


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
) -> Flask:
    """The executor service. `config_path`'s folder is hidden from tool processes."""
    state = Path(state_dir).resolve()
    state.mkdir(parents=True, exist_ok=True)
    registry = AppRegistry(token)
    hidden = [str(Path(config_path).resolve().parent)] if config_path else []
    build_models()  # before the server's threads first use them
    toolbox = ExecutorToolbox(settings, registry, state, hidden_dirs=hidden)
    app = create_service(
        "executor", registry.authenticate, max_body=settings.limits.request_body_bytes
    )
    app.extensions["aios_toolbox"] = toolbox
    app.extensions["aios_registry"] = registry
    app.extensions["aios_probed"] = threading.Event()
    _add_service_routes(app, registry, toolbox)
    _add_app_routes(app, registry, toolbox)
    _add_tool_routes(app, registry, toolbox, _Slots(max_concurrent))
    _add_process_routes(app, registry, toolbox)
    return app


class _Slots:
    """At most `max_concurrent` tool calls at once, and one app at most a third of
    them: a flood from one app leaves room for the others."""

    def __init__(self, max_concurrent: int) -> None:
        self._slots = threading.BoundedSemaphore(max_concurrent)
        self._per_app = max(1, max_concurrent // 3)
        self._apps: dict[str, threading.BoundedSemaphore] = {}
        self._lock = threading.Lock()

    @contextmanager
    def taken(self, app_id: str) -> Iterator[None]:
        """A slot for one call of `app_id`, or `Overloaded` when none comes quickly."""
        with self._lock:
            mine = self._apps.get(app_id)
            if mine is None:
                mine = self._apps[app_id] = threading.BoundedSemaphore(self._per_app)
        if not mine.acquire(timeout=_APP_SLOT_WAIT):
            raise Overloaded(
                f"{app_id} already runs {self._per_app} tool calls; retry shortly"
            )
        try:
            if not self._slots.acquire(timeout=_SLOT_WAIT):
                raise Overloaded("the executor is busy; retry shortly")
            try:
                yield
            finally:
                self._slots.release()
        finally:
            mine.release()


def _listing(toolbox: ExecutorToolbox, app_id: str, user_id: str = OWNER) -> dict[str, Any]:
    """The tools `app_id` sees ("": every app) for `user_id`, as `/tools` answers
    them."""
    entries = toolbox.listing(app_id or None, user_id)
    listing = ToolsListing(
        app_id=app_id,
        tools=[entry.info() for entry in entries],
        providers=toolbox.tools.statuses(app_id or None, user_id),
    ).dump()
    # what the providers tell a model about their tools (an agent's system prompt),
    # whole and per provider (a planner offering some tools tells only theirs)
    prompts = toolbox.tools.prompt_parts(app_id or None, user_id)
    listing["prompt"] = "\n\n".join(prompts.values())
    listing["prompts"] = prompts
    return listing


def _add_service_routes(
    app: Flask, registry: AppRegistry, toolbox: ExecutorToolbox
) -> None:
    """`/health`, the controller's writes of the `system` cache and its event reads."""
    probed: threading.Event = app.extensions["aios_probed"]

    @app.get("/health")
    @public
    def health() -> Any:
        probed.set()  # the controller found it up (the warm-up waits for this)
        return {
            "status": "ok",
            "pid": os.getpid(),  # the controller checks it probes its own executor
            "sandbox": toolbox.sandbox.kind,
            "fork_limit": toolbox.sandbox.fork_limit,
            "apps": len(registry),
        }

    @app.post("/cache/system")
    def write_system_cache() -> Any:
        _require_controller()
        entry = read_json(SystemCacheWrite)
        toolbox.cache.set(SYSTEM_NAMESPACE, entry.key, entry.value, entry.ttl)
        return {"status": "ok"}

    @app.get("/events")
    def events() -> Any:
        _require_controller()
        try:
            since = int(request.args.get("since", "0"))
            wait = float(request.args.get("wait", "0"))
        except ValueError as exc:
            raise InvalidRequest("since must be an integer and wait a number") from exc
        return toolbox.events.read(since, wait).dump()


def _add_app_routes(app: Flask, registry: AppRegistry, toolbox: ExecutorToolbox) -> None:
    """The apps the controller registers, and the tools each sees (`/tools`)."""

    @app.put("/apps/<app_id>")
    def register_app(app_id: str) -> Any:
        _require_controller()
        registration = read_json(AppRegistration)
        if registration.app_id != app_id:
            raise InvalidRequest(
                f"body app_id {registration.app_id!r} differs from the URL"
            )
        record = AppRecord.from_registration(registration)
        if record.user_id != OWNER:  # a process serving another user works in theirs
            workdir = toolbox.user_workdir(record.user_id, app_id)
            record = replace(record, workdir=workdir)
        registry.register(record)
        toolbox.sync_app(app_id)
        # the app's listing as `GET /tools?app_id=` gives it: the controller's first
        # call of the app needs it, and need not ask again
        return {"status": "ok", "tools": _listing(toolbox, app_id)}

    @app.delete("/apps/<app_id>")
    def unregister_app(app_id: str) -> Any:
        _require_controller()
        user = request.args.get("user_id") or OWNER
        if registry.unregister(app_id, check_user_id(user, field="user_id")) is None:
            raise NotFound(f"app {app_id!r} is not registered for {user!r}")
        toolbox.sync_app(app_id)
        # the background processes that app process started, none of another's
        stopped = toolbox.processes.stop_app(
            app_id if user == OWNER else f"{app_id}@{user}"
        )
        return {"status": "ok", "stopped_processes": stopped}

    @app.get("/tools")
    def list_tools() -> Any:
        """The one listing (`ToolSource.listing`): every entry a `ToolInfo`, the
        state of each provider behind it (a failed one says why) and `prompt`, the
        providers' prompt texts for an agent's system prompt — all as the user the
        query names sees them (`user_id`; an app's process sees its own user's; none:
        the owner), and `prompts`, the same texts by provider id."""
        named = request.args.get("app_id")
        user = request.args.get("user_id") or OWNER
        app_id = ""  # (an app's own process may name only its own user)
        if named or not _is_controller():
            record = _caller_app(registry, toolbox, named, request.args.get("user_id"))
            app_id, user = record.app_id, record.user_id
        elif user != OWNER:
            user = check_user_id(user, field="user_id")
        return _listing(toolbox, app_id, user)


def _add_tool_routes(
    app: Flask, registry: AppRegistry, toolbox: ExecutorToolbox, slots: _Slots
) -> None:
    """Tool work: one call (`/call`), a step plan (`/run`), and an agent loop's turn
    beginning (`/turns`)."""

    @app.post("/call")
    def call_tool() -> Any:
        call = read_json(ToolCall)
        record = _caller_app(registry, toolbox, call.app_id, call.user_id)
        with slots.taken(record.app_id):
            turn_id = (call.model_extra or {}).get("turn_id")
            result = toolbox.call(
                record, call.tool, call.args, call.session_id, turn_id=_turn(turn_id)
            )
        return _result_json(result)

    @app.post("/turns")
    def start_turn() -> Any:
        turn = read_json(TurnStart)
        record = _caller_app(registry, toolbox, turn.app_id, turn.user_id)
        scopes = toolbox.skill_scopes
        if turn.parent_turn_id is None:
            scopes.new_turn(record.app_id, turn.session_id, turn.turn_id)
        elif not scopes.fork(
            record.app_id,
            turn.session_id,
            turn.parent_turn_id,
            turn.turn_id,
            lasting=True,
        ):
            raise InvalidRequest(
                "turn_id must be parent_turn_id, a dot and 16 hex digits, of a turn "
                "known here"
            )
        return {"status": "ok"}

    @app.post("/run")
    def run_steps() -> Any:
        plan = read_json(RunRequest)
        record = _caller_app(registry, toolbox, plan.app_id, plan.user_id)
        if len(plan.steps) > MAX_STEPS:
            raise InvalidRequest(f"at most {MAX_STEPS} steps per plan")
        seen: set[int] = set()
        for step in plan.steps:
            if step.step_id in seen:
                raise InvalidRequest(f"duplicate step_id {step.step_id}")
            seen.add(step.step_id)
        if plan.approved_commands and _is_controller():
            # the user allowed these programs for this one plan (controller/permissions/policy.py)
            extra = tuple(c for c in plan.approved_commands if c and "/" not in c)
            record = replace(record, shell_whitelist=(*record.shell_whitelist, *extra))
        with slots.taken(record.app_id):
            turn_id = _turn((plan.model_extra or {}).get("turn_id"))
            results = toolbox.run(record, plan.steps, plan.session_id, turn_id)
        return {"tool_results": {key: _result_json(r) for key, r in results.items()}}


def _add_process_routes(
    app: Flask, registry: AppRegistry, toolbox: ExecutorToolbox
) -> None:
    """The background processes the tools started: listed, and stopped one by one."""

    @app.get("/processes")
    def list_processes() -> Any:
        named = request.args.get("app_id")
        if _is_controller() and not named:
            return {"app_id": None, "processes": toolbox.processes.list(None)}
        if _is_controller():  # every process of the app's, whichever user it serves
            app_id = _listed_app(registry, named)
            return {
                "app_id": app_id,
                "processes": toolbox.processes.list(app_id, whole_app=True),
            }
        caller = _caller_app(registry, toolbox, None, None)
        return {
            "app_id": caller.app_id,
            "processes": toolbox.processes.list(caller.identity),
        }

    @app.delete("/processes/<pid_text>")
    def stop_process(pid_text: str) -> Any:
        if not pid_text.isdigit():
            raise NotFound(f"no route /processes/{pid_text}")
        pid = int(pid_text)
        owner = toolbox.processes.owner(pid)
        caller = None if _is_controller() else registry.by_identity(g.identity)
        if owner is None or not (_is_controller() or (caller and owner == caller.identity)):
            raise NotFound(f"no background process {pid}")
        stopped = toolbox.processes.stop(pid)
        return {"status": "ok", "process": stopped}
