"""The app side of the executor's HTTP API: one synchronous tool call.

`ExecutorClient.call` POSTs a `protocol.ToolCall` to `<executor>/call` with the app's
own token and returns the tool's `result`; `run` POSTs a step plan to `/run` (the
same confinement, consent checks and audit as a plan the controller sends) and
returns its `tool_results`; `tools` is the app's listing, `GET /tools`. Every way the call can fail — no executor
configured, executor unreachable, request refused, tool failed — raises
`aios_protocol.errors.ToolFailed` with a stable `code`, so an app needs one `except`.

It speaks HTTP through `aios_runtime.json_client` (one kept-alive connection pool
per executor, shared by the app's threads).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

from aios_protocol.errors import AiosError, AppUnreachable, BadAppReply, ToolFailed
from aios_protocol.messages import ToolCall, ToolResult, describe_validation_error
from aios_runtime.json_client import PeerTimeout, request_json

__all__ = ["ENV_EXECUTOR_URL", "ENV_TOKEN", "ExecutorClient", "client_from_env"]

log = logging.getLogger("aios.sdk.client")

ENV_EXECUTOR_URL = "AIOS_EXECUTOR_URL"
ENV_TOKEN = "AIOS_TOKEN"

NOT_CONNECTED = (
    "not connected to an executor — start the app through `aios start` "
    f"(the environment variables {ENV_EXECUTOR_URL} and {ENV_TOKEN} are not set)"
)


class ExecutorClient:
    """One executor's `/call`, authenticated as one app."""

    def __init__(self, url: str, token: str, *, timeout: float = 300.0):
        parts = urlsplit(url.strip())
        if parts.scheme != "http" or not parts.hostname:
            raise ToolFailed(
                f"{ENV_EXECUTOR_URL}={url!r} is not an http://host:port URL",
                code="not_connected",
            )
        self.url = url.strip().rstrip("/")
        self.token = token
        self.timeout = timeout

    def call(
        self,
        tool: str,
        args: Mapping[str, Any],
        *,
        app_id: str | None = None,
        session_id: str | None = None,
        turn_id: str | None = None,
        user_id: str | None = None,
    ) -> Any:
        """Run `tool` with `args` now; its `result`, or `ToolFailed` with a code.
        `turn_id` names the agent loop's request the call belongs to; `user_id` (from
        the call's context) the user served, which must be the one this app process
        serves (`user_not_allowed` otherwise)."""
        started = time.monotonic()
        try:
            body = ToolCall(
                tool=tool,
                args=dict(args),
                app_id=app_id,
                session_id=session_id or None,
                user_id=user_id or None,
            ).dump()
            if turn_id:
                body["turn_id"] = turn_id
            payload = self._request("POST", "/call", body, tool)
        except (TypeError, ValueError) as exc:
            raise ToolFailed(
                f"{tool}: arguments are not JSON ({exc})", code="invalid_args"
            ) from exc
        elapsed_ms = (time.monotonic() - started) * 1000
        if payload is None:
            raise ToolFailed(
                f"{tool}: the executor answered with a body that is not JSON",
                code="bad_executor_reply",
            )
        result = _tool_result(payload, tool)
        log.debug("call_tool %s → %s in %.1f ms", tool, result.status, elapsed_ms)
        if result.status != "ok":
            raise ToolFailed(
                f"{tool}: {result.error or 'failed'}",
                code=result.code or "tool_failed",
                detail=result.result,
            )
        return result.result

    def start_turn(
        self,
        turn_id: str,
        *,
        parent_turn_id: str | None = None,
        app_id: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> None:
        """Tell the executor an agent loop's turn begins: the user's next request
        (the skills' holds of the ones before end), or, with `parent_turn_id`, a
        background sub-agent's turn, held to its parent's limits."""
        body = {
            "turn_id": turn_id,
            "parent_turn_id": parent_turn_id,
            "app_id": app_id,
            "session_id": session_id or None,
            "user_id": user_id or None,
        }
        self._request("POST", "/turns", body, "turns")

    def run(
        self,
        steps: list[dict[str, Any]],
        *,
        app_id: str | None = None,
        session_id: str | None = None,
        turn_id: str | None = None,
        user_id: str | None = None,
    ) -> dict[str, Any]:
        """Run a step plan now; its `tool_results` (`step_<id>` → a `ToolResult`
        dict), or `ToolFailed` when the executor refused the plan or is unreachable.
        `user_id` names the user served, as for `call`."""
        body: dict[str, Any] = {
            "steps": steps,
            "app_id": app_id,
            "session_id": session_id or None,
            "user_id": user_id or None,
        }
        if turn_id:
            body["turn_id"] = turn_id
        payload = self._request("POST", "/run", body, "run")
        results = payload.get("tool_results") if isinstance(payload, dict) else None
        if not isinstance(results, dict):
            raise ToolFailed(
                "run: the executor's answer has no tool_results", code="bad_executor_reply"
            )
        return results

    def tools(self, app_id: str | None = None) -> list[dict[str, Any]]:
        """This app's tool listing (`ToolInfo` dicts, the unavailable ones too)."""
        return self.listing(app_id)[0]

    def listing(
        self, app_id: str | None = None, *, user_id: str | None = None
    ) -> tuple[list[dict[str, Any]], str]:
        """This app's tools (as `tools`) and what their providers tell a model about
        them (`prompt`, maybe empty), as the user served sees them (an app's process
        sees its own user's; the controller names `user_id`, none: the owner)."""
        query = {
            key: value for key, value in (("app_id", app_id), ("user_id", user_id)) if value
        }
        path = "/tools" + (f"?{urlencode(query)}" if query else "")
        payload = self._request("GET", path, None, "tools")
        body = payload if isinstance(payload, dict) else {}
        listing = body.get("tools")
        tools = [dict(e) for e in listing or [] if isinstance(e, dict)]
        return tools, str(body.get("prompt") or "")

    def _request(self, method: str, path: str, body: Any, what: str) -> Any:
        try:
            answer = request_json(
                method,
                self.url + path,
                body,
                token=self.token,
                timeout=self.timeout,
                what=f"the executor at {self.url}",
            )
        except PeerTimeout as exc:
            raise ToolFailed(
                f"{what}: no answer from the executor within {self.timeout:g} s",
                code="tool_timeout",
            ) from exc
        except AppUnreachable as exc:
            raise ToolFailed(f"{what}: {exc.message}", code="executor_unreachable") from exc
        except BadAppReply as exc:
            raise ToolFailed(f"{what}: {exc.message}", code="bad_executor_reply") from exc
        if answer.status != 200:
            error = answer.body.get("error") if isinstance(answer.body, dict) else None
            if isinstance(error, dict) and error.get("code"):
                raise ToolFailed(
                    f"{what}: {error.get('message') or error['code']}",
                    code=str(error["code"]),
                    **AiosError.fields_of(error),
                )
            raise ToolFailed(
                f"{what}: executor answered HTTP {answer.status}", code="bad_executor_reply"
            )
        return answer.body


def _tool_result(payload: Any, tool: str) -> ToolResult:
    from pydantic import ValidationError

    try:
        return ToolResult.model_validate(payload)
    except ValidationError as exc:
        raise ToolFailed(
            f"{tool}: executor reply is not a ToolResult "
            f"({describe_validation_error(exc)})",
            code="bad_executor_reply",
        ) from exc


_clients: dict[tuple[str, str], ExecutorClient] = {}
_clients_lock = threading.Lock()


def client_from_env(
    env: Mapping[str, str] | None = None, *, timeout: float = 300.0
) -> ExecutorClient:
    """The client for `$AIOS_EXECUTOR_URL` / `$AIOS_TOKEN`, read now (not at import).

    Clients are reused per (url, token); `ToolFailed(code="not_connected")` when
    either variable is missing.
    """
    env = os.environ if env is None else env
    url = env.get(ENV_EXECUTOR_URL, "").strip()
    token = env.get(ENV_TOKEN, "").strip()
    if not url or not token:
        raise ToolFailed(NOT_CONNECTED, code="not_connected")
    key = (url, token)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = ExecutorClient(url, token, timeout=timeout)
        client.timeout = timeout
    return client
