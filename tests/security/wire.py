"""Raw HTTP for the security tests: exact bytes on the wire (an empty `Host`, a cut-off
body, invalid UTF-8) that `requests` would tidy up, and the services of a running
system found from its process tree (ports and tokens of apps and the executor)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import psutil

from tests.controller.system import RunningSystem


@dataclass
class RawAnswer:
    status: int
    headers: dict[str, str]
    body: bytes


def raw_request(
    port: int,
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    body: bytes = b"",
    *,
    timeout: float = 10,
    content_length: int | None = None,
) -> RawAnswer:
    """Send one HTTP/1.1 request with exactly these headers (no Host added).

    `content_length` larger than `body` announces bytes that never come (the write
    side is then shut down); status 0 means the server hung up without answering.
    """
    lines = [f"{method} {path} HTTP/1.1"]
    lines += [f"{name}: {value}" for name, value in headers]
    if body or content_length is not None or method in ("POST", "PUT"):
        lines.append(
            f"Content-Length: {len(body) if content_length is None else content_length}"
        )
    lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head + body)
        if content_length is not None and content_length > len(body):
            sock.shutdown(socket.SHUT_WR)  # the rest never comes
        data = bytearray()
        while True:
            try:
                chunk = sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            data += chunk
    if not data:
        return RawAnswer(0, {}, b"")  # the server hung up without an answer
    head_bytes, _, rest = bytes(data).partition(b"\r\n\r\n")
    status_line, *header_lines = head_bytes.decode("latin-1").split("\r\n")
    parsed = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        parsed[name.strip().lower()] = value.strip()
    return RawAnswer(int(status_line.split()[1]), parsed, rest)


@dataclass
class Service:
    """One listening process of the system: who it is, its port and its token."""

    name: str  # "controller", "executor" or an app id
    pid: int
    port: int
    token: str


def _listening_port(proc: psutil.Process) -> int | None:
    try:
        conns = proc.net_connections(kind="inet")
    except psutil.Error:
        return None
    ports = [c.laddr.port for c in conns if c.status == psutil.CONN_LISTEN]
    return ports[0] if ports else None


_ENTRIES = (b"AIOS_TOKEN=", b"AIOS_APP_ID=")


def process_environment(proc: psutil.Process) -> dict[str, str]:
    """The environment `proc` runs with. /proc shows what a process was started
    with; an app forked from the app template was started as the template (no token
    there), and its own environment lives in its memory only: read as root, its
    `NAME=value` entries are found in the C library's copy on its heap."""
    env = proc.environ()
    if "AIOS_TOKEN" in env:
        return env
    found: dict[str, str] = {}
    with open(f"/proc/{proc.pid}/maps", encoding="ascii") as maps:
        regions = [line.split() for line in maps]
    fd = os.open(f"/proc/{proc.pid}/mem", os.O_RDONLY)
    try:
        for region in regions:
            start, end = (int(x, 16) for x in region[0].split("-"))
            named = region[5] if len(region) > 5 else ""
            if not region[1].startswith("rw") or named not in ("", "[heap]"):
                continue
            try:
                data = os.pread(fd, end - start, start)
            except OSError:
                continue
            for entry in _ENTRIES:
                at = data.find(b"\0" + entry)
                if at >= 0 and entry[:-1].decode() not in found:
                    value = data[at + 1 + len(entry) : data.index(b"\0", at + 1)]
                    found[entry[:-1].decode()] = value.decode("utf-8", "replace")
    finally:
        os.close(fd)
    return {**env, **found}


def services(system: RunningSystem) -> list[Service]:
    """The controller, the executor and every running app, with their tokens.

    Tokens come from each child's environment (`AIOS_TOKEN`, read as root through
    /proc, or from its memory for an app forked from the template), the
    controller's from its ready URL. A confined app runs below its bubblewrap
    processes: the one that listens is the app.
    """
    found = [
        Service(
            "controller", system.proc.pid, int(system.url.rsplit(":", 1)[1]), system.token
        )
    ]
    for child in psutil.Process(system.proc.pid).children(recursive=True):
        port = _listening_port(child)
        if port is None:
            continue
        try:
            env = process_environment(child)
            cmdline = " ".join(child.cmdline())
        except (psutil.Error, OSError):
            continue
        if "AIOS_TOKEN" not in env:
            continue
        name = env.get("AIOS_APP_ID") or ("executor" if "executor" in cmdline else cmdline)
        if all(service.name != name for service in found):
            found.append(Service(name, child.pid, port, env["AIOS_TOKEN"]))
    return found
