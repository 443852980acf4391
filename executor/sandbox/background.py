"""Background processes started by `process_start(background=true)`, tracked per app
process: the app's own (the owner's), or its process serving one other user — each
is `owner` here (`AppRecord.identity`: `<app_id>` or `<app_id>@<user_id>`), and sees
and stops only its own.

Each one runs in the sandbox like a foreground command, writes its output to a log
file under the app's `workspace/.logs/`, is listed by `GET /processes?app_id=` and
stopped (its whole group and every marked descendant) by `DELETE /processes/<pid>`,
when its app is unregistered, and when the executor exits. None outlives the
executor: besides the explicit stops, each child dies with it (`PR_SET_PDEATHSIG`,
bubblewrap's `--die-with-parent`).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import Popen

from aios_protocol.errors import AiosError
from aios_runtime.workdir import display_path, resolve_in_workdir
from executor.sandbox.runner import (
    ProcessSandbox,
    has_exited,
    kill_marked,
    reap_orphans,
    release,
)

__all__ = ["BackgroundProcess", "BackgroundProcesses", "TooManyProcesses"]

_KEEP_EXITED = 20
_LOG_DIR = ".logs"


class TooManyProcesses(AiosError):
    code = "too_many_processes"
    http_status = 429


@dataclass
class BackgroundProcess:
    app_id: str
    pid: int
    cmd: list[str]
    started: float
    log: str
    proc: Popen = field(repr=False)
    marker: str = field(repr=False)
    returncode: int | None = None
    reaped: bool = False

    def describe(self) -> dict[str, object]:
        return {
            "pid": self.pid,
            "cmd": self.cmd,
            "started": self.started,
            "log": self.log,
            "running": not self.reaped,
            "returncode": self.returncode,
        }


def _log_name(argv: list[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(argv[0]))[:40] or "process"
    return f"{base}-{time.strftime('%Y%m%d-%H%M%S')}-{os.urandom(3).hex()}.log"


class BackgroundProcesses:
    """The table of background processes of every app."""

    def __init__(self, sandbox: ProcessSandbox, max_per_app: int):
        self._sandbox = sandbox
        self._max = max_per_app
        self._table: dict[int, BackgroundProcess] = {}
        self._lock = threading.Lock()

    def start(
        self,
        app_id: str,
        workdir: Path,
        argv: list[str],
        cwd: Path,
        *,
        display_cmd: list[str],
        hide: Iterable[str] = (),
    ) -> BackgroundProcess:
        running = [p for p in self.list(app_id) if p.get("running")]
        if len(running) >= self._max:
            raise TooManyProcesses(
                f"{app_id} already runs {len(running)} background processes (max {self._max})"
            )
        log_dir = resolve_in_workdir(workdir, _LOG_DIR, arg="log directory")
        log_dir.mkdir(exist_ok=True)
        log_path = resolve_in_workdir(workdir, f"{_LOG_DIR}/{_log_name(display_cmd)}")
        fd = os.open(
            log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644
        )
        try:
            with os.fdopen(fd, "ab") as log_file:
                proc, marker = self._sandbox.spawn(
                    argv,
                    workdir=workdir,
                    cwd=cwd,
                    hide=hide,
                    stdout=log_file,
                    stderr=log_file,
                )
        except BaseException:
            log_path.unlink(missing_ok=True)
            raise
        entry = BackgroundProcess(
            app_id=app_id,
            pid=proc.pid,
            cmd=display_cmd,
            started=time.time(),
            log=display_path(log_path, workdir),
            proc=proc,
            marker=marker,
        )
        with self._lock:
            self._table[proc.pid] = entry
        return entry

    def _refresh(self, entry: BackgroundProcess) -> None:
        """Notice an exit: kill what it left behind, then reap it."""
        if entry.reaped or not has_exited(entry.pid):
            return
        kill_marked(entry.pid, entry.marker)
        entry.returncode = entry.proc.wait()
        entry.reaped = True
        release(entry.proc)

    def list(
        self, app_id: str | None, *, whole_app: bool = False
    ) -> list[dict[str, object]]:
        """Every process of the app process `app_id` (all when None; with
        `whole_app`, those of every process of that app), newest last."""

        def wanted(entry: BackgroundProcess) -> bool:
            if app_id is None or entry.app_id == app_id:
                return True
            return whole_app and entry.app_id.startswith(f"{app_id}@")

        with self._lock:
            entries = [e for e in self._table.values() if wanted(e)]
            for entry in entries:
                self._refresh(entry)
            exited = [e for e in self._table.values() if e.reaped]
            for old in exited[:-_KEEP_EXITED]:
                self._table.pop(old.pid, None)
        reap_orphans()
        return [e.describe() for e in sorted(entries, key=lambda e: e.started)]

    def owner(self, pid: int) -> str | None:
        with self._lock:
            entry = self._table.get(pid)
            return entry.app_id if entry else None

    def stop(self, pid: int) -> dict[str, object] | None:
        """Kill process `pid` (its group and marked descendants); None if unknown."""
        with self._lock:
            entry = self._table.pop(pid, None)
        if entry is None:
            return None
        kill_marked(entry.pid, entry.marker, root_reaped=entry.reaped)
        if not entry.reaped:
            entry.returncode = entry.proc.wait()
            entry.reaped = True
            release(entry.proc)
        reap_orphans()
        return entry.describe()

    def stop_app(self, app_id: str) -> int:
        with self._lock:
            pids = [pid for pid, e in self._table.items() if e.app_id == app_id]
        for pid in pids:
            self.stop(pid)
        return len(pids)

    def stop_all(self) -> None:
        with self._lock:
            pids = list(self._table)
        for pid in pids:
            self.stop(pid)
