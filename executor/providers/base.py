"""The tool-provider interface: what every source of tools declares and how it is called.

A `ToolProvider` is one source of tools (the atomic tools, one app's `@tool` methods,
the skills, one MCP server). It declares its tools twice: `declared_tools(config)`, a
class method usable before the provider starts, answers the conservative full list;
`tools()` answers what the started provider really offers (an entry it cannot serve
now stays listed with `available` false and the reason). Each `ToolEntry` states the
metadata the runtime enforces: `risk_level`, `requires_confirmation` (the permission
pause), `concurrency_safe` (consecutive safe steps of a plan run side by side) and
`max_result_size_chars` (longer results are cut with a marker). `ToolEntry` is the
wire shape of one listing entry (`aios_protocol.messages.ToolInfo`). `ToolCall` is one call
as a provider receives it, its arguments already checked against `input_schema`.
`input_summary` and `result_summary` are the one-line forms of a call and its result
that the audit log keeps, never their content.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from aios_protocol.messages import RiskLevel, ToolInfo
from aios_protocol.tools import generic_input_summary, generic_result_summary
from aios_runtime.users import OWNER

if TYPE_CHECKING:
    from executor.registry import AppRecord

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "ProviderState",
    "RiskLevel",
    "ToolCall",
    "ToolEntry",
    "ToolProvider",
]

ProviderState = Literal["running", "starting", "failed", "stopped"]

# a result longer than this (as text) is cut unless the entry says otherwise
DEFAULT_MAX_RESULT_CHARS = 100_000


class ToolEntry(ToolInfo):
    """One tool as a provider declares it (the fields are those of `ToolInfo`).

    name: unique across providers (MCP: `mcp__<server>__<tool>`); description;
    provider: `atomic` | `app:<app_id>` | `skills` | `mcp:<server>`; input_schema:
    JSON Schema of the arguments (checked with `executor.tools.catalog.ArgumentSchema`);
    risk_level: `read` | `write` | `execute` | `network` | `system`;
    requires_confirmation; concurrency_safe; max_result_size_chars; available;
    unavailable_reason.
    """

    def info(self) -> ToolInfo:
        """The wire entry (`ToolInfo`) of this tool."""
        return ToolInfo.model_validate(self.model_dump())


@dataclass(frozen=True)
class ToolCall:
    """One call as a provider runs it: the calling app, the tool, checked args, a timeout."""

    app: AppRecord
    tool: str
    args: dict[str, Any]
    timeout: float  # seconds
    session_id: str | None = None
    # what the executor adds for providers that need it (the atomic provider: its context)
    extra: dict[str, Any] = field(default_factory=dict, repr=False)


class ToolProvider(abc.ABC):
    """One source of tools. `start` and `stop` never raise; `status` says how it went.

    The default `tools()` is `declared_tools(config)` and the default `prompt_text()`
    is empty; the default `start`/`stop` only set the state (a provider with nothing
    to boot needs no more). What one user sees of it: `refused_for(user_id)` (None:
    its tools are theirs to call, the default), `prompt_for` and `status_for` (by
    default the same for every user).
    """

    name: str  # the provider id, as in ToolEntry.provider
    config: Any = None

    def __init__(self, config: Any = None) -> None:
        self.config = config
        self._state: ProviderState = "stopped"
        self._error: str | None = None

    @classmethod
    @abc.abstractmethod
    def declared_tools(cls, config: Any) -> list[ToolEntry]:
        """Before start: the conservative full list (better one too many than one missing)."""

    def tools(self) -> list[ToolEntry]:
        """After start: what the provider really offers now."""
        return type(self).declared_tools(self.config)

    def prompt_text(self) -> str:
        """What a model should be told about these tools (may be empty)."""
        return ""

    def refused_for(self, user_id: str) -> str | None:
        """Why `user_id` may not call these tools (English), or None when they may."""
        return None

    def prompt_for(self, user_id: str = OWNER) -> str:
        """`prompt_text()` as `user_id`'s model should read it."""
        return self.prompt_text()

    def status_for(self, user_id: str = OWNER) -> dict[str, Any]:
        """`status()` as `user_id` may see it."""
        return self.status()

    def start(self) -> None:
        """Make the tools callable; may be slow; never raises (records why it failed)."""
        self._state, self._error = "running", None

    def stop(self) -> None:
        """Release what `start` took; leaves no process behind."""
        self._state = "stopped"

    def status(self) -> dict[str, Any]:
        """`{"state": "running"|"starting"|"failed"|"stopped", "error": str | None}`."""
        return {"state": self._state, "error": self._error}

    def input_summary(self, entry: ToolEntry, args: dict[str, Any]) -> str:
        """One line for the audit log saying what a call asked for, never the content
        (by default each argument's name and the shape of its value)."""
        return generic_input_summary(args)

    def result_summary(self, entry: ToolEntry, args: dict[str, Any], value: Any) -> str:
        """One line for the audit log saying what a call answered, never the content
        (by default the result's shape: its kind and size)."""
        return generic_result_summary(args, value)

    def is_concurrency_safe(self, entry: ToolEntry, args: dict[str, Any]) -> bool:
        """Whether this call may run beside its neighbours; by default the entry's flag."""
        return entry.concurrency_safe

    @abc.abstractmethod
    def call(self, call: ToolCall) -> Any:
        """Run one call; its result (JSON-ready), or an `AiosError` subclass raised."""
