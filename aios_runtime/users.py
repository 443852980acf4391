"""Users and their sandboxes: who a request acts for, and where that user's files live.

Every person the system serves is a user with a sandbox of their own under the state
folder, `<state_dir>/users/<user_id>/`: `workspaces/<app_id>/` (each app's workdir
for that user, with its `skills/` and database files), `skills/` (the skills that
user installed; the owner's folder is the shared one the desktop's apps see). The desktop's
person is the owner, `default`. A user id is checked before it names anything
(`check_user_id`): letters, digits and `_-.@`, at most `MAX_USER_ID` characters, not
starting with a dot, not a reserved name — so no id a client sends can name a path
outside `<state_dir>/users/`.

The owner's calls go to an app's own process; every other user's go to a process of
that app for them alone, confined to their workdir (`controller.apps.served`). The
executor chooses the workdir of each call from its user: the controller names that
user itself, an app process is the user its launch token was issued for.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from aios_protocol.errors import InvalidRequest, ToolFailed

__all__ = [
    "MAX_USER_ID",
    "OWNER",
    "Sandboxes",
    "check_user_id",
    "private_folder",
    "user_app_workdir",
    "user_root",
    "user_skills_dir",
    "users_root",
    "workspaces_root",
]

OWNER = "default"
MAX_USER_ID = 64
_USER_ID = re.compile(r"^[A-Za-z0-9_@-][A-Za-z0-9_.@-]*$")
# names that would mean something else in a folder listing or a log
_RESERVED = frozenset({"system", "controller", "root", "admin", "users", "workspaces"})


def check_user_id(value: object, *, field: str = "user") -> str:
    """`value` as a user id, or `InvalidRequest` (400) naming `field` and why."""
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} must be a string", detail={"param": field})
    if not value or len(value) > MAX_USER_ID or not _USER_ID.match(value):
        raise InvalidRequest(
            f"{field} must be 1–{MAX_USER_ID} letters, digits or _-.@ "
            "(not starting with a dot)",
            detail={"param": field},
        )
    if value.lower() in _RESERVED:
        raise InvalidRequest(
            f"{field} {value!r} is a reserved name", detail={"param": field}
        )
    return value


def users_root(state_root: Path) -> Path:
    return state_root / "users"


def user_root(state_root: Path, user_id: str) -> Path:
    """`<state_dir>/users/<user_id>` (the id checked first)."""
    return users_root(state_root) / check_user_id(user_id)


def workspaces_root(state_root: Path, user_id: str = OWNER) -> Path:
    """The folder of a user's app workdirs: `<state_dir>/users/<user_id>/workspaces`."""
    return user_root(state_root, user_id) / "workspaces"


def user_app_workdir(state_root: Path, user_id: str, app_id: str) -> Path:
    """One app's workdir for one user: `<state_dir>/users/<user_id>/workspaces/<app_id>`."""
    return workspaces_root(state_root, user_id) / app_id


def user_skills_dir(state_root: Path, user_id: str) -> Path:
    """The skills a user installed: `<state_dir>/users/<user_id>/skills` (the owner's
    is the shared folder, which every app of the desktop sees)."""
    return user_root(state_root, user_id) / "skills"


def private_folder(folder: Path, what: str) -> Path:
    """`folder` made (mode 700) if need be, its real path; `ToolFailed` naming `what`
    when it cannot be made."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ToolFailed(f"{what} cannot be made: {exc}") from exc
    return Path(os.path.realpath(folder))


@dataclass(frozen=True)
class Sandboxes:
    """The controller's view of the users' sandboxes: where an app works for a user."""

    state_root: Path

    def workdir(self, user_id: str, app_id: str, owner_workdir: Path | None) -> Path | None:
        """`app_id`'s workdir for `user_id` (the owner's is the registered one)."""
        if user_id == OWNER:
            return owner_workdir
        return user_app_workdir(self.state_root, user_id, app_id)
