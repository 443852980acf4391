"""The live settings behind `GET/PUT /api/settings`.

The settings are `config.json` (the defaults plus what the user wrote in it) with the
user's saved settings over it: `path` is that user file in the state folder
(`aios_runtime.settings.user_settings_path`); `config.json` is never rewritten. GET
shows the settings with every API key (`llm.api_key`, `voice_api_key`, any key named
`api_key` or `*_api_key` at any depth, each of `api_keys`) masked (`••••` plus its last
four characters). PUT merges the given keys over the current settings (a section such
as `llm` key by key; the old names like `deepseek_api_key` are read as their new
ones), validates the result with `Settings` (an error names the key at fault, and a
key no section declares is refused), keeps the old key when the masked value is echoed
back unchanged, and saves the keys the user changed, now or before, atomically.
Components that read settings per request (the pipeline's limits) see the change at
once; the executor and the apps read them at start, so those changes need a restart
(`restart_needed` in the answer says so). `config_problems()` are the old key names
and unknown keys found in the files at start (`GET /api/health`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import describe_validation_error
from aios_runtime.config_keys import rename_old_keys
from aios_runtime.settings import (
    Settings,
    changed_keys,
    merge_settings,
    save_user_settings,
    saved_keys,
)

__all__ = ["SettingsStore", "is_secret", "mask_key"]

log = logging.getLogger("aios.controller.settings")

MASK = "••••"
# what applies without a restart (a section counts whole); the voice keys reach the
# recognizer and the speaker through their subscriptions
_LIVE_KEYS = frozenset(
    {
        "max_step_rounds",
        "llm",
        "ui_language",
        "users",
        "default_voice",
        "voice_follows_desktop",
        "voice_rate",
        "voice_engine",
        "voice_api_key",
        "voice_api_base_url",
        "voice_api_model",
        "voice_google_consent",
        "voice_google_url",
    }
)


def mask_key(key: str) -> str:
    if not key:
        return ""
    return MASK + key[-4:] if len(key) > 8 else MASK


def is_secret(name: str) -> bool:
    """Settings never shown in full, at any depth: `api_key` (`llm.api_key`),
    `voice_api_key` and any `*_api_key`, and the `/v1` entry's `api_keys` (a list,
    each key masked)."""
    return name == "api_key" or name.endswith("_api_key") or name == "api_keys"


def _mask(value: Any) -> Any:
    if isinstance(value, str):
        return mask_key(value)
    if isinstance(value, list):  # `api_keys`: strings, or objects bound to users
        return [
            mask_key(v)
            if isinstance(v, str)
            else (
                {**v, "key": mask_key(str(v.get("key", "")))} if isinstance(v, dict) else v
            )
            for v in value
        ]
    return value


def _masked(tree: dict[str, Any]) -> dict[str, Any]:
    return {
        name: _mask(value)
        if is_secret(name)
        else (_masked(value) if isinstance(value, dict) else value)
        for name, value in tree.items()
    }


def _unmask(old: Any, new: Any) -> Any:
    """`new`, with each masked value echoed back unchanged replaced by the old key."""
    if isinstance(old, str) and (
        new == mask_key(old) or (isinstance(new, str) and new.startswith(MASK))
    ):
        return old
    if isinstance(old, list) and isinstance(new, list):
        keys = [k if isinstance(k, str) else k.get("key") for k in old if k]
        by_mask = {mask_key(k): k for k in keys if isinstance(k, str)}
        return [_unmask_entry(by_mask, v) for v in new]
    return new


def _unmask_entry(by_mask: dict[str, str], entry: Any) -> Any:
    """One `api_keys` entry echoed back: its masked key replaced by the old one."""
    if isinstance(entry, str):
        return by_mask.get(entry, entry)
    if isinstance(entry, dict) and isinstance(entry.get("key"), str):
        return {**entry, "key": by_mask.get(entry["key"], entry["key"])}
    return entry


def _unmasked(old: Any, new: dict[str, Any]) -> dict[str, Any]:
    """`new` with every masked secret in it (at any depth) put back from `old`."""
    before = old if isinstance(old, dict) else {}
    return {
        name: _unmask(before.get(name, ""), value)
        if is_secret(name)
        else (_unmasked(before.get(name), value) if isinstance(value, dict) else value)
        for name, value in new.items()
    }


class SettingsStore:
    def __init__(self, path: Path, settings: Settings):
        self.path = Path(path)
        self._settings = settings
        self._problems = settings.config_warnings
        self._lock = threading.Lock()
        self._listeners: list[Callable[[Settings], None]] = []

    def subscribe(self, listener: Callable[[Settings], None]) -> None:
        """Call `listener(new_settings)` after every successful update."""
        self._listeners.append(listener)

    def get(self) -> Settings:
        return self._settings

    def config_problems(self) -> list[str]:
        """What loading the settings at start found: old key names, unknown keys."""
        return list(self._problems)

    def masked(self) -> dict[str, Any]:
        return _masked(self._settings.model_dump(mode="json"))

    def update(self, changes: dict[str, Any]) -> dict[str, Any]:
        """Merge, validate, save; the masked result plus `restart_needed`."""
        if not isinstance(changes, dict):
            raise InvalidRequest("settings must be a JSON object")
        changes = dict(changes)
        rename_old_keys(changes)  # an older page may still send `deepseek_api_key`
        with self._lock:
            before = self._settings
            current = before.model_dump(mode="json")
            # the mask echoed back: keep the key
            merged = merge_settings(current, _unmasked(current, changes))
            try:
                updated = Settings.model_validate(merged)
            except ValidationError as exc:
                fields = {  # the form shows each reason beside its field
                    ".".join(str(part) for part in err["loc"]): err["msg"]
                    for err in exc.errors()
                }
                raise InvalidRequest(
                    f"invalid settings: {describe_validation_error(exc)}",
                    detail={"fields": fields},
                ) from exc
            known = {unknown.path for unknown in before.unknown_keys()}
            added = [u for u in updated.unknown_keys() if u.path not in known]
            if added:  # a typo would be saved and never read
                raise InvalidRequest(
                    "invalid settings: " + "; ".join(u.describe() for u in added),
                    detail={"fields": {u.path: u.describe() for u in added}},
                )
            changed = changed_keys(current, updated.model_dump(mode="json"))
            # only what the user changed, now or before, goes to the user's file
            save_user_settings(updated, saved_keys(self.path) | changed, self.path)
            self._settings = updated
        for listener in self._listeners:
            try:
                listener(updated)
            except Exception:
                log.exception("settings listener failed")
        result = self.masked()
        result["restart_needed"] = bool({key.split(".")[0] for key in changed} - _LIVE_KEYS)
        return result
