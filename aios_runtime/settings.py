"""Settings shared by the controller and the executor: `config.json` as a model.

Every object of `config.json` is a model here (`llm`, `tool_sandbox`, `limits`,
`supervisor`, `apps`, `app_sandbox`, `admission`, `permissions`, `openai_api`,
`users`, `mcp_servers`, `mcp_out`), nested in `Settings`, with the defaults the system runs
with (docs/CONFIG.md lists them). A bad value gives an error that names the key; an
unknown key is kept, never dropped, and reported (`Settings.config_warnings`: logged
at load and shown by `GET /api/health`); an old key name is still read
(`aios_runtime.config_keys`). Secrets may come from the environment
(`AIOS_LLM_API_KEY`, then `DEEPSEEK_API_KEY`; `AIOS_LLM_BASE_URL`, `AIOS_LLM_MODEL`).
Only `__main__` modules and the CLI read files; the services take a `Settings` object.
"""

from __future__ import annotations

import json
import logging
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
    PrivateAttr,
    StringConstraints,
    ValidationError,
    model_validator,
)

from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import describe_validation_error
from aios_runtime.config_keys import UnknownKey, has_path, rename_old_keys, unknown_keys

__all__ = [
    "LLM_ENV",
    "AdmissionSettings",
    "AppSandboxSettings",
    "ApiKey",
    "AppsSettings",
    "Limits",
    "LlmSettings",
    "McpOutSettings",
    "McpServerSettings",
    "OpenAiApiSettings",
    "PermissionsSettings",
    "Section",
    "Settings",
    "SupervisorSettings",
    "ToolSandbox",
    "UsersSettings",
    "VoiceEngine",
    "changed_keys",
    "load_settings",
    "load_settings_or_set_aside",
    "merge_settings",
    "save_user_settings",
    "saved_keys",
    "user_settings_path",
]

log = logging.getLogger("aios.settings")

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


PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class Section(BaseModel):
    """One object of `config.json`: its keys typed; an unknown key is kept (and
    reported by `Settings.config_warnings`), never dropped."""

    model_config = ConfigDict(extra="allow")


class LlmSettings(Section):
    """`llm`: the OpenAI-compatible model the controller asks (DeepSeek by default).

    `api_key` may be empty when `base_url` is a server of the user's own (Ollama,
    llama.cpp, vLLM). Old names, still read: `deepseek_api_key`, `llm_base_url`,
    `llm_model` (top level)."""

    api_key: str = ""
    base_url: HttpUrl = "https://api.deepseek.com"
    model: NonBlank = "deepseek-chat"


class ToolSandbox(Section):
    """`tool_sandbox`: what the atomic tools may run and reach."""

    enable_shell_whitelist: bool = True
    shell_whitelist: list[Program] = Field(
        default_factory=lambda: ["ls", "cat", "echo", "python3"]
    )
    http_domain_whitelist: list[Domain] = Field(default_factory=list)
    # Hosts the user explicitly allows even though they are loopback/private
    # (SSRF guard exception, SECURITY.md R1); tests point this at their fakes.
    http_allow_private_hosts: list[str] = Field(default_factory=list)
    use_bubblewrap: bool = True
    # true: the process tools are unavailable when bubblewrap does not work here
    require_bubblewrap: bool = False
    # true: a command outside the whitelist asks the user instead of being refused
    ask_outside_whitelist: bool = False


class Limits(Section):
    """`limits`: caps applied to every tool call."""

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


class SupervisorSettings(Section):
    """`supervisor`: the timings and bounds of supervising the executor and the apps."""

    health_interval: PositiveFloat = 2.0
    health_timeout: PositiveFloat = 1.0
    max_missed: int = Field(default=2, ge=1)
    start_timeout: PositiveFloat = 20.0
    start_poll: PositiveFloat = 0.005  # /health polls of a starting child
    # seconds before the 1st, 2nd, … restart; the last repeats
    backoff: Annotated[tuple[NonNegativeFloat, ...], Field(min_length=1)] = (
        0.5,
        1.0,
        2.0,
        4.0,
    )
    max_restarts: int = Field(default=4, ge=0)
    stable_after: NonNegativeFloat = 10.0
    stop_grace: NonNegativeFloat = 2.0
    # a child's log is trimmed to its last quarter once it passes this size
    log_max_bytes: int = Field(default=4 * 1024 * 1024, gt=0)

    def delay(self, failures: int) -> float:
        """Seconds to wait before restarting after `failures` failures in a row."""
        return self.backoff[min(max(failures, 1), len(self.backoff)) - 1]


