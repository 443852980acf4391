"""A non-owner user's own settings: `<state_dir>/users/<user_id>/settings.json`.

What a user may set for themselves is their model: the `llm` section (`api_key`,
`base_url`, `model`), each key over the owner's. A user who set none of them is
served by the owner's model, as before. `UserSettings.get(user)` shows a user's saved
keys with the API key masked (`••••` plus its last four characters) and, under
`key`, whose key their calls carry (`"own"`, `"owner"` or `"none"`); `put(user,
changes)` merges `{"llm": {...}}` over what they saved (a masked key echoed back keeps
the old one; an empty string removes a key), refuses any other key or a bad value
with `invalid_request` naming it (nothing saved then), and writes the file atomically.
`client_for(user)` is the model client for that user's app turns — their own when they
saved any `llm` key, else None (the owner's is used) — rebuilt after their change and
after the owner's settings change. `model_for(user, owner, client_for)` is that
choice, the one rule for every model call made for a user: the app's through
`/api/llm/*` and the controller's own (routing, the history summary), which serve the
user of the request being handled in this thread (`serving_user(user)` around it,
`served_user()` within).

A model key goes only to the server it was set for: the owner's `llm.api_key` is
used only with the owner's `llm.base_url`. A user who names a server of their own
(`base_url`) without a key of their own is served with no key at all — a server of
their own that needs none (Ollama, llama.cpp) works, any other answers that no key is
set — so no user can have the owner's key sent to a URL of their choosing.

The owner's settings stay where the desktop's Settings reads them
(`<state_dir>/settings.json` over `config.json`, `controller.settings_store`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import describe_validation_error
from aios_runtime.files import atomic_write_text, read_state
from aios_runtime.settings import LlmSettings, Settings
from aios_runtime.users import OWNER, user_root
from controller.llm.client import LLMClient
from controller.settings_store import MASK, mask_key

__all__ = [
    "USER_LLM_KEYS",
    "UserSettings",
    "model_for",
    "same_server",
    "served_user",
    "serving_user",
    "user_settings_file",
]

log = logging.getLogger("aios.controller.user_settings")

USER_LLM_KEYS = ("api_key", "base_url", "model")


_SERVED: ContextVar[str] = ContextVar("aios_served_user", default=OWNER)


def user_settings_file(state_root: Path, user_id: str) -> Path:
    return user_root(state_root, user_id) / "settings.json"


def model_for(
    user_id: str | None,
    owner: LLMClient,
    client_for: Callable[[str], LLMClient | None] | None,
) -> LLMClient:
    """The model client serving `user_id`: `client_for(user_id)` (their own settings
    over the owner's) when it gives one, else the owner's `owner`."""
    if not user_id or user_id == OWNER or client_for is None:
        return owner
    return client_for(user_id) or owner


@contextlib.contextmanager
def serving_user(user_id: str) -> Iterator[None]:
    """Within the block, the controller's own model calls in this thread (and the
    contexts copied from it) serve `user_id`, the user of the request handled."""
    token = _SERVED.set(user_id or OWNER)
    try:
        yield
    finally:
        _SERVED.reset(token)


def served_user() -> str:
    """The user the request handled in this thread is for (the owner outside one)."""
    return _SERVED.get()


class UserSettings:
    """The users' own settings over the owner's (`owner()` gives the owner's now)."""

    def __init__(self, state_root: Path, owner: Callable[[], Settings]):
        self.state_root = state_root
        self._owner = owner
        self._lock = threading.Lock()
        self._clients: dict[str, LLMClient] = {}

    def saved(self, user_id: str) -> dict[str, Any]:
        """What `user_id` saved (`{}` for the owner, or when nothing was saved; a
        damaged file is set aside and named, and the owner's settings serve)."""
        if user_id == OWNER:
            return {}
        path = user_settings_file(self.state_root, user_id)
        return read_state(path, _parse_user_settings, "a user's settings") or {}

    def get(self, user_id: str) -> dict[str, Any]:
        saved = dict(self.saved(user_id).get("llm") or {})
        llm = dict(saved)
        if llm.get("api_key"):
            llm["api_key"] = mask_key(str(llm["api_key"]))
        return {"llm": llm, "key": self._whose_key(saved)}

    def _whose_key(self, llm: Mapping[str, Any]) -> str:
        """Whose key `llm` (what a user saved) is served with: their own, the
        owner's (only with the owner's server) or none."""
        if llm.get("api_key"):
            return "own"
        try:
            merged = self._merged(llm).llm
        except InvalidRequest:
            return "none"
        return "owner" if merged.api_key else "none"

    def put(self, user_id: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        if user_id == OWNER:
            raise InvalidRequest(
                "the owner's settings are the desktop's (PUT /api/settings)",
                detail={"param": "user"},
            )
        unknown = sorted(set(changes) - {"llm"})
        if unknown:
            raise InvalidRequest(
                f"{unknown[0]} is not a setting a user sets for themselves (only llm)",
                detail={"param": unknown[0]},
            )
        given = changes.get("llm") or {}
        if not isinstance(given, Mapping):
            raise InvalidRequest("llm must be an object", detail={"param": "llm"})
        for key in given:
            if key not in USER_LLM_KEYS:
                raise InvalidRequest(
                    f"llm.{key} is not a setting (llm.api_key, llm.base_url, llm.model)",
                    detail={"param": f"llm.{key}"},
                )
        with self._lock:
            saved = self.saved(user_id)
            llm = dict(saved.get("llm") or {})
            for key, value in given.items():
                if not isinstance(value, str):
                    raise InvalidRequest(
                        f"llm.{key} must be a string", detail={"param": f"llm.{key}"}
                    )
                if key == "api_key" and value.startswith(MASK):
                    continue  # the masked key echoed back: the old one stays
                if value == "":
                    llm.pop(key, None)
                else:
                    llm[key] = value
            self._merged(llm)  # refuses a bad value before anything is written
            path = user_settings_file(self.state_root, user_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps({**saved, "llm": llm}, ensure_ascii=False, indent=2)
            atomic_write_text(path, text + "\n", 0o600)
            self._clients.pop(user_id, None)
        return self.get(user_id)

    def client_for(self, user_id: str) -> LLMClient | None:
        """The model client for `user_id`'s turns, or None: the owner's serves."""
        llm = self.saved(user_id).get("llm")
        if not isinstance(llm, dict) or not any(llm.get(k) for k in USER_LLM_KEYS):
            return None
        with self._lock:
            client = self._clients.get(user_id)
            if client is None:
                try:
                    settings = self._merged(llm)
                except InvalidRequest as exc:
                    log.warning("%s's model settings are refused: %s", user_id, exc)
                    return None
                client = self._clients[user_id] = LLMClient(settings)
            return client

    def owner_changed(self, _settings: Settings) -> None:
        """The owner's settings changed: every user's client is built again."""
        with self._lock:
            self._clients.clear()

    def _merged(self, llm: Mapping[str, Any]) -> Settings:
        """The owner's settings with `llm` over their model section; the owner's key
        stays only when the server is still the owner's."""
        owner = self._owner()
        try:
            section = LlmSettings.model_validate({**owner.llm.model_dump(), **llm})
        except ValidationError as exc:
            raise InvalidRequest(
                f"llm: {describe_validation_error(exc)}", detail={"param": "llm"}
            ) from exc
        if not llm.get("api_key") and not same_server(section, owner.llm):
            section = section.model_copy(update={"api_key": ""})
        return owner.model_copy(update={"llm": section})


def same_server(one: LlmSettings, other: LlmSettings) -> bool:
    """`one` and `other` name the same model server (a trailing slash aside)."""
    return str(one.base_url).rstrip("/") == str(other.base_url).rstrip("/")


def _parse_user_settings(text: str) -> dict[str, Any]:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise TypeError(f"a JSON {type(data).__name__}, not an object")
    llm = data.get("llm", {})
    if not isinstance(llm, dict) or not all(isinstance(v, str) for v in llm.values()):
        raise ValueError("llm is not an object of texts")
    return data
