"""Custom tools (S-62, S-72): the executor calls the app back at `/tools/<name>` with the
app's own token. The app here is a tiny service built on `create_service`."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from flask import jsonify, request

from aios_protocol.errors import AiosError, NotFound
from aios_runtime.edge import create_service, start_server, token_matches
from tests.executor.conftest import APP_TOKEN, HarnessFactory

SPECS = [
    {
        "name": "my_custom_tool",
        "description": "自定义工具",
        "parameters": {"type": "object", "properties": {"arg1": {"type": "string"}}},
    },
    {"name": "fails", "description": "always fails"},
    {"name": "slow", "description": "too slow"},
    {"name": "garbage", "description": "answers garbage"},
    {"name": "file_read", "description": "tries to shadow an atomic tool"},
    {
        "name": "strict",
        "description": "a schema as @tool derives it",
        "parameters": {
            "type": "object",
            "properties": {"word": {"type": "string"}, "times": {"type": "integer"}},
            "required": ["word"],
            "additionalProperties": False,
        },
    },
]


@pytest.fixture(scope="module")
def tool_app() -> Iterator[tuple[str, list[dict]]]:
    seen: list[dict] = []
    service = create_service("tool-app", token_matches(APP_TOKEN))

    @service.post("/tools/<name>")
    def run_tool(name: str):  # type: ignore[no-untyped-def]
        args = request.get_json()["args"]
        seen.append({"name": name, "args": args})
        if name == "my_custom_tool":
            return jsonify(
                status="ok",
                result={"echo": args.get("arg1"), "len": len(args.get("arg1", ""))},
            )
        if name == "fails":
            raise AiosError("the disk is on fire", code="disk_on_fire")
        if name == "slow":
            time.sleep(1.2)
            return jsonify(status="ok", result=None)
        if name == "garbage":
            return "<html>not json</html>"
        if name == "strict":
            return jsonify(status="ok", result=args)
        raise NotFound(name)

    handle = start_server(service, 0)
    yield handle.url, seen
    handle.stop()


@pytest.fixture
def custom(make_harness: HarnessFactory, tool_app):
    url, seen = tool_app
    seen.clear()
    return make_harness(url=url, custom_tools=SPECS), seen


def test_custom_tool_called_from_a_step_with_templating(custom) -> None:
    harness, seen = custom
    results = harness.run(
        [
            {
                "step_id": 1,
                "tool": "file_write",
                "args": {"path": "n.txt", "content": "七里香"},
            },
            {"step_id": 2, "tool": "file_read", "args": {"path": "n.txt"}},
            {"step_id": 3, "tool": "my_custom_tool", "args": {"arg1": "{{step_2.result}}"}},
            {
                "step_id": 4,
                "tool": "file_write",
                "args": {"path": "out.txt", "content": "{{step_3.result.len}}"},
            },
        ]
    )
    assert results["step_3"] == {
        "tool": "my_custom_tool",
        "status": "ok",
        "result": {"echo": "七里香", "len": 3},
        "duration_ms": results["step_3"]["duration_ms"],
    }
    assert (harness.workdir / "out.txt").read_text() == "3"
    assert seen == [{"name": "my_custom_tool", "args": {"arg1": "七里香"}}]


def test_custom_tool_errors_are_data(custom) -> None:
    harness, _ = custom
    failed = harness.call("fails")
    assert failed["status"] == "error" and failed["code"] == "disk_on_fire"
    assert failed["error"] == "the disk is on fire"
    assert harness.call("garbage")["code"] == "bad_app_reply"
    slow = harness.call("slow", timeout=0.5)
    assert slow["code"] == "tool_timeout"


def test_atomic_tools_cannot_be_shadowed_and_unknown_tools_stay_unknown(custom) -> None:
    harness, seen = custom
    (harness.workdir / "a.txt").write_text("real")
    assert harness.call("file_read", path="a.txt")["result"] == "real"
    assert seen == []
    assert harness.call("not_registered")["code"] == "unknown_tool"


def test_another_app_cannot_call_this_apps_custom_tool(custom) -> None:
    harness, seen = custom
    result = harness.call("my_custom_tool", token="app2-token-0123456789abcdef", arg1="x")
    assert result["code"] == "unknown_tool" and seen == []


def test_the_executor_checks_the_declared_schema_before_calling_the_app(custom) -> None:
    harness, seen = custom
    wrong = harness.call("strict", word=5)
    assert wrong["code"] == "invalid_args"
    assert wrong["error"] == "strict: argument 'word' must be string, got integer"
    missing = harness.call("strict", times=2)
    assert missing["error"] == "strict: missing required argument 'word'"
    unknown = harness.call("strict", word="x", loud=True)
    assert unknown["error"].startswith("strict: unknown argument 'loud'")
    assert harness.call("my_custom_tool", arg1=["not", "a", "string"])["code"] == (
        "invalid_args"
    )
    assert seen == []
    # `timeout` is the executor's (it lowers the tool's timeout) unless the tool declares it
    done = harness.call("strict", word="x", times=None, timeout=5)
    assert done["status"] == "ok" and done["result"] == {"word": "x", "times": None}
    assert seen == [{"name": "strict", "args": {"word": "x", "times": None}}]


def test_a_custom_tool_whose_schema_is_not_json_schema_is_refused_at_registration(
    make_harness: HarnessFactory, tmp_path
) -> None:
    harness = make_harness()
    broken = {"name": "broken", "parameters": {"type": "object", "required": "word"}}
    response = harness.register(
        "app3", tmp_path / "app3", "app3-token-0123456789abcdef", custom_tools=[broken]
    )
    assert response.status_code == 400
    assert "custom tool 'broken'" in response.get_json()["error"]["message"]


def test_app_without_url_gets_a_clear_error(make_harness: HarnessFactory) -> None:
    harness = make_harness(custom_tools=SPECS[:1])
    assert harness.call("my_custom_tool", arg1="x")["code"] == "app_unreachable"
