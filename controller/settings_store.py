"""The live settings behind `GET/PUT /api/settings`.

The settings are `config.json` (the defaults plus what the user wrote in it) with the
user's saved settings over it: `path` is that user file in the state folder
(`aios_runtime.settings.user_settings_path`); `config.json` is never rewritten. GET
shows the settings with every API key (`deepseek_api_key`, `voice_api_key`, any
`*_api_key`, each of `api_keys`) masked (`••••` plus its last four characters). PUT
merges the given top-level keys over the current settings, validates the result with
`Settings` (an error names the key at fault), keeps the old key when the masked value
is echoed back unchanged, and saves the keys the user changed, now or before,
atomically. Components that read settings per request (the pipeline's limits) see the
change at once; the executor and the apps read them at start, so those changes need
a restart (`restart_needed` in the answer says so).
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
from aios_runtime.settings import Settings, save_user_settings, saved_keys

__all__ = ["SettingsStore", "is_secret", "mask_key"]

log = logging.getLogger("aios.controller.settings")

MASK = "••••"
_LIVE_KEYS = frozenset(
    {"max_step_rounds", "deepseek_api_key", "llm_base_url", "llm_model", "ui_language"}
)


def mask_key(key: str) -> str:
    if not key:
        return ""
    return MASK + key[-4:] if len(key) > 8 else MASK


def is_secret(name: str) -> bool:
    """Top-level settings never shown in full: `deepseek_api_key`, `voice_api_key`, …,
    and the `/v1` entry's `api_keys` (a list, each key masked)."""
    return name.endswith("_api_key") or name == "api_keys"


def _mask(value: Any) -> Any:
    if isinstance(value, str):
        return mask_key(value)
    if isinstance(value, list):
        return [mask_key(v) if isinstance(v, str) else v for v in value]
    return value


def _unmask(old: Any, new: Any) -> Any:
    """`new`, with each masked value echoed back unchanged replaced by the old key."""
    if isinstance(old, str) and (
        new == mask_key(old) or (isinstance(new, str) and new.startswith(MASK))
    ):
        return old
    if isinstance(old, list) and isinstance(new, list):
        by_mask = {mask_key(k): k for k in old if isinstance(k, str)}
        return [by_mask.get(v, v) if isinstance(v, str) else v for v in new]
    return new


class SettingsStore:
    def __init__(self, path: Path, settings: Settings):
        self.path = Path(path)
        self._settings = settings
        self._lock = threading.Lock()
        self._listeners: list[Callable[[Settings], None]] = []

    def subscribe(self, listener: Callable[[Settings], None]) -> None:
        """Call `listener(new_settings)` after every successful update."""
        self._listeners.append(listener)

    def get(self) -> Settings:
        return self._settings

    def masked(self) -> dict[str, Any]:
        raw = self._settings.model_dump(mode="json")
        for name, value in raw.items():
            if is_secret(name):
                raw[name] = _mask(value)
        return raw

    def update(self, changes: dict[str, Any]) -> dict[str, Any]:
        """Merge, validate, save; the masked result plus `restart_needed`."""
        if not isinstance(changes, dict):
            raise InvalidRequest("settings must be a JSON object")
        with self._lock:
            current = self._settings.model_dump(mode="json")
            merged = {**current, **changes}
            for name in [n for n in changes if is_secret(n)]:
                # the mask echoed back: keep the key
                merged[name] = _unmask(current.get(name, ""), changes[name])
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
            changed = {k for k in merged if merged.get(k) != current.get(k)}
            # only what the user changed, now or before, goes to the user's file
            save_user_settings(updated, saved_keys(self.path) | changed, self.path)
            self._settings = updated
        for listener in self._listeners:
            try:
                listener(updated)
            except Exception:
                log.exception("settings listener failed")
        result = self.masked()
        result["restart_needed"] = bool(changed - _LIVE_KEYS)
        return result
