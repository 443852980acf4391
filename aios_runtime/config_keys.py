"""Which keys a `config.json` holds besides the ones the settings model declares.

Two kinds are found here, so that neither is silently ignored: the old names of keys
that moved (`deepseek_api_key` is `llm.api_key` now), which are still read and moved
to their new place with a note, and unknown keys (a typo like `tool_sandbx` or
`tool_sandbox.shell_whitelst`), which are kept as they are and reported with the
nearest declared name. The functions work on any pydantic model whose objects keep
their extra keys (`extra="allow"`); `aios_runtime.settings` applies them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel

__all__ = ["RENAMED", "UnknownKey", "has_path", "rename_old_keys", "unknown_keys"]

# old top-level name → where it lives now (dotted); the old names are still read
RENAMED: dict[str, str] = {
    "deepseek_api_key": "llm.api_key",
    "llm_base_url": "llm.base_url",
    "llm_model": "llm.model",
}


class UnknownKey(NamedTuple):
    """A key no model declares: its dotted path and the declared one it is closest to."""

    path: str
    suggestion: str | None

    def describe(self) -> str:
        hint = f" (did you mean {self.suggestion}?)" if self.suggestion else ""
        return f"unknown key {self.path}{hint}"


def rename_old_keys(raw: dict[str, Any]) -> list[str]:
    """Move each old top-level name of `raw` to its new place, in place; one note each.

    When the new place is already set, the new one wins and the old key is dropped.
    A section given as a model (`Settings(llm=LlmSettings(...))`) is read as a dict.
    """
    notes: list[str] = []
    for old, new in RENAMED.items():
        if old not in raw:
            continue
        section_name, _, field = new.partition(".")
        section = raw.get(section_name)
        if isinstance(section, BaseModel):
            section = section.model_dump(exclude_unset=True)
        if section is not None and not isinstance(section, Mapping):
            continue  # the section itself is bad: validation names it
        value = raw.pop(old)
        section = dict(section or {})
        if field in section:
            notes.append(f"{old} is ignored: {new} is set (write only {new})")
        else:
            section[field] = value
            notes.append(f"{old} is the old name of {new}: it is still read, write {new}")
        raw[section_name] = section
    return notes


def has_path(raw: Mapping[str, Any], path: str) -> bool:
    """Whether the nested objects of `raw` hold the dotted `path`."""
    node: Any = raw
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _fields(model: BaseModel) -> list[str]:
    return list(type(model).model_fields)


def _suggest(key: str, model: BaseModel, prefix: str, root: bool) -> str | None:
    """The declared name nearest to `key` here; at the top, also a section's field
    of that name (`require_bubblewrap` → `tool_sandbox.require_bubblewrap`)."""
    close = difflib.get_close_matches(key, _fields(model), n=1)
    if close:
        return prefix + close[0]
    if root:
        for name in _fields(model):
            section = getattr(model, name)
            if isinstance(section, BaseModel) and key in _fields(section):
                return f"{name}.{key}"
        old = difflib.get_close_matches(key, list(RENAMED), n=1)
        if old:
            return RENAMED[old[0]]
    return None


def _walk(value: Any, prefix: str) -> Iterator[UnknownKey]:
    if isinstance(value, BaseModel):
        yield from _unknown(value, prefix, root=False)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _walk(item, f"{prefix}{key}.")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _walk(item, f"{prefix}{index}.")


def _unknown(model: BaseModel, prefix: str, *, root: bool) -> Iterator[UnknownKey]:
    for key in model.__pydantic_extra__ or {}:
        yield UnknownKey(prefix + key, _suggest(key, model, prefix, root))
    for name in _fields(model):
        yield from _walk(getattr(model, name), f"{prefix}{name}.")


def unknown_keys(model: BaseModel) -> list[UnknownKey]:
    """Every key of `model` and of the models nested in it that none declares."""
    return list(_unknown(model, "", root=True))
