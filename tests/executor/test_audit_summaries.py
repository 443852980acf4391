"""The audit log's summaries (S-61): every atomic tool's line says what the call asked
for and what it answered — paths, sizes, counts, exit codes, an HTTP status — and
never the content: a marker written to a file, read back, printed by a command, stored
in a database, the cache, a notification, an HTTP body, header and query never
appears in the log."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.executor.conftest import Harness, HarnessFactory
from tests.fakes.music_api import make_wav
from tests.skills.conftest import provider_of

MARKER = "MARKER-7f3a9c-secret"


class _Echo(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        body = json.dumps({"echo": MARKER}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def web() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _log(harness: Harness) -> tuple[str, list[dict[str, Any]]]:
    text = (harness.state_dir / "tool_calls" / "sess_test.jsonl").read_text("utf-8")
    return text, [json.loads(line) for line in text.splitlines()]


def _ok(harness: Harness, tool: str, **args: Any) -> Any:
    result = harness.call(tool, **args)
    assert result["status"] == "ok", result
    return result["result"]


def test_every_atomic_tool_logs_its_summaries_and_never_the_content(
    harness: Harness, web: str, tmp_path: Path
) -> None:
    music = tmp_path / "Music"
    music.mkdir()
    (music / "a.wav").write_bytes(make_wav(0.05))
    _ok(harness, "file_write", path="notes/m.txt", content=f"{MARKER}\n")
    assert MARKER in _ok(harness, "file_read", path="notes/m.txt")
    _ok(harness, "file_list", path="notes")
    assert MARKER in _ok(harness, "shell_exec", cmd=["echo", MARKER])["stdout"]
    assert MARKER in _ok(harness, "shell_exec", cmd=["cat", "notes/m.txt"])["stdout"]
    _ok(harness, "process_start", cmd=["echo", MARKER])
    _ok(harness, "db_query", dsn="data.db", sql="CREATE TABLE t (v TEXT)")
    _ok(harness, "db_query", dsn="data.db", sql=f"INSERT INTO t VALUES ('{MARKER}')")
    assert _ok(harness, "db_query", dsn="data.db", sql="SELECT v FROM t")["rows"] == [
        [MARKER]
    ]
    _ok(harness, "cache_set", key="k", value=MARKER)
    assert _ok(harness, "cache_get", key="k") == MARKER
    _ok(harness, "notify", title=MARKER, body=MARKER)
    _ok(harness, "system_info", what="memory")
    reply = _ok(
        harness,
        "http_request",
        url=f"{web}/echo?token={MARKER}",
        headers={"Authorization": f"Bearer {MARKER}"},
    )
    assert reply == {"echo": MARKER}
    _ok(harness, "file_import", source=str(music), dest="music")
    missing = harness.call("file_read", path="nope.txt")
    assert missing["code"] == "file_not_found"

    text, entries = _log(harness)
    assert MARKER not in text and "Bearer" not in text
    assert all("args" not in entry for entry in entries)
    lines = [(e["tool"], e["input_summary"], e.get("result_summary")) for e in entries]
    size = len(f"{MARKER}\n")
    assert lines == [
        (
            "file_write",
            f"notes/m.txt, {size} chars",
            f"workspace/notes/m.txt, {size} bytes",
        ),
        ("file_read", "notes/m.txt", f"notes/m.txt, {size} chars"),
        ("file_list", "notes", "workspace/notes, 1 entries"),
        ("shell_exec", "echo with 1 arguments", "exit 0, stdout 21 bytes, stderr 0 bytes"),
        ("shell_exec", "cat with 1 arguments", "exit 0, stdout 21 bytes, stderr 0 bytes"),
        (
            "process_start",
            "echo with 1 arguments",
            "exit 0, stdout 21 bytes, stderr 0 bytes",
        ),
        ("db_query", "CREATE on data.db", "no row count"),
        ("db_query", "INSERT on data.db", "1 rows"),
        ("db_query", "SELECT on data.db", "1 rows, 1 columns"),
        ("cache_set", f"app:k, value {len(MARKER)} chars", "stored"),
        ("cache_get", "app:k", f"hit, {len(MARKER)} chars"),
        (
            "notify",
            f"info, title {len(MARKER)} chars, body {len(MARKER)} chars",
            lines[11][2],
        ),
        ("system_info", "memory", lines[12][2]),
        (
            "http_request",
            f"GET {web}/echo, 1 headers",
            f"HTTP 2xx, body object of 1 keys, {len(json.dumps(reply))} chars",
        ),
        ("file_import", f"{music} → music", "1 files copied, 0 too large"),
        ("file_read", "nope.txt", None),
    ]
    assert lines[11][2].startswith("object of") and lines[12][2].startswith("object of")
    assert entries[-1]["code"] == "file_not_found"


def test_a_plans_lines_carry_the_summaries_of_the_rendered_arguments(
    harness: Harness,
) -> None:
    harness.run(
        [
            {
                "step_id": 1,
                "tool": "file_write",
                "args": {"path": "a.txt", "content": MARKER},
            },
            {
                "step_id": 2,
                "tool": "cache_set",
                "args": {"key": "where", "value": "{{step_1.result.path}}"},
            },
            {"step_id": 3, "tool": "shell_exec", "args": {"cmd": ["cat", "a.txt"]}},
        ]
    )
    text, entries = _log(harness)
    assert MARKER not in text
    assert [(e["step_id"], e["result_summary"]) for e in entries] == [
        (1, f"workspace/a.txt, {len(MARKER)} bytes"),
        (2, "stored"),
        (3, f"exit 0, stdout {len(MARKER)} bytes, stderr 0 bytes"),
    ]
    assert entries[1]["input_summary"] == "app:where, value 15 chars"


def test_a_skills_command_is_logged_as_a_command_is(make_harness: HarnessFactory) -> None:
    """`run_command`: the skill's name and exit code, never its arguments or output."""
    harness = make_harness(example_skills=True)
    provider_of(harness)
    result = harness.call("run_command", command="temp_convert -v 31337")
    assert result["status"] == "ok" and "31337" in result["result"]["stdout"]
    text, entries = _log(harness)
    assert "31337" not in text
    stdout = len(result["result"]["stdout"].encode())
    assert (entries[-1]["input_summary"], entries[-1]["result_summary"]) == (
        "temp_convert with 2 arguments",
        f"exit 0, stdout {stdout} bytes, stderr 0 bytes",
    )
