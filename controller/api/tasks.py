"""The desktop's cancel routes: stop an app's running work (controller/pipeline/cancel.py).

`tasks_blueprint(cancels)` serves

- `POST /api/tasks/<task_id>/cancel` with `{"session_id": …, "app_id": …}` — the
  instruction task `task_id` (the id the `task_started` event carried) of that
  session (and app, when given): a plan's task ids repeat across instructions and
  sessions, so the id alone names no one work;
- `POST /api/apps/<app_id>/cancel` with `{"session_id": …}` — what the app is doing
  for that session (opening its window, answering an action);

both answer `{"status": "ok", "cancelled": n}`: how many running works were told to
stop (0 when the work had already ended). The cancelled work ends with the error
reply `cancelled`, which reaches the desktop as the answer to its request.
Token-protected by the controller's guard, like every route under /api/.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from aios_protocol.messages import OpenRequest, TaskCancelRequest
from aios_runtime.edge import read_json
from controller.pipeline.cancel import TaskCancels

__all__ = ["tasks_blueprint"]


def tasks_blueprint(cancels: TaskCancels) -> Blueprint:
    routes = Blueprint("tasks", __name__)

    @routes.post("/api/tasks/<task_id>/cancel")
    def cancel_task(task_id: str) -> Response:
        body = read_json(TaskCancelRequest)
        cancelled = cancels.cancel_task(task_id, body.session_id, body.app_id)
        return jsonify({"status": "ok", "cancelled": cancelled})

    @routes.post("/api/apps/<app_id>/cancel")
    def cancel_app(app_id: str) -> Response:
        body = read_json(OpenRequest)  # {"session_id": …}, nothing else
        return jsonify(
            {"status": "ok", "cancelled": cancels.cancel_app(app_id, body.session_id)}
        )

    return routes
