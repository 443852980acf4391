"""The HTTP/1.1 server every Triton service runs on: one thread per connection.

Every instruction crosses four loopback hops (client → controller → app → executor
→ app), so a server's own latency is paid four times per answer. waitress reads
each request in its event-loop thread and hands it to a worker thread, then wakes
the loop again to finish: two thread wake-ups per request, each 0.1–0.2 ms on a
small VM, more than all the rest of an app's or the executor's work. Here the
thread that owns a connection reads the request, runs the WSGI app and writes the
answer itself: one wake-up per request. (`aios bench`: the probe instruction went
from about 4.6 ms to about 2.8 ms with nothing else changed.)

It speaks a strict subset of HTTP/1.1 (read by `aios_sdk.http_request`) — what
browsers, `requests`, `http.client` and `aios_sdk.loopback_http` send:
- request line `METHOD SP target SP HTTP/1.0|HTTP/1.1` (at most 8 KiB); at most 100
  header lines and 64 KiB of head; header names are tokens; folded lines, control
  characters and a missing `:` are refused (400);
- a body only with one `Content-Length`; `Transfer-Encoding` in a request is
  refused (501), which also rules out request smuggling between the two;
- a body of at most `preread_max` bytes (8 MiB; every service caps its own at 4 MiB
  or less) is read whole before the request takes a slot, within `idle_timeout`
  (408 otherwise), and the app reads it from memory (above 1 MiB, from a temporary
  file); a larger one is read from the socket as the app asks for it, which
  normally refuses it by its declared length (413);
- keep-alive unless the client says `Connection: close` (HTTP/1.0: unless it asks
  for keep-alive); `Expect: 100-continue` (HTTP/1.1) is answered before a body is
  read ahead, and for a larger body when the app reads it (an answer given before
  that closes the connection: no late 100); pipelined requests are answered in
  order;
- the answer carries the app's status and headers; a body of unknown length is sent
  chunked (HTTP/1.1) or ended by closing (HTTP/1.0); HEAD answers carry no body; a
  body that disagrees with the app's Content-Length is cut to it and closes.
Header names with `_` are dropped before they reach the app, so `X_AIOS_Token`
cannot pose as `X-AIOS-Token` (as waitress and gunicorn do).

Connections are served by worker threads that the server keeps until it stops (see
`_work` for why they must outlive their connections). Limits: `connection_limit`
open connections (one more is answered 503 by a short-lived thread that lingers
so the client can read it; beyond `TURN_AWAY_THREADS` of those at once it is only
closed), `threads` requests running at once (more wait for a slot); an idle
connection, or one whose request head or read-ahead body takes longer to arrive
(slowloris), is closed after `idle_timeout` seconds. As the body is read before
the slot is taken, clients sending slowly hold only their own connections: they
cannot keep the others' requests waiting (as with waitress, which buffers bodies
too). Host/Origin/token checks are the WSGI app's (`aios_runtime.edge`,
`aios_sdk.wsgi`): they hold whatever the server.
"""

from __future__ import annotations

import logging
import queue
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import IO, Any
from urllib.parse import unquote_to_bytes, urlsplit

from aios_sdk.http_request import (
    CONTINUE,
    PREREAD_MAX,
    RECV_BYTES,
    Closed,
    Reader,
    Refused,
    Request,
    Stalled,
    StreamedBody,
    blocks_next_request,
    error_bytes,
)

__all__ = ["LoopbackServer"]

log = logging.getLogger("aios.http")

TURN_AWAY_THREADS = 16  # 503s lingering at once beyond connection_limit
# closing after an early answer: read and drop what the client still sends
LINGER_SECONDS = 2.0
LINGER_BYTES = 64 << 20

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

_OVERLOADED = error_bytes(503, "too many open connections; retry shortly")


def _linger(sock: socket.socket) -> None:
    """Close our side, then read what the client still sends before closing.

    Closing a socket with unread input makes the kernel reset the connection, and
    the client may lose the answer it was sent (a 413 while it still uploads).
    """
    try:
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(LINGER_SECONDS)
        deadline = time.monotonic() + LINGER_SECONDS
        left = LINGER_BYTES
        while left > 0 and time.monotonic() < deadline:
            data = sock.recv(RECV_BYTES)
            if not data:
                return
            left -= len(data)
    except OSError:
        pass


