"""The live `config.json` behind `GET/PUT /api/settings`.

GET shows the settings with the API key masked (`••••` plus its last four
characters). PUT merges the given top-level keys over the current settings,
validates the result with `Settings` (an error names the key at fault), keeps the
old key when the masked value is echoed back unchanged, and saves atomically.
Components that read settings per request (the pipeline's limits) see the change at
once; the executor and the apps read them at start, so those changes need a restart
(`restart_needed` in the answer says so).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aios_sdk.config import Settings, save_settings
from aios_sdk.errors import ProtocolError
from aios_sdk.protocol import describe_validation_error

__all__ = ["SettingsStore", "mask_key"]

log = logging.getLogger("aios.controller.settings")

MASK = "••••"
_LIVE_KEYS = frozenset({"max_step_rounds", "deepseek_api_key", "llm_base_url", "llm_model"})


def mask_key(key: str) -> str:
    if not key:
        return ""
    return MASK + key[-4:] if len(key) > 8 else MASK


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
        raw["deepseek_api_key"] = mask_key(self._settings.deepseek_api_key)
        return raw

    def update(self, changes: dict[str, Any]) -> dict[str, Any]:
        """Merge, validate, save; the masked result plus `restart_needed`."""
        if not isinstance(changes, dict):
            raise ProtocolError("settings must be a JSON object")
        with self._lock:
            current = self._settings.model_dump(mode="json")
            key = changes.get("deepseek_api_key", current["deepseek_api_key"])
            if key == mask_key(current["deepseek_api_key"]) or (
                isinstance(key, str) and key.startswith(MASK)
            ):
                key = current["deepseek_api_key"]  # the mask echoed back: keep the key
            merged = {**current, **changes, "deepseek_api_key": key}
            try:
                updated = Settings.model_validate(merged)
            except ValidationError as exc:
                raise ProtocolError(
                    f"invalid settings: {describe_validation_error(exc)}"
                ) from exc
            save_settings(updated, self.path)
            changed = {k for k in merged if merged.get(k) != current.get(k)}
            self._settings = updated
        for listener in self._listeners:
            try:
                listener(updated)
            except Exception:
                log.exception("settings listener failed")
        result = self.masked()
        result["restart_needed"] = bool(changed - _LIVE_KEYS)
        return result
