"""The scheduler's HTTP routes: the desktop's `/api/schedules…` and the apps' tool route.

`schedules_blueprint(scheduler)` serves, with the desktop's token (the user), the
owner's jobs — another user's job and its runs are theirs alone (`/v1/sandbox/
schedules` with their key), a 404 here as if it did not exist:

- `GET /api/schedules` → `{"jobs": [job + state…], "problems": [...]}` (`problems`
  names every scheduler file found corrupt and set aside);
- `POST /api/schedules` `ScheduleJob` → 201 the job with its `next_run_at`;
- `PATCH /api/schedules/<id>` `ScheduleJobPatch` → the job (`{"enabled": true}` is
  also the user's yes to a job that waits for one);
- `DELETE /api/schedules/<id>` → `{"status": "ok"}` (its runs go too);
- `POST /api/schedules/<id>/run` → 202 `{"run_id", "job"}` (409 while it runs);
- `GET /api/schedules/<id>/runs` → `{"runs": [ScheduleRun…]}` newest first;

and, with an app's own token only, `POST /api/tools/schedule` `ScheduleToolCall` →
`{"status": "ok", "result": …}`: the executor's `schedule` tool forwards there with
the calling app process's token, so the identity is the app (its own jobs only) and
the token also says the user that process serves (`user_for_token`; that user's jobs
only; the app's own process: the owner's). A `user_id` in the body that is not the
token's user is refused.
Bodies are validated with the protocol models: a malformed job is a 400 naming the
field. `allow_app_tokens_for_schedule` lets app tokens reach the tool route and no
other route.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, g, request

from aios_protocol.errors import Forbidden, InvalidRequest, UserNotAllowed
from aios_protocol.messages import ScheduleJob, ScheduleJobPatch, ScheduleToolCall, parse
from aios_runtime.edge import TOKEN_HEADER, Authenticator, read_json
from aios_runtime.users import OWNER, check_user_id
from scheduler.scheduler import Scheduler

__all__ = ["SCHEDULE_TOOL_ROUTE", "allow_app_tokens_for_schedule", "schedules_blueprint"]

SCHEDULE_TOOL_ROUTE = "/api/tools/schedule"
_USER = "controller"  # the identity of the desktop's token (aios_runtime.edge)


def allow_app_tokens_for_schedule(
    inner: Authenticator, app_for_token: Callable[[str], str | None]
) -> Authenticator:
    """`inner`, plus app tokens (identity = the app id) on the tool route only."""

    def authenticate(presented: str) -> str | None:
        identity = inner(presented)
        if identity is not None:
            return identity
        if request.method == "POST" and request.path == SCHEDULE_TOOL_ROUTE:
            return app_for_token(presented)
        return None

    return authenticate


def _user_only() -> None:
    if g.get("identity") != _USER:
        raise Forbidden("only the desktop's token may use /api/schedules")


def run_tool(
    scheduler: Scheduler, app_id: str, call: ScheduleToolCall, user: str = OWNER
) -> Any:
    """One `schedule` tool call of `app_id` for `user` (their jobs of that app)."""
    if call.action == "create":
        if call.job is None:
            raise InvalidRequest("job is required for action create")
        body = {**call.job, "app_id": app_id}
        body.pop("user_id", None)
        return scheduler.create(parse(ScheduleJob, body), caller=app_id, user=user)
    if call.action == "list":
        return {"jobs": scheduler.jobs(caller=app_id, user=user)}
    if call.job_id is None:
        raise InvalidRequest(f"job_id is required for action {call.action}")
    if call.action == "cancel":
        scheduler.delete(call.job_id, caller=app_id, user=user)
        return {"cancelled": call.job_id}
    if call.action == "update":
        patch = parse(ScheduleJobPatch, call.changes or {})
        return scheduler.update(call.job_id, patch, caller=app_id, user=user)
    if call.action == "run":
        return scheduler.run_now(call.job_id, caller=app_id, user=user)
    return {"runs": scheduler.runs(call.job_id, caller=app_id, user=user)}


def schedules_blueprint(
    scheduler: Scheduler,
    user_for_token: Callable[[str], str] = lambda token: OWNER,
) -> Blueprint:
    """The routes above; `user_for_token(token)` is the user the app process holding
    `token` serves."""
    blueprint = Blueprint("schedules", __name__)

    @blueprint.get("/api/schedules")
    def list_jobs() -> dict[str, Any]:
        _user_only()
        return {"jobs": scheduler.jobs(user=OWNER), "problems": scheduler.problems}

    @blueprint.post("/api/schedules")
    def create_job() -> tuple[dict[str, Any], int]:
        _user_only()
        return scheduler.create(read_json(ScheduleJob), user=OWNER), 201  # the owner's

    @blueprint.patch("/api/schedules/<job_id>")
    def update_job(job_id: str) -> dict[str, Any]:
        _user_only()
        return scheduler.update(job_id, read_json(ScheduleJobPatch), user=OWNER)

    @blueprint.delete("/api/schedules/<job_id>")
    def delete_job(job_id: str) -> dict[str, Any]:
        _user_only()
        scheduler.delete(job_id, user=OWNER)
        return {"status": "ok"}

    @blueprint.post("/api/schedules/<job_id>/run")
    def run_job(job_id: str) -> tuple[dict[str, Any], int]:
        _user_only()
        return scheduler.run_now(job_id, user=OWNER), 202

    @blueprint.get("/api/schedules/<job_id>/runs")
    def job_runs(job_id: str) -> dict[str, Any]:
        _user_only()
        limit = min(max(request.args.get("limit", 50, type=int) or 50, 1), 200)
        return {"runs": scheduler.runs(job_id, limit=limit, user=OWNER)}

    @blueprint.post(SCHEDULE_TOOL_ROUTE)
    def schedule_tool() -> dict[str, Any]:
        app_id = g.get("identity")
        if not app_id or app_id == _USER:
            raise Forbidden("the schedule tool is for apps (their own token)")
        call = read_json(ScheduleToolCall)
        user = user_for_token(request.headers.get(TOKEN_HEADER, ""))
        named = check_user_id(call.user_id, field="user_id") if call.user_id else OWNER
        if named != user:
            raise UserNotAllowed(f"{app_id} serves {user!r} and may not act for {named!r}")
        return {"status": "ok", "result": run_tool(scheduler, app_id, call, user)}

    return blueprint
