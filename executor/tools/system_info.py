"""`system_info`: read-only facts of the computer the executor runs on.

Apps run confined, each in its own PID namespace, so what an app could read of
processes by itself is its own sandbox. The executor runs on the host: this tool
answers for the computer — CPU, memory, the root file system's disk use and the
processes, busiest first — and only with what any app may see. A process is its
pid, its program's name, its user's name and its CPU and memory share; never its
command line, environment, working directory or open files, which may hold
secrets. Nothing is changed.

CPU shares are measured over a window: the first reading waits `SAMPLE` seconds; a
reading within `KEEP` seconds of the previous one measures the window since that
one instead, and one less than `FRESH` seconds after it repeats its figures (with
the processes that started since, without those that ended), so the system app's
dashboard opened again answers at once. `keep_window_open` (the executor runs it
from its start) begins a window every `KEEP / 2` seconds while nobody reads one, so
the first reading need not wait either.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Any

import psutil

from aios_protocol.tools import SYSTEM_INFO_MAX_PROCESSES

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["DEFAULT_LIMIT", "keep_window_open", "read_system", "system_info"]

DEFAULT_LIMIT = 10
GIB = 1024**3
# CPU shares are measured over a window of at least SAMPLE seconds, from the
# previous reading when it is at most KEEP seconds old (see the module docstring)
SAMPLE = 0.2
KEEP = 30.0
FRESH = 2.0


def system_info(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return read_system(str(args.get("what") or "overview"), args.get("limit"))


def read_system(what: str = "overview", limit: int | None = None) -> dict[str, Any]:
    """The facts `what` names (overview, processes, memory, disk, cpu), with the
    time they were read; `limit` bounds the processes listed."""
    shown = max(1, min(int(limit or DEFAULT_LIMIT), SYSTEM_INFO_MAX_PROCESSES))
    answer: dict[str, Any] = {}
    if what in ("overview", "processes"):
        answer.update(_processes(shown, with_cpu=what == "overview"))
    elif what == "cpu":
        answer["cpu"] = _cpu(_WINDOW.read()[1])
    if what in ("overview", "memory"):
        answer["memory"] = _memory()
    if what in ("overview", "disk"):
        answer["disk"] = _disk("/")
    return {"time": time.strftime("%Y-%m-%d %H:%M:%S"), **answer}


def _gib(value: float) -> float:
    return round(value / GIB, 1)


class _Window:
    """The current CPU window: when it began, the processes it watches (psutil keeps
    each one's previous reading on its `Process`) and the last window's figures."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.began = 0.0  # time.monotonic(); 0: no window open
        self.watched: dict[int, psutil.Process] = {}
        self.last: tuple[list[dict[str, Any]], list[float]] | None = None

    def _rows(self) -> list[dict[str, Any]]:
        """A row per process now (`_process_row`): its CPU share since the window
        began, 0 for one that started since; each one is watched from here on."""
        rows: list[dict[str, Any]] = []
        watched: dict[int, psutil.Process] = {}
        for pid in psutil.pids():
            proc = self.watched.get(pid)
            try:
                if proc is None or not proc.is_running():
                    proc = psutil.Process(pid)
            except psutil.Error:
                continue
            row = _process_row(proc)
            if row is not None:
                rows.append(row)
                watched[pid] = proc
        self.watched = watched
        return rows

    def _again(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The last window's `rows` of the processes still there, and a row (CPU 0)
        for each one that started since, watched from here on."""
        now = set(psutil.pids())
        kept = [dict(row) for row in rows if row["pid"] in now]
        for pid in now - {row["pid"] for row in rows}:
            try:
                proc = psutil.Process(pid)
            except psutil.Error:
                continue
            row = _process_row(proc)
            if row is not None:
                kept.append(row)
                self.watched[pid] = proc
        return kept

    def read(self) -> tuple[list[dict[str, Any]], list[float]]:
        """The rows of the processes and the per-CPU shares of a window of at least
        `SAMPLE` seconds (the last one's figures when it ended less than `FRESH`
        seconds ago); the next window starts when this one ends."""
        with self.lock:
            now = time.monotonic()
            if self.last is not None and now - self.began < FRESH:
                return self._again(self.last[0]), list(self.last[1])
            if not self.began or now - self.began > KEEP:
                psutil.cpu_percent(None, percpu=True)  # opens the system's window
                self._rows()  # and each process's
                time.sleep(SAMPLE)
            elif now - self.began < SAMPLE:  # a window just begun: it lasts SAMPLE
                time.sleep(SAMPLE - (now - self.began))
            per_cpu = psutil.cpu_percent(None, percpu=True)
            rows = self._rows()
            self.began = time.monotonic()
            self.last = (rows, per_cpu)
            return [dict(row) for row in rows], list(per_cpu)

    def renew(self) -> None:
        """Begin a window now when the current one is too old to be read."""
        with self.lock:
            if not self.began or time.monotonic() - self.began > KEEP / 2:
                psutil.cpu_percent(None, percpu=True)
                self._rows()
                self.began = time.monotonic()
                self.last = None


_WINDOW = _Window()


def keep_window_open(stopped: threading.Event) -> None:
    """Until `stopped` is set, keep a CPU window young enough to be read at once
    (a pass over the process table every `KEEP / 2` seconds)."""
    while True:
        try:
            _WINDOW.renew()
        except Exception:  # a process table that cannot be read now: try later
            pass
        if stopped.wait(KEEP / 2):
            return


def _processes(limit: int, with_cpu: bool) -> dict[str, Any]:
    """The `limit` busiest processes (CPU, then memory) and how many there are; with
    `with_cpu`, the CPU figures of the same window too."""
    rows, per_cpu = _WINDOW.read()
    rows.sort(key=lambda r: (r["cpu"], r["memory"]), reverse=True)
    answer: dict[str, Any] = {"processes": rows[:limit], "process_count": len(rows)}
    if with_cpu:
        answer["cpu"] = _cpu(per_cpu)
    return answer


def _process_row(proc: psutil.Process) -> dict[str, Any] | None:
    """What may be shown of one process, or None when it has gone. A figure it will
    not tell (a zombie, another user's process) is left empty."""
    row: dict[str, Any] = {
        "pid": proc.pid,
        "name": "?",
        "user": "",
        "cpu": 0.0,
        "memory": 0.0,
    }
    with proc.oneshot():
        for key, read in (
            ("cpu", lambda: round(proc.cpu_percent(None), 1)),
            ("name", proc.name),
            ("memory", lambda: round(proc.memory_percent(), 1)),
            ("user", proc.username),
        ):
            try:
                row[key] = read() or row[key]
            except psutil.ZombieProcess:
                continue
            except psutil.NoSuchProcess:
                return None
            except (psutil.Error, KeyError):  # not ours to read, or an unknown uid
                continue
    return row


def _cpu(per_cpu: list[float]) -> dict[str, Any]:
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    total = round(sum(per_cpu) / len(per_cpu), 1) if per_cpu else 0.0
    return {
        "percent": total,
        "per_cpu": per_cpu,
        "count": psutil.cpu_count() or len(per_cpu),
        "load": load,
    }


def _memory() -> dict[str, Any]:
    memory = psutil.virtual_memory()
    return {
        "percent": memory.percent,
        "used_gb": _gib(memory.total - memory.available),
        "available_gb": _gib(memory.available),
        "total_gb": _gib(memory.total),
    }


def _disk(path: str) -> dict[str, Any]:
    disk = psutil.disk_usage(path)
    return {
        "path": path,
        "percent": disk.percent,
        "used_gb": _gib(disk.used),
        "free_gb": _gib(disk.free),
        "total_gb": _gib(disk.total),
    }
