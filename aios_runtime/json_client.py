"""The JSON-over-HTTP client every hop between Triton's own processes uses.

The controller's calls to apps and to the executor, and an app's `call_tool`, go
through `request_json`: one `urllib3.HTTPConnectionPool` per peer (`pool_for`), shared
by every thread of the process, so a hop reuses a kept-alive connection and a peer
sees as many connections as calls ran at once; `send_json` does the same over a pool
of the caller's own (`new_pool`). A pooled connection the peer has closed (restart,
idle timeout) is noticed before reuse and replaced; a request is never retried, since
a hop such as `POST /run` is not idempotent. Each call has its own timeout and a cap
on the answer's size. Transport failures are translated at this boundary into the
error vocabulary: `AppUnreachable` when nothing answers (`PeerTimeout`, a kind of it,
when the answer is late) and `BadAppReply` when the answer is larger than allowed; a
status other than 2xx is not an error here, it is in the returned `JsonAnswer` for
the caller to judge.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import urllib3
from urllib3.connection import HTTPConnection
from urllib3.exceptions import HTTPError, NewConnectionError
from urllib3.exceptions import TimeoutError as Urllib3TimeoutError

from aios_protocol.errors import AppUnreachable, BadAppReply

__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_IDLE_PER_PEER",
    "TOKEN_HEADER",
    "JsonAnswer",
    "PeerTimeout",
    "abort",
    "close_pools",
    "json_bytes",
    "new_pool",
    "pool_for",
    "request_json",
    "send_json",
    "watched",
]

TOKEN_HEADER = "X-AIOS-Token"  # aios_runtime.edge.TOKEN_HEADER, without importing Flask
MAX_IDLE_PER_PEER = 32  # kept-alive connections per peer; more are closed after use
MAX_ANSWER_BYTES = 64 << 20  # the largest answer body read from a peer

# json.dumps with arguments builds a new encoder on every call; one is enough
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def json_bytes(body: Any) -> bytes:
    """Compact UTF-8 JSON, keys in their given order (`json.dumps`'s values and errors)."""
    return _COMPACT(body).encode("utf-8")


class PeerTimeout(AppUnreachable):
    """The peer accepted the request but did not answer within the call's timeout
    (its code stays `app_unreachable`; the user reads that it answered too late)."""

    variant = "timeout"


@dataclass
class JsonAnswer:
    """One HTTP answer: its status, the body parsed as JSON (None when the body is
    empty or not JSON) and the raw body."""

    status: int
    body: Any
    raw: bytes


_watch = threading.local()


class _WatchedConnection(HTTPConnection):
    """A connection that names itself to the sending thread's watcher (`watched`)."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        watcher = getattr(_watch, "watcher", None)
        if watcher is not None:
            watcher(self)
        super().request(*args, **kwargs)


class _Pool(urllib3.HTTPConnectionPool):
    ConnectionCls = _WatchedConnection


@contextmanager
def watched(watcher: Callable[[HTTPConnection], None]) -> Iterator[None]:
    """Within the block, every request this thread sends is first announced to
    `watcher` with the connection carrying it, so another thread can `abort` it."""
    outer = getattr(_watch, "watcher", None)
    _watch.watcher = watcher
    try:
        yield
    finally:
        _watch.watcher = outer


def abort(connection: HTTPConnection) -> None:
    """Shut a connection down from any thread: a call waiting on it fails at once
    (as `AppUnreachable`); the pool then drops that connection."""
    sock = connection.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


_pools: dict[tuple[str, int], urllib3.HTTPConnectionPool] = {}
_pools_lock = threading.Lock()


def new_pool(
    host: str, port: int, maxsize: int = MAX_IDLE_PER_PEER
) -> urllib3.HTTPConnectionPool:
    """A pool keeping up to `maxsize` connections to `host:port` (more are opened when
    more calls run at once, and closed after use); requests are never retried."""
    return _Pool(host, port, maxsize=maxsize, block=False, retries=False)


def pool_for(host: str, port: int) -> urllib3.HTTPConnectionPool:
    """The process's shared connection pool to `host:port` (created on first use)."""
    key = (host, port)
    pool = _pools.get(key)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(key)
            if pool is None:
                pool = _pools[key] = new_pool(host, port)
    return pool


def close_pools() -> None:
    """Close every kept connection of this process (new calls open new ones)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()


def request_json(
    method: str,
    url: str,
    body: Any = None,
    *,
    token: str | None = None,
    timeout: float = 10.0,
    what: str = "service",
    max_bytes: int = MAX_ANSWER_BYTES,
) -> JsonAnswer:
    """`send_json` to `url` over the process's shared pool to its host and port."""
    parts = urlsplit(url)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    pool = pool_for(parts.hostname or "127.0.0.1", parts.port or 80)
    return send_json(
        pool,
        method,
        target,
        body,
        token=token,
        timeout=timeout,
        what=what,
        max_bytes=max_bytes,
    )


def send_json(
    pool: urllib3.HTTPConnectionPool,
    method: str,
    target: str,
    body: Any = None,
    *,
    token: str | None = None,
    timeout: float = 10.0,
    what: str = "service",
    max_bytes: int = MAX_ANSWER_BYTES,
) -> JsonAnswer:
    """Send `body` (when not None) as JSON to `target` (path and query) of the pool's
    peer and read the whole answer.

    `token` goes in `X-AIOS-Token`; `timeout` bounds the connect and every wait for
    the answer. Raises `AppUnreachable` (naming `what`) when nothing answers,
    `PeerTimeout` when the answer is late, `BadAppReply` when it has more than
    `max_bytes` bytes; `TypeError`/`ValueError` when `body` is not JSON.
    """
    headers = {"Accept": "application/json"}
    if token:
        headers[TOKEN_HEADER] = token
    payload = None
    if body is not None:
        payload = json_bytes(body)
        headers["Content-Type"] = "application/json"
    try:
        response = pool.urlopen(
            method,
            target,
            body=payload,
            headers=headers,
            timeout=timeout,
            preload_content=False,
            release_conn=False,
        )
        try:
            raw = _read_capped(response, max_bytes, what)
        except BaseException:
            response.close()  # a half-read connection cannot carry another request
            raise
        finally:
            response.release_conn()
    except NewConnectionError as exc:  # urllib3 makes it a kind of ConnectTimeoutError
        raise AppUnreachable(f"{what} is not reachable ({_reason(exc)})") from exc
    except Urllib3TimeoutError as exc:
        raise PeerTimeout(f"{what} did not answer within {timeout:g} s") from exc
    except (HTTPError, http.client.HTTPException, OSError) as exc:
        raise AppUnreachable(f"{what} is not reachable ({_reason(exc)})") from exc
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:  # not JSON, or not UTF-8 (UnicodeDecodeError is a ValueError)
        parsed = None
    return JsonAnswer(response.status, parsed, raw)


def _read_capped(response: urllib3.BaseHTTPResponse, max_bytes: int, what: str) -> bytes:
    declared = response.length_remaining  # None when chunked or delimited by close
    if declared is not None and declared > max_bytes:
        raise BadAppReply(f"{what} answered {declared} bytes; at most {max_bytes} are read")
    raw = response.read() if declared is not None else response.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise BadAppReply(f"{what} answered more than {max_bytes} bytes")
    if declared is None:
        response.drain_conn()  # the end of a chunked body, so the connection is reusable
    return raw


def _reason(exc: BaseException) -> str:
    """The lowest cause's class name (`ConnectionRefusedError` rather than urllib3's
    `NewConnectionError` wrapper)."""
    while exc.__context__ is not None and isinstance(exc, HTTPError):
        exc = exc.__context__
    return type(exc).__name__
