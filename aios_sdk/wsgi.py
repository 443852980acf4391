"""A lean WSGI service with the edge rules of `aios_runtime.edge`, for app processes.

`create_service` builds on Flask, which the controller and the executor need
(blueprints, streaming, static files). An app serves four JSON routes, and Flask
with its dependencies is most of an idle app's memory and start-up time, so apps
are served by `Service`: a route table over plain WSGI, served by the same server
(`web.start_server`) and held to the same rules — loopback `Host` and `Origin`
(`web.check_edge`), the token on every route not marked public (`web.check_token`),
strict JSON validated with a protocol model (`Request.json`), every exception as
the one JSON error shape, the same CORS and nosniff headers (`web.edge_headers`).
`test_client()` gives werkzeug's test client (imported only then).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import parse_qs

from pydantic import BaseModel

from aios_runtime.edge import (
    DEFAULT_MAX_BODY,
    TOKEN_HEADER,
    Authenticator,
    check_edge,
    check_token,
    edge_headers,
    loads_strict,
)
from aios_sdk.errors import (
    AiosError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    UnsupportedMediaType,
)
from aios_sdk.protocol import parse

__all__ = ["Reply", "Request", "Service", "json_bytes"]

log = logging.getLogger("aios.wsgi")

M = TypeVar("M", bound=BaseModel)
View = Callable[..., Any]
# what a view returns: a JSON-ready body or its encoded bytes (HTTP 200), or
# (status, body)
Reply = Any

_STATUS_TEXT = {
    200: "OK",
    204: "No Content",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    421: "Misdirected Request",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
_STATUS_LINES = {status: f"{status} {text}" for status, text in _STATUS_TEXT.items()}


# json.dumps with arguments builds a new encoder on every call; one is enough
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def json_bytes(body: Any) -> bytes:
    """Compact UTF-8 JSON, keys in their given order (as the Flask services send)."""
    return _COMPACT(body).encode("utf-8")


def _path_of(environ: dict[str, Any]) -> str:
    """The request's path as text (WSGI hands it over as latin-1 decoded bytes)."""
    return (environ.get("PATH_INFO") or "/").encode("latin-1").decode("utf-8", "replace")


@lru_cache(maxsize=64)
def _environ_key(name: str) -> str:
    """The WSGI environ key of header `name` (asked for several times per request)."""
    if name.lower() == "content-type":
        return "CONTENT_TYPE"
    return "HTTP_" + name.upper().replace("-", "_")


class Request:
    """The parts of a WSGI request a JSON route needs."""

    def __init__(self, environ: dict[str, Any], max_body: int, path: str | None = None):
        self.environ = environ
        self.method: str = environ.get("REQUEST_METHOD", "GET").upper()
        self.path: str = _path_of(environ) if path is None else path
        self.identity: str | None = None
        self._max_body = max_body
        self._args: dict[str, str] | None = None
        self._body: bytes | None = None

    @property
    def args(self) -> dict[str, str]:
        """The query string's parameters (the first value of each)."""
        if self._args is None:
            query = self.environ.get("QUERY_STRING", "")
            parsed = parse_qs(query.encode("latin-1").decode("utf-8", "replace"))
            self._args = {key: values[0] for key, values in parsed.items()}
        return self._args

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.environ.get(_environ_key(name), default)

    def body(self) -> bytes:
        """The raw body (read once); `PayloadTooLarge` past the service's limit."""
        if self._body is None:
            try:
                length = int(self.environ.get("CONTENT_LENGTH") or 0)
            except ValueError as exc:
                raise InvalidRequest("Content-Length is not a number") from exc
            if length > self._max_body:
                raise PayloadTooLarge(f"body larger than {self._max_body} bytes")
            self._body = self.environ["wsgi.input"].read(length) if length > 0 else b""
        return self._body

    def json(self, model: type[M]) -> M:
        """The body validated as `model` (415 / 413 / 400 on bad input)."""
        mimetype = (self.header("Content-Type") or "").split(";", 1)[0].strip().lower()
        if mimetype != "application/json" and not mimetype.endswith("+json"):
            raise UnsupportedMediaType("Content-Type must be application/json")
        return parse(model, loads_strict(self.body()))


Methods = dict[str, tuple[View, bool]]  # HTTP method → (view, public)


