"""Custom tools: an app's `@tool` methods, run by calling the app back.

The executor POSTs `{"args": {...}}` to `<app url>/tools/<name>` with that app's
own token and expects `{"status": "ok", "result": ...}` or the error shape
`{"status": "error", "error": {"code", "message"}}`. The app's URL comes from the
controller's registration (loopback), so no SSRF check applies; the tool's
timeout does. A call acting for a user other than the owner goes to the process of
the app that serves that user alone (the record's URL and token are that process's):
its workdir is that user's, and whatever it asks the executor in turn works there.
When no such process is registered the call fails with `app_unavailable`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from aios_protocol.errors import (
    AiosError,
    AppUnavailable,
    AppUnreachable,
    BadAppReply,
    ToolTimeout,
)
from aios_runtime.json_client import PeerTimeout, request_json

if TYPE_CHECKING:
    from executor.registry import AppRecord

__all__ = ["call_custom_tool", "post_for_result"]

_MAX_REPLY = 10 << 20


def call_custom_tool(
    app: AppRecord,
    name: str,
    args: dict[str, Any],
    timeout: float,
) -> Any:
    """Run the app's tool `name` within `timeout` seconds; its `result`, or its error."""
    body: dict[str, Any] = {"args": args}
    if not app.token:  # the controller asked for a user no process of the app serves
        raise AppUnavailable(
            f"{app.app_id} does not run for user {app.user_id!r} now",
            placeholders={"app": app.app_id},
        )
    if not app.url:
        raise AppUnreachable(f"{app.app_id} registered no URL for its custom tools")
    parts = urlsplit(app.url)
    if parts.scheme != "http" or not parts.hostname:
        raise AppUnreachable(f"app URL {app.url!r} is not http://host:port")
    url = f"{app.url.rstrip('/')}/tools/{quote(name, safe='')}"
    return post_for_result(url, body, app.token, timeout, f"tool {name}")


def post_for_result(
    url: str, body: dict[str, Any], token: str, timeout: float, what: str
) -> Any:
    """POST `body` to a loopback peer that answers `{"status": "ok", "result": …}` or
    the error shape; the `result`, or the peer's error raised with its code.
    `ToolTimeout` when it is late, `AppUnreachable` when nothing answers."""
    try:
        answer = request_json(
            "POST", url, body, token=token, timeout=timeout, what=what, max_bytes=_MAX_REPLY
        )
    except PeerTimeout as exc:
        raise ToolTimeout(f"{what} took longer than {timeout:g}s") from exc
    reply = answer.body
    if not isinstance(reply, dict):
        raise BadAppReply(f"{what}: HTTP {answer.status}, not a JSON object")
    if reply.get("status") == "ok" and answer.status < 400:
        return reply.get("result")
    error = reply.get("error")
    error = error if isinstance(error, dict) else {}
    raise AiosError(
        str(error.get("message") or f"{what} failed (HTTP {answer.status})"),
        code=str(error.get("code") or "tool_failed"),
    )
