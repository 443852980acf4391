"""`python mcp_launch.py PARENT_PID MAX_LINE -- COMMAND ARGS...`: an MCP server, bound and capped.

The MCP SDK's stdio client spawns the server itself, with no hook into the child
before `exec` and no limit on the length of a message. So the executor spawns this
small relay instead. It sets `PR_SET_PDEATHSIG=SIGKILL` and exits if its parent is no
longer `PARENT_PID` (the executor died before the signal was set); it starts the
real command (bubblewrap, or the server itself) in its own process group with the
same death signal, stdin and stderr passed through; and it copies the server's
stdout line by line, replacing a line longer than `MAX_LINE` bytes (a JSON-RPC
message) by a JSON-RPC error answer to the same request id, so a huge answer fails
that one call and leaves the connection usable. A huge line whose id cannot be
found ends the server (the client sees the connection close). Standard library
only, so it runs with `python -I -S`.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1
_CHUNK = 1 << 16
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")')


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:  # pragma: no cover - not Linux
        pass


def _refusal(head: bytes, size: int, cap: int) -> bytes | None:
    """The JSON-RPC error line answering the oversized message that began with `head`."""
    found = _ID.search(head)
    if found is None:
        return None
    message = {
        "jsonrpc": "2.0",
        "id": json.loads(found.group(1)),
        "error": {
            "code": -32603,
            "message": f"the server's answer has more than {cap} bytes "
            f"({size} read); refused",
        },
    }
    return json.dumps(message).encode() + b"\n"


def _write_all(sink: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(sink, view) :]


def relay(source: int, sink: int, cap: int) -> bool:
    """Copy lines from `source` to `sink` until EOF; False when a huge line had no id."""
    pieces: list[bytes] = []  # the current line, while it fits
    size = 0
    head = b""  # the first bytes of an oversized line (where its id is)
    while True:
        chunk = os.read(source, _CHUNK)
        if not chunk:
            return True
        while chunk:
            end = chunk.find(b"\n")
            part, chunk = (chunk, b"") if end < 0 else (chunk[: end + 1], chunk[end + 1 :])
            size += len(part)
            if size <= cap:
                pieces.append(part)
            else:
                if not head:
                    head = (b"".join(pieces) + part[:4096])[:4096]
                pieces = []
            if end < 0:
                continue
            if size <= cap:
                _write_all(sink, b"".join(pieces))
            else:
                refusal = _refusal(head, size, cap)
                if refusal is None:
                    return False
                _write_all(sink, refusal)
            pieces, size, head = [], 0, b""


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: mcp_launch.py PARENT_PID MAX_LINE -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    parent, cap, command = int(argv[0]), int(argv[1]), argv[3:]
    _die_with_parent()
    if os.getppid() != parent:  # the executor is gone already
        return 1
    me = os.getpid()

    def bind() -> None:  # in the child: die with this relay
        _die_with_parent()
        if os.getppid() != me:
            os._exit(1)

    try:
        server = subprocess.Popen(command, stdout=subprocess.PIPE, preexec_fn=bind)  # noqa: PLW1509
    except OSError as exc:
        print(f"mcp_launch: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return 127
    assert server.stdout is not None
    if not relay(server.stdout.fileno(), sys.stdout.fileno(), cap):
        print(f"mcp_launch: a message of more than {cap} bytes without an id; "
              "the server is stopped", file=sys.stderr)  # fmt: skip
        server.kill()
    return server.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
