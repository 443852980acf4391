"""`http_request`: one HTTP(S) exchange with the SSRF guard, caps and a deadline.

Built on `http.client` so that we choose the socket: every hop's URL is checked by
`ssrf.check_url`, we connect to one of the checked addresses ourselves and verify
the socket's peer address (SECURITY.md R2), then speak HTTP over that socket (TLS
still verifies the host name); redirects are followed by hand, each re-checked, at
most `MAX_REDIRECTS` (R3). Bodies are read against one overall deadline and capped
at `limits.response_bytes` (`limits.download_bytes` for `save_to`, which streams
into a temp file beside its target renamed only when complete — R5, P4). The result
is the parsed JSON body, else its text (binary bodies as `{"content_type", "size",
"base64"}`); `raw: true` gives `{"status_code", "headers", "body"}` for any status,
and without it a non-2xx answer is an error with code `http_error`. Environment
proxies are not used.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import ssl
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

from aios_protocol.errors import AiosError, ToolTimeout
from aios_runtime.workdir import display_path, resolve_in_workdir
from executor.sandbox.ssrf import Target, UrlPolicy, check_url
from executor.tools.catalog import InvalidArgs

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["MAX_REDIRECTS", "http_request", "policy_for"]

MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024
_DROP_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})
_CROSS_ORIGIN_DROP = frozenset({"authorization", "cookie", "proxy-authorization"})
_TEXTUAL = ("text/", "application/xml", "application/javascript", "application/x-www-form")


class _Deadline:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        remaining = self.end - time.monotonic()
        if remaining <= 0:
            raise ToolTimeout(f"http_request took longer than {self.seconds:g}s")
        return remaining


def policy_for(ctx: ToolContext) -> UrlPolicy:
    sandbox = ctx.settings.tool_sandbox
    return UrlPolicy(
        domain_whitelist=tuple(sandbox.http_domain_whitelist),
        app_domain_whitelist=ctx.app.http_domain_whitelist,
        allow_private_hosts=tuple(sandbox.http_allow_private_hosts),
    )


def _with_params(url: str, params: dict[str, Any] | None) -> str:
    if not params:
        return url
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if item is None:
                continue
            text = json.dumps(item) if isinstance(item, (bool, dict)) else str(item)
            pairs.append((str(key), text))
    parts = urlsplit(url)
    query = "&".join(filter(None, [parts.query, urlencode(pairs)]))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def _request_body(body: Any, headers: dict[str, str]) -> bytes | None:
    if body is None:
        return None
    if isinstance(body, str):
        return body.encode("utf-8")
    if not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _open(
    target: Target,
    method: str,
    headers: dict[str, str],
    body: bytes | None,
    deadline: _Deadline,
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """Connect to a checked address, verify the peer, send the request."""
    last: Exception | None = None
    for address in target.addresses:
        try:
            sock = socket.create_connection(
                (str(address), target.port), timeout=deadline.left()
            )
        except OSError as exc:
            last = exc
            continue
        try:
            target.check_peer(sock.getpeername()[0])
            if target.scheme == "https":
                context = ssl.create_default_context()
                sock = context.wrap_socket(sock, server_hostname=target.host)
            conn_class = (
                http.client.HTTPSConnection
                if target.scheme == "https"
                else http.client.HTTPConnection
            )
            conn = conn_class(target.host, target.port, timeout=deadline.left())
            conn.sock = sock
            conn.request(method, target.path, body=body, headers=headers)
            return conn, conn.getresponse()
        except BaseException:
            sock.close()
            raise
    raise AiosError(
        f"cannot connect to {target.host}:{target.port}: {last}", code="connection_failed"
    )


def _read_chunks(
    conn: http.client.HTTPConnection,
    response: http.client.HTTPResponse,
    deadline: _Deadline,
):
    while True:
        if conn.sock is not None:
            conn.sock.settimeout(deadline.left())
        chunk = response.read1(_CHUNK)
        if not chunk:
            return
        yield chunk


def _read_body(
    conn: http.client.HTTPConnection,
    response: http.client.HTTPResponse,
    deadline: _Deadline,
    cap: int,
    *,
    strict: bool = True,
) -> bytes:
    """The body, at most `cap` bytes: over the cap is an error (or, not `strict`, cut)."""
    data = bytearray()
    for chunk in _read_chunks(conn, response, deadline):
        data += chunk
        if len(data) > cap:
            if not strict:
                return bytes(data[:cap])
            raise AiosError(f"response larger than {cap} bytes", code="response_too_large")
    return bytes(data)


_SCRIPT_TYPES = frozenset({"text/javascript", "application/javascript"})


def _decode(body: bytes, content_type: str) -> Any:
    mime = content_type.split(";", 1)[0].strip().lower()
    charset = "utf-8"
    for param in content_type.split(";")[1:]:
        key, _, value = param.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = value.strip('"')
    try:
        text = body.decode(charset, errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    # JSON, also when labelled as script (Apple's search API answers text/javascript)
    looks_json = mime in _SCRIPT_TYPES and text.lstrip()[:1] in ("{", "[")
    if mime.endswith("/json") or mime.endswith("+json") or looks_json:
        try:
            return json.loads(text)
        except ValueError:
            return text
    if not mime or mime.startswith(_TEXTUAL) or mime.endswith("+xml"):
        return text
    return {
        "content_type": mime,
        "size": len(body),
        "base64": base64.b64encode(body).decode(),
    }


def _save(
    conn: http.client.HTTPConnection,
    response: http.client.HTTPResponse,
    deadline: _Deadline,
    dest: Path,
    cap: int,
) -> int:
    """Stream the body into `dest` through a temp file; nothing is left on failure."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    size = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in _read_chunks(conn, response, deadline):
                size += len(chunk)
                if size > cap:
                    raise AiosError(
                        f"download larger than {cap} bytes", code="response_too_large"
                    )
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return size