class AppsSettings(Section):
    """`apps`: when apps run. An app is started on first use and stopped after
    `idle_stop_s` seconds without a call (0: never); `start_at_launch` starts every
    app at launch instead. An app process's own calls to the controller's model
    routes (a background sub-agent's turns) count as use too, but only within
    `background_max_s` of the latest call the controller made to that process. With
    `fork_from_template` an app process is forked from the app template
    (`aios_sdk.zygote`) instead of started as a new interpreter."""

    idle_stop_s: NonNegativeFloat = 600.0
    background_max_s: NonNegativeFloat = 3600.0
    start_at_launch: bool = False
    fork_from_template: bool = True


class AppSandboxSettings(Section):
    """`app_sandbox`: how app processes are confined (bubblewrap, see SECURITY.md);
    `unconfined_apps` may run unconfined when their manifest says `"sandbox": false`."""

    use_bubblewrap: bool = True
    unconfined_apps: list[str] = Field(default_factory=list)


class AdmissionSettings(Section):
    """`admission`: bounded work in the controller."""

    max_instructions: int = Field(default=8, gt=0)  # instructions at once
    max_app_calls: int = Field(default=4, gt=0)  # calls to one app at once
    max_waiting: int = Field(default=64, gt=0)  # requests queued for each kind of slot
    queue_wait: PositiveFloat = 2.0  # seconds one request may wait in the queue


class PermissionsSettings(Section):
    """`permissions`: `confirm` false runs risky steps without asking the user."""

    confirm: bool = True


class OpenAiApiSettings(Section):
    """`openai_api`: the OpenAI-compatible entry under `/v1` (docs/OPENAI_API.md)."""

    heartbeat_s: PositiveSeconds = 10.0  # seconds between `: ping`s of a stream


def _user_id(value: str) -> str:
    from aios_runtime.users import check_user_id  # users imports nothing of this

    try:
        return check_user_id(value)
    except InvalidRequest as exc:
        raise ValueError(exc.message) from exc


UserId = Annotated[str, AfterValidator(_user_id)]


class ApiKey(Section):
    """One `api_keys` entry bound to users: `{"key", "user"}` (that user only) or
    `{"key", "users": [...]}` (the users a front end may name; the first is the one
    a request naming none acts for). A plain string entry is a key for any user."""

    key: NonBlank
    user: UserId | None = None
    users: list[UserId] = Field(default_factory=list)

    @model_validator(mode="after")
    def _some_user(self) -> ApiKey:
        if self.user is None and not self.users:
            raise ValueError('a bound key names its "user" or its "users"')
        if self.user is not None and self.users:
            raise ValueError('a bound key names "user" or "users", not both')
        return self

    def allowed(self) -> tuple[str, ...]:
        """The users this key may act for, the one it acts for by default first."""
        return (self.user,) if self.user is not None else tuple(self.users)


class UsersSettings(Section):
    """`users`: the limits of each user's sandbox (docs/CONFIG.md)."""

    # the most a user's sandbox may hold, in MiB (0: no quota); over it, a new
    # instruction of theirs is refused with `user_limit_reached`, nothing deleted
    disk_quota_mb: Annotated[int, Field(ge=0)] = 0
    # instructions of one user running at once through /v1; one more is refused
    max_running: Annotated[int, Field(ge=1, le=64)] = 2


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
    # false: the owner's alone (another user's call is refused); true: every user's
    shared: bool = False
    # a shared server that touches files runs once per user, in their sandbox; one
    # that says it touches none runs once for everyone
    touches_files: bool = True
    # the environment of a shared server's run for a user other than the owner (who
    # may have put what it runs into their folder), never `env`
    user_env: dict[str, str] = Field(default_factory=dict)


class McpOutSettings(BaseModel):
    """config.json `mcp_out`: what `aios mcp` serves to an MCP host (docs/MCP.md)."""

    model_config = ConfigDict(extra="forbid")

    # tools that need the user's yes, allowed anyway when called through `aios mcp`
    allow_confirmed_tools: list[str] = Field(default_factory=list)


# the engines of speech to text (voice/input.py)
VoiceEngine = Literal["auto", "pocketsphinx", "openai", "google", "browser"]
# top-level keys whose empty value means "the default"
_BLANK_IS_DEFAULT = (
    "voice_engine",
    "voice_api_base_url",
    "voice_api_model",
    "voice_google_url",
)
GOOGLE_SPEECH_URL = "https://www.google.com/speech-api/v2/recognize"


