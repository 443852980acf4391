"""The app side of the executor's HTTP API: one synchronous tool call (S-73).

`ExecutorClient.call` POSTs a `protocol.ToolCall` to `<executor>/call` with the app's
own token and returns the tool's `result`. Every way the call can fail — no executor
configured, executor unreachable, request refused, tool failed — raises
`aios_sdk.errors.ToolFailed` with a stable `code`, so an app needs one `except`.

It speaks HTTP with `aios_sdk.loopback_http` over one keep-alive connection per
thread, not `requests` nor `http.client`: the executor is always a loopback peer (no
proxies, no redirects, no TLS); a raw keep-alive call costs about a third of a
`requests.Session` call on these machines, `http.client` parses every answer's
headers with the `email` package, and neither is imported: `requests` would make
each app process about 6 MB larger, and `http.client` loads OpenSSL (`ssl`) for
the TLS this client never speaks, 3–4 MB more.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from aios_sdk.errors import ToolFailed
from aios_sdk.loopback_http import Connection
from aios_sdk.protocol import ToolCall, ToolResult, describe_validation_error
from aios_sdk.wsgi import json_bytes

__all__ = ["ENV_EXECUTOR_URL", "ENV_TOKEN", "ExecutorClient", "client_from_env"]

log = logging.getLogger("aios.sdk.client")

ENV_EXECUTOR_URL = "AIOS_EXECUTOR_URL"
ENV_TOKEN = "AIOS_TOKEN"
TOKEN_HEADER = "X-AIOS-Token"  # same value as aios_runtime.edge.TOKEN_HEADER (avoids Flask)

NOT_CONNECTED = (
    "not connected to an executor — start the app through `aios start` "
    f"(the environment variables {ENV_EXECUTOR_URL} and {ENV_TOKEN} are not set)"
)


class ExecutorClient:
    """Keep-alive connections to one executor, authenticated as one app."""

    def __init__(self, url: str, token: str, *, timeout: float = 300.0):
        parts = urlsplit(url.strip())
        if parts.scheme != "http" or not parts.hostname:
            raise ToolFailed(
                f"{ENV_EXECUTOR_URL}={url!r} is not an http://host:port URL",
                code="not_connected",
            )
        self.url = url.rstrip("/")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.base_path = parts.path.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._local = threading.local()

    def _connection(self) -> Connection:
        """This thread's connection (it notices a peer's close before reuse)."""
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = Connection(self.host, self.port, self.timeout)
        conn.timeout = self.timeout
        return conn

    def _forget(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def _post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        """(HTTP status, body); transport failures raise `OSError` (the connection
        is closed then), an answer over `loopback_http.MAX_BODY_BYTES` is a `ProtocolViolation`."""
        payload = json_bytes(body)
        answer = self._connection().request(
            "POST",
            self.base_path + path,
            payload,
            {
                "Host": f"{self.host}:{self.port}",
                "Content-Type": "application/json",
                TOKEN_HEADER: self.token,
            },
        )
        return answer.status, answer.body

    def call(
        self,
        tool: str,
        args: Mapping[str, Any],
        *,
        app_id: str | None = None,
        session_id: str | None = None,
    ) -> Any:
        """Run `tool` with `args` now; its `result`, or `ToolFailed` with a code."""
        started = time.monotonic()
        try:
            body = ToolCall(
                tool=tool, args=dict(args), app_id=app_id, session_id=session_id or None
            ).dump()
            status, raw = self._post("/call", body)
        except TimeoutError as exc:
            raise ToolFailed(
                f"{tool}: no answer from the executor within {self.timeout:g} s",
                code="tool_timeout",
            ) from exc
        except OSError as exc:
            raise ToolFailed(
                f"{tool}: executor at {self.url} unreachable ({type(exc).__name__})",
                code="executor_unreachable",
            ) from exc
        except (TypeError, ValueError) as exc:
            raise ToolFailed(
                f"{tool}: arguments are not JSON ({exc})", code="invalid_args"
            ) from exc
        elapsed_ms = (time.monotonic() - started) * 1000
        payload = _json_body(raw, status, tool)
        if status != 200:
            error = payload.get("error") if isinstance(payload, dict) else None
            if isinstance(error, dict) and error.get("code"):
                raise ToolFailed(
                    f"{tool}: {error.get('message') or error['code']}",
                    code=str(error["code"]),
                    detail=error.get("detail"),
                )
            raise ToolFailed(
                f"{tool}: executor answered HTTP {status}", code="bad_executor_reply"
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
        """Close this thread's connection (others close when their threads end)."""
        self._forget()


def _json_body(raw: bytes, status: int, tool: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ToolFailed(
            f"{tool}: executor answered HTTP {status} with a body that is not JSON",
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
