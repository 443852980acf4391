"""Serving a WSGI app on 127.0.0.1 with waitress: `start_server(app, port) -> ServerHandle`.

Every Triton service (controller, executor, apps) is a Flask app with the edge of
`aios_runtime.edge` installed, and runs on waitress through this module, which fixes
the adjustments they share: loopback only; `poll()` instead of `select()` (more than
1024 open descriptors); `connection_limit` open connections (one more waits in the
listen backlog until one closes); an idle connection closed after `idle_timeout`
seconds; request bodies above `max_request_body_size` refused by waitress (413) before
they are read, smaller ones read whole before a worker thread runs the app (a slow
sender holds no thread); no `Server:` banner. Each chunk a streaming response yields
(Server-Sent Events) is written to the socket at once (waitress's `send_bytes` is 1).

`threads` worker threads run requests (more wait); they live as long as the server,
so a child process started while serving a request with `PR_SET_PDEATHSIG` is not
killed when a connection ends.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from waitress import wasyncore
from waitress.server import BaseWSGIServer, create_server

__all__ = ["DEFAULT_BODY_CEILING", "ServerHandle", "start_server"]

log = logging.getLogger("aios.serving")

# waitress refuses bodies above this before reading them; every service's own limit
# (`Edge(max_body=...)`, 4 MiB by default) is lower and answered in the JSON error shape
DEFAULT_BODY_CEILING = 8 << 20

WSGIApp = Callable[..., Any]


class ServerHandle:
    """A waitress server on 127.0.0.1; `stop()` ends it from any thread."""

    # The `type: ignore`s below are gaps of types-waitress, which declares a server's
    # `trigger` an int, `active_channels` one channel, no `effective_port`, and an int
    # `timeout` for the dispatcher's shutdown (waitress takes seconds as a float).

    def __init__(self, server: BaseWSGIServer):
        self._server = server
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self.port: int = int(server.effective_port)  # type: ignore[attr-defined]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def serve_forever(self) -> None:
        """Run the event loop in this thread until `stop`."""
        self._thread = threading.current_thread()
        try:
            self._server.run()
        finally:
            self._done.set()

    def _close_connections(self) -> None:
        """In the event loop's thread: close every connection and the listening socket.
        The trigger stays open: a worker still finishing a request pulls it."""
        for channel in list(self._server.active_channels.values()):  # type: ignore[attr-defined]
            channel.handle_close()
        # the listener only: the server's own close() would close the trigger too
        wasyncore.dispatcher.close(self._server)

    def _close_trigger(self, workers_ended: bool) -> None:
        """In the event loop's thread: take the trigger out of the loop, which then has
        nothing left to watch and returns. Its pipe is closed only when no worker is
        left: waitress writes to the pipe's number without checking it is still open,
        and a number closed under a late worker is soon another file's (a pipe end,
        a socket) that the write would hit."""
        trigger = self._server.trigger
        if workers_ended:
            trigger.close()  # type: ignore[attr-defined]
        else:  # a worker outlived the timeout: two descriptors left open, harmlessly
            trigger.del_channel()  # type: ignore[attr-defined]

    def _in_loop(self, step: Callable[[], None], timeout: float) -> None:
        """Run `step` in the event loop's thread (at once when that is this thread or
        the loop is not running) and wait for it."""
        loop = self._thread
        if (
            loop is None
            or not loop.is_alive()
            or self._done.is_set()
            or (loop is threading.current_thread())
        ):
            step()
            return
        ran = threading.Event()

        def run() -> None:
            try:
                step()
            finally:
                ran.set()

        self._server.trigger.pull_trigger(run)  # type: ignore[attr-defined]
        ran.wait(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """Close the listening socket and every connection, end the worker threads
        (each finishes the request it runs, within `timeout`), then the event loop.

        The sockets are closed in the event loop's own thread (through waitress's
        trigger); the loop returns once nothing is left to watch.
        """
        self._in_loop(self._close_connections, timeout)
        dispatcher = self._server.task_dispatcher
        dispatcher.shutdown(cancel_pending=True, timeout=timeout)  # type: ignore[arg-type]
        self._in_loop(partial(self._close_trigger, not dispatcher.threads), timeout)
        loop = self._thread
        if loop is not None and loop is not threading.current_thread():
            self._done.wait(timeout)
        self._done.set()


def start_server(
    app: WSGIApp,
    port: int = 0,
    *,
    threads: int = 8,
    background: bool = True,
    connection_limit: int = 200,
    idle_timeout: int = 120,
    max_request_body_size: int = DEFAULT_BODY_CEILING,
) -> ServerHandle:
    """Serve the WSGI `app` on 127.0.0.1:`port` (0 picks a free port).

    Raises `OSError` when the port is taken. With `background=False` this blocks in
    the caller's thread until the server is stopped (an app's or the executor's main
    thread); otherwise the event loop runs in a daemon thread.
    """
    server = create_server(
        app,
        host="127.0.0.1",
        port=port,
        threads=threads,
        # waitress counts its listening socket and its trigger among the connections
        connection_limit=connection_limit + 2,
        channel_timeout=idle_timeout,
        cleanup_interval=max(1, min(30, idle_timeout // 2)),
        max_request_body_size=max_request_body_size,
        asyncore_use_poll=True,
        ident="",  # no Server: header
        clear_untrusted_proxy_headers=True,
        expose_tracebacks=False,
    )
    handle = ServerHandle(server)  # type: ignore[arg-type]  # one host: no MultiSocketServer
    if not background:
        handle.serve_forever()
        return handle
    thread = threading.Thread(
        target=handle.serve_forever, name=f"http-loop-{handle.port}", daemon=True
    )
    handle._thread = thread
    thread.start()
    return handle
