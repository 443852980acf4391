"""The edge every Triton service holds at its door: `Edge`.

`Edge(app, authenticate)` is a Flask extension. Before any view runs it refuses a
non-loopback `Host` (421) and a cross-site `Origin` (403), answers CORS preflights,
requires the token in `X-AIOS-Token` (compared with `hmac.compare_digest`) on every
route not marked `public`, and refuses a body declared larger than `max_body` (413).
It parses JSON strictly (`read_json`, and Flask's own `request.get_json` through
`StrictJSONProvider`: 415 wrong type, 413 too large, 400 for cut-off, nested too
deep, NaN, invalid UTF-8), turns every exception into the one error body
`{"status": "error", "error": {"code", "message", "user_message"?, "detail"?}}` and
adds CORS (loopback origins only) and nosniff headers to every answer. `message` is
the developer's English; a service whose answers people read (the controller) gives
the edge `language`, the language of the person behind a request, and its error
bodies also carry `user_message`, the code's sentence in that language.
`create_service` is a Flask app with the edge installed; `aios_runtime.serving`
serves it on waitress.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from hmac import compare_digest
from typing import Any, TypeVar
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, g, jsonify, request
from flask.json.provider import DefaultJSONProvider
from pydantic import BaseModel
from werkzeug.exceptions import HTTPException

from aios_protocol.errors import (
    AiosError,
    Forbidden,
    HostNotAllowed,
    InvalidRequest,
    PayloadTooLarge,
    UnsupportedMediaType,
)
from aios_protocol.messages import parse
from aios_protocol.strings import user_message_of
from aios_runtime.serving import ServerHandle, start_server

__all__ = [
    "DEFAULT_MAX_BODY",
    "EXTENSION",
    "LOOPBACK_HOSTS",
    "TOKEN_HEADER",
    "Authenticator",
    "Edge",
    "ServerHandle",
    "StrictJSONProvider",
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
EXTENSION = "aios_edge"  # the key of the installed `Edge` in `app.extensions`

M = TypeVar("M", bound=BaseModel)
# Maps a presented token to the caller's identity (e.g. "controller" or an app id),
# or None when the token is unknown.
Authenticator = Callable[[str], str | None]


def token_matches(expected: str) -> Authenticator:
    """An authenticator accepting exactly one token, compared in constant time.

    An empty `expected` accepts nothing.
    """
    wanted = expected.encode()

    def authenticate(presented: str) -> str | None:
        if wanted and compare_digest(presented.encode(), wanted):
            return "controller"
        return None

    return authenticate


def public(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a route as reachable without the token (health checks, the desktop page)."""
    view.aios_public = True  # type: ignore[attr-defined]
    return view


# ------------------------------------------------------------------ the rules


def _host_name(host_header: str) -> str:
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else ""
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _origin_is_loopback(origin: str) -> bool:
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and (parts.hostname or "") in LOOPBACK_HOSTS


def check_edge(host: str, origin: str | None) -> None:
    """The `Host` must name loopback (421) and an `Origin`, when sent, too (403)."""
    if _host_name(host) not in LOOPBACK_HOSTS:
        raise HostNotAllowed("Host must be localhost, 127.0.0.1 or [::1]")
    if origin is not None and not _origin_is_loopback(origin):
        raise Forbidden("cross-site Origin refused")


def check_token(presented: str, authenticate: Authenticator) -> str:
    """The identity behind the presented token; `Forbidden` when missing or wrong."""
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


# ----------------------------------------------------------------------- JSON


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant)


def loads_strict(raw: bytes | str) -> Any:
    """Parse JSON; every malformed input becomes an `InvalidRequest` (400)."""
    if isinstance(raw, bytes | bytearray):
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidRequest("body is not valid UTF-8") from exc
    try:
        return _STRICT_JSON.decode(raw)
    except RecursionError as exc:
        raise InvalidRequest("JSON nested too deeply") from exc
    except ValueError as exc:
        raise InvalidRequest(f"body is not valid JSON: {exc}") from exc


class StrictJSONProvider(DefaultJSONProvider):
    """Flask's JSON with `loads_strict` for reading; writes UTF-8, keys in order."""

    ensure_ascii = False
    sort_keys = False

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return loads_strict(s)


def read_json(model: type[M]) -> M:
    """The request body validated as `model` (415 / 413 / 400 on bad input)."""
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


