"""The tool-call log (S-61): lines of a request written together, removed files
started anew, and a plan's earlier lines on disk before a step that may take long."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from executor.audit import ToolCallLog
from tests.executor.conftest import HarnessFactory


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _add(records: Any, tool: str) -> None:
    records.add(
        app_id="app1",
        tool=tool,
        input_summary="a.txt, 500 chars",
        result_summary="workspace/a.txt, 500 bytes",
        status="ok",
        duration_ms=3.04,
    )


def test_a_requests_lines_are_written_when_it_ends(tmp_path: Path) -> None:
    log = ToolCallLog(tmp_path)
    path = log.path_for("sess_a")
    with log.records("sess_a") as records:
        _add(records, "cache_set")
        _add(records, "file_read")
        assert not path.exists() or path.read_text() == ""
        records.write()
        assert [e["tool"] for e in _lines(path)] == ["cache_set", "file_read"]
        _add(records, "notify")
    entries = _lines(path)
    assert [e["tool"] for e in entries] == ["cache_set", "file_read", "notify"]
    assert entries[0]["session_id"] == "sess_a" and entries[0]["duration_ms"] == 3.0
    assert entries[0]["input_summary"] == "a.txt, 500 chars"
    assert entries[0]["result_summary"] == "workspace/a.txt, 500 bytes"
    log.close()


def test_lines_are_written_even_when_the_request_fails(tmp_path: Path) -> None:
    log = ToolCallLog(tmp_path)
    try:
        with log.records(None) as records:
            _add(records, "file_write")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert [e["tool"] for e in _lines(log.path_for(None))] == ["file_write"]
    log.close()


def test_a_removed_log_file_is_started_anew(tmp_path: Path) -> None:
    log = ToolCallLog(tmp_path)
    with log.records("s") as records:
        _add(records, "first")
    log.path_for("s").unlink()
    with log.records("s") as records:
        _add(records, "second")
    assert [e["tool"] for e in _lines(log.path_for("s"))] == ["second"]
    # the whole folder removed: it is made again
    log.path_for("s").unlink()
    log.path_for("s").parent.rmdir()
    with log.records("s") as records:
        _add(records, "third")
    assert [e["tool"] for e in _lines(log.path_for("s"))] == ["third"]
    log.close()


def test_a_plans_earlier_lines_are_on_disk_before_a_long_step(
    make_harness: HarnessFactory,
) -> None:
    """A step that runs a process sees the log lines of the steps before it."""
    harness = make_harness({"tool_sandbox": {"use_bubblewrap": False}})
    log = harness.state_dir / "tool_calls" / "sess_test.jsonl"
    (harness.workdir / "peek.py").write_text(
        f"print(open({str(log)!r}).read().count('\\n'))\n"
    )
    results = harness.run(
        [
            {"step_id": 1, "tool": "cache_set", "args": {"key": "k", "value": 1}},
            {"step_id": 2, "tool": "notify", "args": {"title": "t"}},
            {"step_id": 3, "tool": "shell_exec", "args": {"cmd": ["python3", "peek.py"]}},
            {"step_id": 4, "tool": "cache_get", "args": {"key": "k"}},
        ]
    )
    assert results["step_3"]["status"] == "ok", results["step_3"]
    assert results["step_3"]["result"]["stdout"].strip() == "2"
    assert [e["step_id"] for e in _lines(log)] == [1, 2, 3, 4]
