"""The atomic tools' declared facts, shared by every process: names, descriptions,
argument schemas, and the metadata the runtime enforces (risk, the user's confirmation,
whether calls may run side by side, how long a result may be), and the one-line
summaries of a call's arguments and result that the executor's audit log keeps.

The executor runs these tools (`executor/tools/`) and checks their arguments; the
controller's permission policy reads the same facts to decide what asks the user first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from aios_protocol.messages import ATOMIC_TOOLS, RiskLevel, ToolInfo, ToolSpec

__all__ = [
    "ATOMIC_SPECS",
    "CONTROLLER_SPECS",
    "PROCESS_TOOLS",
    "SYSTEM_INFO_MAX_PROCESSES",
    "SYSTEM_INFO_TOPICS",
    "atomic_specs",
    "declared_tools",
    "generic_input_summary",
    "generic_result_summary",
    "sql_writes",
    "summarize_input",
    "summarize_result",
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


# ------------------------------------------------------------------ audit summaries
# One line each for the audit log: what a call asked for and what it answered. A
# summary names paths, sizes, counts and codes, never the content itself: no file
# text, no output, no body or value, no header value, no query string, no SQL text.

_NAME_MAX = 200  # characters of a path, key or URL a summary keeps


def _clip(value: Any) -> str:
    text = str(value)
    return text if len(text) <= _NAME_MAX else f"{text[:_NAME_MAX]}…"


def _size(value: Any) -> int:
    """Characters of `value`'s text (a string itself, else its JSON)."""
    if isinstance(value, str):
        return len(value)
    return len(json.dumps(value, ensure_ascii=False, default=str))


def _shape(value: Any) -> str:
    """What `value` is and how large, without any of it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return f"{len(value)} chars"
    if isinstance(value, dict):
        return f"object of {len(value)} keys, {_size(value)} chars"
    if isinstance(value, list):
        return f"{len(value)} items, {_size(value)} chars"
    return type(value).__name__


def generic_input_summary(args: dict[str, Any]) -> str:
    """Any tool's arguments: each name with the shape of its value."""
    return ", ".join(f"{key}: {_shape(value)}" for key, value in args.items())


def generic_result_summary(args: dict[str, Any], value: Any) -> str:
    """Any tool's result: its shape."""
    return _shape(value)


def _path(args: dict[str, Any], key: str = "path") -> str:
    return _clip(args.get(key) or ".")


def _url(url: Any) -> str:
    """The URL without credentials, query or fragment (where secrets travel)."""
    parts = urlsplit(str(url))
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return _clip(urlunsplit((parts.scheme, host, parts.path, "", "")))


def _http_input(args: dict[str, Any]) -> str:
    line = f"{str(args.get('method') or 'GET').upper()} {_url(args.get('url'))}"
    for key in ("params", "headers"):
        if args.get(key):
            line += f", {len(args[key])} {key}"
    if args.get("body") is not None:
        line += f", body {_size(args['body'])} chars"
    if args.get("save_to"):
        line += f", save to {_path(args, 'save_to')}"
    return line


def _http_result(args: dict[str, Any], value: Any) -> str:
    if isinstance(value, dict) and "status_code" in value:  # raw, or an http_error
        return f"HTTP {value['status_code']}, body {_shape(value.get('body'))}"
    if args.get("save_to") and isinstance(value, dict) and "size" in value:
        return f"saved {_clip(value.get('path'))}, {value['size']} bytes"
    return f"HTTP 2xx, body {_shape(value)}"


def _command_input(args: dict[str, Any]) -> str:
    """The program and how many arguments (an argument may be a secret)."""
    cmd = args.get("cmd") or args.get("command") or []
    argv = cmd.split() if isinstance(cmd, str) else [str(part) for part in cmd]
    argv += [str(part) for part in args.get("args") or []]
    program = argv[0].rsplit("/", 1)[-1] if argv else "?"
    line = f"{_clip(program)} with {len(argv) - 1 if argv else 0} arguments"
    if args.get("cwd"):
        line += f", in {_path(args, 'cwd')}"
    if args.get("background"):
        line += ", background"
    return line


def _command_result(args: dict[str, Any], value: Any) -> str:
    if not isinstance(value, dict):
        return _shape(value)
    if "pid" in value:
        return f"started in the background, pid {value['pid']}"
    code = value.get("returncode")
    line = "killed" if code is None else f"exit {code}"
    for stream in ("stdout", "stderr"):
        size = value.get(f"{stream}_size")
        if size is None:  # a result without the sizes: the bytes of what it kept
            size = len(str(value.get(stream) or "").encode("utf-8"))
        line += f", {stream} {size} bytes"
    return line + (", truncated" if value.get("truncated") else "")


def _sql_verb(sql: Any) -> str:
    words = re.findall(r"[a-z]+", _SQL_COMMENT.sub(" ", str(sql)).lower())
    return words[0].upper() if words else "?"


