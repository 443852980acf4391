"""The loopback floor of `aios bench`: the hops' own client and a trivial echo service.

Every latency the benchmark reports is measured with `KeepAliveClient`, JSON over
`aios_runtime.json_client.send_json` (the client of the controller's hops and of
`call_tool`) on a one-connection pool of its own, so the pipeline's figures and
the floor they are divided by pay the same client cost. `EchoServer` is the floor
itself: a separate process serving a JSON echo built as every Triton service is
built — a Flask app from `aios_runtime.edge.create_service` (the edge: loopback
`Host`, `Origin`, the token, JSON only, size limits) served by
`aios_runtime.serving.start_server` (waitress with the services' adjustments) — so
one floor sample is exactly one loopback hop on the services' stack with nothing
behind it.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from typing import Any
from urllib.parse import urlsplit

from aios_protocol.errors import AiosError
from aios_runtime.json_client import new_pool, send_json

__all__ = [
    "FLOOR_STACK",
    "EchoServer",
    "HopFailed",
    "KeepAliveClient",
    "stop_process_group",
]

FLOOR_STACK = (
    "Flask on waitress as every service runs (aios_runtime.edge.create_service,"
    " aios_runtime.serving.start_server), reached with aios_runtime.json_client (urllib3)"
)

_TOKEN_VAR = "AIOS_BENCH_ECHO_TOKEN"

# The floor: a service with nothing behind its edge; it sends the JSON body back.
_ECHO_PROGRAM = f"""
import os, threading
from flask import request
from aios_runtime.edge import create_service, token_matches
from aios_runtime.serving import start_server

app = create_service("bench_echo", token_matches(os.environ.pop("{_TOKEN_VAR}")))

@app.post("/")
def echo():
    return request.get_json()

print(start_server(app).port, flush=True)
threading.Event().wait()
"""


class HopFailed(Exception):
    """A request of the benchmark got no HTTP answer."""


class KeepAliveClient:
    """JSON over one persistent loopback connection (reconnects after a failure)."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 60.0):
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.token = token
        self.timeout = timeout
        self._pool = new_pool(self.host, self.port, maxsize=1)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """(HTTP status, parsed JSON body or None); `HopFailed` when nothing answers."""
        try:
            answer = send_json(
                self._pool,
                method,
                path,
                body,
                token=self.token,
                timeout=self.timeout,
                what=f"{method} {path}",
            )
        except AiosError as exc:
            raise HopFailed(exc.message) from exc
        return answer.status, answer.body

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        return self.request("POST", path, body)

    def get(self, path: str) -> tuple[int, Any]:
        return self.request("GET", path)

    def close(self) -> None:
        self._pool.close()
        self._pool = new_pool(self.host, self.port, maxsize=1)


class EchoServer:
    """The floor's echo server in its own process group; a context manager.
    Requests need `token` in `X-AIOS-Token`, as at every service."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.token = secrets.token_urlsafe(24)

    def __enter__(self) -> EchoServer:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ECHO_PROGRAM],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, _TOKEN_VAR: self.token},
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode().strip()
        if not line.isdigit():
            self.__exit__()
            raise HopFailed(f"the echo server did not start ({line!r})")
        self.url = f"http://127.0.0.1:{line}"
        client = KeepAliveClient(self.url, self.token, timeout=5)
        deadline = time.monotonic() + 10
        while True:  # the port is printed just before run(): wait for a first answer
            try:
                client.post("/", {"ping": 1})
                break
            except HopFailed:
                if time.monotonic() > deadline:
                    self.__exit__()
                    raise
                time.sleep(0.02)
        client.close()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            stop_process_group(self.proc)
            self.proc = None


def stop_process_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM the group `proc` leads, SIGKILL it after `grace` s; reap it."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
    try:  # leftovers of the group (the leader may be gone already)
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.poll() is None:
        proc.wait(5)
