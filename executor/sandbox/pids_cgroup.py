"""A pids cgroup per tool run: a fork bomb hits a ceiling, and a kill finds everyone.

`RLIMIT_NPROC` does nothing for root (the kernel exempts uid 0, also inside a user
namespace mapped onto it), so each tool run gets its own cgroup
`<pids root>/triton-aios/<executor pid>/<marker>` with `pids.max` =
`limits.tasks_per_run`; the child joins it between fork and exec
and everything it ever forks stays inside, so a kill (X6) also reaches a
double-forked daemon that scrubbed its environment. Where the pids controller
cannot be used (no cgroup file system, no delegated pids controller, no permission)
`PidsCgroups.detect` answers None and the sandbox falls back to `RLIMIT_NPROC`,
which binds only non-root users. The cgroups of an executor that was killed are
swept (processes killed, folders removed) by the next one that starts.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from pathlib import Path

from aios_runtime.reaper import start_reaper

__all__ = ["PidsCgroups", "join_current", "kill_group"]

log = logging.getLogger("aios.executor.cgroup")

_ROOT_NAME = "triton-aios"


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, super options) of every cgroup mount."""
    found: list[tuple[str, str, set[str]]] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        found.append((fields[4], tail[0], set(tail[2].split(","))))
    return found


def _own_path(v1_controller: str | None) -> str:
    """This process's cgroup path in the v1 hierarchy of `v1_controller` (or v2)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        _, controllers, path = line.split(":", 2)
        names = controllers.split(",") if controllers else []
        if (v1_controller and v1_controller in names) or (
            v1_controller is None and controllers == ""
        ):
            return path or "/"
    return "/"


def _candidate_roots() -> list[Path]:
    roots = []
    for mount, fstype, options in _mounts():
        if fstype == "cgroup" and "pids" in options:
            roots.append(Path(mount + _own_path("pids")))
        elif fstype == "cgroup2":
            base = Path(mount + _own_path(None))
            try:
                controllers = (base / "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if "pids" in controllers:
                roots.append(base)
    return roots


def _write(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _members(group: Path) -> list[int]:
    try:
        text = (group / "cgroup.procs").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class PidsCgroups:
    """Creates, fills, empties and removes the per-run pids cgroups of one executor."""

    def __init__(self, home: Path, max_tasks: int):
        self.home = home  # <pids root>/triton-aios/<executor pid>
        self.max_tasks = max_tasks
        self._created: set[Path] = set()
        self._lock = threading.Lock()

    @classmethod
    def detect(cls, max_tasks: int) -> PidsCgroups | None:
        """A usable pids hierarchy for this executor, or None (probed for real)."""
        for root in _candidate_roots():
            parent = root / _ROOT_NAME
            home = parent / str(os.getpid())
            try:
                if root.name != _ROOT_NAME and (root / "cgroup.subtree_control").exists():
                    _enable_v2_pids(root)
                parent.mkdir(exist_ok=True)
                if (parent / "cgroup.subtree_control").exists():
                    _enable_v2_pids(parent)
                home.mkdir(exist_ok=True)
                if (home / "cgroup.subtree_control").exists():
                    _enable_v2_pids(home)
                probe = home / "probe"
                probe.mkdir(exist_ok=True)
                _write(probe / "pids.max", str(max_tasks))
                probe.rmdir()
            except OSError as exc:
                log.info("pids cgroup not usable under %s: %s", root, exc)
                continue
            groups = cls(home, max_tasks)
            groups.sweep_stale()
            _reap_when_gone(home)
            return groups
        return None

    # ------------------------------------------------------------ one run

    def create(self, marker: str) -> Path | None:
        """A fresh cgroup for the run `marker` with its task ceiling (None on failure)."""
        group = self.home / marker
        try:
            group.mkdir()
            _write(group / "pids.max", str(self.max_tasks))
        except OSError as exc:
            log.warning("cannot create pids cgroup %s: %s", group, exc)
            try:
                group.rmdir()
            except OSError:
                pass
            return None
        with self._lock:
            if len(self._created) > 256:  # forget runs whose cgroup is already gone
                self._created = {g for g in self._created if g.exists()}
            self._created.add(group)
        return group

    # ---------------------------------------------------------- leftovers

    def sweep_stale(self) -> int:
        """Kill and remove the run cgroups of executors that no longer live."""
        swept = 0
        parent = self.home.parent
        try:
            homes = [p for p in parent.iterdir() if p.is_dir() and p.name.isdigit()]
        except OSError:
            return 0
        for home in homes:
            if int(home.name) == os.getpid() or _pid_alive(int(home.name)):
                continue
            for group in [p for p in home.iterdir() if p.is_dir()]:
                swept += kill_group(group)
            try:
                home.rmdir()
            except OSError:
                pass
        if swept:
            log.warning("killed %d processes left by a previous executor", swept)
        return swept

    def close(self) -> None:
        """Kill what is left in the run cgroups made here; remove the folder if empty."""
        with self._lock:
            groups, self._created = list(self._created), set()
        for group in groups:
            if group.exists():
                kill_group(group)
        try:
            self.home.rmdir()
        except OSError:
            pass


_reaped: set[Path] = set()


def _reap_when_gone(home: Path) -> None:
    """Once per cgroup home: a reaper kills what is left in it when this process dies
    (bubblewrap's sandbox may miss its death signal while it starts)."""
    if home not in _reaped:
        _reaped.add(home)
        start_reaper(cgroup_home=home)


def _enable_v2_pids(folder: Path) -> None:
    control = folder / "cgroup.subtree_control"
    if "pids" not in control.read_text().split():
        _write(control, "+pids")


def join_current(group: Path) -> None:
    """Move the calling process into `group` (used between fork and exec)."""
    _write(group / "cgroup.procs", "0")


def kill_group(group: Path) -> int:
    """SIGKILL everyone in `group` (repeating while it forks), then rmdir it."""
    killed = 0
    kill_file = group / "cgroup.kill"
    for _ in range(50):
        members = _members(group)
        if not members:
            break
        if kill_file.exists():
            try:
                _write(kill_file, "1")
            except OSError:
                pass
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.005)
    for _ in range(40):  # killed tasks leave the cgroup once they are gone
        try:
            group.rmdir()
            break
        except FileNotFoundError:
            break
        except OSError:
            time.sleep(0.005)
    return killed
