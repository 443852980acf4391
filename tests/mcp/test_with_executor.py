"""MCP servers inside a real executor process: the listing, `/call`, a step plan,
the SDK's `call_tool`, bad input, and no orphan after a kill -9 of the executor or
of the controller."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from aios_sdk import AIOSAgent, ToolFailed
from tests.controller.system import TEST_CONFIG, launch
from tests.mcp.conftest import server_entry, tag_of
from tests.procs import processes_tagged, start_executor, stop

pytestmark = pytest.mark.process

APP_TOKEN = "app-token-mcp-test"


def _wait_gone(tag: str, timeout: float) -> list:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and processes_tagged(tag):
        time.sleep(0.1)
    return processes_tagged(tag)


def _wait_tools(url: str, token: str, name: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = requests.get(
            f"{url}/tools?app_id=mcp_app", headers={"X-AIOS-Token": token}, timeout=5
        ).json()
        if body["providers"].get(name, {}).get("state") == "running":
            return body
        time.sleep(0.2)
    raise AssertionError(f"{name} never ran: {body['providers']}")


class Running:
    def __init__(self, url: str, token: str, entries: dict) -> None:
        self.url, self.token, self.entries = url, token, entries

    def post(self, path: str, body: dict, token: str | None = None) -> dict:
        headers = {"X-AIOS-Token": token or self.token}
        response = requests.post(
            f"{self.url}{path}", json=body, headers=headers, timeout=30
        )
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    tmp = tmp_path_factory.mktemp("mcp_exec")
    entries = {
        "basic": server_entry("basic", timeout=3),
        "trusted": server_entry("basic", trusted=True),
    }
    proc, url, token = start_executor(tmp, config={"mcp_servers": entries})
    try:
        workdir = tmp / "workdir"
        workdir.mkdir()
        registration = {"app_id": "mcp_app", "workdir": str(workdir), "token": APP_TOKEN}
        response = requests.put(
            f"{url}/apps/mcp_app",
            json=registration,
            headers={"X-AIOS-Token": token},
            timeout=5,
        )
        assert response.status_code == 200, response.text
        _wait_tools(url, token, "mcp:basic")
        _wait_tools(url, token, "mcp:trusted")
        yield Running(url, token, entries)
    finally:
        stop(proc)
    assert _wait_gone(tag_of(entries["basic"]), 5) == []


def test_the_listing_shows_the_servers_tools(running: Running) -> None:
    body = requests.get(
        f"{running.url}/tools?app_id=mcp_app",
        headers={"X-AIOS-Token": running.token},
        timeout=5,
    ).json()
    tools = {t["name"]: t for t in body["tools"]}
    assert "file_read" in tools
    add = tools["mcp__basic__add"]
    assert add["provider"] == "mcp:basic" and add["description"] == "Add two integers."
    assert add["requires_confirmation"] is True
    assert tools["mcp__trusted__add"]["requires_confirmation"] is False
    assert body["providers"]["mcp:basic"]["sandbox"] in ("bubblewrap", "none")


def test_a_plan_runs_mcp_steps_with_templating(running: Running) -> None:
    steps = [
        ("mcp__basic__shout", {"text": "hi"}),
        ("mcp__basic__shout", {"text": "{{step_1.result.result}} there"}),
        ("mcp__basic__no_such_tool", {}),
        ("mcp__basic__add", {"a": "one", "b": 2}),
        ("mcp__basic__wait", {"seconds": 30}),
        ("mcp__basic__add", {"a": 1, "b": 2}),
    ]
    plan = [{"step_id": i, "tool": t, "args": a} for i, (t, a) in enumerate(steps, 1)]
    answer = running.post(
        "/run", {"app_id": "mcp_app", "session_id": "sess_mcp", "steps": plan}
    )
    results = answer["tool_results"]
    statuses = [results[f"step_{i}"]["status"] for i in range(1, 7)]
    assert statuses == ["ok", "ok", "error", "error", "error", "ok"], results
    assert results["step_2"]["result"] == {"result": "HI THERE"}
    assert results["step_3"]["code"] == "unknown_tool"
    assert results["step_4"]["code"] == "invalid_args"
    assert results["step_5"]["code"] == "tool_timeout"
    assert results["step_6"]["result"] == {"result": 3}


class _Agent(AIOSAgent):
    name = "mcp test"
    description = "calls MCP tools"
    icon = "🔌"
    role_prompt = "test"

    def handle(self, instruction, context, action_request=None):  # noqa: ANN001, ANN201
        return {}


def test_call_tool_from_an_app(running: Running, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIOS_EXECUTOR_URL", running.url)
    monkeypatch.setenv("AIOS_TOKEN", APP_TOKEN)
    monkeypatch.setenv("AIOS_APP_ID", "mcp_app")
    client = _Agent()
    assert client.call_tool("mcp__trusted__add", a=4, b=5) == {"result": 9}
    with pytest.raises(ToolFailed) as refused:  # untrusted: only through a reviewed plan
        client.call_tool("mcp__basic__add", a=4, b=5)
    assert refused.value.code == "needs_confirmation"
    with pytest.raises(ToolFailed) as huge:
        client.call_tool("mcp__trusted__huge", megabytes=100)
    assert "more than" in str(huge.value)
    assert client.call_tool("mcp__trusted__shout", text="still up") == {
        "result": "STILL UP"
    }


def test_kill_9_of_the_executor_leaves_no_server(tmp_path: Path) -> None:
    entry = server_entry("basic")
    proc, url, token = start_executor(tmp_path, config={"mcp_servers": {"orphan": entry}})
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not processes_tagged(tag_of(entry)):
            time.sleep(0.1)
        assert processes_tagged(tag_of(entry))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(5)
        assert _wait_gone(tag_of(entry), 10) == []
    finally:
        stop(proc)


@pytest.mark.slow
def test_kill_9_of_the_controller_leaves_no_server(tmp_path: Path) -> None:
    entry = server_entry("basic")
    apps = tmp_path / "apps"
    apps.mkdir()
    system = launch(
        tmp_path, apps, config={**TEST_CONFIG, "mcp_servers": {"orphan": entry}}
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not processes_tagged(tag_of(entry)):
            time.sleep(0.1)
        assert processes_tagged(tag_of(entry))
        os.kill(system.proc.pid, signal.SIGKILL)
        system.proc.wait(5)
        assert _wait_gone(tag_of(entry), 10) == []
    finally:
        system.stop()
