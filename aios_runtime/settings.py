"""Settings shared by the controller and the executor: `config.json` as a model.

Defaults follow the spec's `config.json`; secrets may come from the environment
(`DEEPSEEK_API_KEY`, `AIOS_LLM_BASE_URL`, `AIOS_LLM_MODEL`). Bad values give an
error that names the key. Only `__main__` modules and the CLI read files; the
services take a `Settings` object.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aios_sdk.errors import InvalidRequest
from aios_sdk.protocol import describe_validation_error

__all__ = ["Limits", "Settings", "ToolSandbox", "load_settings", "save_settings"]

PositiveSeconds = Annotated[float, Field(gt=0, le=3600)]


class ToolSandbox(BaseModel):
    model_config = ConfigDict(extra="allow")

    enable_shell_whitelist: bool = True
    shell_whitelist: list[str] = Field(
        default_factory=lambda: ["ls", "cat", "echo", "python3"]
    )
    http_domain_whitelist: list[str] = Field(default_factory=list)
    # Hosts the user explicitly allows even though they are loopback/private
    # (SSRF guard exception, SECURITY.md R1); tests point this at their fakes.
    http_allow_private_hosts: list[str] = Field(default_factory=list)
    use_bubblewrap: bool = True


class Limits(BaseModel):
    """Caps applied to every tool call (S-61)."""

    model_config = ConfigDict(extra="allow")

    output_bytes: int = Field(default=1 << 20, gt=0)
    download_bytes: int = Field(default=200 << 20, gt=0)
    response_bytes: int = Field(default=10 << 20, gt=0)
    cpu_seconds: int = Field(default=60, gt=0)
    memory_bytes: int = Field(default=1 << 30, gt=0)
    file_size_bytes: int = Field(default=256 << 20, gt=0)
    file_list_max: int = Field(default=2000, gt=0)
    max_processes: int = Field(default=16, gt=0)
    # tasks (processes and threads) one tool run may have at once: a fork bomb's ceiling
    tasks_per_run: int = Field(default=128, gt=1)
    request_body_bytes: int = Field(default=4 << 20, gt=0)


class Settings(BaseModel):
    """The whole of `config.json`; unknown keys are kept and written back."""

    model_config = ConfigDict(extra="allow")

    deepseek_api_key: str = ""
    llm_base_url: str = "https://api.deepseek.com"
    llm_model: str = "deepseek-chat"
    default_voice: str = "zh-CN"
    voice_rate: Annotated[float, Field(gt=0, le=4)] = 0.9
    tool_timeout: dict[str, PositiveSeconds] = Field(
        default_factory=lambda: {"http_request": 30, "shell_exec": 60, "file_read": 5}
    )
    default_tool_timeout: PositiveSeconds = 30
    tool_sandbox: ToolSandbox = Field(default_factory=ToolSandbox)
    limits: Limits = Field(default_factory=Limits)
    # Per-app settings, handed to each app process as JSON in AIOS_APP_SETTINGS
    # (the SDK exposes them as `self.settings`).
    app_settings: dict[str, dict[str, Any]] = Field(
        default_factory=lambda: {"music_app": {"api_base": "https://itunes.apple.com"}}
    )
    max_step_rounds: Annotated[int, Field(ge=1, le=20)] = 3

    def timeout_for(self, tool: str) -> float:
        return float(self.tool_timeout.get(tool, self.default_tool_timeout))


_ENV_OVERRIDES = {
    "DEEPSEEK_API_KEY": "deepseek_api_key",
    "AIOS_LLM_BASE_URL": "llm_base_url",
    "AIOS_LLM_MODEL": "llm_model",
}


def load_settings(
    path: str | os.PathLike[str] | None, env: dict[str, str] | None = None
) -> Settings:
    """Read `config.json` (missing file → defaults) and apply environment overrides."""
    raw: dict[str, Any] = {}
    if path is not None and Path(path).exists():
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InvalidRequest(f"{path}: not valid JSON ({exc})") from exc
        if not isinstance(raw, dict):
            raise InvalidRequest(f"{path}: must hold a JSON object")
    env = os.environ if env is None else env
    for var, key in _ENV_OVERRIDES.items():
        if env.get(var):
            raw[key] = env[var]
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        raise InvalidRequest(
            f"{path or 'config'}: {describe_validation_error(exc)}"
        ) from exc


def save_settings(settings: Settings, path: str | os.PathLike[str]) -> None:
    """Write `config.json` atomically (temp file, fsync, rename)."""
    from aios_runtime.files import atomic_write_text

    text = json.dumps(settings.model_dump(mode="json"), ensure_ascii=False, indent=2)
    atomic_write_text(Path(path), text + "\n")
