"""How tool processes run: bubblewrap or rlimits, timeouts, capped output, group kill.

Every tool process (`shell_exec`, `process_start`) starts in its own session with
rlimits set in the child (CPU, address space, file size from `settings.limits`), a
clean environment (fixed PATH, `HOME` = workdir, no API keys) and, when `bwrap`
works and `tool_sandbox.use_bubblewrap` is on, inside bubblewrap (the command built
by `aios_runtime.bubblewrap`): read-only root, private `/tmp`, `/dev`, `/proc`, no
network, its own PID namespace, no capabilities, home directories, the executor's
state dir, the config directory and the other apps' workdirs hidden, and the app's
workdir the only writable place. A kill is thorough (SECURITY.md X6): the executor
is a child subreaper, each run carries a marker in its environment, and a kill
takes the process group, the process tree and every re-parented descendant carrying
the marker. What this does not isolate without bubblewrap: the file system (a
script can read what the executor's user can read) and the network — the rlimit
sandbox only caps resources and timing, and a process that scrubs its environment
and double-forks escapes the marker scan.
"""

from __future__ import annotations

import ctypes
import logging
import os
import resource
import secrets
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from aios_runtime.bubblewrap import bwrap_argv, bwrap_works
from aios_runtime.settings import Limits
from executor.providers.mcp_launch import user_tasks
from executor.sandbox.argv_policy import FIXED_PATH
from executor.sandbox.pids_cgroup import PidsCgroups, join_current, kill_group

__all__ = [
    "MARKER_VAR",
    "CapturedRun",
    "ProcessSandbox",
    "enable_subreaper",
    "has_exited",
    "kill_marked",
    "reap_orphans",
]

log = logging.getLogger("aios.executor.sandbox")

MARKER_VAR = "AIOS_TOOL_RUN"
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_CHUNK = 64 * 1024
_DRAIN_AFTER_EXIT = 0.3  # seconds a finished command's leftovers may keep its pipes

try:
    _libc: Any = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - not Linux
    _libc = None

# Pids of children that a `Popen` object owns; `reap_orphans` never waits on them.
_owned: set[int] = set()
_owned_lock = threading.Lock()
# marker → the run's pids cgroup (pids_cgroup.py), emptied and removed by kill_marked
_groups: dict[str, Path] = {}


_subreaper = False


def enable_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux only).

    Without it (e.g. the service built in-process by tests) a kill scans every
    process of the machine for the run's marker instead of only our descendants.
    """
    global _subreaper
    if _libc is not None and _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        _subreaper = True
    return _subreaper


def reap_orphans() -> None:
    """Wait for re-parented descendants that have exited, so no zombie piles up.

    Only a subreaper has such descendants; a host process that merely embeds the
    service keeps its other children's exit statuses to itself.
    """
    if not _subreaper:
        return
    import psutil

    with _owned_lock:
        try:
            children = psutil.Process().children()
        except psutil.Error:
            return
        for child in children:
            if child.pid in _owned:
                continue
            try:
                os.waitpid(child.pid, os.WNOHANG)
            except ChildProcessError:
                pass


def release(proc: subprocess.Popen) -> None:
    """Forget a finished child (after `wait()` / `poll()` returned its status)."""
    with _owned_lock:
        _owned.discard(proc.pid)


def has_exited(pid: int) -> bool:
    """True when our child `pid` has exited — without reaping it, so its pid (and
    process group id) cannot be reused while we still signal it."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def kill_marked(root_pid: int, marker: str, *, root_reaped: bool = False) -> int:
    """SIGKILL the group of `root_pid`, its tree and every descendant carrying `marker`.

    Repeats until a scan finds nothing alive, so a process forking while we kill is
    caught on the next round. With `root_reaped` the root's pid may already belong
    to someone else, so only the marker scan runs. Answers how many were signalled.
    """
    import psutil

    killed = 0
    group = _groups.get(marker)
    if group is not None:  # everyone the run ever forked, whatever its environment
        killed += kill_group(group)
        if not group.exists():
            _groups.pop(marker, None)
    for _ in range(5):
        victims: set[int] = set()
        if not root_reaped:
            try:
                os.killpg(root_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                tree = psutil.Process(root_pid).children(recursive=True)
                victims.update(p.pid for p in tree)
            except psutil.Error:
                pass
        try:
            candidates = (
                psutil.Process().children(recursive=True)
                if _subreaper
                else list(psutil.process_iter())
            )
        except psutil.Error:
            candidates = []
        for proc in candidates:
            try:
                if proc.status() != psutil.STATUS_ZOMBIE and (
                    proc.environ().get(MARKER_VAR) == marker
                ):
                    victims.add(proc.pid)
            except psutil.Error:
                continue
        victims.discard(os.getpid())
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.01)
    return killed