class LoopbackServer:
    """A WSGI server on 127.0.0.1:`port` (0: any free port)."""

    def __init__(
        self,
        app: WSGIApp,
        port: int = 0,
        *,
        threads: int = 8,
        connection_limit: int = 200,
        idle_timeout: float = 120.0,
        host: str = "127.0.0.1",
        preread_max: int = PREREAD_MAX,
    ):
        self.app = app
        self.idle_timeout = idle_timeout
        self.connection_limit = connection_limit
        self.preread_max = preread_max
        self._slots = threading.BoundedSemaphore(max(1, threads))
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._listener.bind((host, port))
            self._listener.listen(1024)
        except OSError:
            self._listener.close()
            raise
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[socket.socket, Any] | None] = (
            queue.SimpleQueue()
        )
        self._workers = 0  # threads started, each serving or idle
        self._idle_workers = 0
        self._turning_away = 0  # threads answering 503 beyond connection_limit
        self._stopping = False

    # ------------------------------------------------------------ lifecycle

    def serve_forever(self) -> None:
        """Accept connections until `stop`; a worker thread serves each one."""
        while not self._stopping:
            try:
                sock, address = self._listener.accept()
            except OSError as exc:
                if self._stopping:
                    return
                log.warning("accept failed: %s", exc)  # e.g. out of file descriptors
                time.sleep(0.05)
                continue
            with self._lock:
                crowded = len(self._open) >= self.connection_limit
                if not crowded:
                    self._open.add(sock)
                    spawn = self._idle_workers == 0
                    if spawn:
                        self._workers += 1
                    else:
                        self._idle_workers -= 1
            if crowded:
                self._turn_away(sock)
                continue
            if spawn:
                try:
                    threading.Thread(
                        target=self._work, name=f"http-{self.port}", daemon=True
                    ).start()
                except RuntimeError:  # the system has no thread to give: turn away
                    log.warning("no thread for a new connection; answered 503")
                    with self._lock:
                        self._workers -= 1
                        self._open.discard(sock)
                    self._turn_away(sock)
                    continue
            self._queue.put((sock, address))

    def _work(self) -> None:
        """A worker: serve one connection after the other until the server stops.

        Workers are kept, never ended while the server runs: a child process started
        while serving a request (the executor's tools, the controller's apps) is
        bound to the life of the thread that started it by `PR_SET_PDEATHSIG`, so
        that thread must outlive the connection.
        """
        while True:
            item = self._queue.get()
            if item is None:
                return
            self._serve_connection(*item)
            with self._lock:
                self._idle_workers += 1

    def stop(self) -> None:
        """Stop accepting, close every open connection and end the workers."""
        self._stopping = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes a blocked accept()
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            open_now = list(self._open)
            workers = self._workers
        for sock in open_now:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for _ in range(workers):
            self._queue.put(None)

    def _turn_away(self, sock: socket.socket) -> None:
        """Answer 503 without holding up the accept loop.

        Closing at once would reset a connection whose request is still coming or
        unread, and the client could lose the 503: a thread sends it and lingers.
        Beyond `TURN_AWAY_THREADS` of those at once, the 503 only goes out if it fits
        in the socket's buffer now.
        """
        with self._lock:
            lingering = self._turning_away < TURN_AWAY_THREADS
            if lingering:
                self._turning_away += 1
        if lingering:
            try:
                threading.Thread(
                    target=self._say_overloaded, args=(sock,),
                    name=f"http-busy-{self.port}", daemon=True,
                ).start()  # fmt: skip
                return
            except RuntimeError:  # no thread to be had: close as below
                with self._lock:
                    self._turning_away -= 1
        try:
            sock.setblocking(False)
            sock.send(_OVERLOADED)
        except OSError:
            pass
        finally:
            sock.close()

    def _say_overloaded(self, sock: socket.socket) -> None:
        try:
            sock.settimeout(LINGER_SECONDS)
            sock.sendall(_OVERLOADED)
            _linger(sock)
        except OSError:
            pass
        finally:
            sock.close()
            with self._lock:
                self._turning_away -= 1

    # ---------------------------------------------------------- connection

    def _serve_connection(self, sock: socket.socket, address: tuple[str, int]) -> None:
        ended_by_peer = False
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(self.idle_timeout)
            reader = Reader(sock, self.idle_timeout)
            while not self._stopping:
                try:
                    head = reader.head()
                    if head is None:
                        ended_by_peer = True
                        return
                    request = Request(head)
                    length = request.content_length()
                    if not self._answer(sock, reader, request, length, address):
                        return
                except Refused as refused:
                    sock.sendall(error_bytes(refused.status, refused.message))
                    return
        except (Closed, OSError):
            ended_by_peer = True
        except Exception:  # a bug here must not go unnoticed, nor kill the server
            log.exception("connection from %s failed", address)
        finally:
            with self._lock:
                self._open.discard(sock)
            if not ended_by_peer and not self._stopping:
                _linger(sock)
            try:
                sock.close()
            except OSError:
                pass

    def _environ(
        self,
        request: Request,
        body: IO[bytes] | StreamedBody,
        length: int,
        address: tuple[str, int],
    ) -> dict[str, Any]:
        target = request.target
        if not target.startswith("/") and "://" in target:  # absolute form
            parts = urlsplit(target)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        path, _, query = target.partition("?")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": request.method,
            "SCRIPT_NAME": "",
            "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
            "QUERY_STRING": query,
            "SERVER_NAME": self.host,
            "SERVER_PORT": str(self.port),
            "SERVER_PROTOCOL": request.version,
            "SERVER_SOFTWARE": "triton-aios",
            "REMOTE_ADDR": address[0],
            "REMOTE_PORT": str(address[1]),
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": body,
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        if length or request.all("content-length"):
            environ["CONTENT_LENGTH"] = str(length)
        for name, value in request.headers:
            if "_" in name or name == "content-length":
                continue
            key = (
                "CONTENT_TYPE"
                if name == "content-type"
                else "HTTP_" + name.upper().replace("-", "_")
            )
            environ[key] = f"{environ[key]},{value}" if key in environ else value
        return environ

    def _answer(
        self,
        sock: socket.socket,
        reader: Reader,
        request: Request,
        length: int,
        address: tuple[str, int],
    ) -> bool:
        """Serve one request; True when the connection stays open for the next."""
        tokens = request.connection_tokens()
        if request.version == "HTTP/1.1":
            keep_alive = "close" not in tokens
        else:
            keep_alive = "keep-alive" in tokens and "close" not in tokens
        expecting = request.version == "HTTP/1.1" and any(
            v.lower() == "100-continue" for v in request.all("expect")
        )
        if length > self.preread_max:
            body: IO[bytes] | StreamedBody = StreamedBody(reader, length, expecting)
            return self._run(sock, request, body, length, keep_alive, address)
        # Read the body before taking a slot: a client sending slowly must hold
        # only its own connection. A client holding it back waits for a 100.
        if expecting and length and not reader.buffer:
            sock.sendall(CONTINUE)
        try:
            body = reader.body(length)
        except Stalled as exc:
            raise Refused(408, "the request body took too long to arrive") from exc
        with body:
            return self._run(sock, request, body, length, keep_alive, address)

    def _run(
        self,
        sock: socket.socket,
        request: Request,
        body: IO[bytes] | StreamedBody,
        length: int,
        keep_alive: bool,
        address: tuple[str, int],
    ) -> bool:
        """Run the app in a slot and send its answer; True to keep the connection."""
        environ = self._environ(request, body, length, address)
        started: list[Any] = []

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Callable[[bytes], None]:
            if exc_info is not None and sent[0]:
                raise exc_info[1].with_traceback(exc_info[2])
            started[:] = [status, headers]
            return written.append

        written: list[bytes] = []  # the legacy write() callable's data
        sent = [False]
        with self._slots:
            try:
                result = self.app(environ, start_response)
            except Exception:
                log.exception("the app failed on %s %s", request.method, request.target)
                sock.sendall(error_bytes(500, "the server could not answer this request"))
                return False
            try:
                keep_alive = self._send(
                    sock, request, body, started, written, result, keep_alive, sent
                )
            except OSError:
                return False
            except Exception:
                log.exception("the app failed on %s %s", request.method, request.target)
                if not sent[0]:
                    sock.sendall(
                        error_bytes(500, "the server could not answer this request")
                    )
                return False
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        if isinstance(body, StreamedBody) and body.left:
            if blocks_next_request(body):
                return False  # _send said so: Connection: close
            body.read(body.left)
            if body.left:
                return False
        return keep_alive

    def _send(
        self,
        sock: socket.socket,
        request: Request,
        body: IO[bytes] | StreamedBody,
        started: list[Any],
        written: list[bytes],
        result: Iterable[bytes],
        keep_alive: bool,
        sent: list[bool],
    ) -> bool:
        """Write the status, headers and body; True when keep-alive still holds.

        A body longer than the app's Content-Length is cut there (the surplus would
        pass for the next answer) and, like a shorter one, ends the connection.
        """
        chunks = iter(result)
        first = next(chunks, b"")  # WSGI: start_response may be called this late
        if not started:
            raise RuntimeError("the WSGI app did not call start_response")
        status, headers = started
        lines = [f"HTTP/1.1 {status}\r\n"]
        declared = None
        for name, value in headers:
            if "\r" in name or "\n" in name or "\r" in value or "\n" in value:
                raise ValueError(f"line break in response header {name!r}")
            low = name.lower()
            if low == "content-length":
                declared = int(value)
                if declared < 0:
                    raise ValueError(f"negative Content-Length {value!r}")
                continue  # written once, below
            if low in ("connection", "transfer-encoding", "keep-alive"):
                continue  # hop-by-hop: this server decides them
            lines.append(f"{name}: {value}\r\n")
        if blocks_next_request(body):
            keep_alive = False
        head_only = request.method == "HEAD" or status[:3] in ("204", "304")
        if declared is not None:
            lines.append(f"Content-Length: {declared}\r\n")
        chunked = declared is None and not head_only and request.version == "HTTP/1.1"
        if declared is None and not head_only and not chunked:
            keep_alive = False  # HTTP/1.0 without a length: the end is the close
        if chunked:
            lines.append("Transfer-Encoding: chunked\r\n")
        if not keep_alive:
            lines.append("Connection: close\r\n")
        elif request.version == "HTTP/1.0":
            lines.append("Connection: keep-alive\r\n")
        lines.append("\r\n")
        out = "".join(lines).encode("latin-1")
        if head_only:
            sock.sendall(out)
            sent[0] = True
            return keep_alive
        total = 0  # bytes the app gave

        def frame(chunk: bytes) -> bytes:
            nonlocal total
            total += len(chunk)
            if declared is not None and total > declared:
                chunk = chunk[: max(0, declared - (total - len(chunk)))]
            if chunked and chunk:
                return b"%x\r\n%s\r\n" % (len(chunk), chunk)
            return chunk

        out += frame(b"".join([*written, first]))
        written.clear()
        sock.sendall(out)
        sent[0] = True
        for chunk in chunks:
            if written:
                chunk = b"".join(written) + chunk
                written.clear()
            if declared is not None and total > declared:
                break  # the connection ends; no need to run the app further
            data = frame(chunk)
            if data:
                sock.sendall(data)
        if written:
            data = frame(b"".join(written))
            if data:
                sock.sendall(data)
        if chunked:
            sock.sendall(b"0\r\n\r\n")
        if declared is not None and total != declared:
            log.warning(
                "%s %s: the app gave %d%s bytes but declared %d",
                request.method, request.target, total,
                "+" if total > declared else "", declared,
            )  # fmt: skip
            return False
        return keep_alive
