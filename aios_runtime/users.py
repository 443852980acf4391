"""Users and their sandboxes: who a request acts for, and where that user's files live.

Every person the system serves is a user with a sandbox of their own under the state
folder, `<state_dir>/users/<user_id>/`: `workspaces/<app_id>/` (each app's workdir
for that user, with its `skills/` and database files), `skills/` (the skills that
user installed; the owner's folder is the shared one the desktop's apps see). The desktop's
person is the owner, `default`. A user id is checked before it names anything
(`check_user_id`): letters, digits and `_-.@`, at most `MAX_USER_ID` characters, not
starting with a dot, not a reserved name — so no id a client sends can name a path
outside `<state_dir>/users/`.

An app process serves every user (one process per app); what keeps their files apart
is the executor, which chooses the workdir of each call from the call's user. The
controller names that user itself; an app names it with the grant the controller put
in the call's context (`user_grant`: an HMAC of app and user under the executor's
master token), so an app can act only for a user it was asked to serve.
"""

from __future__ import annotations

import hashlib
import hmac
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
    "user_grant",
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


def user_grant(master_token: str, app_id: str, user_id: str) -> str:
    """The proof that the controller asked `app_id` to act for `user_id`."""
    message = f"{app_id}\n{user_id}".encode()
    return hmac.new(master_token.encode(), message, hashlib.sha256).hexdigest()[:40]


@dataclass(frozen=True)
class Sandboxes:
    """The controller's view of the users' sandboxes: where an app works for a user,
    and the grant an app passes on to act for that user."""

    state_root: Path
    master_token: str

    def workdir(self, user_id: str, app_id: str, owner_workdir: Path | None) -> Path | None:
        """`app_id`'s workdir for `user_id` (the owner's is the registered one)."""
        if user_id == OWNER:
            return owner_workdir
        return user_app_workdir(self.state_root, user_id, app_id)

    def grant(self, app_id: str, user_id: str) -> str:
        return user_grant(self.master_token, app_id, user_id)

    def grant_matches(self, app_id: str, user_id: str, grant: str | None) -> bool:
        """True when `grant` proves `app_id` was asked to serve `user_id`."""
        expected = self.grant(app_id, user_id).encode()
        return bool(grant) and hmac.compare_digest(str(grant).encode(), expected)
