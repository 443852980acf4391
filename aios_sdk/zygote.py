"""The app template: one interpreter that has imported what every app imports, from
which each app process is forked (copy-on-write) and then confined.

    python -m aios_sdk.zygote FD [LOG]

A cold start of an app through a new interpreter spends most of its time importing
Flask, pydantic, waitress, urllib3 and the SDK (docs/PERFORMANCE.md); forked from
this process, an app starts with them imported, and the pages holding them stay
shared between every app (the garbage collector's objects are frozen before each
fork, so its bookkeeping does not copy them).

The controller (`controller.apps.forkserver`) starts it with the apps' environment
minus every secret, and speaks to it over the `AF_UNIX` `SOCK_SEQPACKET` socket `FD`,
one JSON message per packet (`LOG`, its log's path, only names the launch it serves
in a process listing):

- it first says `{"ready": true, "confines": null | "why not"}`: whether a forked
  child can confine itself here (`aios_runtime.namespaces.probe`);
- `{"op": "spawn", "id": n, "plan": {...}}` with two descriptors attached (a file
  holding the app's environment as JSON, its log file) forks a child and answers
  `{"id": n, "pid": p}` (or `{"id": n, "error": "…"}`); the template never reads the
  environment file, so it never holds an app's token, and no app finds another's
  token in the memory it inherits;
- `{"exit": p, "code": c}` says a child ended (`c` as `Popen.returncode`: the exit
  status, or minus the signal).

The child leads its own process group, dies with the template (whose own death
signal ties it to the controller), reads its environment, sends its output to its
log, and — when the plan says `confine` — is forked as the first process of its own
PID namespace and enters the sandbox of the plan's layout
(`aios_runtime.namespaces`) before any app code runs. The first process of a PID
namespace ignores a signal it has no handler for, so a confined app ends on SIGTERM
through a handler (exit status 128 + 15, as bubblewrap reports it). The app runs its
entry file as `__main__` in its folder. When the template ends (its socket closed,
or killed), every child dies with it.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import runpy
import select
import selectors
import signal
import socket
import sys
import traceback
from pathlib import Path
from typing import Any

from aios_runtime import namespaces
from aios_runtime.bubblewrap import SandboxLayout

__all__ = ["PRELOADED", "main"]

# what every SDK app imports at start, and libraries shipped apps import (a name
# that is not installed is skipped): docs/PERFORMANCE.md, "A cold start"
PRELOADED = (
    "flask",
    "pydantic",
    "pydantic.type_adapter",
    "waitress",
    "urllib3",
    "psutil",
    "rapidfuzz",
    "dateutil.parser",
    "aios_protocol.messages",
    "aios_protocol.strings",
    "aios_runtime.edge",
    "aios_runtime.serving",
    "aios_runtime.json_client",
    "aios_sdk.agent",
    "aios_sdk.client",
    "aios_sdk.errors",
    "aios_sdk.protocol",
    "aios_sdk.server",
    "aios_sdk.entry",
    "aios_sdk.flows",
    "aios_sdk.llm",
    "aios_sdk.views",
    # the agent loop, which agent apps import (the SDK's own code, like the above)
    "aios_sdk.runtime.flows",
    # standard modules the shipped apps import beyond those
    "ast",
    "shlex",
    "unicodedata",
    "dateutil.relativedelta",
)
_MAX_PACKET = 1 << 20
# a pipe whose write end only the template keeps open: a child that finds it closed
# knows the template died before the child's death signal was set
_ALIVE = (-1, -1)  # (read end, write end), made by `main`


def _preload() -> None:
    import importlib

    from aios_protocol.messages import build_models

    for name in PRELOADED:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    # every protocol model's validator (each is built on first use otherwise): a
    # child's first tool call or plan would build them again, after its fork
    build_models()
    _warm_up()


def _warm_up() -> None:
    """What an app's first requests would build lazily (Flask's and werkzeug's
    request machinery, the SDK's routes, pydantic's validators of the bodies): a
    throw-away SDK app answers `/health`, `/manifest` and `/handle` once, in-process."""
    from aios_sdk.agent import AIOSAgent
    from aios_sdk.server import create_app

    class Template(AIOSAgent):
        name = "template"
        description = "warms the app template up"
        icon = "·"
        role_prompt = "none"

        def handle(
            self,
            instruction: str | None,
            context: dict[str, Any],
            action_request: dict[str, Any] | None = None,
        ) -> dict[str, Any]:
            return {"status": "ok", "view_type": "text", "data": {"content": ""}}

    headers = {"Host": "127.0.0.1", "X-AIOS-Token": "template"}
    service = create_app(Template(), token="template")
    with service.test_client() as client:
        client.get("/health", headers=headers)
        client.get("/manifest", headers=headers)
        body = {"instruction": "", "context": {"language": "en-US"}}
        client.post("/handle", json=body, headers=headers)


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.send(json.dumps(message).encode())


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _set_command_line(words: list[str]) -> None:
    """Show `words` as this process's command line (`ps`, /proc/PID/cmdline): they
    are written over the template's own argument strings, cut to their length (the
    environment after them is kept: it carries the launch's mark for the reaper)."""
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end
    room = end - start
    data = b"\0".join(os.fsencode(word) for word in words)[: room - 1]
    ctypes.memmove(start, data.ljust(room, b"\0"), room)


