"""The loopback floor of `aios bench`: one keep-alive HTTP client and a trivial echo.

Every latency the benchmark reports is measured with `KeepAliveClient` (raw
`http.client`, one persistent connection, JSON in and out), so the pipeline's
figures and the floor they are divided by pay the same client cost. `EchoServer`
is the floor itself: a separate process serving a plain WSGI JSON echo with
waitress on 127.0.0.1 (the issue's reference: a common, well-kept WSGI server),
so one floor sample is exactly one loopback hop with nothing behind it. Triton's
own services run on `aios_sdk.http_server`.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

__all__ = ["EchoServer", "HopFailed", "KeepAliveClient", "stop_process_group"]

TOKEN_HEADER = "X-AIOS-Token"  # aios_runtime.edge.TOKEN_HEADER, without importing Flask

# The floor: parse the JSON body and send it back, nothing else.
_ECHO_PROGRAM = """
import json, sys
from waitress.server import create_server

def echo(environ, start_response):
    size = int(environ.get("CONTENT_LENGTH") or 0)
    body = json.dumps(json.loads(environ["wsgi.input"].read(size) or b"{}")).encode()
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(body)))])
    return [body]

server = create_server(echo, host="127.0.0.1", port=0, threads=4)
print(server.effective_port, flush=True)
server.run()
"""


class HopFailed(Exception):
    """A request of the benchmark got no HTTP answer."""


class KeepAliveClient:
    """JSON over one persistent loopback connection (reconnects after a failure)."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 60.0):
        rest = base_url.split("://", 1)[-1].rstrip("/")
        host, _, port = rest.partition(":")
        self.host = host
        self.port = int(port or 80)
        self.timeout = timeout
        self._headers = {
            "Host": f"127.0.0.1:{self.port}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        if token:
            self._headers[TOKEN_HEADER] = token
        self._conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """(HTTP status, parsed JSON body or None); `HopFailed` when nothing answers."""
        payload = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        conn = self._conn
        if conn is None:
            conn = self._conn = http.client.HTTPConnection(
                self.host, self.port, timeout=self.timeout
            )
        try:
            conn.request(method, path, body=payload, headers=self._headers)
            response = conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            raise HopFailed(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        if response.will_close:
            self.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return response.status, parsed

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        return self.request("POST", path, body)

    def get(self, path: str) -> tuple[int, Any]:
        return self.request("GET", path)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class EchoServer:
    """The floor's echo server in its own process group; a context manager."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> EchoServer:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ECHO_PROGRAM],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode().strip()
        if not line.isdigit():
            self.__exit__()
            raise HopFailed(f"the echo server did not start ({line!r})")
        self.url = f"http://127.0.0.1:{line}"
        client = KeepAliveClient(self.url, timeout=5)
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
