"""Settings shared by the controller and the executor: `config.json` as a model.

Defaults follow the spec's `config.json`; secrets may come from the environment
(`DEEPSEEK_API_KEY`, `AIOS_LLM_BASE_URL`, `AIOS_LLM_MODEL`). Bad values give an
error that names the key. Only `__main__` modules and the CLI read files; the
services take a `Settings` object.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import describe_validation_error

__all__ = [
    "Limits",
    "McpOutSettings",
    "McpServerSettings",
    "Settings",
    "ToolSandbox",
    "load_settings",
    "load_settings_or_set_aside",
    "save_user_settings",
    "saved_keys",
    "user_settings_path",
]

PositiveSeconds = Annotated[float, Field(gt=0, le=3600)]

# a host name or IP (optionally "*." for "and its subdomains"); no scheme, path or space
_DOMAIN = re.compile(r"(\*\.)?(?=.*[a-z0-9])[a-z0-9-]+(\.[a-z0-9-]+)*\.?", re.IGNORECASE)
# one program name, looked up on the fixed PATH: no arguments, paths or shell syntax
_PROGRAM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def _domain(value: str) -> str:
    text = value.strip()
    if not _DOMAIN.fullmatch(text):
        raise ValueError(
            f"{value!r} is not a domain name (write it like example.com, without "
            "http:// or a path; * alone is not allowed)"
        )
    return text.lower()


def _program(value: str) -> str:
    text = value.strip()
    if not _PROGRAM.fullmatch(text):
        raise ValueError(
            f"{value!r} is not a program name (one command like ls or python3, "
            "without arguments, paths or shell syntax)"
        )
    return text


def _http_url(value: str) -> str:
    text = value.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in text:
        raise ValueError(f"{value!r} is not an http(s) URL like https://api.deepseek.com")
    return text


Domain = Annotated[str, AfterValidator(_domain)]
Program = Annotated[str, AfterValidator(_program)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]
NonBlank = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class ToolSandbox(BaseModel):
    model_config = ConfigDict(extra="allow")

    enable_shell_whitelist: bool = True
    shell_whitelist: list[Program] = Field(
        default_factory=lambda: ["ls", "cat", "echo", "python3"]
    )
    http_domain_whitelist: list[Domain] = Field(default_factory=list)
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


# an MCP server's name, as in `mcp__<name>__<tool>`: letters, digits, "-", single "_"
_MCP_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*")


def _mcp_name(value: str) -> str:
    if not _MCP_NAME.fullmatch(value) or value.endswith("_") or len(value) > 40:
        raise ValueError(
            f"{value!r} is not an MCP server name (letters, digits, - and single _, "
            "at most 40 characters)"
        )
    return value


McpServerName = Annotated[str, AfterValidator(_mcp_name)]


class McpDeclaredTool(BaseModel):
    """A tool config.json says an MCP server offers (listed before the server starts)."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class McpServerLimits(BaseModel):
    """config.json `mcp_servers.<name>.limits`: the server process's rlimits and task
    ceiling; unset: the executor's `limits` (`memory_bytes`, `file_size_bytes`,
    `tasks_per_run`)."""

    model_config = ConfigDict(extra="forbid")

    memory_bytes: int | None = Field(default=None, gt=0)  # address space (RLIMIT_AS)
    file_size_bytes: int | None = Field(default=None, gt=0)  # RLIMIT_FSIZE
    tasks: int | None = Field(default=None, gt=1)  # pids cgroup, else RLIMIT_NPROC


class McpServerSettings(BaseModel):
    """config.json `mcp_servers.<name>`: one stdio MCP server the executor runs (docs/MCP.md)."""

    model_config = ConfigDict(extra="forbid")

    command: NonBlank
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    timeout: PositiveSeconds = 30  # one tool call
    start_timeout: PositiveSeconds = 20  # start-up and the first tool listing
    network: bool = False
    trusted: bool = False  # true: its tools run without the user's yes
    risk_level: Literal["read", "write", "execute", "network", "system"] = "execute"
    max_result_size_chars: int = Field(default=20000, gt=0)
    readable: list[str] = Field(default_factory=list)  # more folders it may read
    tools: list[McpDeclaredTool] = Field(default_factory=list)
    limits: McpServerLimits = Field(default_factory=McpServerLimits)


class McpOutSettings(BaseModel):
    """config.json `mcp_out`: what `aios mcp` serves to an MCP host (docs/MCP.md)."""

    model_config = ConfigDict(extra="forbid")

    # tools that need the user's yes, allowed anyway when called through `aios mcp`
    allow_confirmed_tools: list[str] = Field(default_factory=list)


