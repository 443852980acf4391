"""HTTP clients the controller uses to talk to the executor and to apps.

`aios_sdk.loopback_http` (far cheaper per call than `requests`, and than
`http.client`, whose header parsing cost more than the hop itself) over keep-alive
connections: idle connections wait in a pool per peer (`_POOL`), so a pipeline hop
costs one loopback round trip instead of a TCP handshake plus a round trip, and a
peer sees as many connections as calls ran at once — not one per thread of the
controller's server, which keeps a thread per client connection. An idle
connection the peer has closed (restart, idle timeout) is noticed before reuse and
replaced. Every transport failure becomes an `AiosError` at this
boundary: `AppUnreachable` when nothing answers or the answer is late,
`BadAppReply` when the answer is not JSON, and the peer's own error (`{"status":
"error", "error": {code, message}}`) re-raised with its code.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from aios_sdk.errors import AiosError, AppUnreachable, BadAppReply
from aios_sdk.loopback_http import Connection
from aios_sdk.wsgi import json_bytes

__all__ = [
    "AppClient",
    "ExecutorClient",
    "HttpAnswer",
    "http_json",
    "json_call",
    "peer_error",
]

TOKEN_HEADER = "X-AIOS-Token"  # aios_runtime.edge.TOKEN_HEADER, without importing Flask
MAX_IDLE_PER_PEER = 32  # idle connections kept per peer; more are closed after use


MAX_APP_REPLY = 8 << 20  # bytes of one app reply (views carry data, not files)


@dataclass
class HttpAnswer:
    status: int
    body: Any  # parsed JSON, or None when the body was empty / not JSON
    raw: bytes


class _ConnectionPool:
    """Idle keep-alive connections per (host, port); the latest returned is reused
    first (the one least likely to have been closed by the peer's idle timeout)."""

    def __init__(self, max_idle: int):
        self.max_idle = max_idle
        self._idle: dict[tuple[str, int], list[Connection]] = {}
        self._lock = threading.Lock()

    def take(self, host: str, port: int, timeout: float) -> Connection:
        with self._lock:
            idle = self._idle.get((host, port))
            conn = idle.pop() if idle else None
        if conn is None:
            conn = Connection(host, port, timeout)
        conn.timeout = timeout
        return conn

    def give(self, conn: Connection) -> None:
        """Keep `conn` for the next call (if it is still open and there is room)."""
        if not conn.connected:
            return
        with self._lock:
            idle = self._idle.setdefault((conn.host, conn.port), [])
            if len(idle) < self.max_idle:
                idle.append(conn)
                return
        conn.close()


_POOL = _ConnectionPool(MAX_IDLE_PER_PEER)


def http_json(
    method: str,
    url: str,
    body: Any = None,
    *,
    token: str | None = None,
    timeout: float = 10.0,
    what: str = "service",
) -> HttpAnswer:
    """One JSON request; transport failures raise `AppUnreachable` naming `what`."""
    parts = urlsplit(url)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    host = parts.hostname or "127.0.0.1"
    port = parts.port or 80
    headers = {"Host": f"127.0.0.1:{port}", "Accept": "application/json"}
    if token:
        headers[TOKEN_HEADER] = token
    payload = None
    if body is not None:
        payload = json_bytes(body)
        headers["Content-Type"] = "application/json"
    conn = _POOL.take(host, port, timeout)
    try:
        answer = conn.request(method, path, payload, headers)
    except TimeoutError as exc:
        raise AppUnreachable(f"{what} did not answer within {timeout:g} s") from exc
    except OSError as exc:
        raise AppUnreachable(f"{what} is not reachable ({type(exc).__name__})") from exc
    _POOL.give(conn)  # after a failure it was closed: not kept
    raw = answer.body
    try:
        parsed = json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, ValueError):
        parsed = None
    return HttpAnswer(answer.status, parsed, raw)


def peer_error(answer: HttpAnswer, what: str) -> AiosError:
    """The error a non-2xx answer stands for, keeping the peer's code if it sent one."""
    body = answer.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        code = str(err.get("code") or "app_error")
        message = str(err.get("message") or f"{what} answered HTTP {answer.status}")
        return AiosError(message, code=code)
    snippet = answer.raw[:200].decode("utf-8", "replace").strip()
    return BadAppReply(
        f"{what} answered HTTP {answer.status}" + (f": {snippet}" if snippet else "")
    )


