"""Step templating: `{{step_N.result…}}` placeholders replaced by earlier results.

`{{step_1.result}}`, `{{step_1.result.url}}`, `{{step_1.result.results.0.previewUrl}}`
(digits index lists) and `{{step_1.status}}`. A placeholder that is the whole string
keeps the value's JSON type; placeholders embedded in a longer string are
stringified (strings as they are, everything else as JSON). Placeholders are
replaced recursively inside nested dicts and lists. A reference to an unknown step,
a missing key, or the result of a step that failed raises `TemplateError` (code
`template_error`) and the step using it does not run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from aios_protocol.errors import AiosError
from aios_protocol.messages import ToolResult

__all__ = ["TemplateError", "references", "render_args"]

_PLACEHOLDER = re.compile(r"\{\{\s*step_(\d+)\.(result|status)((?:\.[^.\s{}]+)*)\s*\}\}")


class TemplateError(AiosError):
    code = "template_error"
    http_status = 400


def references(value: Any) -> set[int]:
    """The step ids that `value` (args of a step) refers to."""
    found: set[int] = set()
    if isinstance(value, str):
        found.update(int(m.group(1)) for m in _PLACEHOLDER.finditer(value))
    elif isinstance(value, Mapping):
        for item in value.values():
            found |= references(item)
    elif isinstance(value, list):
        for item in value:
            found |= references(item)
    return found


def _walk(value: Any, path: list[str], where: str) -> Any:
    for key in path:
        if isinstance(value, Mapping):
            if key not in value:
                raise TemplateError(f"{where} has no key {key!r}")
            value = value[key]
        elif isinstance(value, list):
            if not key.isdigit():
                raise TemplateError(f"{where} is a list; {key!r} is not an index")
            index = int(key)
            if index >= len(value):
                raise TemplateError(f"{where} has {len(value)} items; no index {index}")
            value = value[index]
        else:
            raise TemplateError(f"{where} is {type(value).__name__}; it has no {key!r}")
        where = f"{where}.{key}"
    return value


def _lookup(match: re.Match[str], results: Mapping[int, ToolResult]) -> Any:
    step_id = int(match.group(1))
    field_name = match.group(2)
    path = [part for part in match.group(3).split(".") if part]
    outcome = results.get(step_id)
    if outcome is None:
        raise TemplateError(f"{match.group(0)} refers to step {step_id}, which has not run")
    if field_name == "status":
        if path:
            raise TemplateError(f"{match.group(0)}: status has no fields")
        return outcome.status
    if outcome.status != "ok":
        raise TemplateError(
            f"{match.group(0)} uses the result of step {step_id}, which failed: "
            f"{outcome.error or outcome.code or 'error'}"
        )
    return _walk(outcome.result, path, f"step_{step_id}.result")


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _render_string(text: str, results: Mapping[int, ToolResult]) -> Any:
    whole = _PLACEHOLDER.fullmatch(text.strip()) if "{{" in text else None
    if whole is not None:
        return _lookup(whole, results)
    if "{{" not in text:
        return text
    return _PLACEHOLDER.sub(lambda m: _as_text(_lookup(m, results)), text)


def render_args(value: Any, results: Mapping[int, ToolResult]) -> Any:
    """A copy of `value` (parsed JSON) with every placeholder replaced from `results`
    (by step id)."""
    if isinstance(value, str):
        return _render_string(value, results)
    if isinstance(value, dict):  # parsed JSON: objects are dicts, arrays lists
        return {key: render_args(item, results) for key, item in value.items()}
    if isinstance(value, list):
        return [render_args(item, results) for item in value]
    return value
