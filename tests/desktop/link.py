"""A TCP link between the browser and the controller that a test can cut and mend.

The desktop page is loaded through the link's own loopback port, so every request
of the page and its event stream pass through it. `cut()` closes the listening
socket and every open connection (the page sees what it sees when the controller
stops: its event stream ends, new connections are refused); `mend()` listens on
the same port again, so the same controller is reachable at the same address.
Chromium's offline emulation is no substitute: it refuses new requests but keeps
an open event stream alive.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Link:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self.port = self._listen(0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut(self) -> None:
        """Refuse new connections and end the open ones."""
        with self._lock:
            listener, self._listener = self._listener, None
            conns, self._open = self._open, set()
        if listener is not None:
            listener.close()
        for conn in conns:
            _close(conn)

    def mend(self) -> None:
        """Listen on the same port again."""
        self._listen(self.port)

    def close(self) -> None:
        self.cut()

    def _listen(self, port: int) -> int:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        with self._lock:
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return listener.getsockname()[1]

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._listener is not listener:  # cut meanwhile
                    _close(client)
                    _close(upstream)
                    continue
                self._open.update((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        except OSError:
            pass
        for conn in (src, dst):
            _close(conn)
        with self._lock:
            self._open.discard(src)
            self._open.discard(dst)


def _close(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()


@contextmanager
def link_to(port: int) -> Iterator[Link]:
    link = Link(port)
    try:
        yield link
    finally:
        link.close()