def _save_target(ctx: ToolContext, save_to: str, url: str) -> Path:
    dest = resolve_in_workdir(ctx.app.workdir, save_to, arg="save_to")
    if dest.is_dir():  # a folder: name the file after the URL, cleaned (P4)
        name = os.path.basename(urlsplit(url).path).strip(". ") or "download"
        dest = resolve_in_workdir(ctx.app.workdir, str(dest / name), arg="save_to")
    if dest == ctx.app.workdir or dest.is_dir():
        raise InvalidArgs("save_to must name a file")
    return dest


def http_request(ctx: ToolContext, args: dict[str, Any]) -> Any:
    method = (args.get("method") or "GET").upper()
    url = _with_params(args["url"], args.get("params"))
    headers = {
        str(k): str(v)
        for k, v in (args.get("headers") or {}).items()
        if str(k).lower() not in _DROP_HEADERS
    }
    headers.setdefault("User-Agent", "TritonAIOS/0.1")
    headers["Accept-Encoding"] = "identity"
    headers["Connection"] = "close"
    body = _request_body(args.get("body"), headers)
    save_to = args.get("save_to")
    dest = _save_target(ctx, save_to, url) if save_to else None
    policy = policy_for(ctx)
    deadline = _Deadline(ctx.timeout)
    origin: tuple[str, str, int] | None = None
    try:
        for _hop in range(MAX_REDIRECTS + 1):
            target = check_url(url, policy)
            if origin is not None and target.origin != origin:
                headers = {
                    k: v for k, v in headers.items() if k.lower() not in _CROSS_ORIGIN_DROP
                }
            origin = target.origin
            conn, response = _open(target, method, headers, body, deadline)
            try:
                location = response.getheader("Location")
                if response.status in _REDIRECTS and location:
                    url = urljoin(url, location)
                    if response.status == 303 or (
                        response.status in (301, 302) and method not in ("GET", "HEAD")
                    ):
                        method, body = "GET", None
                    continue
                return _answer(ctx, args, conn, response, deadline, dest)
            finally:
                conn.close()
        raise AiosError(f"more than {MAX_REDIRECTS} redirects", code="too_many_redirects")
    except TimeoutError as exc:
        raise ToolTimeout(f"http_request took longer than {ctx.timeout:g}s") from exc
    except ssl.SSLError as exc:
        raise AiosError(f"TLS failed: {exc}", code="connection_failed") from exc
    except (http.client.HTTPException, OSError) as exc:
        raise AiosError(
            f"HTTP failed: {type(exc).__name__}: {exc}", code="connection_failed"
        ) from exc
    except ValueError as exc:  # e.g. a header value with a newline
        raise InvalidArgs(f"http_request: {exc}") from exc


def _answer(
    ctx: ToolContext,
    args: dict[str, Any],
    conn: http.client.HTTPConnection,
    response: http.client.HTTPResponse,
    deadline: _Deadline,
    dest: Path | None,
) -> Any:
    limits = ctx.settings.limits
    content_type = response.getheader("Content-Type") or ""
    ok = 200 <= response.status < 300
    if not ok and not args.get("raw"):
        snippet = _read_body(conn, response, deadline, 2000, strict=False)
        raise AiosError(
            f"HTTP {response.status} {response.reason}",
            code="http_error",
            detail={
                "status_code": response.status,
                "body": snippet.decode("utf-8", "replace"),
            },
        )
    if dest is not None and ok:
        size = _save(conn, response, deadline, dest, limits.download_bytes)
        return {
            "path": display_path(dest, ctx.app.workdir),
            "size": size,
            "content_type": content_type,
        }
    raw_body = _read_body(conn, response, deadline, limits.response_bytes)
    decoded = _decode(raw_body, content_type) if raw_body else None
    if args.get("raw"):
        return {
            "status_code": response.status,
            "headers": dict(response.getheaders()),
            "body": decoded,
        }
    return decoded
