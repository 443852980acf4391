"""What the supervisor is configured with and what it knows of each child.

`SupervisorSettings` (config.json's `supervisor` section, `aios_runtime.settings`)
holds the timings and bounds of supervision; `SupervisedChild` is the
record one child's state machine advances (status, process, port, token, health
probes, restart counts, where this run's output starts in its log). `bound_log`
keeps a child's log file within `SupervisorSettings.log_max_bytes`: a child that floods
its output keeps running, and the controller's disk use stays bounded.
"""

from __future__ import annotations

import os
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aios_runtime.settings import SupervisorSettings
from aios_runtime.users import OWNER
from controller.apps.confinement import AppConfinement
from controller.apps.discovery import AppSpec
from controller.apps.processes import ChildProcess

__all__ = ["SupervisedChild", "SupervisorSettings", "bound_log"]

LOG_TRIMMED = b"\n[aios: earlier output trimmed]\n"


# the old name of config.json's `supervisor` section, as aios/system.py imports it


@dataclass
class SupervisedChild:
    """One child (the executor, or an app) as the supervisor's state machine sees it."""

    child_id: str  # "executor", the app id, or "<app_id>@<user_id>"
    port: int
    log_path: Path
    spec: AppSpec | None = None  # None for the executor
    token: str = ""
    # the user an app process serves: the owner, or the one other user it serves alone
    user_id: str = OWNER
    status: str = "starting"  # starting|registering|running|restarting|failed|stopped
    proc: ChildProcess | None = None  # a Popen, or an app forked from the template
    confinement: AppConfinement | None = None  # None for the executor
    app_pid: int | None = None  # the app itself, below bubblewrap's processes
    error: str | None = None
    note: str | None = None  # e.g. requirements.txt not satisfied
    restarts: int = 0
    failures: int = 0
    next_start: float = 0.0
    spawned_at: float = 0.0
    healthy_since: float | None = None
    last_probe: float = 0.0
    missed: int = 0
    answered_at: float = 0.0  # when it last answered a real call (monotonic)
    settled: bool = False
    log_offset: int = 0  # where this run's output starts in its log
    needs_register: bool = False
    hung: str | None = None  # a call timed out while the process lived: restart it
    probe: Future | None = None
    # the app's own tools, read by the probe that found it up (its registration
    # sends them without asking again); None: not read
    manifest_tools: list[dict[str, Any]] | None = None
    job: Future | None = None  # registration or group kill in flight
    published: tuple = field(default_factory=tuple)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def public_status(self) -> str:
        if self.status in ("starting", "registering"):
            return "restarting" if self.restarts else "starting"
        return self.status


def bound_log(path: Path, max_bytes: int) -> bool:
    """Trim `path` to its last quarter of `max_bytes` once it is larger; True if trimmed.

    Children write their logs with O_APPEND (`processes.spawn_child`), so after the
    truncation their next write lands at the new end: no hole, no lost process.
    Output written between the read and the truncation is lost (it is a log).
    """
    try:
        if path.stat().st_size <= max_bytes:
            return False
        keep = max(max_bytes // 4, 1)
        with open(path, "rb") as handle:
            handle.seek(-keep, os.SEEK_END)
            tail = handle.read(keep)
        os.truncate(path, 0)
        with open(path, "ab") as handle:
            handle.write(LOG_TRIMMED + tail)
    except OSError:
        return False
    return True
