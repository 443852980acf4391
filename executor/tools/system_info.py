"""`system_info`: read-only facts of the computer the executor runs on.

Apps run confined, each in its own PID namespace, so what an app could read of
processes by itself is its own sandbox. The executor runs on the host: this tool
answers for the computer — CPU, memory, the root file system's disk use and the
processes, busiest first — and only with what any app may see. A process is its
pid, its program's name, its user's name and its CPU and memory share; never its
command line, environment, working directory or open files, which may hold
secrets. Nothing is changed.

Every CPU share is measured anew by each reading, over a window of the last
`SAMPLE` to `RECENT` seconds: the reading takes a snapshot of the CPU times and
compares it with the newest earlier snapshot finished at least `SAMPLE` seconds
ago. When there is none it takes one and waits `SAMPLE` after it. A snapshot of the
processes walks them one by one, which takes a while (longer on a busy computer),
so a process's share is its CPU time over the time between the two moments its own
times were read, never over the time between the snapshots' starts. `keep_window_open` (the executor
runs it from its start) takes a snapshot of the whole computer's times every
`TICK` seconds, so a CPU reading need not wait; the processes' times are read only
by readings that list processes. A process that started within the window is
measured over its life.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psutil

from aios_protocol.tools import SYSTEM_INFO_MAX_PROCESSES

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["DEFAULT_LIMIT", "keep_window_open", "read_system", "system_info"]

DEFAULT_LIMIT = 10
GIB = 1024**3
# a CPU share covers at least SAMPLE seconds and at most RECENT (module docstring);
# keep_window_open takes a snapshot of the computer's CPU times every TICK seconds
SAMPLE = 0.2
RECENT = 5.0
TICK = 1.0


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
        answer["cpu"] = _cpu(_WINDOWS.read(with_processes=False)[1])
    if what in ("overview", "memory"):
        answer["memory"] = _memory()
    if what in ("overview", "disk"):
        answer["disk"] = _disk("/")
    return {"time": time.strftime("%Y-%m-%d %H:%M:%S"), **answer}


def _gib(value: float) -> float:
    return round(value / GIB, 1)


@dataclass
class _Seen:
    """One process in a snapshot: when it started (`time.time()` clock), the CPU
    seconds it had used, what may be shown of it (`_process_row`), and when those
    times were read (`time.monotonic()`)."""

    started: float
    used: float
    row: dict[str, Any]
    at: float


@dataclass
class _Snapshot:
    """The CPU times at one moment: each CPU's and, when read, each process's."""

    at: float  # time.monotonic(), when the CPUs' times were read
    wall: float  # time.time() at the same moment
    cpus: list[Any]
    processes: dict[int, _Seen] | None = None
    done: float = 0.0  # time.monotonic() once every process was read

    def age(self, now: float) -> float:
        """Seconds since the snapshot was complete."""
        return now - max(self.at, self.done)


def _busy_share(before: Any, after: Any) -> float:
    """The share (%) of the time between two readings of one CPU's times that it
    was busy: neither idle nor waiting for I/O (guest time is part of user time
    already, as psutil counts it)."""
    spent = {
        field: getattr(after, field) - getattr(before, field) for field in after._fields
    }
    total = sum(spent.values()) - spent.get("guest", 0.0) - spent.get("guest_nice", 0.0)
    if total <= 0:
        return 0.0
    idle = spent.get("idle", 0.0) + spent.get("iowait", 0.0)
    return round(min(100.0, max(0.0, 100.0 * (total - idle) / total)), 1)


def _process_rows(base: _Snapshot, now: _Snapshot) -> list[dict[str, Any]]:
    """A row per process in `now`, with its CPU share (100: one core) between the
    moments its times were read in the two snapshots, or over its life when it was
    not in `base` (over `SAMPLE` at least: a life of a few clock ticks says little)."""
    rows: list[dict[str, Any]] = []
    before = base.processes or {}
    for pid, seen in (now.processes or {}).items():
        row = dict(seen.row)
        was = before.get(pid)
        if was is not None and was.started == seen.started:
            used, span = seen.used - was.used, seen.at - was.at
        else:  # started within the window (or a pid used again)
            read = now.wall + (seen.at - now.at)  # when its times were read
            used, span = seen.used, max(SAMPLE, read - seen.started)
        row["cpu"] = round(max(0.0, 100.0 * used / span), 1) if span > 0 else 0.0
        rows.append(row)
    return rows


class _Windows:
    """The snapshots a reading may measure from. psutil's own `cpu_percent(None)`
    keeps its previous reading per thread, and the executor answers on many
    threads: the snapshots are kept here, for all of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.snapshots: list[_Snapshot] = []  # oldest first

    def read(self, with_processes: bool) -> tuple[list[dict[str, Any]], list[float]]:
        """The rows of the processes (with `with_processes`) and each CPU's busy
        share, measured from the newest snapshot at least `SAMPLE` old to now."""
        with self.lock:
            base = self._base(with_processes)
            if base is None:  # nothing recent enough: a window begins now
                base = self._young(with_processes) or self._take(with_processes)
                time.sleep(max(0.0, SAMPLE - base.age(time.monotonic())))
            now = self._take(with_processes)
        per_cpu = [_busy_share(a, b) for a, b in zip(base.cpus, now.cpus, strict=False)]
        return (_process_rows(base, now) if with_processes else []), per_cpu

    def tick(self) -> None:
        """A snapshot of the computer's CPU times (not the processes': cheap)."""
        with self.lock:
            self._take(with_processes=False)

    def _usable(self, with_processes: bool) -> list[tuple[float, _Snapshot]]:
        """(age, snapshot) of those not older than `RECENT`, with the processes'
        times when they are asked for; oldest first."""
        now = time.monotonic()
        return [
            (s.age(now), s)
            for s in self.snapshots
            if s.age(now) <= RECENT and (s.processes is not None or not with_processes)
        ]

    def _base(self, with_processes: bool) -> _Snapshot | None:
        """The newest usable snapshot complete at least `SAMPLE` ago."""
        old = [s for age, s in self._usable(with_processes) if age >= SAMPLE]
        return old[-1] if old else None

    def _young(self, with_processes: bool) -> _Snapshot | None:
        """The oldest usable snapshot (all are younger than `SAMPLE` when there is
        no base): waiting for it costs least."""
        usable = self._usable(with_processes)
        return usable[0][1] if usable else None

    def _take(self, with_processes: bool) -> _Snapshot:
        """A snapshot now, kept; those no later reading can measure from go."""
        snapshot = _Snapshot(time.monotonic(), time.time(), psutil.cpu_times(percpu=True))
        if with_processes:
            snapshot.processes = {}
            for proc in psutil.process_iter():
                seen = _process_row(proc)
                if seen is not None:
                    snapshot.processes[proc.pid] = seen
        snapshot.done = time.monotonic()
        self.snapshots.append(snapshot)
        self._forget()
        return snapshot

    def _forget(self) -> None:
        """Keep the snapshots younger than `SAMPLE`, and of the older ones not older
        than `RECENT` the newest, and the newest with the processes' times."""
        now = time.monotonic()
        older = [s for s in self.snapshots if SAMPLE <= s.age(now) <= RECENT]
        with_times = [s for s in older if s.processes is not None]
        kept = {id(s) for s in self.snapshots if s.age(now) < SAMPLE}
        kept |= {id(s[-1]) for s in (older, with_times) if s}
        self.snapshots = [s for s in self.snapshots if id(s) in kept]


