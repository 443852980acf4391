"""Reading one HTTP/1.1 request off a socket, strictly (`aios_sdk.http_server`).

`Reader` holds what a connection received and not consumed: `head()` is the next
request's head within one deadline (slowloris), `body(n)` reads a body whole
(memory, or a temporary file above `PREREAD_IN_MEMORY`), and `StreamedBody` is the
`wsgi.input` of a body too large to read ahead. `Request` parses a head and refuses
what the server does not speak (`Refused`: status and message, answered with
`error_bytes` in the one JSON error shape). The limits are the module's constants.
"""

from __future__ import annotations

import io
import json
import re
import socket
import tempfile
import time
from typing import IO, Any

__all__ = [
    "CONTINUE",
    "MAX_DRAIN",
    "MAX_HEADERS",
    "MAX_HEAD_BYTES",
    "MAX_REQUEST_LINE",
    "PREREAD_IN_MEMORY",
    "PREREAD_MAX",
    "RECV_BYTES",
    "Closed",
    "Reader",
    "Refused",
    "Request",
    "Stalled",
    "StreamedBody",
    "blocks_next_request",
    "error_bytes",
]

MAX_REQUEST_LINE = 8 << 10
MAX_HEAD_BYTES = 64 << 10
MAX_HEADERS = 100
MAX_DRAIN = 1 << 20  # unread body bytes skipped to keep a connection; more: close it
PREREAD_MAX = 8 << 20  # bodies up to this are read whole before the app runs
PREREAD_IN_MEMORY = 1 << 20  # ... and kept in memory; larger: in a temporary file
RECV_BYTES = 65536

_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
_TARGET = re.compile(rb"[\x21-\x7e]+\Z")  # visible ASCII, no spaces or controls
_FIELD_VALUE = re.compile(rb"[\t\x20-\x7e\x80-\xff]*\Z")
_REASONS = {
    400: "Bad Request",
    408: "Request Timeout",
    413: "Payload Too Large",
    414: "URI Too Long",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}
_CODES = {413: "payload_too_large", 503: "overloaded", 500: "internal_error"}


