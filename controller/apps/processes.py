"""Child processes of the controller: how the executor and the apps are started
(command, environment per docs/ARCHITECTURE.md), each in its own process group,
tied to the controller's life and stopped group-wide.

Each child starts in a new session (its own process group) with
`prctl(PR_SET_PDEATHSIG, SIGKILL)`, so a `kill -9` of the controller kills it too.
The death signal fires when the *thread* that forked the child ends, so children
must be spawned from long-lived threads only (the main thread and the supervisor's
monitor thread). Bubblewrap sets its sandbox's own death signal late, so every child
also carries this launch's mark (`AIOS_LAUNCH`) for the reaper that outlives the
controller (`start_child_reaper`). Output goes to a log file whose last line
explains a crash.
"""

from __future__ import annotations

import ctypes
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from aios_runtime.reaper import start_reaper
from controller.apps.discovery import AppSpec

__all__ = [
    "REPO_ROOT",
    "ChildProcess",
    "ExecutorLaunch",
    "app_environment",
    "executor_environment",
    "log_size",
    "log_tail",
    "spawn_child",
    "start_child_reaper",
    "stop_groups",
    "template_environment",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
# first on an app's PYTHONPATH: its sitecustomize makes every bind loopback
APP_SITE = Path(__file__).resolve().parent / "app_site"
# never inherited by a child: the LLM key stays in the controller, tokens are per child
_SECRET_ENV = ("AIOS_LLM_API_KEY", "DEEPSEEK_API_KEY", "AIOS_TOKEN")
# carried by every child of this controller (and what they start): the reaper's mark
LAUNCH_MARK_VAR = "AIOS_LAUNCH"
_LAUNCH_MARK = secrets.token_hex(12)
_reaper_started = False


@dataclass
class ExecutorLaunch:
    """How to start the executor (docs/ARCHITECTURE.md)."""

    config_path: Path
    state_dir: Path
    command: list[str] | None = None  # default: python -m executor …

    def args(self, port: int) -> list[str]:
        base = self.command or [sys.executable, "-m", "executor"]
        return [
            *base,
            "--port",
            str(port),
            "--config",
            str(self.config_path),
            "--state-dir",
            str(self.state_dir),
        ]


def _base_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SECRET_ENV}
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = f"{REPO_ROOT}{os.pathsep}{path}" if path else str(REPO_ROOT)
    env["PYTHONUNBUFFERED"] = "1"
    env[LAUNCH_MARK_VAR] = _LAUNCH_MARK
    return env


def start_child_reaper() -> None:
    """Once per controller process, before its first child: when it dies, the reaper
    kills whatever of its children is left (`aios_runtime.reaper`)."""
    global _reaper_started
    if not _reaper_started:
        _reaper_started = True
        start_reaper(environment_mark=f"{LAUNCH_MARK_VAR}={_LAUNCH_MARK}")


def executor_environment(master_token: str) -> dict[str, str]:
    return {**_base_environment(), "AIOS_TOKEN": master_token}


def template_environment() -> dict[str, str]:
    """The app template's environment (`controller.apps.forkserver`): an app's
    start-up path (`app_site` first), no token and no app's settings."""
    base = _base_environment()
    return {**base, "PYTHONPATH": f"{APP_SITE}{os.pathsep}{base['PYTHONPATH']}"}


def app_environment(
    spec: AppSpec,
    *,
    port: int,
    token: str,
    executor_url: str,
    controller_url: str,
    settings: dict[str, Any],
    workdir: Path | None = None,
    user_id: str | None = None,
) -> dict[str, str]:
    """The environment an app process reads (docs/ARCHITECTURE.md); a process that
    serves one user other than the owner gets `workdir` (theirs) and `user_id`."""
    base = _base_environment()
    served = {"AIOS_USER_ID": user_id} if user_id else {}
    return {
        **base,
        "PYTHONPATH": f"{APP_SITE}{os.pathsep}{base['PYTHONPATH']}",
        "APP_PORT": str(port),
        "AIOS_APP_ID": spec.app_id,
        "AIOS_WORKDIR": str(workdir or spec.workdir),
        "AIOS_EXECUTOR_URL": executor_url,
        "AIOS_TOKEN": token,
        "AIOS_CONTROLLER_URL": controller_url,
        "AIOS_APP_SETTINGS": json.dumps(settings, ensure_ascii=False),
        **served,
    }


_PR_SET_PDEATHSIG = 1
try:
    _prctl: Callable[..., Any] | None = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: no death signal, groups still stopped
    _prctl = None


def _death_signal_preexec(parent_pid: int):  # -> Callable[[], None]
    """Runs in the child between fork and exec: die with the parent."""

    def preexec() -> None:
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


def spawn_child(
    args: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    log_path: Path,
    append: bool,
    pass_fds: tuple[int, ...] = (),
) -> subprocess.Popen:
    """Start `args` in its own process group, output to `log_path` (opened with
    O_APPEND, so the supervisor may trim it while the child writes)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if not append:
        log_path.write_bytes(b"")
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_death_signal_preexec(os.getpid()),
            pass_fds=pass_fds,
        )


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class ChildProcess(Protocol):
    """A child as the supervisor follows it: a `subprocess.Popen`, or an app forked
    from the app template (`controller.apps.forkserver.ForkedProcess`)."""

    pid: int

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


def stop_groups(procs: Iterable[ChildProcess | None], grace: float) -> None:
    """SIGTERM each child's group, wait up to `grace` s for all, SIGKILL what is left.

    With `grace` 0 the groups get SIGKILL at once: a frozen child given SIGTERM could
    be woken (a stopped group left orphaned gets SIGCONT) and answer a call after the
    supervisor gave it up."""
    alive = [p for p in procs if p is not None]
    for proc in alive:
        if grace > 0 and proc.poll() is None:
            _signal_group(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for proc in alive:
        remaining = deadline - time.monotonic()
        try:
            proc.wait(max(remaining, 0.01))
        except subprocess.TimeoutExpired:
            pass
    for proc in alive:
        # the group may hold descendants even when the leader has exited
        _signal_group(proc.pid, signal.SIGKILL)
        try:
            proc.wait(2)
        except subprocess.TimeoutExpired:
            pass


def log_size(log_path: Path) -> int:
    try:
        return log_path.stat().st_size
    except OSError:
        return 0


def log_tail(log_path: Path, since: int = 0, lines: int = 1, limit: int = 300) -> str:
    """The last non-empty lines written to a child's log after byte `since`."""
    try:
        with open(log_path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(since, size - 8192, 0))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    tail = " | ".join(kept)
    return tail if len(tail) <= limit else "…" + tail[-limit:]
