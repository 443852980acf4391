"""A lean HTTP/1.1 client for the loopback hops between Triton's own processes.

The controller calls an app twice and the executor once for every instruction, so
the client's own cost is paid three times per answer. `http.client` parses every
response's headers with the `email` package and costs more CPU than the loopback
hop it measures; this client writes the request in one `sendall`, reads the answer
into one buffer and splits the headers itself. It speaks only what these peers
send: a status line, headers, then a body delimited by `Content-Length`, chunked
encoding, or the end of the connection (HTTP/1.0 peers such as a bare Flask app).

`Connection` keeps one socket open between requests (keep-alive) and notices before
reuse when the peer has closed it. It is not thread-safe: one thread uses it at a time.
Transport failures raise `OSError` (`TimeoutError` when the peer is late) or
`ProtocolViolation`, so callers translate them at their own boundary.
"""

from __future__ import annotations

import select
import socket
from dataclasses import dataclass

__all__ = ["Answer", "Connection", "ProtocolViolation"]

MAX_HEADER_BYTES = 64 << 10
MAX_BODY_BYTES = 64 << 20
_CHUNK = 65536


class ProtocolViolation(OSError):
    """The peer's answer is not well-formed HTTP/1.x."""


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # names lower-cased
    body: bytes


class Connection:
    """One keep-alive connection to `host:port`."""

    def __init__(self, host: str, port: int, timeout: float = 10.0):
        self.host = host
        self.port = port
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._buffer = b""

    # ------------------------------------------------------------ socket

    def _socket(self) -> socket.socket:
        sock = self._sock
        if sock is not None and self._dropped(sock):
            self.close()
            sock = None
        if sock is None:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sock = sock
            self._buffer = b""
        else:
            sock.settimeout(self.timeout)
        return sock

    @staticmethod
    def _dropped(sock: socket.socket) -> bool:
        """An idle connection with something to read was closed (or spoken on) by the
        peer: it cannot carry another request."""
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    @property
    def connected(self) -> bool:
        """A socket is open (it may still turn out closed by the peer: see `_dropped`)."""
        return self._sock is not None

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None
                self._buffer = b""

    # ----------------------------------------------------------- request

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """Send one request and read its whole answer; the connection stays open
        unless the peer said otherwise. Any failure closes it."""
        try:
            return self._exchange(method, path, body, headers or {})
        except BaseException:
            self.close()
            raise

    def _exchange(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> Answer:
        sock = self._socket()
        lines = [f"{method} {path} HTTP/1.1"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        sock.sendall(head + body if body else head)

        status, version, answer_headers = self._read_head(sock)
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            data = b""
        elif "chunked" in answer_headers.get("transfer-encoding", "").lower():
            data = self._read_chunked(sock)
        elif "content-length" in answer_headers:
            try:
                length = int(answer_headers["content-length"])
            except ValueError as exc:
                raise ProtocolViolation("bad Content-Length") from exc
            if length < 0 or length > MAX_BODY_BYTES:
                raise ProtocolViolation(f"Content-Length {length} out of bounds")
            data = self._read_exactly(sock, length)
        else:  # delimited by the end of the connection
            data = self._read_to_close(sock)
            answer_headers["connection"] = "close"
        connection = answer_headers.get("connection", "").lower()
        if connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive"):
            self.close()
        return Answer(status, answer_headers, data)

    # ------------------------------------------------------------ reading

    def _fill(self, sock: socket.socket) -> None:
        chunk = sock.recv(_CHUNK)
        if not chunk:
            raise ConnectionResetError("the peer closed the connection")
        self._buffer += chunk

    def _read_head(self, sock: socket.socket) -> tuple[int, str, dict[str, str]]:
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self._buffer) > MAX_HEADER_BYTES:
                raise ProtocolViolation("answer headers too large")
            self._fill(sock)
        head = self._buffer[:end].decode("latin-1")
        self._buffer = self._buffer[end + 4 :]
        status_line, _, rest = head.partition("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise ProtocolViolation(f"bad status line {status_line[:80]!r}")
        headers: dict[str, str] = {}
        for line in rest.split("\r\n") if rest else ():
            name, sep, value = line.partition(":")
            if not sep:
                raise ProtocolViolation(f"bad header line {line[:80]!r}")
            headers[name.strip().lower()] = value.strip()
        return int(parts[1]), parts[0], headers

    def _read_exactly(self, sock: socket.socket, length: int) -> bytes:
        while len(self._buffer) < length:
            self._fill(sock)
        data, self._buffer = self._buffer[:length], self._buffer[length:]
        return data

    def _read_line(self, sock: socket.socket) -> bytes:
        while True:
            end = self._buffer.find(b"\r\n")
            if end >= 0:
                line, self._buffer = self._buffer[:end], self._buffer[end + 2 :]
                return line
            if len(self._buffer) > MAX_HEADER_BYTES:
                raise ProtocolViolation("chunk header too long")
            self._fill(sock)

    def _read_chunked(self, sock: socket.socket) -> bytes:
        parts: list[bytes] = []
        size_so_far = 0
        while True:
            line = self._read_line(sock).split(b";", 1)[0].strip()
            try:
                size = int(line, 16)
            except ValueError as exc:
                raise ProtocolViolation("bad chunk size") from exc
            if size == 0:
                while self._read_line(sock):  # trailers, up to the empty line
                    pass
                return b"".join(parts)
            size_so_far += size
            if size_so_far > MAX_BODY_BYTES:
                raise ProtocolViolation("chunked body too large")
            parts.append(self._read_exactly(sock, size))
            if self._read_exactly(sock, 2) != b"\r\n":
                raise ProtocolViolation("chunk not followed by CRLF")

    def _read_to_close(self, sock: socket.socket) -> bytes:
        while True:
            if len(self._buffer) > MAX_BODY_BYTES:
                raise ProtocolViolation("body too large")
            chunk = sock.recv(_CHUNK)
            if not chunk:
                data, self._buffer = self._buffer, b""
                return data
            self._buffer += chunk
