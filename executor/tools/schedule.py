"""The `schedule` tool (its schema is in `catalog.py`): an app creates, lists, changes and cancels its own scheduled jobs.

The jobs live in the controller (`controller/scheduler/`), which runs them; this
tool forwards the call to the controller's `POST /api/tools/schedule` with the
calling app's own token, so the controller knows the app from the token alone and
lets it touch only its own jobs. The controller's address is `$AIOS_CONTROLLER_URL`
(set by the controller when it starts the executor); without it the tool fails
with `controller_unreachable`.
"""

from __future__ import annotations

import http.client
import json
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from aios_runtime.edge import TOKEN_HEADER
from aios_sdk.errors import AiosError, ToolTimeout

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["ControllerUnreachable", "schedule"]

ROUTE = "/api/tools/schedule"
_MAX_REPLY = 4 << 20


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
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=ctx.timeout)
    try:
        conn.request(
            "POST",
            ROUTE,
            body=payload,
            headers={"Content-Type": "application/json", TOKEN_HEADER: ctx.app.token},
        )
        response = conn.getresponse()
        raw = response.read(_MAX_REPLY + 1)
    except TimeoutError as exc:
        raise ToolTimeout(f"schedule took longer than {ctx.timeout:g}s") from exc
    except (OSError, http.client.HTTPException) as exc:
        raise ControllerUnreachable(f"controller unreachable: {exc}") from exc
    finally:
        conn.close()
    try:
        reply = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ControllerUnreachable(f"HTTP {response.status}, not a JSON answer") from exc
    if isinstance(reply, dict) and reply.get("status") == "ok" and response.status < 400:
        return reply.get("result")
    error = reply.get("error") if isinstance(reply, dict) else None
    error = error if isinstance(error, dict) else {}
    raise AiosError(
        str(error.get("message") or f"schedule failed (HTTP {response.status})"),
        code=str(error.get("code") or "tool_failed"),
    )