class Settings(BaseModel):
    """The whole of `config.json`; unknown keys are kept and written back."""

    model_config = ConfigDict(extra="allow")

    deepseek_api_key: str = ""
    llm_base_url: HttpUrl = "https://api.deepseek.com"
    llm_model: NonBlank = "deepseek-chat"
    # the desktop's language; "" follows the browser's
    ui_language: Literal["", "zh-CN", "en-US"] = ""
    default_voice: str = "zh-CN"
    voice_rate: Annotated[float, Field(gt=0, le=4)] = 0.9
    tool_timeout: dict[str, PositiveSeconds] = Field(
        default_factory=lambda: dict[str, float](
            http_request=30, shell_exec=60, file_read=5
        )
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
    # keys an OpenAI client may send as `Authorization: Bearer <key>` to /v1 (besides
    # the desktop token), docs/OPENAI_API.md
    api_keys: list[NonBlank] = Field(default_factory=list)
    mcp_servers: dict[McpServerName, McpServerSettings] = Field(default_factory=dict)
    mcp_out: McpOutSettings = Field(default_factory=McpOutSettings)

    def timeout_for(self, tool: str) -> float:
        return float(self.tool_timeout.get(tool, self.default_tool_timeout))


_ENV_OVERRIDES = {
    "DEEPSEEK_API_KEY": "deepseek_api_key",
    "AIOS_LLM_BASE_URL": "llm_base_url",
    "AIOS_LLM_MODEL": "llm_model",
}


USER_SETTINGS_NAME = "settings.json"


def user_settings_path(state_dir: str | os.PathLike[str]) -> Path:
    """Where the settings the user saves from the desktop live: the state folder."""
    return Path(state_dir) / USER_SETTINGS_NAME


def _read_object(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise InvalidRequest(f"{path}: must hold a JSON object")
    return raw


def load_settings(
    path: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None = None,
    *,
    user: str | os.PathLike[str] | None = None,
) -> Settings:
    """Read `config.json` (missing file → defaults), put the user's saved settings
    (`user`, top-level keys, see `user_settings_path`) over it, and apply environment
    overrides."""
    raw: dict[str, Any] = {}
    if path is not None and Path(path).exists():
        raw = _read_object(Path(path))
    if user is not None and Path(user).exists():
        raw.update(_read_object(Path(user)))
    env = os.environ if env is None else env
    for var, key in _ENV_OVERRIDES.items():
        if env.get(var):
            raw[key] = env[var]
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        where = f"{path or 'config'}" + (f" with {user}" if user else "")
        raise InvalidRequest(f"{where}: {describe_validation_error(exc)}") from exc


def _set_aside_if_unreadable(path: Path) -> bool:
    """Set `path` aside (reported by name) when it is not a JSON object; True if so."""
    from aios_runtime.files import set_aside

    try:
        parsed = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except ValueError as exc:  # JSON or UTF-8
        set_aside(path, f"not valid JSON: {exc}")
        return True
    if not isinstance(parsed, dict):
        set_aside(path, "not a JSON object")
        return True
    return False


def load_settings_or_set_aside(
    path: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    *,
    user: str | os.PathLike[str] | None = None,
) -> Settings:
    """`load_settings`, except that a `config.json` or user settings file that is not
    JSON at all (corrupt or cut short) is set aside as `<name>.corrupt-<time>`,
    reported by name, and left out (the defaults are used). A readable file with a
    bad value still raises."""
    config: Path | None = Path(path)
    if _set_aside_if_unreadable(Path(path)):
        config = None
    if user is not None and _set_aside_if_unreadable(Path(user)):
        user = None
    return load_settings(config, env, user=user)


def saved_keys(path: str | os.PathLike[str]) -> set[str]:
    """The top-level keys a user settings file holds (none when it is missing)."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return set()
    return set(raw) if isinstance(raw, dict) else set()


def save_user_settings(
    settings: Settings, keys: set[str], path: str | os.PathLike[str]
) -> None:
    """Write the top-level `keys` of `settings` to the user settings file `path`
    atomically (temp file, fsync, rename); `config.json` is never rewritten."""
    from aios_runtime.files import atomic_write_text

    dumped = settings.model_dump(mode="json")
    values = {key: dumped[key] for key in sorted(keys) if key in dumped}
    text = json.dumps(values, ensure_ascii=False, indent=2)
    atomic_write_text(Path(path), text + "\n")