_WINDOWS = _Windows()


def keep_window_open(stopped: threading.Event) -> None:
    """Until `stopped` is set, take a snapshot of the computer's CPU times every
    `TICK` seconds, so a CPU reading has a window to measure from at once."""
    while True:
        try:
            _WINDOWS.tick()
        except Exception:  # CPU times that cannot be read now: try later
            pass
        if stopped.wait(TICK):
            return


def _processes(limit: int, with_cpu: bool) -> dict[str, Any]:
    """The `limit` busiest processes (CPU, then memory) and how many there are; with
    `with_cpu`, the CPU figures of the same window too."""
    rows, per_cpu = _WINDOWS.read(with_processes=True)
    rows.sort(key=lambda r: (r["cpu"], r["memory"]), reverse=True)
    answer: dict[str, Any] = {"processes": rows[:limit], "process_count": len(rows)}
    if with_cpu:
        answer["cpu"] = _cpu(per_cpu)
    return answer


def _process_row(proc: psutil.Process) -> _Seen | None:
    """What may be shown of one process and the CPU time it has used, or None when
    it has gone. A figure it will not tell (a zombie, another user's process) is
    left empty."""
    row: dict[str, Any] = {
        "pid": proc.pid,
        "name": "?",
        "user": "",
        "cpu": 0.0,
        "memory": 0.0,
    }
    started, used, at = 0.0, 0.0, time.monotonic()
    with proc.oneshot():
        try:
            started = proc.create_time()
            times = proc.cpu_times()
            at = time.monotonic()
            used = times.user + times.system
        except psutil.ZombieProcess:  # no CPU share (it started "now": none)
            started, used = time.time(), 0.0
        except psutil.NoSuchProcess:
            return None
        except psutil.Error:  # not ours to read: no CPU share
            started, used = time.time(), 0.0
        for key, read in (
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
    return _Seen(started, used, row, at)


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