class Settings(BaseModel):
    """The whole of `config.json`. Unknown keys are kept (and written back with the
    rest) and reported in `config_warnings`; old key names are read (`config_keys`)."""

    model_config = ConfigDict(extra="allow")

    llm: LlmSettings = Field(default_factory=LlmSettings)
    # the desktop's language; "" follows the browser's
    ui_language: Literal["", "zh-CN", "en-US"] = ""
    # the language replies are spoken and heard in; `voice_follows_desktop` (the
    # default) uses the desktop's language instead, until the user picks a voice
    default_voice: str = "zh-CN"
    voice_follows_desktop: bool = True
    voice_rate: Annotated[float, Field(gt=0, le=4)] = 0.9
    voice_muted: bool = False  # true: replies are not spoken until unmuted
    # speech to text: the engine, and the OpenAI-compatible transcription service
    voice_engine: VoiceEngine = "auto"
    voice_api_key: str = ""
    voice_api_base_url: HttpUrl = "https://api.openai.com/v1"
    voice_api_model: NonBlank = "whisper-1"
    # Google's free speech service (SpeechRecognition's `recognize_google`): audio is
    # sent there only after the user's yes
    voice_google_consent: bool = False
    voice_google_url: HttpUrl = GOOGLE_SPEECH_URL
    tool_timeout: dict[str, PositiveSeconds] = Field(
        default_factory=lambda: dict[str, float](
            http_request=30, shell_exec=60, file_read=5
        )
    )
    default_tool_timeout: PositiveSeconds = 30
    app_timeout: PositiveSeconds = 60  # one call of an app's `handle`
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
    # (a string: a key for any user; an object: a key bound to users, `ApiKey`)
    api_keys: list[NonBlank | ApiKey] = Field(default_factory=list)
    users: UsersSettings = Field(default_factory=UsersSettings)
    supervisor: SupervisorSettings = Field(default_factory=SupervisorSettings)
    apps: AppsSettings = Field(default_factory=AppsSettings)
    app_sandbox: AppSandboxSettings = Field(default_factory=AppSandboxSettings)
    admission: AdmissionSettings = Field(default_factory=AdmissionSettings)
    permissions: PermissionsSettings = Field(default_factory=PermissionsSettings)
    openai_api: OpenAiApiSettings = Field(default_factory=OpenAiApiSettings)
    mcp_servers: dict[McpServerName, McpServerSettings] = Field(default_factory=dict)
    mcp_out: McpOutSettings = Field(default_factory=McpOutSettings)

    _warnings: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _read_old_names(cls, data: Any) -> Any:
        """Old key names moved to their new place; an empty voice choice is the default."""
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        rename_old_keys(data)
        for key in _BLANK_IS_DEFAULT:
            if data.get(key) in ("", None):
                data.pop(key, None)
        if isinstance(data.get("voice_engine"), str):
            data["voice_engine"] = data["voice_engine"].strip().lower()
        return data

    @property
    def voice_language(self) -> str:
        """The language voice is heard and spoken in: the desktop's (`ui_language`)
        while `voice_follows_desktop`, else `default_voice`."""
        if self.voice_follows_desktop and self.ui_language:
            return self.ui_language
        return self.default_voice

    def timeout_for(self, tool: str) -> float:
        return float(self.tool_timeout.get(tool, self.default_tool_timeout))

    def unknown_keys(self) -> list[UnknownKey]:
        """The keys no section declares (a typo, or a key of a newer version)."""
        return unknown_keys(self)

    @property
    def config_warnings(self) -> list[str]:
        """What `load_settings` found and went on without: old key names and unknown
        keys, each line naming its file (empty for settings built in code)."""
        return list(self._warnings)


# the objects of Settings that are sections (merged key by key, saved field by field)
_SECTIONS = frozenset(
    name
    for name, info in Settings.model_fields.items()
    if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
)

