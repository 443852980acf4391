"""`/v1/sandbox/schedules`: a `/v1` user's own scheduled jobs, with their own key.

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
  step resumed (or was refused).

Another user's job or question is a 404, as if it did not exist. Errors have OpenAI's shape
(the `/v1` blueprint's handler).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, request

from aios_protocol.messages import ConfirmationDecision, ScheduleJob, ScheduleJobPatch
from aios_runtime.edge import public, read_json
from controller.instructions import Instructions
from scheduler.scheduler import Scheduler

__all__ = ["add_sandbox_routes"]

ActingUser = Callable[[str | None, str], str]


def add_sandbox_routes(
    routes: Blueprint,
    scheduler: Scheduler | None,
    instructions: Instructions,
    acting_user: ActingUser,
) -> None:
    """Add the routes above to the `/v1` blueprint `routes` (the schedules only with
    a `scheduler`)."""

    def user() -> str:
        header = request.headers.get("X-AIOS-User-Id")
        if header:
            return acting_user(header, "X-AIOS-User-Id")
        return acting_user(request.args.get("user") or None, "user")

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

    if scheduler is None:
        return

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