@dataclass
class CapturedRun:
    """The outcome of a foreground run: exit status and capped output (`truncated`
    when a stream wrote more than the cap; `*_size` the bytes each stream wrote in all)."""

    returncode: int | None
    stdout: str
    stderr: str
    truncated: bool
    timed_out: bool
    stdout_size: int = 0
    stderr_size: int = 0


class _CappedBuffer:
    """Keeps the first `cap` bytes; counts (and discards) the rest."""

    def __init__(self, cap: int):
        self.cap = cap
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        return bytes(self.data).decode("utf-8", errors="replace")

    @property
    def size(self) -> int:
        """Every byte written, kept or not."""
        return len(self.data) + self.dropped


def _child_setup(limits: Limits, group: Path | None = None) -> Callable[[], None]:
    """The pre-exec hook: rlimits, the run's pids cgroup, and die with the executor
    (runs in the child). Without a cgroup a non-root user gets an `RLIMIT_NPROC`
    ceiling instead (root is exempt from it)."""
    plan = [
        (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1),
        (resource.RLIMIT_AS, limits.memory_bytes, limits.memory_bytes),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes),
    ]
    if group is None and os.getuid() != 0:
        tasks = user_tasks() + limits.tasks_per_run
        plan.append((resource.RLIMIT_NPROC, tasks, tasks))

    parent = os.getpid()

    def setup() -> None:
        if group is not None:
            join_current(group)  # fails closed: no cgroup, no run
        for which, soft, hard in plan:
            _, current_hard = resource.getrlimit(which)
            if current_hard != resource.RLIM_INFINITY:
                hard = min(hard, current_hard)
                soft = min(soft, hard)
            resource.setrlimit(which, (soft, hard))
        if _libc is not None:
            _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the executor died before the death signal was set
            os._exit(1)

    return setup


def _probe_bwrap(bwrap: str) -> bool:
    return bwrap_works(bwrap)