# environment variable → the setting it gives; for one setting, the first set wins
LLM_ENV: dict[str, str] = {
    "AIOS_LLM_API_KEY": "llm.api_key",
    "DEEPSEEK_API_KEY": "llm.api_key",  # the old name, still read
    "AIOS_LLM_BASE_URL": "llm.base_url",
    "AIOS_LLM_MODEL": "llm.model",
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


def merge_settings(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` put over `base`: a section key by key, any other key whole."""
    merged = dict(base)
    for key, value in over.items():
        below = merged.get(key)
        if key in _SECTIONS and isinstance(value, Mapping) and isinstance(below, Mapping):
            merged[key] = {**below, **value}
        else:
            merged[key] = value
    return merged


def _apply_environment(raw: dict[str, Any], env: Mapping[str, str]) -> None:
    given: set[str] = set()
    for var, path in LLM_ENV.items():
        if env.get(var) and path not in given:
            given.add(path)
            section, _, field = path.partition(".")
            raw[section] = {**(raw.get(section) or {}), field: env[var]}


def load_settings(
    path: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None = None,
    *,
    user: str | os.PathLike[str] | None = None,
) -> Settings:
    """Read `config.json` (missing file → defaults), put the user's saved settings
    (`user`, see `user_settings_path`) over it, and apply the environment (`LLM_ENV`).

    A bad value raises `InvalidRequest` naming the key. Old key names and unknown keys
    are logged and kept in `Settings.config_warnings`."""
    files: list[tuple[str, dict[str, Any]]] = []
    for source in (path, user):
        if source is not None and Path(source).exists():
            files.append((str(source), _read_object(Path(source))))
    notes: list[str] = []
    raw: dict[str, Any] = {}
    for name, found in files:
        notes += [f"{name}: {note}" for note in rename_old_keys(found)]
        raw = merge_settings(raw, found)
    # a voice the user picked before the voice could follow the desktop stays picked
    mine = dict(files).get(str(user), {}) if user is not None else {}
    if "default_voice" in mine and "voice_follows_desktop" not in mine:
        raw["voice_follows_desktop"] = False
    _apply_environment(raw, os.environ if env is None else env)
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        where = f"{path or 'config'}" + (f" with {user}" if user else "")
        raise InvalidRequest(f"{where}: {describe_validation_error(exc)}") from exc
    for unknown in settings.unknown_keys():
        holders = [name for name, found in files if has_path(found, unknown.path)]
        notes.append(f"{holders[-1] if holders else 'config'}: {unknown.describe()}")
    for note in notes:
        log.warning("%s", note)
    settings._warnings = notes
    return settings


def _set_aside_if_unreadable(path: Path) -> bool:
    """Set `path` aside (reported by name) when it is not a JSON object; True if so,
    or when it cannot be read now (then it is named and left in place)."""
    from aios_runtime.files import read_state

    return path.exists() and read_state(path, _json_object, "a settings file") is None


def _json_object(text: str) -> dict[str, Any]:
    parsed = json.loads(text)
    if not isinstance(parsed, dict):
        raise TypeError(f"a JSON {type(parsed).__name__}, not an object")
    return parsed


def load_settings_or_set_aside(
    path: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    *,
    user: str | os.PathLike[str] | None = None,
) -> Settings:
    """`load_settings`, except that a `config.json` or user settings file that is not
    JSON at all (corrupt or cut short) is set aside as `<name>.corrupt-<time>`,
    reported by name, and left out (the defaults are used). A user settings file (the
    state folder's) with a bad value is set aside too; a `config.json` with a bad
    value still raises (the owner's own file, said at start)."""
    from aios_runtime.files import set_aside

    config: Path | None = Path(path)
    if _set_aside_if_unreadable(Path(path)):
        config = None
    if user is not None and _set_aside_if_unreadable(Path(user)):
        user = None
    try:
        return load_settings(config, env, user=user)
    except InvalidRequest as exc:
        if user is None:
            raise
        without = load_settings(config, env)  # raises when config.json is at fault
        set_aside(Path(user), f"not valid settings: {exc.message}")
        return without


def _keys_of(raw: Mapping[str, Any]) -> set[str]:
    """The keys of a settings object: a section's as `section.key`, others whole."""
    keys: set[str] = set()
    for key, value in raw.items():
        if key in _SECTIONS and isinstance(value, Mapping):
            keys.update(f"{key}.{field}" for field in value)
        else:
            keys.add(key)
    return keys


def saved_keys(path: str | os.PathLike[str]) -> set[str]:
    """The keys a user settings file holds (a section's as `section.key`, old names
    under their new ones); none when it is missing."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return set()
    if not isinstance(raw, dict):
        return set()
    rename_old_keys(raw)
    return _keys_of(raw)


def changed_keys(before: Mapping[str, Any], after: Mapping[str, Any]) -> set[str]:
    """The keys whose value differs (a section's as `section.key`)."""
    changed: set[str] = set()
    for key in before.keys() | after.keys():
        old, new = before.get(key), after.get(key)
        if key in _SECTIONS and isinstance(old, Mapping) and isinstance(new, Mapping):
            changed.update(
                f"{key}.{field}"
                for field in old.keys() | new.keys()
                if old.get(field) != new.get(field)
            )
        elif old != new:
            changed.add(key)
    return changed


def save_user_settings(
    settings: Settings, keys: set[str], path: str | os.PathLike[str]
) -> None:
    """Write the `keys` of `settings` (top-level, or `section.key`) to the user
    settings file `path` atomically (temp file, fsync, rename); `config.json` is
    never rewritten."""
    from aios_runtime.files import atomic_write_text

    dumped = settings.model_dump(mode="json")
    values: dict[str, Any] = {}
    for key in sorted(keys):
        section, _, field = key.partition(".")
        if not field:
            if key in dumped:
                values[key] = dumped[key]
        elif isinstance(dumped.get(section), dict) and field in dumped[section]:
            values.setdefault(section, {})[field] = dumped[section][field]
    text = json.dumps(values, ensure_ascii=False, indent=2)
    atomic_write_text(Path(path), text + "\n")