def _end_on_sigterm(signum: int, frame: Any) -> None:
    os._exit(128 + signum)


def _run_app(plan: dict[str, Any], env: dict[str, str], *, keep_sigterm: bool) -> int:
    """Run the app's entry as `__main__` with `env` (in the forked child)."""
    os.environ.clear()
    os.environ.update(env)
    entry = str(plan["entry"])
    sys.argv = [entry, *plan.get("args", [])]
    try:  # as if started as `python3 main.py`
        _set_command_line([os.path.basename(sys.executable), entry])
    except (OSError, ValueError, IndexError):
        pass
    sys.path[0] = os.path.dirname(entry)
    os.chdir(plan["cwd"])
    if not keep_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        runpy.run_path(entry, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


def _child(plan: dict[str, Any], env_fd: int, log_fd: int) -> None:
    """The forked child (never returns to the template's loop)."""
    code = 1
    try:
        os.setpgid(0, 0)
        alive_read, alive_write = _ALIVE
        os.close(alive_write)  # the template holds the only write end left
        namespaces.set_death_signal(signal.SIGKILL)
        # the template died before prctl took effect: its end of the pipe is closed
        # (a parent outside a new PID namespace has no pid here to compare)
        if select.select([alive_read], [], [], 0)[0]:
            os._exit(1)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        env = json.loads(_read_all(env_fd))
        os.close(env_fd)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the template's socket, pipe, …
        if plan.get("confine"):
            layout = SandboxLayout(
                tuple(plan["masks"]), tuple(plan["read_only"]), tuple(plan["writable"])
            )
            namespaces.enter_sandbox(layout, plan["cwd"])
            # the first process of its PID namespace: SIGTERM needs a handler
            signal.signal(signal.SIGTERM, _end_on_sigterm)
        code = _run_app(plan, env, keep_sigterm=bool(plan.get("confine")))
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _spawn(sock: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    if len(fds) != 2:
        for fd in fds:
            os.close(fd)
        _send(sock, {"id": request.get("id"), "error": "two descriptors expected"})
        return
    env_fd, log_fd = fds
    gc.freeze()  # the template's objects stay on shared pages in the child
    try:
        pid = namespaces.fork_confined() if request["plan"].get("confine") else os.fork()
    except OSError as exc:
        os.close(env_fd)
        os.close(log_fd)
        _send(sock, {"id": request.get("id"), "error": str(exc)})
        return
    if pid == 0:
        _child(request["plan"], env_fd, log_fd)
    os.close(env_fd)
    os.close(log_fd)
    try:
        os.setpgid(pid, pid)  # also done by the child: whoever runs first
    except OSError:
        pass
    _send(sock, {"id": request.get("id"), "pid": pid})


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send(sock, {"exit": pid, "code": os.waitstatus_to_exitcode(status)})


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    global _ALIVE
    sock = socket.socket(fileno=int(args[0]))
    _ALIVE = os.pipe()
    _preload()
    why = namespaces.probe()
    _send(sock, {"ready": True, "confines": why})
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is sock:
                try:
                    data, fds, _, _ = socket.recv_fds(sock, _MAX_PACKET, 4)
                except ConnectionError:
                    data, fds = b"", []
                if not data:  # the controller is gone: so are the children
                    return 0
                try:
                    request = json.loads(data)
                except ValueError:
                    for fd in fds:
                        os.close(fd)
                    continue
                if request.get("op") == "spawn":
                    _spawn(sock, request, fds)
                else:
                    for fd in fds:
                        os.close(fd)
            else:
                try:
                    os.read(wake_r, 512)
                except BlockingIOError:
                    pass
                _reap(sock)


if __name__ == "__main__":
    sys.exit(main())
