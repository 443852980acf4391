"""`system_info`: read-only facts of the computer the executor runs on.

Apps run confined, each in its own PID namespace, so what an app could read of
processes by itself is its own sandbox. The executor runs on the host: this tool
answers for the computer — CPU, memory, the root file system's disk use and the
processes, busiest first — and only with what any app may see. A process is its
pid, its program's name, its user's name and its CPU and memory share; never its
command line, environment, working directory or open files, which may hold
secrets. Nothing is changed.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import psutil

from aios_protocol.tools import SYSTEM_INFO_MAX_PROCESSES

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["DEFAULT_LIMIT", "read_system", "system_info"]

DEFAULT_LIMIT = 10
GIB = 1024**3
# CPU shares are measured over this window (seconds)
SAMPLE = 0.2


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
        answer["cpu"] = _cpu(psutil.cpu_percent(interval=SAMPLE, percpu=True))
    if what in ("overview", "memory"):
        answer["memory"] = _memory()
    if what in ("overview", "disk"):
        answer["disk"] = _disk("/")
    return {"time": time.strftime("%Y-%m-%d %H:%M:%S"), **answer}


def _gib(value: float) -> float:
    return round(value / GIB, 1)


def _processes(limit: int, with_cpu: bool) -> dict[str, Any]:
    """The `limit` busiest processes (CPU, then memory) and how many there are; with
    `with_cpu`, the CPU figures of the same window too."""
    watched = []
    for pid in psutil.pids():
        try:
            proc = psutil.Process(pid)
            proc.cpu_percent(None)  # starts this process's window
        except psutil.Error:
            continue
        watched.append(proc)
    per_cpu = psutil.cpu_percent(interval=SAMPLE, percpu=True)
    rows = [row for row in map(_process_row, watched) if row is not None]
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