def _db_input(args: dict[str, Any]) -> str:
    line = f"{_sql_verb(args.get('sql'))} on {_path(args, 'dsn')}"
    if args.get("params"):
        line += f", {len(args['params'])} params"
    return line


def _db_result(args: dict[str, Any], value: Any) -> str:
    if not isinstance(value, dict) or "rowcount" not in value:
        return _shape(value)
    count = value["rowcount"]  # -1: a statement that counts no rows (CREATE …)
    line = f"{count} rows" if isinstance(count, int) and count >= 0 else "no row count"
    if value.get("columns"):
        line += f", {len(value['columns'])} columns"
    return line + (", truncated" if value.get("truncated") else "")


def _file_write_input(args: dict[str, Any]) -> str:
    line = f"{_path(args)}, {_size(args.get('content'))} chars"
    return line + (", append" if args.get("mode") == "append" else "")


def _file_result(args: dict[str, Any], value: Any) -> str:
    if isinstance(value, dict) and "size" in value:
        return f"{_clip(value.get('path'))}, {value['size']} bytes"
    return f"{_path(args)}, {_shape(value)}"


def _file_list_input(args: dict[str, Any]) -> str:
    line = _path(args)
    if args.get("pattern"):
        line += f", pattern {_clip(args['pattern'])}"
    return line + (", recursive" if args.get("recursive") else "")


def _file_list_result(args: dict[str, Any], value: Any) -> str:
    if not isinstance(value, dict) or not isinstance(value.get("files"), list):
        return _shape(value)
    line = f"{_clip(value.get('path'))}, {len(value['files'])} entries"
    return line + (", truncated" if value.get("truncated") else "")


def _cache_input(args: dict[str, Any]) -> str:
    line = f"{args.get('namespace') or 'app'}:{_clip(args.get('key'))}"
    if "value" in args:
        line += f", value {_shape(args['value'])}"
    if args.get("ttl") is not None:
        line += f", ttl {args['ttl']}s"
    return line


def _cache_result(args: dict[str, Any], value: Any) -> str:
    if "value" in args:
        return (
            "stored" if isinstance(value, dict) and value.get("stored") else _shape(value)
        )
    return "miss" if value is None else f"hit, {_shape(value)}"


def _notify_input(args: dict[str, Any]) -> str:
    line = f"{args.get('level') or 'info'}, title {_size(args.get('title') or '')} chars"
    if args.get("body"):
        line += f", body {_size(args['body'])} chars"
    return line


def _system_info_input(args: dict[str, Any]) -> str:
    line = str(args.get("what") or "overview")
    return line + (f", at most {args['limit']}" if args.get("limit") else "")


def _import_input(args: dict[str, Any]) -> str:
    return f"{_path(args, 'source')} → {_path(args, 'dest')}"


def _import_result(args: dict[str, Any], value: Any) -> str:
    if not isinstance(value, dict) or not isinstance(value.get("copied"), list):
        return _shape(value)
    too_large = value.get("too_large") or 0  # how many were left out for their size
    return f"{len(value['copied'])} files copied, {too_large} too large"


def _schedule_input(args: dict[str, Any]) -> str:
    line = str(args.get("action") or "?")
    return line + (f", job {_clip(args['job_id'])}" if args.get("job_id") else "")


InputSummary = Callable[[dict[str, Any]], str]
ResultSummary = Callable[[dict[str, Any], Any], str]

# tool → (the summary of its arguments, the summary of its result given the arguments)
SUMMARIES: dict[str, tuple[InputSummary, ResultSummary]] = {
    "http_request": (_http_input, _http_result),
    "file_read": (_path, _file_result),
    "file_write": (_file_write_input, _file_result),
    "file_list": (_file_list_input, _file_list_result),
    "shell_exec": (_command_input, _command_result),
    "process_start": (_command_input, _command_result),
    "db_query": (_db_input, _db_result),
    "cache_get": (_cache_input, _cache_result),
    "cache_set": (_cache_input, _cache_result),
    "notify": (_notify_input, generic_result_summary),
    "system_info": (_system_info_input, generic_result_summary),
    "file_import": (_import_input, _import_result),
    "schedule": (_schedule_input, generic_result_summary),
}

assert set(SUMMARIES) == set(METADATA)


def summarize_input(tool: str, args: dict[str, Any]) -> str:
    """One line saying what a call of `tool` asked for (the generic one for a tool
    not declared here, or when the declared one cannot read the arguments)."""
    summary = SUMMARIES.get(tool, (generic_input_summary, generic_result_summary))[0]
    try:
        return summary(args)
    except Exception:  # arguments of an unexpected shape
        return generic_input_summary(args)


def summarize_result(tool: str, args: dict[str, Any], value: Any) -> str:
    """One line saying what a call of `tool` answered (see `summarize_input`)."""
    summary = SUMMARIES.get(tool, (generic_input_summary, generic_result_summary))[1]
    try:
        return summary(args, value)
    except Exception:  # a result of an unexpected shape (e.g. cut to a string)
        return generic_result_summary(args, value)
