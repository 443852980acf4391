"""Custom tools (S-62, S-72): an app's `@tool` methods, run by calling the app back.

The executor POSTs `{"args": {...}}` to `<app url>/tools/<name>` with that app's
own token and expects `{"status": "ok", "result": ...}` or the error shape
`{"status": "error", "error": {"code", "message"}}`. The app's URL comes from the
controller's registration (loopback), so no SSRF check applies; the tool's
timeout does.
"""

from __future__ import annotations

import http.client
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from aios_runtime.edge import TOKEN_HEADER
from aios_sdk.errors import AiosError, AppUnreachable, BadAppReply, ToolTimeout

if TYPE_CHECKING:
    from executor.registry import AppRecord

__all__ = ["call_custom_tool"]

_MAX_REPLY = 10 << 20


def call_custom_tool(
    app: AppRecord, name: str, args: dict[str, Any], timeout: float
) -> Any:
    """Run the app's tool `name` within `timeout` seconds; its `result`, or its error."""
    if not app.url:
        raise AppUnreachable(f"{app.app_id} registered no URL for its custom tools")
    parts = urlsplit(app.url)
    if parts.scheme != "http" or not parts.hostname:
        raise AppUnreachable(f"app URL {app.url!r} is not http://host:port")
    payload = json.dumps({"args": args}, ensure_ascii=False).encode("utf-8")
    path = f"{parts.path.rstrip('/')}/tools/{quote(name, safe='')}"
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        conn.request(
            "POST",
            path,
            body=payload,
            headers={"Content-Type": "application/json", TOKEN_HEADER: app.token},
        )
        response = conn.getresponse()
        raw = response.read(_MAX_REPLY + 1)
    except TimeoutError as exc:
        raise ToolTimeout(f"custom tool {name} took longer than {timeout:g}s") from exc
    except (OSError, http.client.HTTPException) as exc:
        raise AppUnreachable(f"{app.app_id} unreachable for tool {name}: {exc}") from exc
    finally:
        conn.close()
    try:
        reply = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadAppReply(
            f"tool {name}: HTTP {response.status}, not a JSON answer"
        ) from exc
    if not isinstance(reply, dict):
        raise BadAppReply(f"tool {name}: answer is not an object")
    if reply.get("status") == "ok" and response.status < 400:
        return reply.get("result")
    error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
    raise AiosError(
        str(error.get("message") or f"tool {name} failed (HTTP {response.status})"),
        code=str(error.get("code") or "tool_failed"),
    )
