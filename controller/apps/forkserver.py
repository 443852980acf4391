"""The controller's side of the app template (`aios_sdk.zygote`): start it, ask
it for app processes, and follow them as the supervisor follows any child.

`ForkServer.start()` spawns the template like any child of the controller (its own
process group, the controller's death signal, this launch's mark) with the apps'
environment minus every secret, over one end of a `SOCK_SEQPACKET` socket pair —
once the executor runs, so the two do not compete for the processor while a person
waits for the desktop. The thread that spawns it then takes its answers: the pid of
each forked app, and how each ended.
`spawn()` hands it one app's plan (its folder, entry file and, when confined, the
sandbox layout of `controller.apps.confinement`) and two descriptors: an in-memory
file holding the app's environment (its token; the template never reads it) and the
app's log. It returns a `ForkedProcess`, which the supervisor polls,
waits for and stops by process group exactly like a `subprocess.Popen`.

`usable` is False until the template said it is ready, and for good once it died
or was stopped: the supervisor then starts apps the classic way (a new interpreter,
inside bubblewrap). `confines` is why a forked child cannot confine itself here
(None when it can); a confined app is then never forked.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from controller.apps.processes import (
    REPO_ROOT,
    spawn_child,
    stop_groups,
    template_environment,
)

__all__ = ["ForkServer", "ForkedProcess"]

log = logging.getLogger("aios.controller.forkserver")


class ForkedProcess:
    """One app forked by the template: `pid` leads its process group; `poll`,
    `wait` and `returncode` as `subprocess.Popen`'s (the template reports the end)."""

    forked = True

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None
        self._ended = threading.Event()

    def _end(self, code: int) -> None:
        if self.returncode is None:
            self.returncode = code
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"forked app {self.pid}", timeout or 0.0)
        assert self.returncode is not None
        return self.returncode


class ForkServer:
    """The template process of one launch and the apps forked from it."""

    def __init__(self, log_path: Path):
        self._log_path = log_path
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._dead = threading.Event()
        self._replies: dict[int, dict[str, Any]] = {}
        self._replied = threading.Condition(self._lock)
        self._children: dict[int, ForkedProcess] = {}
        self._early_exits: dict[int, int] = {}
        self._next_id = 0
        self._stopping = False
        self._started = False
        self.confines: str | None = "the app template has not started"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def usable(self) -> bool:
        return self._ready.is_set() and not self._dead.is_set()

    @property
    def starting(self) -> bool:
        """Started and neither ready nor dead yet (it is still importing)."""
        return self._started and not self._ready.is_set()

    def start(self, after: threading.Event | None = None, at_most: float = 3.0) -> None:
        """Spawn the template once `after` is set (or `at_most` seconds passed): the
        supervisor lets the executor start first, which is what a person waits for.
        The template is spawned by the thread that then reads its answers and lives
        as long as it does (a child's death signal follows the thread that spawned
        it); it becomes `usable` once it has imported and probed."""
        self._started = True
        threading.Thread(
            target=self._run, args=(after, at_most), name="app-template", daemon=True
        ).start()

    def _run(self, after: threading.Event | None, at_most: float) -> None:
        if after is not None:
            after.wait(at_most)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = spawn_child(
                # the log's path names the launch it serves, for whoever lists processes
                [
                    sys.executable,
                    "-m",
                    "aios_sdk.zygote",
                    str(theirs.fileno()),
                    str(self._log_path),
                ],
                cwd=REPO_ROOT,
                env=template_environment(),
                log_path=self._log_path,
                append=False,
                pass_fds=(theirs.fileno(),),
            )
        except OSError as exc:
            ours.close()
            log.warning("the app template could not be started: %s", exc)
            self._on_death()
            return
        finally:
            theirs.close()
        self._sock = ours
        if self._stopping:  # stopped while it was being spawned
            self.stop()
        self._read()

    def wait_ready(self, timeout: float) -> bool:
        """Whether the template can fork apps, waiting for its start (at most
        `timeout`); False at once when it was never started."""
        if not self._started:
            return False
        self._ready.wait(timeout)
        return self.usable

    def _read(self) -> None:
        sock = self._sock
        assert sock is not None
        try:
            while True:
                data = sock.recv(1 << 16)
                if not data:
                    break
                self._on_message(json.loads(data))
        except (OSError, ValueError) as exc:
            log.warning("the app template's socket failed: %s", exc)
        self._on_death()

    def _on_message(self, message: dict[str, Any]) -> None:
        with self._lock:
            if message.get("ready"):
                self.confines = message.get("confines")
                self._ready.set()
            elif "exit" in message:
                pid, code = int(message["exit"]), int(message["code"])
                child = self._children.pop(pid, None)
                if child is not None:
                    child._end(code)
                else:  # ended before `spawn` recorded it
                    self._early_exits[pid] = code
            elif "id" in message:
                self._replies[int(message["id"])] = message
                self._replied.notify_all()

    def _on_death(self) -> None:
        """The template is gone: so is every child (their death signal); each is
        killed with its group all the same, and reported ended."""
        with self._lock:
            self._dead.set()
            self._ready.set()
            children, self._children = dict(self._children), {}
            self._replied.notify_all()
        for pid, child in children.items():
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            child._end(-signal.SIGKILL)
        if not self._stopping:
            log.warning("the app template ended; apps start as new processes now")

    def spawn(
        self,
        plan: dict[str, Any],
        env: dict[str, str],
        log_path: Path,
        *,
        append: bool,
        timeout: float = 10.0,
    ) -> ForkedProcess:
        """Fork one app from the template (see the module docstring); `OSError` when
        the template is not usable or did not answer within `timeout`."""
        if not self.usable or self._sock is None:
            raise OSError("the app template is not running")
        log_path.parent.mkdir(parents=True, exist_ok=True)
        if not append:
            log_path.write_bytes(b"")
        env_fd = os.memfd_create("aios-app-env", os.MFD_CLOEXEC)
        log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC)
        try:
            os.write(env_fd, json.dumps(env).encode())
            with self._lock:
                self._next_id += 1
                request_id = self._next_id
            message = json.dumps({"op": "spawn", "id": request_id, "plan": plan})
            socket.send_fds(self._sock, [message.encode()], [env_fd, log_fd])
        finally:
            os.close(env_fd)
            os.close(log_fd)
        deadline = time.monotonic() + timeout
        with self._replied:
            while request_id not in self._replies:
                left = deadline - time.monotonic()
                if self._dead.is_set() or left <= 0:
                    raise OSError("the app template did not fork the app")
                self._replied.wait(left)
            reply = self._replies.pop(request_id)
            if "pid" not in reply:
                raise OSError(f"the app template could not fork: {reply.get('error')}")
            child = ForkedProcess(int(reply["pid"]))
            early = self._early_exits.pop(child.pid, None)
            if early is not None:
                child._end(early)
            else:
                self._children[child.pid] = child
            return child

    def stop(self) -> None:
        """End the template; the apps forked from it end with it."""
        self._stopping = True
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._proc is not None:
            stop_groups([self._proc], 2.0)
