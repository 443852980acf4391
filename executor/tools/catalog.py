"""The ten atomic tools as the executor lists them (S-60), and their argument checks.

Each tool has one JSON schema here; `GET /tools` lists it and `check_args`
validates a call's arguments against the same schema (a small subset of JSON
Schema: `type`, `required`, `enum`, `items.type`, no unknown top-level keys), so
the listing and the checks never drift apart. Every tool also accepts `timeout`
(seconds), which may lower the configured per-tool timeout but never raise it.
"""

from __future__ import annotations

from typing import Any

from aios_sdk.errors import AiosError
from aios_sdk.protocol import ATOMIC_TOOLS, ToolSpec

__all__ = ["ATOMIC_SPECS", "InvalidArgs", "atomic_specs", "check_args"]


class InvalidArgs(AiosError):
    code = "invalid_args"
    http_status = 400


_TIMEOUT = {"type": "number", "description": "seconds; may lower the configured timeout"}
_PATH = {"type": "string", "description": "relative to the app's workdir (`workspace/…`)"}
_CMD = {
    "type": ["string", "array"],
    "items": {"type": "string"},
    "description": "argv list, or a string split like a shell would (never run by a shell)",
}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**properties, "timeout": _TIMEOUT},
        "required": required,
        "additionalProperties": False,
    }


_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "http_request": (
        "HTTP(S) request to a public host; JSON answers come back parsed. "
        "`save_to` downloads into the workdir.",
        _schema(
            {
                "method": {
                    "type": "string",
                    "enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"],
                    "default": "GET",
                },
                "url": {"type": "string"},
                "headers": {"type": "object"},
                "params": {"type": "object", "description": "query parameters"},
                "body": {
                    "type": ["object", "array", "string", "null"],
                    "description": "object/array sent as JSON, string sent as is",
                },
                "save_to": _PATH,
                "raw": {
                    "type": "boolean",
                    "description": "answer {status_code, headers, body} instead of the body",
                },
            },
            ["url"],
        ),
    ),
    "file_read": (
        "Read a file of the workdir; the result is its text (or base64).",
        _schema(
            {"path": _PATH, "encoding": {"type": "string", "enum": ["utf-8", "base64"]}},
            ["path"],
        ),
    ),
    "file_write": (
        "Write a file of the workdir (atomic overwrite, or append); JSON values are "
        "serialized. Result {path, size}.",
        _schema(
            {
                "path": _PATH,
                "content": {
                    "type": ["string", "object", "array", "number", "boolean", "null"]
                },
                "mode": {"type": "string", "enum": ["overwrite", "append"]},
                "encoding": {"type": "string", "enum": ["utf-8", "base64"]},
            },
            ["path", "content"],
        ),
    ),
    "file_list": (
        "List a directory of the workdir; names relative to it, with size and is_dir.",
        _schema(
            {
                "path": _PATH,
                "pattern": {"type": "string", "description": "glob on names, e.g. *.mp3"},
                "recursive": {"type": "boolean"},
            },
            [],
        ),
    ),
    "shell_exec": (
        "Run one whitelisted command (argv, no shell) in the workdir. Result "
        "{returncode, stdout, stderr, truncated}; a non-zero exit is still status ok.",
        _schema({"cmd": _CMD, "cwd": _PATH}, ["cmd"]),
    ),
    "process_start": (
        "Start a whitelisted program; foreground like shell_exec, or background "
        "(tracked, output in workspace/.logs/).",
        _schema(
            {
                "cmd": _CMD,
                "args": {"type": "array", "items": {"type": "string"}},
                "background": {"type": "boolean"},
                "cwd": _PATH,
            },
            ["cmd"],
        ),
    ),
    "db_query": (
        "One SQL statement on a SQLite file of the workdir. Result {columns, rows, rowcount}.",
        _schema(
            {
                "dsn": {"type": "string", "description": "data.db or sqlite:///data.db"},
                "sql": {"type": "string"},
                "params": {"type": ["array", "object"]},
            },
            ["dsn", "sql"],
        ),
    ),
    "cache_get": (
        "Read a cached value (null when missing); namespace `system` is shared, read-only.",
        _schema(
            {
                "key": {"type": "string"},
                "namespace": {"type": "string", "enum": ["app", "system"]},
            },
            ["key"],
        ),
    ),
    "cache_set": (
        "Cache a JSON value in the app's namespace, optionally for `ttl` seconds.",
        _schema(
            {
                "key": {"type": "string"},
                "value": {
                    "type": ["string", "object", "array", "number", "boolean", "null"]
                },
                "ttl": {"type": ["number", "null"]},
                "namespace": {
                    "type": "string",
                    "enum": ["app", "system"],
                    "description": "only `app`: `system` is written by the desktop",
                },
            },
            ["key", "value"],
        ),
    ),
    "notify": (
        "Show a notification on the desktop.",
        _schema(
            {
                "title": {"type": "string"},
                "body": {"type": "string"},
                "level": {
                    "type": "string",
                    "enum": ["info", "success", "warning", "error"],
                },
            },
            ["title"],
        ),
    ),
}

assert tuple(_SPECS) == ATOMIC_TOOLS, "catalog must list exactly the atomic tools"

ATOMIC_SPECS: dict[str, ToolSpec] = {
    name: ToolSpec(name=name, description=desc, parameters=schema)
    for name, (desc, schema) in _SPECS.items()
}


def atomic_specs() -> list[ToolSpec]:
    return list(ATOMIC_SPECS.values())


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _type_ok(value: Any, wanted: str | list[str]) -> bool:
    names = (wanted,) if isinstance(wanted, str) else wanted
    if isinstance(value, bool):  # a bool is an int in Python, not in JSON Schema
        return "boolean" in names
    return any(isinstance(value, _PY_TYPES[name]) for name in names)


def check_args(schema: dict[str, Any], args: dict[str, Any], tool: str) -> None:
    """Raise `InvalidArgs` naming the argument at fault when `args` breaks `schema`."""
    properties: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in args:
            raise InvalidArgs(f"{tool}: missing argument {name!r}")
    if schema.get("additionalProperties") is False:
        unknown = sorted(set(args) - set(properties))
        if unknown:
            raise InvalidArgs(
                f"{tool}: unknown argument {unknown[0]!r} (allowed: {', '.join(properties)})"
            )
    for name, value in args.items():
        rule = properties.get(name)
        if not rule or (value is None and name not in schema.get("required", [])):
            continue
        if "type" in rule and not _type_ok(value, rule["type"]):
            raise InvalidArgs(f"{tool}: {name} must be {rule['type']}")
        if "enum" in rule and value not in rule["enum"]:
            raise InvalidArgs(f"{tool}: {name} must be one of {rule['enum']}")
        item_type = rule.get("items", {}).get("type")
        if item_type and isinstance(value, list):
            for item in value:
                if not _type_ok(item, item_type):
                    raise InvalidArgs(f"{tool}: every item of {name} must be {item_type}")
