"""The apps the executor serves: workdir, token, URL, whitelists and custom tools.

The controller registers each app process it starts (`PUT /apps/<id>`): the app's
own, which serves the owner, and one per other user it serves (`user_id`, its
workdir that user's). The registry maps a presented token to the caller's identity
— the master token to `"controller"`, an app token to that process's `identity`
(the app id, or `<app_id>@<user_id>` for a process serving another user) — with
constant-time comparisons, so the token alone says which app and which user.
"""

from __future__ import annotations

import hmac
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from jsonschema import SchemaError

from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import AppRegistration, ToolSpec
from aios_runtime.users import OWNER, check_user_id
from executor.tools.catalog import ArgumentSchema

__all__ = ["CONTROLLER", "AppRecord", "AppRegistry"]

CONTROLLER = "controller"
_APP_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class AppRecord:
    """One registered app, with its workdir resolved once at registration."""

    app_id: str
    workdir: Path
    token: str
    url: str | None = None
    shell_whitelist: tuple[str, ...] = ()
    http_domain_whitelist: tuple[str, ...] = ()
    custom_tools: dict[str, ToolSpec] = field(default_factory=dict)
    # each custom tool's `parameters`, compiled once at registration
    argument_schemas: dict[str, ArgumentSchema] = field(default_factory=dict, repr=False)
    # set per request when the controller calls: its plans were reviewed (consent.py)
    reviewed: bool = False
    # the user the call acts for (`workdir` is then their sandbox's): the one its
    # process serves, or the one the controller named for this request
    user_id: str = OWNER

    @property
    def identity(self) -> str:
        """Who a token of this record is: the app id, or `<app_id>@<user_id>` for a
        process serving another user (an app id holds no `@`)."""
        return self.app_id if self.user_id == OWNER else f"{self.app_id}@{self.user_id}"

    @classmethod
    def from_registration(cls, reg: AppRegistration) -> AppRecord:
        if not _APP_ID.match(reg.app_id) or reg.app_id == CONTROLLER:
            raise InvalidRequest(f"invalid app_id {reg.app_id!r}")
        if not os.path.isabs(reg.workdir) or "\x00" in reg.workdir:
            raise InvalidRequest("workdir must be an absolute path")
        if len(reg.token) < 16:
            raise InvalidRequest("app token must be at least 16 characters")
        workdir = Path(os.path.realpath(reg.workdir))
        if workdir == Path("/"):
            raise InvalidRequest("workdir must not be /")
        try:
            workdir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidRequest(
                f"workdir {reg.workdir!r} cannot be created: {exc}"
            ) from exc
        if not workdir.is_dir():
            raise InvalidRequest(f"workdir {reg.workdir!r} is not a directory")
        schemas: dict[str, ArgumentSchema] = {}
        for spec in reg.custom_tools:
            try:
                schemas[spec.name] = ArgumentSchema(spec.name, spec.parameters)
            except SchemaError as exc:
                raise InvalidRequest(
                    f"custom tool {spec.name!r}: parameters is not a valid JSON schema: "
                    f"{exc.message}"
                ) from exc
        return cls(
            app_id=reg.app_id,
            workdir=workdir,
            token=reg.token,
            url=reg.url.rstrip("/") if reg.url else None,
            shell_whitelist=tuple(reg.shell_whitelist or ()),
            http_domain_whitelist=tuple(reg.http_domain_whitelist or ()),
            custom_tools={spec.name: spec for spec in reg.custom_tools},
            argument_schemas=schemas,
            user_id=check_user_id(reg.user_id, field="user_id") if reg.user_id else OWNER,
        )


class AppRegistry:
    """Thread-safe table of registered app processes plus the master token, keyed by
    their identity (`AppRecord.identity`)."""

    def __init__(self, master_token: str):
        if not master_token:
            raise ValueError("the executor needs a master token")
        self._master = master_token.encode()
        self._apps: dict[str, AppRecord] = {}
        self._lock = threading.Lock()

    def register(self, record: AppRecord) -> AppRecord | None:
        """Add or replace an app process; answer the record it replaced, if any."""
        with self._lock:
            previous = self._apps.get(record.identity)
            self._apps[record.identity] = record
            return previous

    def unregister(self, app_id: str, user_id: str = OWNER) -> AppRecord | None:
        key = app_id if user_id == OWNER else f"{app_id}@{user_id}"
        with self._lock:
            return self._apps.pop(key, None)

    def get(self, app_id: str, user_id: str = OWNER) -> AppRecord | None:
        """The process of `app_id` serving `user_id`, if one is registered."""
        return self.by_identity(app_id if user_id == OWNER else f"{app_id}@{user_id}")

    def by_identity(self, identity: str) -> AppRecord | None:
        with self._lock:
            return self._apps.get(identity)

    def find(self, app_id: str) -> AppRecord | None:
        """A registered process of `app_id`: the owner's, else any user's (the app's
        tools and whitelists are the same in each)."""
        with self._lock:
            found = self._apps.get(app_id)
            if found is None:
                found = next((r for r in self._apps.values() if r.app_id == app_id), None)
            return found

    def all(self) -> list[AppRecord]:
        with self._lock:
            return list(self._apps.values())

    def __len__(self) -> int:
        """How many apps are registered (the processes of one app count once)."""
        with self._lock:
            return len({r.app_id for r in self._apps.values()})

    def authenticate(self, presented: str) -> str | None:
        """The caller's identity for a token, or None. Every comparison is constant-time."""
        token = presented.encode()
        identity: str | None = None
        if hmac.compare_digest(token, self._master):
            identity = CONTROLLER
        for record in self.all():
            if hmac.compare_digest(token, record.token.encode()) and identity is None:
                identity = record.identity
        return identity
