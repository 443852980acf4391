"""Limits of each `/v1` user: the disk their sandbox may hold, the work they may run.

config.json `users.disk_quota_mb` (0: none) bounds `<state_dir>/users/<user_id>/`:
a user whose sandbox holds more is refused a new instruction with 429
`user_limit_reached`, and nothing of theirs is deleted (they may still read and
remove their files in the desktop or through `aios mcp`; what ran before the limit
was reached stays). `users.max_running` bounds the instructions one user runs at
once; one more is refused the same way before anything starts, other users are
not held. Both are read from the current settings at each request.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from aios_protocol.errors import UserLimitReached
from aios_runtime.settings import Settings
from aios_runtime.users import user_root

__all__ = ["Slot", "UserLimits", "folder_bytes"]


def folder_bytes(root: Path, stop_above: int | None = None) -> int:
    """The bytes of the files below `root` (symlinks not followed); the count stops
    early once it passes `stop_above`."""
    total = 0
    pending = [str(root)]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
                    if stop_above is not None and total > stop_above:
                        return total
        except OSError:
            continue
    return total


class Slot:
    """One running instruction of one user; `release` (once) frees it."""

    def __init__(self, release: Callable[[], None]) -> None:
        self._release = release
        self._done = threading.Event()

    def release(self) -> None:
        if not self._done.is_set():
            self._done.set()
            self._release()


class UserLimits:
    """The disk quota and running-work limit of each user (see the module text)."""

    def __init__(self, settings: Callable[[], Settings], state_root: Path) -> None:
        self._settings = settings
        self._state_root = state_root
        self._running: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, user: str) -> Slot:
        """A slot for one instruction of `user`, or `UserLimitReached` (nothing started)."""
        limits = self._settings().users
        if limits.disk_quota_mb:
            quota = limits.disk_quota_mb * 1024 * 1024
            used = folder_bytes(user_root(self._state_root, user), stop_above=quota)
            if used > quota:
                raise UserLimitReached(
                    f"the sandbox of {user} holds more than its quota of "
                    f"{limits.disk_quota_mb} MiB; remove files to go on",
                    detail={"limit": "disk_quota_mb", "quota_mb": limits.disk_quota_mb},
                )
        with self._lock:
            running = self._running.get(user, 0)
            if running >= limits.max_running:
                raise UserLimitReached(
                    f"{user} already runs {running} instructions (users.max_running is "
                    f"{limits.max_running}); retry when one has finished",
                    detail={"limit": "max_running", "max_running": limits.max_running},
                )
            self._running[user] = running + 1
        return Slot(lambda: self._done(user))

    def _done(self, user: str) -> None:
        with self._lock:
            left = self._running.get(user, 1) - 1
            if left > 0:
                self._running[user] = left
            else:
                self._running.pop(user, None)
