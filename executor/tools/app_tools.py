"""Custom tools: an app's `@tool` methods, run by calling the app back.

The executor POSTs `{"args": {...}}` to `<app url>/tools/<name>` with that app's
own token and expects `{"status": "ok", "result": ...}` or the error shape
`{"status": "error", "error": {"code", "message"}}`. The app's URL comes from the
controller's registration (loopback), so no SSRF check applies; the tool's
timeout does. A call acting for another user than the owner also sends `user_id` and
that user's grant (`user_grant`, the executor's proof for this app and user): the app
runs the tool within that user's scope, so whatever it asks the executor in turn
works in that user's sandbox, and the SDK keeps the owner's workspace (all the app's
own process sees) out of its reach meanwhile (`AIOSAgent.workdir` is None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from aios_protocol.errors import AiosError, AppUnreachable, BadAppReply, ToolTimeout
from aios_runtime.json_client import PeerTimeout, request_json
from aios_runtime.users import OWNER

if TYPE_CHECKING:
    from executor.registry import AppRecord

__all__ = ["call_custom_tool", "post_for_result"]

_MAX_REPLY = 10 << 20


def call_custom_tool(
    app: AppRecord,
    name: str,
    args: dict[str, Any],
    timeout: float,
    grant_for: Callable[[str, str], str],
) -> Any:
    """Run the app's tool `name` within `timeout` seconds; its `result`, or its error.
    `grant_for(app_id, user_id)` is the grant sent for a user other than the owner."""
    body: dict[str, Any] = {"args": args}
    if app.user_id != OWNER:
        body["user_id"] = app.user_id
        body["user_grant"] = grant_for(app.app_id, app.user_id)
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
