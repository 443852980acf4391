"""The app provider: one registered app's `@tool` methods, run by calling the app back.

One `AppToolsProvider` per registered app, named `app:<app_id>` and held by the
`ToolSource` from the app's registration until it is unregistered; only that app sees
its tools. Its config is the app's `AppRecord`; the entries come from the tools the
app registered (`AppRecord.custom_tools`). An app may state a tool's metadata in its
`ToolSpec` (`risk_level`, `requires_confirmation`, `concurrency_safe`,
`max_result_size_chars`); otherwise a custom tool counts as `write`, needs no
confirmation (as before: the app runs its own code), is not concurrency-safe and
answers at most `APP_RESULT_CHARS` characters. A call goes to the app over HTTP
(`executor.tools.app_tools`): the process serving the user the call acts for.
"""

from __future__ import annotations

from typing import Any, cast, get_args

from aios_protocol.messages import ToolSpec
from executor.providers.base import RiskLevel, ToolCall, ToolEntry, ToolProvider
from executor.registry import AppRecord

__all__ = ["APP_PREFIX", "APP_RESULT_CHARS", "AppToolsProvider", "app_provider_name"]

APP_PREFIX = "app:"
APP_RESULT_CHARS = 1_000_000
_RISKS = frozenset(get_args(RiskLevel))


def app_provider_name(app_id: str) -> str:
    return f"{APP_PREFIX}{app_id}"


def _entry(app_id: str, spec: ToolSpec) -> ToolEntry:
    stated = spec.model_extra or {}
    risk = stated.get("risk_level")
    size = stated.get("max_result_size_chars")
    return ToolEntry(
        name=spec.name,
        description=spec.description,
        provider=app_provider_name(app_id),
        input_schema=spec.parameters,
        custom=True,
        risk_level=cast(RiskLevel, risk) if risk in _RISKS else "write",
        requires_confirmation=stated.get("requires_confirmation") is True,
        concurrency_safe=stated.get("concurrency_safe") is True,
        max_result_size_chars=size
        if isinstance(size, int)
        and not isinstance(size, bool)
        and 0 < size <= APP_RESULT_CHARS
        else APP_RESULT_CHARS,
    )


class AppToolsProvider(ToolProvider):
    """The custom tools of one app (`config`: the `AppRecord` of one of its processes)."""

    def __init__(self, record: AppRecord) -> None:
        super().__init__(record)
        self.name = app_provider_name(record.app_id)
        self._entries = tuple(self.declared_tools(record))

    @classmethod
    def declared_tools(cls, config: Any) -> list[ToolEntry]:
        if not isinstance(config, AppRecord):
            return []
        return [_entry(config.app_id, spec) for spec in config.custom_tools.values()]

    def tools(self) -> list[ToolEntry]:
        return list(self._entries)

    def prompt_text(self) -> str:
        if not self._entries:
            return ""
        names = ", ".join(e.name for e in self._entries)
        return f"The app's own tools ({names}) run inside the app itself."

    def call(self, call: ToolCall) -> Any:
        from executor.tools.app_tools import call_custom_tool

        return call_custom_tool(call.app, call.tool, call.args, call.timeout)