class Service:
    """A WSGI app of routes: exact paths, or paths with `<>` segments.

    `fallback`, when given, is another WSGI app (built on `aios_runtime.edge`, so held
    to the same edge rules) that answers every path this service has no route for:
    a service can serve its hot routes lean and leave the rest to Flask.
    """

    def __init__(
        self,
        name: str,
        authenticate: Authenticator,
        *,
        max_body: int = DEFAULT_MAX_BODY,
        fallback: Callable[..., Any] | None = None,
    ):
        self.name = name
        self.config: dict[str, Any] = {}
        self.extensions: dict[str, Any] = {}  # what the service's owner keeps with it
        self.fallback = fallback
        self._authenticate = authenticate
        self._max_body = max_body
        self._exact: dict[str, Methods] = {}
        self._patterns: dict[tuple[str, ...], Methods] = {}

    # ------------------------------------------------------------ routes

    def route(self, method: str, path: str, view: View, *, public: bool = False) -> None:
        """`view(request)` answers `method path`; each `<>` segment of the path
        matches one non-empty segment, passed on as an argument in order
        (`/apps/<>/open` → `view(request, app_id)`)."""
        if "<>" in path.split("/"):
            methods = self._patterns.setdefault(tuple(path.split("/")), {})
        else:
            methods = self._exact.setdefault(path, {})
        methods[method.upper()] = (view, public)

    def _match(self, path: str) -> tuple[Methods, tuple[str, ...]] | None:
        methods = self._exact.get(path)
        if methods is not None:
            return methods, ()
        parts = path.split("/")
        for pattern, methods in self._patterns.items():
            if len(pattern) != len(parts):
                continue
            args = []
            for want, part in zip(pattern, parts, strict=True):
                if want == "<>" and part:
                    args.append(part)
                elif want != part:
                    break
            else:
                return methods, tuple(args)
        return None

    def _find(
        self, method: str, path: str, found: tuple[Methods, tuple[str, ...]] | None
    ) -> tuple[View, bool, tuple[str, ...]]:
        """The view for `method` among the routes `found` for `path` (`_match`)."""
        if found is None:
            raise NotFound(f"no route {path}")
        methods, args = found
        if method not in methods:
            error = AiosError(
                f"{method} is not allowed on {path}", code="method_not_allowed"
            )
            error.http_status = 405
            raise error
        view, public = methods[method]
        return view, public, args

    # ----------------------------------------------------------- serving

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Any:
        path = _path_of(environ)
        found = self._match(path)  # once: it decides the fallback and the view
        if found is None and self.fallback is not None:
            return self.fallback(environ, start_response)
        request = Request(environ, self._max_body, path)
        origin = request.header("Origin")
        try:
            status, body = self._answer(request, origin, found)
        except AiosError as exc:
            status, body = exc.http_status, {"status": "error", "error": exc.to_body()}
        except RecursionError:
            error = InvalidRequest("JSON nested too deeply")
            status, body = error.http_status, {"status": "error", "error": error.to_body()}
        except Exception as exc:
            log.exception("%s: unhandled error", self.name)
            error = AiosError(f"{type(exc).__name__}: {exc}")
            status, body = error.http_status, {"status": "error", "error": error.to_body()}
        headers = edge_headers(origin)
        if body is None:
            payload = b""
        elif isinstance(body, bytes):  # already encoded by the view
            payload = body
            headers["Content-Type"] = "application/json"
        else:
            try:
                payload = json_bytes(body)
            except (TypeError, ValueError) as exc:
                log.exception("%s: answer is not JSON", self.name)
                error = AiosError(f"answer is not JSON: {exc}")
                status = error.http_status
                payload = json_bytes({"status": "error", "error": error.to_body()})
            headers["Content-Type"] = "application/json"
        headers["Content-Length"] = str(len(payload))
        line = _STATUS_LINES.get(status) or f"{status} Unknown"
        start_response(line, list(headers.items()))
        return [payload]

    def _answer(
        self,
        request: Request,
        origin: str | None,
        found: tuple[Methods, tuple[str, ...]] | None,
    ) -> tuple[int, Any]:
        check_edge(request.header("Host", "") or "", origin)
        if request.method == "OPTIONS":
            return 204, None
        view, public, args = self._find(request.method, request.path, found)
        if not public:
            presented = request.header(TOKEN_HEADER, "") or ""
            request.identity = check_token(presented, self._authenticate)
        reply = view(request, *args)
        if isinstance(reply, tuple):
            return reply
        return 200, reply

    def test_client(self) -> Any:
        """werkzeug's test client over this service (for tests; no sockets)."""
        from werkzeug.test import Client
        from werkzeug.wrappers import Response

        return Client(self, Response)
