"""HTTP plumbing shared by every Triton service (controller, executor, apps).

One place owns what each loopback service must do at its edge (SECURITY.md W1–W4,
J1): refuse a non-loopback `Host` (421) and a cross-site `Origin` (403); require the
per-launch token in `X-AIOS-Token` (constant-time compare) on every route not marked
`public`; parse JSON strictly (415 wrong type, 413 too large, 400 for cut-off,
nested-too-deep, NaN, invalid UTF-8) and validate it with a protocol model; turn every
exception into the one JSON error shape; serve on 127.0.0.1 (`aios_sdk.http_server`).
"""

from __future__ import annotations

import json
import logging
import threading

# Constant-time comparison: this is `hmac.compare_digest` where OpenSSL is missing.
# Importing `hmac` maps OpenSSL's libcrypto into the process (3–4 MB resident) only
# to offer its own copy of the same function, and every app process imports this.
from _operator import _compare_digest as compare_digest
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel

from aios_sdk.errors import (
    AiosError,
    Forbidden,
    HostNotAllowed,
    InvalidRequest,
    PayloadTooLarge,
    UnsupportedMediaType,
)
from aios_sdk.protocol import parse

if TYPE_CHECKING:
    from flask import Flask, Response

    from aios_sdk.http_server import LoopbackServer

# Flask is imported where it is used, so that importing this module (for
# `start_server`, `loads_strict`, the edge checks) costs an app process no Flask.

__all__ = [
    "LOOPBACK_HOSTS",
    "TOKEN_HEADER",
    "Authenticator",
    "ServerHandle",
    "check_edge",
    "check_token",
    "create_service",
    "edge_headers",
    "json_error",
    "loads_strict",
    "public",
    "read_json",
    "start_server",
    "token_matches",
]

log = logging.getLogger("aios.web")

TOKEN_HEADER = "X-AIOS-Token"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
DEFAULT_MAX_BODY = 4 << 20

M = TypeVar("M", bound=BaseModel)
# Maps a presented token to the caller's identity (e.g. "controller" or an app id),
# or None when the token is unknown.
Authenticator = Callable[[str], str | None]


def token_matches(expected: str) -> Authenticator:
    """An authenticator accepting exactly one token, compared in constant time."""

    def authenticate(presented: str) -> str | None:
        if expected and compare_digest(presented.encode(), expected.encode()):
            return "controller"
        return None

    return authenticate