def json_call(
    method: str,
    url: str,
    body: Any = None,
    *,
    token: str | None,
    timeout: float,
    what: str,
) -> Any:
    """One request to a Triton service that answers JSON: the parsed body of a 2xx
    answer; the peer's own error (`peer_error`) otherwise, `BadAppReply` when the
    answer is not JSON."""
    answer = http_json(method, url, body, token=token, timeout=timeout, what=what)
    if not 200 <= answer.status < 300:
        raise peer_error(answer, what)
    if answer.body is None:
        raise BadAppReply(f"{what} answered something that is not JSON")
    return answer.body


class ExecutorClient:
    """The executor's HTTP API as the controller uses it (master token)."""

    def __init__(self, url: str, token: str, *, timeout: float = 10.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _call(
        self, method: str, path: str, body: Any = None, timeout: float | None = None
    ) -> Any:
        return json_call(
            method,
            self.url + path,
            body,
            token=self.token,
            timeout=timeout or self.timeout,
            what="the executor",
        )

    def healthy(self, timeout: float = 1.0) -> bool:
        try:
            answer = http_json("GET", self.url + "/health", timeout=timeout)
        except AiosError:
            return False
        return answer.status == 200

    def register(self, registration: dict[str, Any]) -> None:
        app_id = quote(registration["app_id"], safe="")
        self._call("PUT", f"/apps/{app_id}", registration)

    def unregister(self, app_id: str) -> None:
        self._call("DELETE", f"/apps/{quote(app_id, safe='')}")

    def tool_names(self, app_id: str) -> list[str]:
        listing = self._call("GET", f"/tools?app_id={quote(app_id, safe='')}")
        tools = listing.get("tools") if isinstance(listing, dict) else None
        if not isinstance(tools, list):
            raise BadAppReply("the executor's tool listing has no 'tools' list")
        return [str(t.get("name")) for t in tools if isinstance(t, dict) and t.get("name")]

    def run(self, run_request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """POST /run; the `RunResponse` as a dict."""
        return self._call("POST", "/run", run_request, timeout=timeout)

    def set_system_cache(self, key: str, value: Any, ttl: float | None = None) -> None:
        body: dict[str, Any] = {"key": key, "value": value}
        if ttl is not None:
            body["ttl"] = ttl
        self._call("POST", "/cache/system", body)

    def events(self, since: int, wait: float) -> tuple[list[dict[str, Any]], int]:
        page = self._call("GET", f"/events?since={since}&wait={wait:g}", timeout=wait + 5)
        events = page.get("events") if isinstance(page, dict) else None
        if not isinstance(events, list):
            raise BadAppReply("the executor's events page has no 'events' list")
        return [e for e in events if isinstance(e, dict)], int(page.get("next", since))


class AppClient:
    """One app's HTTP API (its own token), as the controller calls it."""

    def __init__(self, app_id: str, url: str, token: str, handle_endpoint: str = "/handle"):
        self.app_id = app_id
        self.url = url.rstrip("/")
        self.token = token
        self.handle_endpoint = handle_endpoint

    @property
    def what(self) -> str:
        return f"app {self.app_id}"

    def health(self, timeout: float) -> bool:
        """Alive means it answers HTTP at all below 500.

        The spec's bare-Flask `main.py` template has no `/health` and answers 404,
        which still shows a live, responsive server.
        """
        try:
            answer = http_json(
                "GET",
                self.url + "/health",
                token=self.token,
                timeout=timeout,
                what=self.what,
            )
        except AiosError:
            return False
        return answer.status < 500

    def manifest_tools(self, timeout: float = 2.0) -> list[dict[str, Any]]:
        """The custom tools the app lists in `GET /manifest` ([] on 404)."""
        answer = http_json(
            "GET", self.url + "/manifest", token=self.token, timeout=timeout, what=self.what
        )
        if answer.status == 404:
            return []
        if answer.status != 200 or not isinstance(answer.body, dict):
            raise peer_error(answer, self.what)
        tools = answer.body.get("tools") or []
        return [t for t in tools if isinstance(t, dict) and t.get("name")]

    def handle(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """POST the `HandleRequest`; the raw reply dict (validated by the caller)."""
        answer = http_json(
            "POST",
            self.url + self.handle_endpoint,
            request,
            token=self.token,
            timeout=timeout,
            what=self.what,
        )
        if len(answer.raw) > MAX_APP_REPLY:  # the desktop would choke on it (J2)
            raise BadAppReply(
                f"{self.what} answered {len(answer.raw)} bytes; "
                f"a reply may have at most {MAX_APP_REPLY}"
            )
        body = answer.body
        if isinstance(body, dict) and body.get("status") == "error" and "view_type" in body:
            return body  # an AppReply.error(...) view, keep it as is
        if not 200 <= answer.status < 300:
            raise peer_error(answer, self.what)
        if not isinstance(answer.body, dict):
            raise BadAppReply(f"{self.what} answered something that is not a JSON object")
        return answer.body