def json_error(exc: AiosError, language: str | None = None) -> Response:
    """The one error body for `exc`, with its HTTP status; with a `language`, also
    the sentence its reader reads (`user_message`)."""
    body = exc.to_body()
    if language:
        body["user_message"] = user_message_of(exc, language)
    response = jsonify({"status": "error", "error": body})
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
    503: "overloaded",
}


# -------------------------------------------------------------- the extension


def _refuse_everyone(presented: str) -> str | None:
    return None


def _nobody_reads() -> str | None:
    return None


class Edge:
    """The edge rules as a Flask extension: `Edge(app, authenticate)` or `init_app`.

    `token_in_query` also accepts `?token=` on GET requests (the desktop page's
    EventSource and media elements cannot set headers); `public_paths` are paths
    reachable without the token besides the views marked `public`; `language` gives
    the language of the person a request's error is for (None: nobody reads it, its
    body has no `user_message`). Installing an edge on an app that has one replaces
    its settings; the hooks stay installed once.
    """

    def __init__(
        self,
        app: Flask | None = None,
        authenticate: Authenticator | None = None,
        *,
        max_body: int = DEFAULT_MAX_BODY,
        token_in_query: bool = False,
        public_paths: Iterable[str] = (),
        language: Callable[[], str | None] | None = None,
    ):
        self.authenticate: Authenticator = authenticate or _refuse_everyone
        self.max_body = max_body
        self.token_in_query = token_in_query
        self.public_paths = frozenset(public_paths)
        self.language: Callable[[], str | None] = language or _nobody_reads
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        app.config["MAX_CONTENT_LENGTH"] = self.max_body
        installed = EXTENSION in app.extensions
        app.extensions[EXTENSION] = self
        if installed:
            return
        app.json = StrictJSONProvider(app)
        # first of all before-request hooks: the edge decides before the app's own
        app.before_request_funcs.setdefault(None, []).insert(0, _guard)
        app.after_request(_add_edge_headers)  # registered first, so it runs last
        app.register_error_handler(Exception, _error_response)

    def is_public(self) -> bool:
        """Whether this request's route or path is reachable without the token."""
        view = current_app.view_functions.get(request.endpoint or "")
        if view is not None and getattr(view, "aios_public", False):
            return True
        return request.path in self.public_paths

    def identity(self) -> str:
        """The caller behind this request's token (`Forbidden` if there is none)."""
        presented = request.headers.get(TOKEN_HEADER, "")
        if not presented and self.token_in_query and request.method == "GET":
            presented = request.args.get("token", "")
        return check_token(presented, self.authenticate)


def _guard() -> Response | None:
    edge: Edge = current_app.extensions[EXTENSION]
    check_edge(request.headers.get("Host", ""), request.headers.get("Origin"))
    if request.method == "OPTIONS":
        return Response(status=204)
    g.identity = None if edge.is_public() else edge.identity()
    if (request.content_length or 0) > edge.max_body:
        raise PayloadTooLarge(f"body larger than {edge.max_body} bytes")
    return None


def _add_edge_headers(response: Response) -> Response:
    for key, value in edge_headers(request.headers.get("Origin")).items():
        if key == "X-Content-Type-Options":
            response.headers.setdefault(key, value)
        else:
            response.headers[key] = value
    return response


def _error_response(exc: Exception) -> Response:
    return json_error(_as_aios_error(exc), _reader_language())


def _reader_language() -> str | None:
    edge: Edge | None = current_app.extensions.get(EXTENSION)
    try:
        return edge.language() if edge is not None else None
    except Exception:  # the error body must be answered whatever the language source does
        log.exception("%s: the reader's language is unknown", current_app.name)
        return None


def _as_aios_error(exc: Exception) -> AiosError:
    if isinstance(exc, AiosError):
        return exc
    if isinstance(exc, HTTPException):
        code = _HTTP_CODES.get(exc.code or 500, "http_error")
        err = AiosError(exc.description or exc.name, code=code)
        err.http_status = exc.code or 500
        return err
    if isinstance(exc, RecursionError):
        return InvalidRequest("JSON nested too deeply")
    log.exception("%s: unhandled error", current_app.name)
    return AiosError(f"{type(exc).__name__}: {exc}")


def create_service(
    name: str,
    authenticate: Authenticator,
    *,
    max_body: int = DEFAULT_MAX_BODY,
    token_in_query: bool = False,
    language: Callable[[], str | None] | None = None,
) -> Flask:
    """A Flask app named `name` with the `Edge` installed."""
    app = Flask(name)
    Edge(
        app,
        authenticate,
        max_body=max_body,
        token_in_query=token_in_query,
        language=language,
    )
    return app