class ProcessSandbox:
    """Starts tool processes under bubblewrap (when usable) or rlimits alone."""

    def __init__(
        self,
        limits: Limits,
        *,
        use_bubblewrap: bool = True,
        hidden_dirs: Iterable[str | os.PathLike[str]] = (),
    ):
        self.limits = limits
        self._hidden = [os.path.realpath(d) for d in hidden_dirs]
        self._bwrap = shutil.which("bwrap") if use_bubblewrap else None
        self._bwrap_ok: bool | None = None if self._bwrap else False
        self._probe_done = threading.Event()
        self._active: dict[int, str] = {}
        self._active_lock = threading.Lock()
        self.cgroups = PidsCgroups.detect(limits.tasks_per_run)
        if self._bwrap:
            threading.Thread(target=self._probe, name="bwrap-probe", daemon=True).start()
        else:
            self._probe_done.set()

    def _probe(self) -> None:
        try:
            self._bwrap_ok = _probe_bwrap(self._bwrap or "bwrap")
            if not self._bwrap_ok:
                log.warning("bwrap is installed but does not work here; using rlimits only")
        finally:
            self._probe_done.set()

    @property
    def kind(self) -> str:
        """`"bubblewrap"` or `"rlimit"`: the isolation actually in force."""
        self._probe_done.wait(15)
        return "bubblewrap" if self._bwrap_ok else "rlimit"

    @property
    def fork_limit(self) -> str:
        """How the number of tasks of a run is capped: `"cgroup"` (pids controller),
        `"rlimit"` (`RLIMIT_NPROC`, non-root only) or `"none"` (root without cgroups)."""
        if self.cgroups is not None:
            return "cgroup"
        return "rlimit" if os.getuid() != 0 else "none"

    def environment(
        self, workdir: Path, marker: str, lang: str = "C.UTF-8"
    ) -> dict[str, str]:
        """The whole environment of a tool process: nothing inherited from ours
        (`lang`: its `LANG`, the language a skill answers `--help` in)."""
        return {
            "PATH": FIXED_PATH,
            "HOME": str(workdir),
            "LANG": lang,
            "PYTHONIOENCODING": "utf-8",
            MARKER_VAR: marker,
        }

    def wrap(
        self,
        argv: list[str],
        workdir: Path,
        cwd: Path,
        hide: Iterable[str],
        readable: Iterable[str] = (),
    ) -> list[str]:
        """`argv` as it is actually executed (inside bubblewrap when in force);
        `readable` folders are bound back read-only where a hidden folder covers them."""
        if self.kind != "bubblewrap":
            return argv
        return bwrap_argv(
            self._bwrap or "bwrap",
            argv,
            cwd=cwd,
            hidden=["/root", "/home", *self._hidden, *hide],
            readable=readable,
            writable=[workdir],
        )

    def spawn(
        self,
        argv: list[str],
        *,
        workdir: Path,
        cwd: Path,
        hide: Iterable[str] = (),
        stdout: int | IO[Any] = subprocess.PIPE,
        stderr: int | IO[Any] = subprocess.PIPE,
        readable: Iterable[str] = (),
        lang: str = "C.UTF-8",
    ) -> tuple[subprocess.Popen, str]:
        """Start `argv` sandboxed in its own session; answer the process and its marker."""
        marker = secrets.token_hex(12)
        group = self.cgroups.create(marker) if self.cgroups is not None else None
        if group is not None:
            _groups[marker] = group
        try:
            with _owned_lock:
                proc = subprocess.Popen(
                    self.wrap(argv, workdir, cwd, hide, readable),
                    cwd=cwd,
                    env=self.environment(workdir, marker, lang),
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    start_new_session=True,
                    preexec_fn=_child_setup(self.limits, group),  # noqa: PLW1509
                    close_fds=True,
                )
                _owned.add(proc.pid)
        except BaseException:
            if group is not None:
                kill_group(_groups.pop(marker, group))
            raise
        return proc, marker

    def run(
        self,
        argv: list[str],
        *,
        workdir: Path,
        cwd: Path,
        timeout: float,
        hide: Iterable[str] = (),
        readable: Iterable[str] = (),
        lang: str = "C.UTF-8",
    ) -> CapturedRun:
        """Run to completion (or `timeout`), output capped at `limits.output_bytes`.

        When the command exits, descendants it left behind get a short grace to
        finish writing and are then killed: a foreground run owns its processes.
        """
        proc, marker = self.spawn(
            argv, workdir=workdir, cwd=cwd, hide=hide, readable=readable, lang=lang
        )
        with self._active_lock:
            self._active[proc.pid] = marker
        try:
            out, err, timed_out = self._pump(proc, marker, timeout)
        finally:
            kill_marked(proc.pid, marker)
            proc.wait()
            release(proc)
            with self._active_lock:
                self._active.pop(proc.pid, None)
            reap_orphans()
        return CapturedRun(
            returncode=None if timed_out else proc.returncode,
            stdout=out.text(),
            stderr=err.text(),
            truncated=bool(out.dropped or err.dropped),
            timed_out=timed_out,
            stdout_size=out.size,
            stderr_size=err.size,
        )

    def _pump(
        self, proc: subprocess.Popen, marker: str, timeout: float
    ) -> tuple[_CappedBuffer, _CappedBuffer, bool]:
        cap = self.limits.output_bytes
        buffers = {proc.stdout: _CappedBuffer(cap), proc.stderr: _CappedBuffer(cap)}
        selector = selectors.DefaultSelector()
        for stream in buffers:
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            selector.register(stream, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        stop_at = deadline
        timed_out = killed = False
        try:
            while selector.get_map():
                now = time.monotonic()
                if now >= stop_at and not killed:
                    timed_out = not has_exited(proc.pid)
                    kill_marked(proc.pid, marker)
                    killed, stop_at = True, now + 2  # read what is left, briefly
                elif now >= stop_at:
                    break
                for key, _ in selector.select(timeout=max(0.0, min(0.1, stop_at - now))):
                    try:
                        chunk = os.read(key.fd, _CHUNK)
                    except BlockingIOError:
                        continue
                    if chunk:
                        buffers[key.fileobj].add(chunk)  # type: ignore[index]
                    else:
                        selector.unregister(key.fileobj)
                if not killed and stop_at == deadline and has_exited(proc.pid):
                    stop_at = min(deadline, time.monotonic() + _DRAIN_AFTER_EXIT)
        finally:
            selector.close()
            for stream in buffers:
                assert stream is not None
                stream.close()
        while not killed and not has_exited(proc.pid):  # it closed its pipes early
            if time.monotonic() >= deadline:
                timed_out = True
                break
            time.sleep(0.01)
        return buffers[proc.stdout], buffers[proc.stderr], timed_out

    def stop_all(self) -> None:
        """Kill every foreground run in flight (the executor is exiting)."""
        with self._active_lock:
            active = list(self._active.items())
        for pid, marker in active:
            kill_marked(pid, marker)
        if self.cgroups is not None:
            self.cgroups.close()
