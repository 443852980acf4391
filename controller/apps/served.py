"""The processes of an app that serve one user other than the owner.

The owner's calls of an app go to the app's own process. Every other user's calls go
to a process of the same app that serves that user alone (`<app_id>@<user_id>`): it
is started on that user's first call, confined to that user's workdir of the app
(`<state_dir>/users/<user_id>/workspaces/<app_id>/`, its one writable folder; the
state folder, and with it the owner's and the other users' files, is hidden), and
has a token of its own, registered with the executor for that app and that user. The
token alone says whom the process acts for, so no proof of the user travels in a
call and nothing one process was handed works in another.

Such a process is forked from the app template like the app's own (or started as
`python main.py` inside bubblewrap where it cannot be), follows the same state
machine, is stopped when idle for `apps.idle_stop_s` (whatever the manifest's
`keep_alive` says: that is for the owner's process) and is dropped with its app. It
publishes no `app_status`: the desktop shows the owner's processes.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aios_runtime.users import OWNER, check_user_id, user_app_workdir
from controller.apps.discovery import seeded_workspace
from controller.apps.lifecycle import AppUse
from controller.apps.supervision import SupervisedChild

if TYPE_CHECKING:
    from controller.apps.confinement import Confiner
    from controller.apps.ports import PortAssigner

__all__ = ["ServedUsers", "served_id"]


def served_id(app_id: str, user_id: str) -> str:
    """The child id of `app_id`'s process serving `user_id` (an app id holds no `@`)."""
    return app_id if user_id == OWNER else f"{app_id}@{user_id}"


class ServedUsers:
    """The per-user processes of the supervisor's apps; mixed into `Supervisor`,
    whose state (declared here) it uses."""

    _apps: dict[str, SupervisedChild]
    _served: dict[str, SupervisedChild]
    _use: dict[str, AppUse]
    _ports: PortAssigner
    _logs: Path
    _confiner: Confiner
    _state_root: Path
    _lock: Any  # the supervisor's RLock

    def _child_of(
        self, app_id: str, user_id: str = OWNER, *, make: bool = False
    ) -> SupervisedChild | None:
        """The process record of `app_id` for `user_id`; with `make`, a user's is made
        (idle) on first ask. None for an app that is not installed or cannot run."""
        if user_id == OWNER:
            return self._apps.get(app_id)
        key = served_id(app_id, check_user_id(user_id, field="user_id"))
        child = self._served.get(key)
        if child is not None or not make:
            return child
        own = self._apps.get(app_id)
        if own is None or own.spec is None:
            return None
        spec = own.spec
        child = SupervisedChild(
            key,
            self._ports.assign(key),
            self._logs / "users" / user_id / f"{app_id}.log",
            spec=spec,
            token=secrets.token_urlsafe(24),
            user_id=user_id,
            note=spec.requirements_note,
            confinement=self._confiner.decide(spec),
            status="idle",
            settled=True,
        )
        self._served[key] = child
        self._use[key] = AppUse()  # stopped when idle, whatever `keep_alive` says
        return child

    def _is_current(self, child: SupervisedChild) -> bool:
        """Whether `child` is still the record supervised under its id."""
        table = self._apps if child.user_id == OWNER else self._served
        return table.get(child.child_id) is child

    def _served_of(self, app_id: str) -> list[SupervisedChild]:
        """Every process of `app_id` serving another user than the owner."""
        return [c for c in self._served.values() if c.spec and c.spec.app_id == app_id]

    def workdir_of(self, child: SupervisedChild) -> Path | None:
        """Where `child` works: the app's workspace for the owner's process, the
        user's workdir of the app (made, mode 700) for a process serving another."""
        spec = child.spec
        if spec is None or child.user_id == OWNER:
            return spec.workdir if spec is not None else None
        workdir = user_app_workdir(self._state_root, child.user_id, spec.app_id)
        if spec.manifest is not None and not workdir.exists():
            # a new user starts with the files the app ships, as the owner did
            shipped = (spec.folder / spec.manifest.workdir).resolve()
            seeded_workspace(workdir.parent, spec.app_id, shipped=shipped)
        workdir.mkdir(parents=True, exist_ok=True, mode=0o700)
        workdir.chmod(0o700)
        return workdir

    def caller_of_token(self, token: str) -> tuple[str, str] | None:
        """(app id, user) of the app process whose own token is `token` (compared in
        constant time with every one), or None."""
        with self._lock:
            children = [*self._apps.values(), *self._served.values()]
        found = None
        for child in children:
            if hmac.compare_digest(child.token.encode(), token.encode()) and child.spec:
                found = (child.spec.app_id, child.user_id)
        return found

    @contextmanager
    def own_call(self, token: str) -> Iterator[None]:
        """A call the app process holding `token` makes to the controller (a model
        call: a background sub-agent's turn): that process is in use while it runs
        (within `apps.background_max_s` of its latest call from the controller, see
        `lifecycle.AppUse`). Any other token counts for nothing."""
        caller = self.caller_of_token(token)
        with self._lock:
            use = self._use.get(served_id(*caller)) if caller else None
        if use is None:
            yield
            return
        with use.own_call(self._lock):
            yield

    def app_for_token(self, token: str) -> str | None:
        """The app whose process holds `token`, or None."""
        caller = self.caller_of_token(token)
        return caller[0] if caller else None

    def user_for_token(self, token: str) -> str:
        """The user the app process holding `token` serves (the owner for any other
        token: the desktop's is the owner's)."""
        caller = self.caller_of_token(token)
        return caller[1] if caller else OWNER
