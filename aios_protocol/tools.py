"""The atomic tools' declared facts, shared by every process: names, descriptions,
argument schemas, and the metadata the runtime enforces (risk, the user's confirmation,
whether calls may run side by side, how long a result may be).

The executor runs these tools (`executor/tools/`) and checks their arguments; the
controller's permission policy reads the same facts to decide what asks the user first.
"""

from __future__ import annotations

import re
from typing import Any

from aios_protocol.messages import ATOMIC_TOOLS, RiskLevel, ToolInfo, ToolSpec

__all__ = [
    "ATOMIC_SPECS",
    "CONTROLLER_SPECS",
    "PROCESS_TOOLS",
    "SYSTEM_INFO_MAX_PROCESSES",
    "SYSTEM_INFO_TOPICS",
    "atomic_specs",
    "declared_tools",
    "sql_writes",
]

PROCESS_TOOLS = frozenset({"shell_exec", "process_start"})

# what `system_info` answers about, and how many processes it lists at most
SYSTEM_INFO_TOPICS = ("overview", "processes", "memory", "disk", "cpu")
SYSTEM_INFO_MAX_PROCESSES = 500

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
        "{returncode, stdout, stderr, truncated, stdout_size, stderr_size}: output "
        "past the cap is cut (truncated), the sizes are every byte written; a non-zero "
        "exit is still status ok.",
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
    "system_info": (
        "Read-only facts of the computer (not of the app's sandbox): `overview` (CPU, "
        "memory, disk and the busiest processes), `processes` (busiest first, with "
        "the total count), `memory`, `disk` or `cpu`. A process shows its pid, name, "
        "user, CPU % and memory %, never its command line or environment.",
        _schema(
            {
                "what": {
                    "type": "string",
                    "enum": list(SYSTEM_INFO_TOPICS),
                    "default": "overview",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": SYSTEM_INFO_MAX_PROCESSES,
                    "description": "processes listed at most (busiest first)",
                },
            },
            [],
        ),
    ),
    "file_import": (
        "Copy the audio files of a folder the user names, outside the workdir, into "
        "a folder of the workdir; a file is audio by its content, whatever its name. "
        "Asks the user first, saying how many files from where. Result {source, dest, "
        "copied: [path], too_large, limited}.",
        _schema(
            {
                "source": {
                    "type": "string",
                    "description": "the folder to copy from: ~/Music or an absolute path",
                },
                "dest": _PATH,
            },
            ["source", "dest"],
        ),
    ),
}

assert tuple(_SPECS) == ATOMIC_TOOLS, "the specs must list exactly the atomic tools"


ATOMIC_SPECS: dict[str, ToolSpec] = {
    name: ToolSpec(name=name, description=desc, parameters=schema)
    for name, (desc, schema) in _SPECS.items()
}


# beside the atomic tools, every app has `schedule`: its jobs, kept and run by the
# controller (executor/tools/schedule.py forwards the call there)
CONTROLLER_SPECS: dict[str, ToolSpec] = {
    "schedule": ToolSpec(
        name="schedule",
        description=(
            "Create, list, update, run or cancel this app's scheduled jobs (the controller "
            "runs them later or again). create: job = {name, execution_type: agent|command, "
            "schedule_type: once|interval|cron, run_at (ISO 8601, local) | interval_s | "
            "cron (5 fields), instruction | command, timeout?, max_runs?, enabled?}; "
            "cancel / update / run / runs: job_id; update: changes."
        ),
        parameters=_schema(
            {
                "action": {
                    "type": "string",
                    "enum": ["create", "list", "cancel", "update", "run", "runs"],
                },
                "job": {"type": "object", "description": "the job to create"},
                "job_id": {"type": "string"},
                "changes": {"type": "object", "description": "fields to change (update)"},
            },
            ["action"],
        ),
    )
}


def atomic_specs() -> list[ToolSpec]:
    """What `GET /tools` lists for every app: the atomic tools, then `schedule`."""
    return [*ATOMIC_SPECS.values(), *CONTROLLER_SPECS.values()]


# tool → (risk, requires_confirmation, concurrency_safe, size class); a size class is
# "read" (a file, an HTTP body, rows: up to twice `limits.response_bytes`), "output"
# (a process's stdout and stderr: four times `limits.output_bytes`) or "small" (1 MB)
METADATA: dict[str, tuple[RiskLevel, bool, bool, str]] = {
    "http_request": ("network", False, True, "read"),
    "file_read": ("read", False, True, "read"),
    "file_write": ("write", False, False, "small"),
    "file_list": ("read", False, True, "small"),
    "shell_exec": ("execute", False, False, "output"),
    "process_start": ("execute", True, False, "output"),
    "db_query": ("write", False, False, "read"),
    "cache_get": ("read", False, True, "read"),
    "cache_set": ("write", False, False, "small"),
    "notify": ("system", False, False, "small"),
    "system_info": ("read", False, True, "small"),
    "file_import": ("write", True, False, "small"),
    "schedule": ("system", False, False, "small"),
}
SMALL_RESULT = 1_000_000

assert set(METADATA) == {*ATOMIC_SPECS, *CONTROLLER_SPECS}


def declared_tools(response_bytes: int, output_bytes: int) -> list[ToolInfo]:
    """Every atomic tool and `schedule` with its metadata; a "read" result may be twice
    `response_bytes` long, a process's output four times `output_bytes`."""
    sizes = {"read": 2 * response_bytes, "output": 4 * output_bytes, "small": SMALL_RESULT}
    infos = []
    for spec in atomic_specs():
        risk, confirm, safe, size_class = METADATA[spec.name]
        infos.append(
            ToolInfo(
                name=spec.name,
                description=spec.description,
                provider="atomic",
                input_schema=spec.parameters,
                risk_level=risk,
                requires_confirmation=confirm,
                concurrency_safe=safe,
                max_result_size_chars=sizes[size_class],
            )
        )
    return infos


_WRITE_WORDS = frozenset(
    {"insert", "update", "delete", "replace", "drop", "alter", "create", "upsert"}
)
_SQL_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)
_SQL_STRING = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")


def sql_writes(sql: str) -> bool:
    """True when `sql` may change the database (any write keyword outside literals)."""
    text = _SQL_STRING.sub(" ", _SQL_COMMENT.sub(" ", sql))
    return any(word in _WRITE_WORDS for word in re.findall(r"[a-z_]+", text.lower()))
