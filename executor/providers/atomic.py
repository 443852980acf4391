"""The atomic provider: the atomic tools and `schedule`, with the metadata the runtime enforces.

The tools' descriptions, schemas and metadata (`risk_level`,
`requires_confirmation`, `concurrency_safe`, `max_result_size_chars`) are declared in
`aios_protocol.tools`. Only `process_start` needs the user's yes as
such; the finer rules (overwriting a file the app did not create, SQL that writes, a
program outside the whitelist) stay with the controller's permission policy and the
executor's consent check. Reading tools are concurrency-safe; `http_request` is unless
it saves into the workdir (`save_to`), `db_query` when its SQL only reads. After start
the process tools (`shell_exec`, `process_start`) are listed unavailable, with the
reason, when `tool_sandbox.require_bubblewrap` is set and bubblewrap does not work
here. The implementations live in `executor/tools/`; they are imported on first use,
or all at once by `import_implementations` (the executor does it after its start).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aios_protocol.messages import ATOMIC_TOOLS
from aios_protocol.tools import (
    PROCESS_TOOLS,
    declared_tools,
    sql_writes,
    summarize_input,
    summarize_result,
)
from aios_runtime.settings import Settings
from executor.providers.base import ToolCall, ToolEntry, ToolProvider

if TYPE_CHECKING:
    from executor.toolbox import ExecutorToolbox

__all__ = ["PROCESS_TOOLS", "AtomicProvider", "import_implementations"]

# tool name → (module, function); imported lazily.
_IMPLEMENTATIONS: dict[str, tuple[str, str]] = {
    "http_request": ("executor.tools.http_request", "http_request"),
    "file_read": ("executor.tools.files", "file_read"),
    "file_write": ("executor.tools.files", "file_write"),
    "file_list": ("executor.tools.files", "file_list"),
    "shell_exec": ("executor.tools.commands", "shell_exec"),
    "process_start": ("executor.tools.commands", "process_start"),
    "db_query": ("executor.tools.db_query", "db_query"),
    "cache_get": ("executor.tools.cache", "cache_get"),
    "cache_set": ("executor.tools.cache", "cache_set"),
    "notify": ("executor.tools.notify", "notify"),
    "system_info": ("executor.tools.system_info", "system_info"),
    "file_import": ("executor.tools.importing", "file_import"),
    "schedule": ("executor.tools.schedule", "schedule"),
}
assert tuple(_IMPLEMENTATIONS)[: len(ATOMIC_TOOLS)] == ATOMIC_TOOLS


@functools.cache
def _implementation(tool: str) -> Callable[..., Any]:
    module, name = _IMPLEMENTATIONS[tool]
    return getattr(importlib.import_module(module), name)


def import_implementations() -> None:
    """Import every tool's module now (they are imported on first use otherwise), and
    the module that calls the apps' own tools."""
    for module in sorted({module for module, _ in _IMPLEMENTATIONS.values()}):
        importlib.import_module(module)
    importlib.import_module("executor.tools.app_tools")


def _entries(settings: Settings) -> tuple[ToolEntry, ...]:
    limits = settings.limits
    infos = declared_tools(limits.response_bytes, limits.output_bytes)
    return tuple(ToolEntry.model_validate(info.model_dump()) for info in infos)


def _settings_of(config: Any) -> Settings:
    return config if isinstance(config, Settings) else _DEFAULT_SETTINGS


_DEFAULT_SETTINGS = Settings()


class AtomicProvider(ToolProvider):
    """The atomic tools, run with the shared services of one `ExecutorToolbox`."""

    name = "atomic"

    def __init__(self, toolbox: ExecutorToolbox) -> None:
        super().__init__(toolbox.settings)
        self.toolbox = toolbox
        self._declared = _entries(toolbox.settings)

    @classmethod
    def declared_tools(cls, config: Any) -> list[ToolEntry]:
        """Every atomic tool and `schedule`, each available (`config`: the `Settings`, or None)."""
        return list(_entries(_settings_of(config)))

    def tools(self) -> list[ToolEntry]:
        entries = list(self._declared)
        reason = self._process_problem()
        if reason is None:
            return entries
        return [
            e.model_copy(update={"available": False, "unavailable_reason": reason})
            if e.name in PROCESS_TOOLS
            else e
            for e in entries
        ]

    def _process_problem(self) -> str | None:
        """Why the process tools cannot run here, or None."""
        required = self.toolbox.settings.tool_sandbox.require_bubblewrap
        if required and self.toolbox.sandbox.kind != "bubblewrap":
            return (
                "tool_sandbox.require_bubblewrap is set but bubblewrap does not work "
                "on this computer"
            )
        return None

    def input_summary(self, entry: ToolEntry, args: dict[str, Any]) -> str:
        return summarize_input(entry.name, args)

    def result_summary(self, entry: ToolEntry, args: dict[str, Any], value: Any) -> str:
        return summarize_result(entry.name, args, value)

    def prompt_text(self) -> str:
        return (
            "Atomic tools: paths are relative to the app's working directory "
            "(`workspace/…`); commands run without a shell, from the whitelist; "
            "`process_start` asks the user first."
        )

    def is_concurrency_safe(self, entry: ToolEntry, args: dict[str, Any]) -> bool:
        if entry.name == "http_request":
            return args.get("save_to") is None
        if entry.name == "db_query":
            sql = args.get("sql")
            return isinstance(sql, str) and "{{" not in sql and not sql_writes(sql)
        return entry.concurrency_safe

    def call(self, call: ToolCall) -> Any:
        from executor.toolbox import ToolContext

        context = ToolContext(
            call.app, self.toolbox.settings, call.session_id, call.timeout, self.toolbox
        )
        return _implementation(call.tool)(context, call.args)
