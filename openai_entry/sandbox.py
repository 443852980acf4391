"""`/v1/sandbox/…`: a `/v1` user's own jobs, questions and settings, with their key.

The routes of the desktop's `/api/schedules`, for the user a `/v1` request acts for
(`acting_user`: the `X-AIOS-User-Id` header or `?user=`, else the key's own user,
refused with 403 `user_not_allowed` when the key is bound to others):

- `GET /v1/sandbox/schedules` → `{"jobs": [...]}` (that user's only);
- `POST /v1/sandbox/schedules` `ScheduleJob` → 201 the job, which belongs to that
  user and runs in their sandbox (a `user_id` in the body is not taken);
- `PATCH /v1/sandbox/schedules/<id>` `ScheduleJobPatch` → the job;
- `DELETE /v1/sandbox/schedules/<id>` → `{"status": "ok"}`;
- `POST /v1/sandbox/schedules/<id>/run` → 202 `{"run_id", "job"}`;
- `GET /v1/sandbox/schedules/<id>/runs` → `{"runs": [...]}` newest first;
- `GET /v1/sandbox/confirmations` → `{"confirmations": [...]}`: what waits for that
  user's yes (a paused risky step of one of their conversations, a risky job);
- `POST /v1/sandbox/confirmations/<id>` `{"decision"}` → the app's reply once the
  step resumed (or was refused);
- `GET /v1/sandbox/settings` → `{"llm": {...}}`: the model settings that user saved
  for themselves, the API key masked; `PUT /v1/sandbox/settings` `{"llm":
  {"api_key", "base_url", "model"}}` sets them (an empty string removes one) and
  answers as GET (`controller.user_settings`). The owner's settings are the
  desktop's: a PUT for the owner is refused;
- `GET /v1/sandbox/files/<app_id>/<path>` → that user's file of that app's
  workspace (`<state_dir>/users/<user_id>/workspaces/<app_id>/<path>`): where a
  `media` or `image` link in a `/v1` answer points for them (404 when there is none,
  403 `path_outside_workdir` for a path that leaves the workspace).

Another user's job or question is a 404, as if it did not exist. Errors have OpenAI's shape
(the `/v1` blueprint's handler).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, request, send_file

from aios_protocol.errors import InvalidRequest, NotFound
from aios_protocol.messages import ConfirmationDecision, ScheduleJob, ScheduleJobPatch
from aios_runtime.edge import public, read_json
from aios_runtime.users import check_user_id, user_app_workdir
from aios_runtime.workdir import resolve_in_workdir
from controller.instructions import Instructions
from controller.user_settings import UserSettings
from scheduler.scheduler import Scheduler

__all__ = ["add_sandbox_routes"]

ActingUser = Callable[[str | None, str], str]


def add_sandbox_routes(
    routes: Blueprint,
    scheduler: Scheduler | None,
    instructions: Instructions,
    acting_user: ActingUser,
    *,
    user_settings: UserSettings | None = None,
    state_root: Path | None = None,
) -> None:
    """Add the routes above to the `/v1` blueprint `routes` (the schedules only with
    a `scheduler`, the settings only with `user_settings`)."""

    def user() -> str:
        header = request.headers.get("X-AIOS-User-Id")
        if header:
            return acting_user(header, "X-AIOS-User-Id")
        return acting_user(request.args.get("user") or None, "user")

    _add_confirmation_routes(routes, instructions, user)
    if state_root is not None:
        _add_file_routes(routes, state_root, user)
    if user_settings is not None:
        _add_settings_routes(routes, user_settings, user)
    if scheduler is not None:
        _add_schedule_routes(routes, scheduler, user)


def _add_confirmation_routes(
    routes: Blueprint, instructions: Instructions, user: Callable[[], str]
) -> None:
    @routes.get("/sandbox/confirmations")
    @public
    def questions() -> dict[str, Any]:
        return {"confirmations": instructions.questions(user())}

    @routes.post("/sandbox/confirmations/<confirmation_id>")
    @public
    def answer(confirmation_id: str) -> dict[str, Any]:
        owner = user()
        body = read_json(ConfirmationDecision)
        resumed = instructions.answer(confirmation_id, body.decision, owner)
        return {**resumed.reply.dump(), "app_id": resumed.app_id}


def _add_file_routes(routes: Blueprint, root: Path, user: Callable[[], str]) -> None:
    @routes.get("/sandbox/files/<app_id>/<path:path>")
    @public
    def user_file(app_id: str, path: str) -> Response:
        owner = user()
        workdir = user_app_workdir(root, owner, check_user_id(app_id, field="app_id"))
        if not workdir.is_dir():
            raise NotFound(f"no file {path!r} in the workspace of {app_id}")
        target = resolve_in_workdir(workdir.resolve(), path)
        if not target.is_file():
            raise NotFound(f"no file {path!r} in the workspace of {app_id}")
        return send_file(target, conditional=True, max_age=0)


def _add_settings_routes(
    routes: Blueprint, own: UserSettings, user: Callable[[], str]
) -> None:
    @routes.get("/sandbox/settings")
    @public
    def settings_shown() -> dict[str, Any]:
        return own.get(user())

    @routes.put("/sandbox/settings")
    @public
    def settings_set() -> dict[str, Any]:
        owner = user()
        body = request.get_json(silent=True)
        if not isinstance(body, dict):
            raise InvalidRequest("the body must be a JSON object")
        return own.put(owner, body)


def _add_schedule_routes(
    routes: Blueprint, scheduler: Scheduler, user: Callable[[], str]
) -> None:
    @routes.get("/sandbox/schedules")
    @public
    def list_jobs() -> dict[str, Any]:
        return {"jobs": scheduler.jobs(user=user())}

    @routes.post("/sandbox/schedules")
    @public
    def create_job() -> tuple[dict[str, Any], int]:
        owner = user()
        job = read_json(ScheduleJob)
        return scheduler.create(job, user=owner), 201

    @routes.patch("/sandbox/schedules/<job_id>")
    @public
    def update_job(job_id: str) -> dict[str, Any]:
        owner = user()
        return scheduler.update(job_id, read_json(ScheduleJobPatch), user=owner)

    @routes.delete("/sandbox/schedules/<job_id>")
    @public
    def delete_job(job_id: str) -> dict[str, Any]:
        scheduler.delete(job_id, user=user())
        return {"status": "ok"}

    @routes.post("/sandbox/schedules/<job_id>/run")
    @public
    def run_job(job_id: str) -> tuple[dict[str, Any], int]:
        return scheduler.run_now(job_id, user=user()), 202

    @routes.get("/sandbox/schedules/<job_id>/runs")
    @public
    def job_runs(job_id: str) -> dict[str, Any]:
        limit = min(max(request.args.get("limit", 50, type=int) or 50, 1), 200)
        return {"runs": scheduler.runs(job_id, limit=limit, user=user())}