class Refused(Exception):
    """The request cannot be served: answer `status` with `message`, then close."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class Closed(Exception):
    """The client went away (or stalled past the idle timeout)."""


class Stalled(Closed):
    """The client took longer than the idle timeout to send what it announced."""


def error_bytes(status: int, message: str, *, close: bool = True) -> bytes:
    body = json.dumps(
        {
            "status": "error",
            "error": {"code": _CODES.get(status, "invalid_request"), "message": message},
        },
        ensure_ascii=False,
    ).encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        "Content-Type: application/json\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        f"Content-Length: {len(body)}\r\n"
        + ("Connection: close\r\n" if close else "")
        + "\r\n"
    )
    return head.encode("latin-1") + body


CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class Reader:
    """The bytes a connection has received and not consumed yet."""

    def __init__(self, sock: socket.socket, timeout: float):
        self.sock = sock
        self.timeout = timeout  # the socket's own: the longest wait for any bytes
        self.buffer = b""

    def _fill(self, deadline: float | None = None) -> None:
        try:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Stalled("the request took too long to arrive")
                self.sock.settimeout(left)
            data = self.sock.recv(RECV_BYTES)
        except TimeoutError as exc:
            raise Stalled(str(exc)) from exc
        except OSError as exc:
            raise Closed(str(exc)) from exc
        if not data:
            raise Closed("peer closed")
        self.buffer += data

    def head(self) -> bytes | None:
        """The next request's head (up to the blank line); None at a clean end.

        The whole head must come within `timeout`, or the connection is dropped: a
        client dribbling a byte now and then (slowloris) never lets a single `recv`
        time out.
        """
        try:
            return self._head(time.monotonic() + self.timeout)
        finally:
            self.sock.settimeout(self.timeout)  # for the body and the answer

    def _head(self, deadline: float) -> bytes | None:
        # a client may send empty lines before a request (RFC 9112 §2.2)
        while True:
            if not self.buffer:
                try:
                    self._fill(deadline)
                except Closed:
                    return None
            stripped = self.buffer.lstrip(b"\r\n")
            if stripped:
                self.buffer = stripped
                break
            self.buffer = b""
        while True:
            # the limits hold for a head that came whole as for one still coming
            end = self.buffer.find(b"\r\n\r\n")
            head = self.buffer if end < 0 else self.buffer[:end]
            first = head.find(b"\r\n")
            if (first < 0 and len(head) > MAX_REQUEST_LINE) or first > MAX_REQUEST_LINE:
                raise Refused(414, "request line too long")
            if len(head) > MAX_HEAD_BYTES:
                raise Refused(431, "request head too large")
            if end >= 0:
                self.buffer = self.buffer[end + 4 :]
                return head
            self._fill(deadline)

    def body(self, length: int) -> IO[bytes]:
        """The next `length` bytes as a file at its start; all within `timeout`.

        Bodies above `PREREAD_IN_MEMORY` go to a temporary file, so that clients
        holding `connection_limit` connections cannot make the server hold
        `connection_limit` × `PREREAD_MAX` bytes of memory.
        """
        if length <= len(self.buffer):  # it came with the head: the usual case
            data, self.buffer = self.buffer[:length], self.buffer[length:]
            return io.BytesIO(data)
        sink: IO[bytes] = io.BytesIO()
        if length > PREREAD_IN_MEMORY:
            sink = tempfile.TemporaryFile()  # noqa: SIM115 - the caller closes it
        deadline = time.monotonic() + self.timeout
        try:
            while length > 0:
                if not self.buffer:
                    self._fill(deadline)
                data, self.buffer = self.buffer[:length], self.buffer[length:]
                sink.write(data)
                length -= len(data)
        except BaseException:
            sink.close()
            raise
        finally:
            self.sock.settimeout(self.timeout)
        sink.seek(0)
        return sink

    def read(self, size: int) -> bytes:
        """At most `size` bytes (fewer only when the buffer had some)."""
        if not self.buffer:
            self._fill()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def line(self, size: int) -> bytes:
        """At most `size` bytes up to and with a newline, from what is buffered."""
        if not self.buffer:
            self._fill()
        end = self.buffer.find(b"\n", 0, size)
        take = size if end < 0 else end + 1
        data, self.buffer = self.buffer[:take], self.buffer[take:]
        return data


class StreamedBody:
    """`wsgi.input` of a body above `preread_max`: read from the socket on demand.

    With `Expect: 100-continue` the client waits for `100 Continue` before it sends
    the body: that goes out on the first read (`expecting` until then).
    """

    def __init__(self, reader: Reader, length: int, expecting: bool):
        self._reader = reader
        self.left = length
        self.expecting = expecting and length > 0

    def _continue(self) -> None:
        if self.expecting:
            self.expecting = False
            self._reader.sock.sendall(CONTINUE)

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0 or size > self.left:
            size = self.left
        if size == 0:
            return b""
        self._continue()
        parts = []
        while size > 0:
            try:
                data = self._reader.read(size)
            except Closed:
                break  # the app sees a short body; the connection ends after it
            parts.append(data)
            size -= len(data)
            self.left -= len(data)
        return b"".join(parts)

    def readline(self, size: int | None = -1) -> bytes:
        limit = self.left if size is None or size < 0 else min(size, self.left)
        if limit == 0:
            return b""
        self._continue()
        parts: list[bytes] = []
        while limit > 0:
            try:
                data = self._reader.line(limit)
            except Closed:
                break
            parts.append(data)
            limit -= len(data)
            self.left -= len(data)
            if data.endswith(b"\n"):
                break
        return b"".join(parts)

    def readlines(self, hint: int = -1) -> list[bytes]:
        return list(iter(self.readline, b""))

    def __iter__(self) -> Any:
        return iter(self.readline, b"")


class Request:
    """One parsed request head."""

    def __init__(self, head: bytes):
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3 or not _TOKEN.match(parts[0]) or not _TARGET.match(parts[1]):
            raise Refused(400, "malformed request line")
        method, target, version = parts
        if version not in (b"HTTP/1.1", b"HTTP/1.0"):
            if version.startswith(b"HTTP/") and version[5:6].isdigit():
                raise Refused(505, "only HTTP/1.0 and HTTP/1.1 are spoken here")
            raise Refused(400, "malformed request line")
        if len(lines) - 1 > MAX_HEADERS:
            raise Refused(431, f"more than {MAX_HEADERS} header lines")
        self.method = method.decode("ascii")
        self.target = target.decode("ascii")
        self.version = version.decode("ascii")
        self.headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not _TOKEN.match(name):  # also refuses folded lines
                raise Refused(400, "malformed header line")
            value = value.strip(b" \t")
            if not _FIELD_VALUE.match(value):
                raise Refused(400, "control characters in a header value")
            self.headers.append((name.decode("ascii").lower(), value.decode("latin-1")))

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name]

    def connection_tokens(self) -> set[str]:
        return {
            token.strip().lower()
            for value in self.all("connection")
            for token in value.split(",")
        }

    def content_length(self) -> int:
        if self.all("transfer-encoding"):
            raise Refused(501, "request bodies must have a Content-Length")
        values = {v.strip() for v in self.all("content-length")}
        if not values:
            return 0
        if len(values) > 1:
            raise Refused(400, "conflicting Content-Length headers")
        text = values.pop()
        if not text.isdigit() or not text.isascii() or len(text) > 18:
            raise Refused(400, "malformed Content-Length")
        return int(text)


def blocks_next_request(body: IO[bytes] | StreamedBody) -> bool:
    """An unread body too large to skip, or one the client holds back until a
    100 Continue that never came: no room is left for another request."""
    return isinstance(body, StreamedBody) and (body.left > MAX_DRAIN or body.expecting)
