"""The controller's pipeline.

instruction → router plan → tasks (independent ones in parallel, dependent ones
after what they wait for) → per task the steps loop of docs/ARCHITECTURE.md →
`InstructionResponse`. Opening an app (empty instruction) and forwarding an
action run the same steps loop. Every failure on the way becomes an
`AppReply.error` for that task only; nothing here raises to the HTTP layer except a
bad request (unknown app, malformed session id).

The pipeline talks to the outside world only through the small interfaces below
(`AppDirectory`, `run_steps`), so tests drive it with plain callables. Each request
reads and changes its session through one `SessionEdit` (`SessionStore.edit`), which
records the changes and saves them when the request is done.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from pydantic import TypeAdapter

from aios_protocol.errors import (
    AiosError,
    AppUnavailable,
    BadAppReply,
    InvalidRequest,
    NotFound,
)
from aios_protocol.messages import (
    ActionPost,
    ActionRequest,
    AppReply,
    HandleRequest,
    InstructionRequest,
    InstructionResponse,
    Step,
    Task,
    parse,
)
from aios_protocol.strings import user_message
from aios_runtime.users import OWNER
from controller.events import EventBus
from controller.permissions.confirmations import (
    ConfirmationGate,
    PendingConfirmation,
    denied_results,
)
from controller.permissions.policy import PermissionPolicy, Review
from controller.pipeline.actions import action_request_for
from controller.pipeline.cancel import TaskCancels
from controller.pipeline.context import ContextBuilder, session_user, tr
from controller.pipeline.failures import app_name, failure_view
from controller.routing.router import (
    AppProfile,
    RoutePlan,
    Router,
    apps_message,
    no_match_message,
)
from controller.sessions import Session, SessionEdit, SessionStore
from controller.user_settings import serving_user

__all__ = [
    "AppDirectory",
    "AppTarget",
    "Pipeline",
    "PipelineLimits",
]

log = logging.getLogger("aios.controller.pipeline")


@dataclass
class AppTarget:
    """An app the pipeline can call now: what context needs and how to reach it."""

    app_id: str
    name: str
    role: str
    workdir: Path | None
    # POSTs a HandleRequest dict within `timeout` s; returns the raw reply dict
    call: Callable[[dict[str, Any], float], dict[str, Any]]


class AppDirectory(Protocol):
    def profiles(self) -> Sequence[AppProfile]:
        """The routable apps."""
        ...

    def target(self, app_id: str, user_id: str = OWNER) -> AppTarget:
        """The app ready to be called for `user_id` (another user than the owner: the
        app's process serving them alone); raises NotFound / AppUnavailable otherwise."""
        ...


@dataclass
class PipelineLimits:
    max_step_rounds: int = 3
    app_timeout: float = 60.0
    step_timeout: Callable[[str], float] = lambda tool: 30.0
    max_parallel: int = 4


class Pipeline:
    def __init__(
        self,
        *,
        router: Router,
        apps: AppDirectory,
        run_steps: Callable[[dict[str, Any], float], dict[str, Any]],
        contexts: ContextBuilder,
        sessions: SessionStore,
        events: EventBus,
        limits: Callable[[], PipelineLimits] | PipelineLimits,
        on_turn: Callable[[Session], None] | None = None,
        permissions: PermissionPolicy | None = None,
        confirmations: ConfirmationGate | None = None,
        cancels: TaskCancels | None = None,
    ):
        self.cancels = cancels if cancels is not None else TaskCancels()
        self._on_turn = on_turn
        # both set: risky steps pause for the user's decision (controller/permissions/policy.py)
        self._permissions = permissions if confirmations is not None else None
        self._confirmations = confirmations
        self._router = router
        self._apps = apps
        self._run_steps = run_steps
        self._contexts = contexts
        self._sessions = sessions
        self._events = events
        self._limits = limits

    @property
    def limits(self) -> PipelineLimits:
        return self._limits() if callable(self._limits) else self._limits

    # ------------------------------------------------------------ instructions

    def instruction(self, request: InstructionRequest) -> InstructionResponse:
        with self._sessions.edit(request.session_id) as edit:
            response = self._instruction(edit, request)
        if self._on_turn is not None:
            self._on_turn(edit.session)
        return response

    def _instruction(
        self, edit: SessionEdit, request: InstructionRequest
    ) -> InstructionResponse:
        self._keep_language(edit, request.language)
        language = self._contexts.language(edit)
        profiles = self._apps.profiles()
        failure = ""
        try:
            with serving_user(session_user(edit)):  # the model that routes is theirs
                plan = self._router.route(request.text, profiles)
        except Exception as exc:  # a router bug must not lose the user's request
            log.exception("router failed on %r", request.text)
            failed = type(exc).__name__
            failure = tr(
                language,
                f"无法理解这条指令（路由出错：{failed}）。",
                f"Routing this instruction failed ({failed}). ",
            )
            plan = RoutePlan(tasks=[], confidence=0.0)
        if not plan.tasks:
            # a router's reason is its own Chinese text: English readers get English
            reason = plan.reason if language == "zh-CN" else ""
            if failure:  # not that no app can do it: what the apps can do, to try again
                message = failure + apps_message(profiles, language)
            else:
                message = reason or no_match_message(profiles, language)
            self._record_turn(edit, "instruction", request.text, [], message, [])
            return InstructionResponse(
                session_id=edit.session_id,
                message=message,
                tasks=[],
                llm_calls=plan.llm_calls,
            )
        tasks = [
            Task(
                task_id=p.task_id,
                app_id=p.app_id,
                instruction=p.instruction,
                depends_on=[d for d in p.depends_on if d != p.task_id],
            )
            for p in plan.tasks
        ]
        self._run_tasks(tasks, edit, request.client_id)
        messages = [t.result.message for t in tasks if t.result and t.result.message]
        if plan.unclaimed:  # a part no app took is said, not dropped
            messages.append(
                tr(
                    language,
                    "没有应用能做：" + "、".join(plan.unclaimed),
                    "No installed app can do: " + "; ".join(plan.unclaimed),
                )
            )
        message = tr(language, "；", "; ").join(messages)
        self._record_turn(
            edit,
            "instruction",
            request.text,
            [t.app_id for t in tasks],
            message,
            [t.task_id for t in tasks],
            source=request.source,
        )
        return InstructionResponse(
            session_id=edit.session_id,
            message=message,
            tasks=tasks,
            llm_calls=plan.llm_calls,
        )

    def _run_tasks(
        self, tasks: list[Task], edit: SessionEdit, client_id: str | None = None
    ) -> None:
        """Run the plan's DAG: each wave of ready tasks in parallel threads."""
        by_id = {t.task_id: t for t in tasks}
        for task in tasks:
            task.depends_on = [d for d in task.depends_on if d in by_id]
        pending = list(tasks)
        while pending:
            ready = [
                t
                for t in pending
                if all(by_id[d].status in ("done", "error") for d in t.depends_on)
            ]
            if not ready:
                for task in pending:
                    task.status = "error"
                    task.result = AppReply.error(
                        "dependency_cycle",
                        user_message("dependency_cycle", self._contexts.language(edit)),
                    )
                return
            for task in ready:
                pending.remove(task)
            if len(ready) == 1:
                self._run_task(ready[0], by_id, edit, client_id)
                continue
            workers = min(len(ready), max(1, self.limits.max_parallel))
            with ThreadPoolExecutor(workers, thread_name_prefix="task") as pool:
                list(pool.map(lambda t: self._run_task(t, by_id, edit, client_id), ready))

    def _run_task(
        self,
        task: Task,
        by_id: dict[str, Task],
        edit: SessionEdit,
        client_id: str | None = None,
    ) -> None:
        failed = [d for d in task.depends_on if by_id[d].status in ("error", "skipped")]
        if failed:
            # the failure it waited for is what the user reads; this one is not shown
            task.status = "skipped"
            self._finish_task(edit, task, client_id)
            return
        task.status = "running"
        edit.start_task(
            {
                "task_id": task.task_id,
                "app_id": task.app_id,
                "instruction": task.instruction,
                "depends_on": list(task.depends_on),
                "status": "running",
            }
        )
        self._events.publish(
            "task_started",
            {
                "task_id": task.task_id,
                "instruction": task.instruction,
                "depends_on": task.depends_on,
                "client_id": client_id,  # the desktop that sent it (as in `task_done`)
            },
            app_id=task.app_id,
            session_id=edit.session_id,
        )
        upstream = [_upstream_entry(by_id[d]) for d in task.depends_on]
        reply = self.drive(
            task.app_id,
            edit,
            instruction=task.instruction,
            task_id=task.task_id,
            upstream=upstream or None,
        )
        task.result = reply
        # an `ok` reply with the notice `error` answered, but did not do what was asked
        done = reply.status == "ok" and reply.notice != "error"
        task.status = "done" if done else "error"
        self._finish_task(edit, task, client_id)

    def _finish_task(
        self, edit: SessionEdit, task: Task, client_id: str | None = None
    ) -> None:
        """Record the task in the session and publish `task_done` with its result
        (so a desktop shows results of instructions sent elsewhere: the CLI, voice)."""
        reply = task.result
        edit.finish_task(
            {
                "task_id": task.task_id,
                "app_id": task.app_id,
                "instruction": task.instruction,
                "depends_on": task.depends_on,
                "status": task.status,
                "view_type": reply.view_type if reply else None,
                "message": reply.message if reply else None,
                "time": round(time.time(), 3),
            }
        )
        self._events.publish(
            "task_done",
            {
                "task_id": task.task_id,
                "status": task.status,
                "view_type": reply.view_type if reply else None,
                "message": reply.message if reply else None,
                "result": reply.dump() if reply else None,
                "client_id": client_id,
            },
            app_id=task.app_id,
            session_id=edit.session_id,
        )

    # ------------------------------------------------------- open and actions

    def open_app(
        self, app_id: str, session_id: str | None, language: str | None = None
    ) -> tuple[AppReply, str]:
        """The app's initial view (empty instruction) after the steps loop."""
        with self._sessions.edit(session_id) as edit:
            self._keep_language(edit, language)
            self._check_known(app_id, session_user(edit))
            reply = self.drive(app_id, edit, instruction="")
            self._record_turn(edit, "open", "", [app_id], reply.message, [])
        return reply, edit.session_id

    def action(self, app_id: str, post: ActionPost) -> tuple[AppReply, str]:
        """Forward one triggered action; the app's next view."""
        with self._sessions.edit(post.session_id) as edit:
            self._keep_language(edit, post.language)
            self._check_known(app_id, session_user(edit))
            request = action_request_for(post, edit.session_id)
            reply = self.drive(app_id, edit, instruction=None, action_request=request)
            self._record_turn(
                edit, "action", post.action_id, [app_id], reply.message, [], app_id=app_id
            )
        return reply, edit.session_id

    def _keep_language(self, edit: SessionEdit, language: str | None) -> None:
        """The desktop's language, for this and later calls of the session's apps."""
        if language and edit.context.get("language") != language:
            edit.context["language"] = language

    def _check_known(self, app_id: str, user_id: str = OWNER) -> None:
        """Unknown app → NotFound (HTTP 404); an unavailable one gets an error view."""
        try:
            self._apps.target(app_id, user_id)
        except AppUnavailable:
            pass

    # -------------------------------------------------------- the steps loop

    def drive(
        self,
        app_id: str,
        edit: SessionEdit,
        *,
        instruction: str | None,
        action_request: ActionRequest | None = None,
        task_id: str | None = None,
        upstream: list[dict[str, Any]] | None = None,
        resume: tuple[PendingConfirmation, str] | None = None,
    ) -> AppReply:
        """Call the app, run its steps, call again… (docs/ARCHITECTURE.md).

        Never raises: any failure is the task's error view. Publishes `step_done`,
        `ui_commands` and `speak` events. `resume` continues a paused loop with the
        user's decision on its pending plan.
        """
        try:
            with self.cancels.running(edit.session_id, app_id, task_id):
                reply = self._steps_loop(
                    app_id, edit, instruction, action_request, task_id, upstream, resume
                )
        except Exception as exc:  # a bug here must not take other tasks down
            if not isinstance(exc, AiosError):
                log.exception("pipeline: %s failed", app_id)
            language = self._contexts.language(edit)
            name = app_name(self._apps.profiles(), app_id, language)
            reply = failure_view(exc, name, language)
        if reply.ui_commands:
            self._events.publish(
                "ui_commands",
                {
                    "task_id": task_id,
                    "commands": [c.model_dump(mode="json") for c in reply.ui_commands],
                },
                app_id=app_id,
                session_id=edit.session_id,
            )
        if reply.message:
            self._events.publish(
                "speak",
                {"text": reply.message, "task_id": task_id, "status": reply.status},
                app_id=app_id,
                session_id=edit.session_id,
            )
        return reply

    def _steps_loop(
        self,
        app_id: str,
        edit: SessionEdit,
        instruction: str | None,
        action_request: ActionRequest | None,
        task_id: str | None,
        upstream: list[dict[str, Any]] | None,
        resume: tuple[PendingConfirmation, str] | None = None,
    ) -> AppReply:
        limits = self.limits
        language = self._contexts.language(edit)
        target = self._apps.target(app_id, session_user(edit))
        shown_name = app_name(self._apps.profiles(), app_id, language)
        tool_results: dict[str, Any] | None = None
        last_plan: list[dict[str, Any]] | None = None
        rounds = 0
        if resume is not None:  # the paused round: run it as allowed, or deny it
            pending, decision = resume
            rounds, last_plan = pending.round, pending.plan
            if decision == "deny":
                tool_results = denied_results(pending.plan, pending.risky(), language)
            else:
                review = self._review(target, pending.plan, language, edit)
                tool_results = self._run_round(
                    app_id, edit, pending.plan, rounds, task_id, review
                )
        while True:
            reply = self._call_app(
                target, edit, instruction, action_request, tool_results, upstream, rounds
            )
            if not reply.steps:
                return reply
            plan = _steps_adapter().dump_python(reply.steps, mode="json")
            if rounds > 0 and (reply.view_type != "loading" or plan == last_plan):
                # final: only a still-working reply with a new plan runs again
                return reply.model_copy(update={"steps": []})
            if rounds >= limits.max_step_rounds:
                return AppReply.error(
                    "too_many_step_rounds",
                    user_message(
                        "too_many_step_rounds",
                        language,
                        app=shown_name,
                        rounds=limits.max_step_rounds,
                    ),
                )
            rounds += 1
            review = self._review(target, plan, language, edit)
            if review is not None and review.needs_confirmation:
                assert self._confirmations is not None
                return self._confirmations.pause(
                    app_id=app_id,
                    app_name=shown_name,
                    session_id=edit.session_id,
                    plan=plan,
                    risky=review.risky,
                    round_no=rounds,
                    task_id=task_id,
                    instruction=instruction,
                    action_request=action_request.dump() if action_request else None,
                    upstream=upstream,
                    language=language,
                    user_id=session_user(edit),
                )
            tool_results = self._run_round(app_id, edit, plan, rounds, task_id, review)
            last_plan = plan
            # it may have died meanwhile
            target = self._apps.target(app_id, session_user(edit))

    def _call_app(
        self,
        target: AppTarget,
        edit: SessionEdit,
        instruction: str | None,
        action_request: ActionRequest | None,
        tool_results: dict[str, Any] | None,
        upstream: list[dict[str, Any]] | None,
        rounds: int = 0,
    ) -> AppReply:
        language = self._contexts.language(edit)
        installed = [
            {"id": p.app_id, "name": p.name_in(language), "system_role": p.system_role}
            for p in self._apps.profiles()
        ]
        context = self._contexts.build(
            app_id=target.app_id,
            role=target.role,
            workdir=target.workdir,
            session=edit,
            tool_results=tool_results,
            upstream=upstream,
            step_round=rounds,
            installed_apps=installed,
        )
        request = HandleRequest(
            instruction=instruction, context=context, action_request=action_request
        )
        body = request.model_dump(mode="json", exclude_none=True)
        body["instruction"] = instruction  # null with an action, "" on open
        raw = self.cancels.guard(lambda: target.call(body, self.limits.app_timeout))
        try:
            reply = parse(AppReply, raw)
        except InvalidRequest as exc:
            raise BadAppReply(
                f"app {target.app_id} answered a reply outside the protocol: {exc.message}",
                detail=exc.message,
                placeholders={"app": target.name},
            ) from exc
        state = raw.get("state")
        if isinstance(state, dict) and state:
            edit.merge_agent_state(target.app_id, state)
        return reply

    def _run_round(
        self,
        app_id: str,
        edit: SessionEdit,
        plan: list[dict[str, Any]],
        round_no: int,
        task_id: str | None,
        review: Review | None = None,
    ) -> dict[str, Any]:
        """Forward the steps untouched (plus the user's `approved_commands`);
        the `tool_results` for the next call."""
        limits = self.limits
        budget = sum(limits.step_timeout(str(s.get("tool"))) for s in plan) + 10
        started = time.time()
        body: dict[str, Any] = {
            "steps": plan,
            "app_id": app_id,
            "session_id": edit.session_id,
        }
        user = session_user(edit)
        if user != OWNER:  # the steps work in that user's sandbox
            body["user_id"] = user
        if review is not None and review.outside_whitelist:
            body["approved_commands"] = sorted(set(review.outside_whitelist))
        response = self.cancels.guard(lambda: self._run_steps(body, budget))
        results = response.get("tool_results") if isinstance(response, dict) else None
        if not isinstance(results, dict):
            raise BadAppReply("the executor's answer has no 'tool_results'")
        if review is not None and self._permissions is not None and review.new_files:
            self._permissions.record_created(
                app_id, review.new_files, results, user=session_user(edit)
            )
        entries = []
        logged_at = round(started, 3)
        for step_key, result in results.items():
            result = result if isinstance(result, dict) else {}
            done = {  # the `step_done` event; the log entry adds when and which app
                "task_id": task_id,
                "round": round_no,
                "step": step_key,
                "tool": result.get("tool"),
                "status": result.get("status"),
                "duration_ms": result.get("duration_ms"),
            }
            if result.get("error"):
                done["error"] = str(result["error"])[:300]
            entries.append({"time": logged_at, "app_id": app_id, **done})
            self._events.publish(
                "step_done", done, app_id=app_id, session_id=edit.session_id
            )
        edit.log_tool_calls(entries)
        return results

    # ---------------------------------------------------------- confirmations

    def _review(
        self,
        target: AppTarget,
        plan: list[dict[str, Any]],
        language: str = "zh-CN",
        edit: SessionEdit | None = None,
    ) -> Review | None:
        """The policy's verdict on `plan`, judged in the sandbox of the session's user."""
        if self._permissions is None:
            return None
        user = session_user(edit)
        workdir = target.workdir
        sandboxes = self._contexts.sandboxes
        if user != OWNER and sandboxes is not None:
            workdir = sandboxes.workdir(user, target.app_id, workdir)
        return self._permissions.review(
            target.app_id, workdir, plan, language=language, user=user
        )

    def resume(self, confirmation_id: str, decision: str) -> tuple[AppReply, str, str]:
        """The user's answer to a paused step: run it (allow) or refuse it (deny), then
        continue that task's steps loop. Answers (final reply, app id, session id).

        An app that is not running now leaves the question pending (AppUnavailable).
        A question of a kind with a handler (`ConfirmationGate.on_decision`, e.g. a
        scheduled job's) is answered by that handler instead.
        """
        if self._confirmations is None:
            raise NotFound(f"no pending confirmation {confirmation_id!r}")
        asked = self._confirmations.get(confirmation_id)
        settle = self._confirmations.handler_for(asked.kind)
        if settle is None:
            self._apps.target(asked.app_id, asked.user_id)
        pending = self._confirmations.claim(confirmation_id, decision)
        if decision == "allow_always" and self._permissions is not None:
            self._permissions.remember(pending.app_id, pending.risky())
        if settle is not None:  # not a paused plan (a scheduled job's question)
            return settle(pending, decision), pending.app_id, pending.session_id
        request = (
            parse(ActionRequest, pending.action_request) if pending.action_request else None
        )
        with self._sessions.edit(pending.session_id) as edit:
            reply = self.drive(
                pending.app_id,
                edit,
                instruction=pending.instruction,
                action_request=request,
                task_id=pending.task_id,
                upstream=pending.upstream,
                resume=(pending, decision),
            )
            if pending.task_id:  # the paused task ends now
                task = Task(
                    task_id=pending.task_id,
                    app_id=pending.app_id,
                    status="done" if reply.status == "ok" else "error",
                    instruction=pending.instruction or "",
                    result=reply,
                )
                self._finish_task(edit, task)
            self._record_turn(
                edit,
                "confirm",
                decision,
                [pending.app_id],
                reply.message,
                [pending.task_id] if pending.task_id else [],
                confirmation_id=confirmation_id,
            )
        return reply, pending.app_id, edit.session_id

    # -------------------------------------------------------------- sessions

    def _record_turn(
        self,
        edit: SessionEdit,
        kind: str,
        text: str,
        apps: list[str],
        message: str | None,
        task_ids: list[str],
        **extra: Any,
    ) -> None:
        """The request's entry in the session's history; saved when its edit ends."""
        edit.add_turn(kind, text, apps=apps, message=message or "", tasks=task_ids, **extra)
        if apps:
            edit.context["last_app_id"] = apps[-1]
        if kind == "instruction":
            edit.context["last_instruction"] = text


@cache
def _steps_adapter() -> TypeAdapter[list[Step]]:
    """Dumps a reply's steps in one call (each `model_dump` costs a call of its own)."""
    return TypeAdapter(list[Step])


def _upstream_entry(task: Task) -> dict[str, Any]:
    reply = task.result
    entry: dict[str, Any] = {
        "task_id": task.task_id,
        "app_id": task.app_id,
        "instruction": task.instruction,
        "status": task.status,
    }
    if reply is not None:
        entry.update(view_type=reply.view_type, data=reply.data, message=reply.message)
    return entry
