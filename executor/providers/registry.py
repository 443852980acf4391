"""The one tool source: the providers the executor holds, their listing, and calls into them.

`ToolSource` holds `ToolProvider`s by name, added and removed at runtime. Its
`listing(app_id)` is what every consumer sees (`GET /tools?app_id=X`, and through it
the controller's injected `available_tools`, LLM planner, `/api/tools` and the SDK):
the atomic provider's tools, then that app's own (`app:<app_id>`), then every other
provider in the order added; a name already listed is not listed again (no provider
shadows an earlier one). Which entries a provider contributes follows its state: a
running provider's `tools()`; a stopped or starting one's `declared_tools(config)`
(the conservative list); a failed one's declared entries marked unavailable with the
error. `call` finds the entry, refuses an unavailable tool, checks the arguments
against `input_schema` (an argument `timeout` the schema does not declare is the
executor's own and is not passed on), runs the provider and cuts a result longer than
the entry's `max_result_size_chars`, saying how much was cut.

Listings, statuses and prompt texts are per user (`user_id`, the owner by default):
a provider that refuses the user (`ToolProvider.refused_for`: an owner-only MCP
server for anyone else) is left out of them, and calling one of its tools is
`tool_unavailable` saying why; a provider with no tool available now (a failed MCP
server) adds no prompt text.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from typing import Any

from aios_protocol.errors import AiosError, UnknownTool
from aios_runtime.users import OWNER
from executor.providers.base import ToolCall, ToolEntry, ToolProvider
from executor.tools.catalog import ArgumentSchema

__all__ = ["ToolSource", "ToolUnavailable", "cut_result", "provider_entries"]

log = logging.getLogger("aios.executor.tools")

APP_PREFIX = "app:"


class ToolUnavailable(AiosError):
    code = "tool_unavailable"
    http_status = 409


def _text_of(value: Any) -> str:
    return (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, default=str)
    )


def cut_result(value: Any, limit: int) -> Any:
    """`value` if its text (a string itself, else its JSON) fits `limit` characters.

    A longer string is cut to `limit` characters followed by the marker
    `…[cut N of M characters]`; any other longer value becomes its JSON text cut the
    same way (a string), so a model or a template still sees where it ends.
    """
    text = _text_of(value)
    if len(text) <= limit:
        return value
    cut = len(text) - limit
    return f"{text[:limit]}\n…[cut {cut} of {len(text)} characters]"


def provider_entries(provider: ToolProvider) -> list[ToolEntry]:
    """The entries `provider` contributes in its current state (see the module text)."""
    state = provider.status()
    try:
        if state.get("state") == "running":
            return list(provider.tools())
        declared = list(type(provider).declared_tools(provider.config))
    except Exception as exc:  # a provider's bug must not break the listing
        log.exception("provider %s could not list its tools", provider.name)
        return [_broken_entry(provider, f"{type(exc).__name__}: {exc}")]
    if state.get("state") == "failed":
        reason = str(state.get("error") or f"provider {provider.name} failed")
        return [
            e.model_copy(update={"available": False, "unavailable_reason": reason})
            for e in declared
        ]
    return declared


def _broken_entry(provider: ToolProvider, reason: str) -> ToolEntry:
    return ToolEntry(
        name=f"{provider.name}:unavailable",
        description=f"the tools of {provider.name} cannot be listed",
        provider=provider.name,
        input_schema={"type": "object"},
        risk_level="system",
        requires_confirmation=True,
        concurrency_safe=False,
        max_result_size_chars=0,
        available=False,
        unavailable_reason=reason,
    )


class ToolSource:
    """The executor's providers and the one listing over them (thread-safe)."""

    def __init__(self) -> None:
        self._providers: dict[str, ToolProvider] = {}
        self._lock = threading.Lock()
        # (provider, tool) → (the schema it was compiled from, the compiled check)
        self._schemas: dict[tuple[str, str], tuple[Mapping[str, Any], ArgumentSchema]] = {}

    # ------------------------------------------------------------ providers

    def add(self, provider: ToolProvider, *, start: bool = True) -> None:
        """Hold `provider` (replacing one of the same name, which is stopped); start it."""
        with self._lock:
            previous = self._providers.get(provider.name)
            self._providers[provider.name] = provider
            self._forget(provider.name)
        if previous is not None and previous is not provider:
            previous.stop()
        if start:
            provider.start()

    def remove(self, name: str) -> ToolProvider | None:
        """Stop and drop the provider `name`; the one removed, or None."""
        with self._lock:
            provider = self._providers.pop(name, None)
            self._forget(name)
        if provider is not None:
            provider.stop()
        return provider

    def get(self, name: str) -> ToolProvider | None:
        with self._lock:
            return self._providers.get(name)

    def providers(self, app_id: str | None = None) -> list[ToolProvider]:
        """The providers an app sees: atomic first, its own, then the rest as added.

        With `app_id` None: every provider except the apps'.
        """
        with self._lock:
            held = list(self._providers.values())
        own = f"{APP_PREFIX}{app_id}" if app_id else None
        first = [p for p in held if p.name == "atomic"]
        mine = [p for p in held if own is not None and p.name == own]
        rest = [p for p in held if p.name != "atomic" and not p.name.startswith(APP_PREFIX)]
        return [*first, *mine, *rest]

    def statuses(
        self, app_id: str | None = None, user_id: str = OWNER
    ) -> dict[str, dict[str, Any]]:
        """Provider id → its status as `user_id` sees it, for the providers `app_id`
        sees that serve that user."""
        return {p.name: dict(p.status_for(user_id)) for p in self._served(app_id, user_id)}

    def stop_all(self) -> None:
        with self._lock:
            held = list(self._providers.values())
            self._providers.clear()
            self._schemas.clear()
        for provider in reversed(held):
            provider.stop()

    def _forget(self, provider: str) -> None:
        for key in [k for k in self._schemas if k[0] == provider]:
            del self._schemas[key]

    # -------------------------------------------------------------- listing

    def _served(self, app_id: str | None, user_id: str) -> list[ToolProvider]:
        """The providers `app_id` sees whose tools `user_id` may call."""
        return [p for p in self.providers(app_id) if p.refused_for(user_id) is None]

    def listing(self, app_id: str | None, user_id: str = OWNER) -> list[ToolEntry]:
        """Every tool `app_id` sees for `user_id`, each name once (see the module text)."""
        entries: list[ToolEntry] = []
        seen: set[str] = set()
        for provider in self._served(app_id, user_id):
            for entry in provider_entries(provider):
                if entry.name not in seen:
                    seen.add(entry.name)
                    entries.append(entry)
        return entries

    def prompt_parts(self, app_id: str | None, user_id: str = OWNER) -> dict[str, str]:
        """Provider id → its prompt text, for the providers `user_id` may call that
        have a tool available now (empty texts left out)."""
        parts = {}
        for provider in self._served(app_id, user_id):
            try:
                if not any(e.available for e in provider_entries(provider)):
                    continue  # its tools were dropped: nothing to tell a model
                text = provider.prompt_for(user_id).strip()
            except Exception:
                log.exception("provider %s has no prompt text", provider.name)
                continue
            if text:
                parts[provider.name] = text
        return parts

    def prompt_text(self, app_id: str | None, user_id: str = OWNER) -> str:
        """The prompt parts (`prompt_parts`), one paragraph each."""
        return "\n\n".join(self.prompt_parts(app_id, user_id).values())

    def find(
        self, name: str, app_id: str | None, user_id: str = OWNER
    ) -> tuple[ToolProvider, ToolEntry]:
        """The provider and entry of tool `name` for `app_id` acting for `user_id`;
        `UnknownTool`, or `ToolUnavailable` when the tool is not that user's to call."""
        for provider in self.providers(app_id):
            for entry in provider_entries(provider):
                if entry.name != name:
                    continue
                refused = provider.refused_for(user_id)
                if refused is not None:
                    raise ToolUnavailable(
                        f"{name} is not available to user {user_id!r}: {refused}",
                        variant="not_shared",
                        placeholders={"tool": name},
                    )
                return provider, entry
        raise UnknownTool(f"unknown tool {name!r}")

    def warm(self, provider_name: str) -> None:
        """Compile the argument check of each of `provider_name`'s tools now, as its
        first call would (checking the schema and compiling its fast check cost a few
        milliseconds a tool)."""
        provider = self.get(provider_name)
        if provider is None:
            return
        for entry in provider_entries(provider):
            schema = self._schema(provider.name, entry)
            schema.check_compiled()

    # ----------------------------------------------------------------- calls

    def checked_args(
        self, provider: ToolProvider, entry: ToolEntry, args: Any
    ) -> dict[str, Any]:
        """`args` checked against the entry's schema (`InvalidArgs` when they break it)."""
        from executor.tools.catalog import InvalidArgs

        if not isinstance(args, dict):
            raise InvalidArgs("args must be an object")
        schema = self._schema(provider.name, entry)
        if "timeout" in args and not schema.declares("timeout"):
            # the executor's own argument (it may lower the call's timeout), not the tool's
            args = {key: value for key, value in args.items() if key != "timeout"}
        schema.check(args)
        return args

    def _schema(self, provider: str, entry: ToolEntry) -> ArgumentSchema:
        key = (provider, entry.name)
        with self._lock:
            cached = self._schemas.get(key)
        if cached is not None and (
            cached[0] is entry.input_schema or cached[0] == entry.input_schema
        ):
            return cached[1]
        compiled = ArgumentSchema(entry.name, entry.input_schema)
        with self._lock:
            self._schemas[key] = (entry.input_schema, compiled)
        return compiled

    def call(self, provider: ToolProvider, entry: ToolEntry, call: ToolCall) -> Any:
        """Run `call` (its args already checked) on `provider`; the result, cut if too long."""
        if not entry.available:
            raise ToolUnavailable(
                f"{entry.name} is not available: {entry.unavailable_reason or 'no reason given'}"
            )
        result = provider.call(call)
        return cut_result(result, entry.max_result_size_chars)
