"""`python mcp_launch.py PARENT_PID MAX_LINE [LIMIT=VALUE...] -- COMMAND ARGS...`: a capped MCP server.

The MCP SDK's stdio client spawns the server itself, with no hook into the child
before `exec` and no limit on the length of a message. So the executor spawns this
small relay instead. It sets `PR_SET_PDEATHSIG=SIGKILL` and exits if its parent is no
longer `PARENT_PID` (the executor died before the signal was set); it starts the
real command (bubblewrap, or the server itself) in its own process group with the
same death signal, stdin and stderr passed through; and it copies the server's
stdout line by line, replacing a line longer than `MAX_LINE` bytes (a JSON-RPC
message) by a JSON-RPC error answer to the same request id, so a huge answer fails
that one call and leaves the connection usable. A huge line whose id cannot be
found ends the server (the client sees the connection close). The limits apply to
the server (and all it starts) between fork and exec: `memory=` bytes of address
space (`RLIMIT_AS`), `fsize=` bytes per file written (`RLIMIT_FSIZE`), `cgroup=` a
pids cgroup folder to join (its `pids.max` is the task ceiling; joining fails
closed), else `tasks=` more processes than the user runs now (`RLIMIT_NPROC`, which
binds non-root users only). Standard library only, so it runs with `python -I -S`.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import resource
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


def user_tasks() -> int:
    """How many processes our user runs now (for an `RLIMIT_NPROC` ceiling); the tool
    runner counts with this too (this module stays standard-library only)."""
    uid, count = os.getuid(), 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                count += os.stat(f"/proc/{name}").st_uid == uid
            except OSError:
                pass
    return count


def _limits(options: list[str]) -> tuple[list[tuple[int, int]], str | None]:
    """The rlimits to set and the cgroup to join, from `KEY=VALUE` options."""
    values = dict(option.split("=", 1) for option in options)
    plan = []
    if values.get("memory"):
        plan.append((resource.RLIMIT_AS, int(values["memory"])))
    if values.get("fsize"):
        plan.append((resource.RLIMIT_FSIZE, int(values["fsize"])))
    cgroup = values.get("cgroup") or None
    if cgroup is None and values.get("tasks") and os.getuid() != 0:
        plan.append((resource.RLIMIT_NPROC, user_tasks() + int(values["tasks"])))
    return plan, cgroup


def main(argv: list[str]) -> int:
    if len(argv) < 4 or "--" not in argv[2:]:
        print(
            "usage: mcp_launch.py PARENT_PID MAX_LINE [LIMIT=VALUE...] -- COMMAND [ARGS...]",
            file=sys.stderr,
        )
        return 2
    split = argv.index("--", 2)
    parent, cap, command = int(argv[0]), int(argv[1]), argv[split + 1 :]
    plan, cgroup = _limits(argv[2:split])
    _die_with_parent()
    if os.getppid() != parent:  # the executor is gone already
        return 1
    me = os.getpid()

    def bind() -> None:  # in the child: limits, then die with this relay
        if cgroup is not None:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as procs:
                procs.write("0")
        for which, value in plan:
            _, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))
        _die_with_parent()
        if os.getppid() != me:
            os._exit(1)

    try:
        server = subprocess.Popen(command, stdout=subprocess.PIPE, preexec_fn=bind)  # noqa: PLW1509
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"mcp_launch: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return 127
    assert server.stdout is not None
    if not relay(server.stdout.fileno(), sys.stdout.fileno(), cap):
        print(
            f"mcp_launch: a message of more than {cap} bytes without an id; "
            "the server is stopped",
            file=sys.stderr,
        )
        server.kill()
    code = server.wait()
    if code < 0:
        print(f"mcp_launch: the server was killed by signal {-code}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