def public(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a route as reachable without the token (health checks, the desktop page)."""
    view.aios_public = True  # type: ignore[attr-defined]
    return view


def _host_name(host_header: str) -> str:
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else ""
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _origin_is_loopback(origin: str) -> bool:
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and (parts.hostname or "") in LOOPBACK_HOSTS


def check_edge(host: str, origin: str | None) -> None:
    """W1/W2: the `Host` must name loopback (421) and an `Origin`, when sent, too (403)."""
    if _host_name(host) not in LOOPBACK_HOSTS:
        raise HostNotAllowed("Host must be localhost, 127.0.0.1 or [::1]")
    if origin is not None and not _origin_is_loopback(origin):
        raise Forbidden("cross-site Origin refused")


def check_token(presented: str, authenticate: Authenticator) -> str:
    """W3: the identity behind the presented token; `Forbidden` when missing or wrong."""
    identity = authenticate(presented) if presented else None
    if identity is None:
        raise Forbidden(f"missing or wrong {TOKEN_HEADER}")
    return identity


def edge_headers(origin: str | None) -> dict[str, str]:
    """Headers every answer carries: CORS for a loopback `Origin`, and nosniff."""
    headers = {"X-Content-Type-Options": "nosniff"}
    if origin and _origin_is_loopback(origin):
        headers["Access-Control-Allow-Origin"] = origin
        headers["Access-Control-Allow-Headers"] = f"Content-Type, {TOKEN_HEADER}"
        headers["Access-Control-Allow-Methods"] = "GET, POST, PUT, DELETE"
        headers["Vary"] = "Origin"
    return headers


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# json.loads with arguments builds a new decoder per call; every request needs one
_STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant)


def loads_strict(raw: bytes) -> Any:
    """Parse JSON bytes; every malformed input becomes a `InvalidRequest` (400)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidRequest("body is not valid UTF-8") from exc
    try:
        return _STRICT_JSON.decode(text)
    except RecursionError as exc:
        raise InvalidRequest("JSON nested too deeply") from exc
    except ValueError as exc:
        raise InvalidRequest(f"body is not valid JSON: {exc}") from exc


def read_json(model: type[M]) -> M:
    """The request body validated as `model` (415 / 413 / 400 on bad input)."""
    from flask import request

    mimetype = request.mimetype or ""
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise UnsupportedMediaType("Content-Type must be application/json")
    limit = request.max_content_length
    if limit is not None and (request.content_length or 0) > limit:
        raise PayloadTooLarge(f"body larger than {limit} bytes")
    raw = request.get_data(cache=True)
    if limit is not None and len(raw) > limit:
        raise PayloadTooLarge(f"body larger than {limit} bytes")
    return parse(model, loads_strict(raw))


def json_error(exc: AiosError) -> Response:
    from flask import jsonify

    response = jsonify({"status": "error", "error": exc.to_body()})
    response.status_code = exc.http_status
    return response


_HTTP_CODES = {
    400: "invalid_request",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "overloaded",
}


def create_service(
    name: str,
    authenticate: Authenticator,
    *,
    max_body: int = DEFAULT_MAX_BODY,
    token_in_query: bool = False,
) -> Flask:
    """A Flask app with the loopback guard, token check and one error handler.

    `token_in_query` also accepts `?token=` on GET requests, for the desktop page's
    EventSource and media elements, which cannot set headers.
    """
    from flask import Flask, Response, g, request
    from werkzeug.exceptions import HTTPException

    app = Flask(name)
    app.config["MAX_CONTENT_LENGTH"] = max_body
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.json.sort_keys = False  # type: ignore[attr-defined]

    @app.before_request
    def _guard() -> Response | None:
        check_edge(request.headers.get("Host", ""), request.headers.get("Origin"))
        if request.method == "OPTIONS":
            return Response(status=204)
        view = app.view_functions.get(request.endpoint or "")
        if view is not None and getattr(view, "aios_public", False):
            g.identity = None
            return None
        presented = request.headers.get(TOKEN_HEADER, "")
        if not presented and token_in_query and request.method == "GET":
            presented = request.args.get("token", "")
        g.identity = check_token(presented, authenticate)
        return None

    @app.after_request
    def _cors(response: Response) -> Response:
        for key, value in edge_headers(request.headers.get("Origin")).items():
            if key == "X-Content-Type-Options":
                response.headers.setdefault(key, value)
            else:
                response.headers[key] = value
        return response

    @app.errorhandler(Exception)
    def _error(exc: Exception) -> Response:
        if isinstance(exc, AiosError):
            return json_error(exc)
        if isinstance(exc, HTTPException):
            code = _HTTP_CODES.get(exc.code or 500, "http_error")
            err = AiosError(exc.description or exc.name, code=code)
            err.http_status = exc.code or 500
            return json_error(err)
        if isinstance(exc, RecursionError):
            return json_error(InvalidRequest("JSON nested too deeply"))
        log.exception("%s: unhandled error", name)
        return json_error(AiosError(f"{type(exc).__name__}: {exc}"))

    return app


class ServerHandle:
    """A `LoopbackServer` on 127.0.0.1 running in a background thread."""

    def __init__(self, server: LoopbackServer, thread: threading.Thread):
        self._server = server
        self._thread = thread
        self.port: int = server.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Close the listening socket and every open keep-alive connection, then join."""
        self._server.stop()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)


def start_server(
    app: Callable[..., Any],
    port: int = 0,
    *,
    threads: int = 8,
    background: bool = True,
    connection_limit: int = 200,
) -> ServerHandle:
    """Serve the WSGI `app` on 127.0.0.1:`port` (0 picks a free port).

    `threads` requests run at once (more wait), `connection_limit` connections stay
    open (aios_sdk/http_server.py). With `background=False` this blocks in the
    caller's thread until the server is stopped.
    """
    from aios_sdk.http_server import LoopbackServer

    server = LoopbackServer(
        app, port, threads=threads, connection_limit=connection_limit, idle_timeout=120
    )
    thread = threading.Thread(
        target=server.serve_forever, name=f"http-accept-{server.port}", daemon=True
    )
    handle = ServerHandle(server, thread)
    if background:
        thread.start()
    else:
        handle._thread = threading.current_thread()
        server.serve_forever()
    return handle
