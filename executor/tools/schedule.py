"""The `schedule` tool (its schema is in `catalog.py`): an app creates, lists, changes and cancels its own scheduled jobs.

The jobs live in the controller (`scheduler/`), which runs them; this
tool forwards the call to the controller's `POST /api/tools/schedule` with the
calling app's own token, so the controller knows the app from the token alone and
lets it touch only its own jobs; a call for a user other than the owner is forwarded
with the token of the app's process serving that user, so the jobs are that user's.
The controller's address is `$AIOS_CONTROLLER_URL`
(set by the controller when it starts the executor); without it the tool fails
with `controller_unreachable`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from aios_protocol.errors import AiosError, AppUnreachable
from aios_runtime.users import OWNER
from executor.tools.app_tools import post_for_result

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["ControllerUnreachable", "schedule"]

ROUTE = "/api/tools/schedule"


class ControllerUnreachable(AiosError):
    code = "controller_unreachable"
    http_status = 502


def schedule(ctx: ToolContext, args: dict[str, Any]) -> Any:
    """Forward the call; the controller's `result`, or its error re-raised (same code)."""
    url = os.environ.get("AIOS_CONTROLLER_URL", "")
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ControllerUnreachable("the executor was not told the controller's address")
    body = {k: v for k, v in args.items() if k != "timeout" and v is not None}
    body.pop("user_id", None)  # never taken from the app's arguments
    app = ctx.app
    if app.user_id != OWNER:  # the jobs of the user this call serves
        if not app.token:
            raise ControllerUnreachable(
                f"{app.app_id} does not run for user {app.user_id!r} now"
            )
        # the controller checks it against the token of the process serving them
        body["user_id"] = app.user_id
    try:
        return post_for_result(
            url.rstrip("/") + ROUTE, body, ctx.app.token, ctx.timeout, "schedule"
        )
    except AppUnreachable as exc:
        raise ControllerUnreachable(f"controller unreachable: {exc.message}") from exc
