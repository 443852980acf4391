"""The app side of the executor's HTTP API: one synchronous tool call (S-73).

`ExecutorClient.call` POSTs a `protocol.ToolCall` to `<executor>/call` with the app's
own token and returns the tool's `result`. Every way the call can fail — no executor
configured, executor unreachable, request refused, tool failed — raises
`aios_sdk.errors.ToolFailed` with a stable `code`, so an app needs one `except`.
`requests` is imported on the first call, not at import time: the app process start
is on the system's cold-start path.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

from aios_sdk.errors import ToolFailed
from aios_sdk.protocol import ToolCall, ToolResult, describe_validation_error

__all__ = ["ENV_EXECUTOR_URL", "ENV_TOKEN", "ExecutorClient", "client_from_env"]

log = logging.getLogger("aios.sdk.client")

ENV_EXECUTOR_URL = "AIOS_EXECUTOR_URL"
ENV_TOKEN = "AIOS_TOKEN"
TOKEN_HEADER = "X-AIOS-Token"  # same value as aios_sdk.web.TOKEN_HEADER (avoids Flask)

NOT_CONNECTED = (
    "not connected to an executor — start the app through `aios start` "
    f"(the environment variables {ENV_EXECUTOR_URL} and {ENV_TOKEN} are not set)"
)


class ExecutorClient:
    """A keep-alive connection to one executor, authenticated as one app."""

    def __init__(self, url: str, token: str, *, timeout: float = 300.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._session: Any = None
        self._lock = threading.Lock()

    def _http(self) -> Any:
        if self._session is None:
            with self._lock:
                if self._session is None:
                    import requests

                    session = requests.Session()
                    session.trust_env = False  # never route loopback calls via a proxy
                    session.headers[TOKEN_HEADER] = self.token
                    self._session = session
        return self._session

    def call(
        self,
        tool: str,
        args: Mapping[str, Any],
        *,
        app_id: str | None = None,
        session_id: str | None = None,
    ) -> Any:
        """Run `tool` with `args` now; its `result`, or `ToolFailed` with a code."""
        import requests

        body = ToolCall(
            tool=tool, args=dict(args), app_id=app_id, session_id=session_id or None
        ).dump()
        started = time.monotonic()
        try:
            response = self._http().post(
                f"{self.url}/call", json=body, timeout=(5, self.timeout)
            )
        except requests.Timeout as exc:
            raise ToolFailed(
                f"{tool}: no answer from the executor within {self.timeout:g} s",
                code="tool_timeout",
            ) from exc
        except requests.RequestException as exc:
            raise ToolFailed(
                f"{tool}: executor at {self.url} unreachable ({type(exc).__name__})",
                code="executor_unreachable",
            ) from exc
        elapsed_ms = (time.monotonic() - started) * 1000
        payload = _json_body(response, tool)
        if response.status_code != 200:
            error = payload.get("error") if isinstance(payload, dict) else None
            if isinstance(error, dict) and error.get("code"):
                raise ToolFailed(
                    f"{tool}: {error.get('message') or error['code']}",
                    code=str(error["code"]),
                    detail=error.get("detail"),
                )
            raise ToolFailed(
                f"{tool}: executor answered HTTP {response.status_code}",
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

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


def _json_body(response: Any, tool: str) -> Any:
    try:
        return json.loads(response.content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ToolFailed(
            f"{tool}: executor answered HTTP {response.status_code} with a body "
            "that is not JSON",
            code="bad_executor_reply",
        ) from exc


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

    Clients are reused per (url, token), so keep-alive connections survive between
    calls; `ToolFailed(code="not_connected")` when either variable is missing.
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
