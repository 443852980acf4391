"""`aios mcp --app APP_ID` serving an app's own `@tool` methods, driven by the real
`mcp` client: with the services it starts itself (the executor and the app's process,
all gone once the client disconnects or `aios mcp` is killed with SIGKILL), and with
the system running (the controller's toolbox routes serve the calls; no second
executor or app process)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
import requests
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.controller.system import TEST_CONFIG, launch
from tests.procs import ROOT

pytestmark = pytest.mark.process

TOOLBOX_APP = Path(__file__).resolve().parent / "apps" / "toolbox_app"


def _apps_dir(tmp_path: Path) -> Path:
    apps = tmp_path / "apps"
    shutil.copytree(
        TOOLBOX_APP, apps / "toolbox_app", ignore=shutil.ignore_patterns("__pycache__")
    )
    return apps


def _argv(tmp_path: Path, apps: Path, config: Path, state: Path) -> list[str]:
    return [
        "-m",
        "aios",
        "mcp",
        "--app",
        "toolbox_app",
        "--apps-dir",
        str(apps),
        "--config",
        str(config),
        "--state-dir",
        str(state),
    ]


def _params(argv: list[str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=argv,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"]},
    )


def _started_for(root: Path) -> list[psutil.Process]:
    """Processes started for this test (their command line names `root`), except
    `aios mcp` itself and the controller."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if any(str(root) in part for part in cmd) and not {"mcp", "start"} & set(cmd):
            found.append(proc)
    return found


def _executors(state: Path) -> list[psutil.Process]:
    return [p for p in _started_for(state) if "executor" in (p.info["cmdline"] or [])]


def _text(result: Any) -> str:
    return result.content[0].text if result.content else ""


def _wait_gone(procs: list[psutil.Process], timeout: float = 15) -> list[psutil.Process]:
    _gone, alive = psutil.wait_procs(procs, timeout=timeout)
    return alive


def test_the_apps_own_tools_are_listed_and_called_through_the_executor(
    tmp_path: Path,
) -> None:
    apps, state, config = _apps_dir(tmp_path), tmp_path / "s", tmp_path / "config.json"
    config.write_text(json.dumps({"apps": {"idle_stop_s": 1}}))  # aios mcp never idles it
    workspace = state / "users" / "default" / "workspaces" / "toolbox_app"
    workspace.mkdir(parents=True)
    (workspace / "users.txt").write_text("the user's own file\n")
    seen: dict[str, Any] = {}

    async def host() -> None:
        params = _params(_argv(tmp_path, apps, config, state))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            with anyio.fail_after(90):
                await s.initialize()
                seen["tools"] = {t.name: t for t in (await s.list_tools()).tools}
                seen["shout"] = await s.call_tool("shout", {"word": "hi", "times": 2})
                seen["bad"] = await s.call_tool("shout", {"word": "hi", "times": "two"})
                seen["missing"] = await s.call_tool("shout", {})
                await anyio.sleep(2)  # longer than idle_stop_s: the app keeps running
                seen["whoami"] = await s.call_tool("whoami", {})
                seen["overwrite"] = await s.call_tool(
                    "file_write", {"path": "users.txt", "content": "gone"}
                )
                seen["new_file"] = await s.call_tool(
                    "file_write", {"path": "mine.txt", "content": "v1"}
                )
                seen["own_file"] = await s.call_tool(
                    "file_write", {"path": "mine.txt", "content": "v2"}
                )
                seen["running"] = _started_for(tmp_path)
                seen["executors"] = _executors(state)

    anyio.run(host)
    tools = seen["tools"]
    assert {"shout", "whoami", "file_read", "file_write"} <= set(tools)
    schema = tools["shout"].input_schema
    assert schema["properties"]["word"]["type"] == "string"
    assert schema["properties"]["times"]["type"] == "integer"
    assert schema.get("required") == ["word"]
    assert tools["shout"].description.startswith("upper-case a word")
    assert seen["shout"].is_error is False and _text(seen["shout"]) == "HI HI"
    # the executor's schema check, before the app sees the call
    assert seen["bad"].is_error and "invalid_args" in _text(seen["bad"])
    assert seen["missing"].is_error and "invalid_args" in _text(seen["missing"])
    who = seen["whoami"].structured_content
    assert seen["whoami"].is_error is False and who["workdir"] == str(workspace)
    # the controller's finer rule: a file the app did not create needs the user's yes
    assert seen["overwrite"].is_error
    assert "needs_confirmation" in _text(seen["overwrite"])
    assert (workspace / "users.txt").read_text() == "the user's own file\n"
    assert seen["new_file"].is_error is False and seen["own_file"].is_error is False
    assert (workspace / "mine.txt").read_text() == "v2"
    audit = "".join(p.read_text() for p in (state / "tool_calls").glob("*.jsonl"))
    assert '"shout"' in audit and '"whoami"' in audit
    assert len(seen["executors"]) == 1 and len(seen["running"]) >= 2  # and the app
    assert _wait_gone(seen["running"]) == []
    assert _started_for(tmp_path) == []


def test_a_killed_aios_mcp_leaves_no_process_behind(tmp_path: Path) -> None:
    apps, state, config = _apps_dir(tmp_path), tmp_path / "s", tmp_path / "config.json"
    config.write_text("{}")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, *_argv(tmp_path, apps, config, state)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        entry = str(apps / "toolbox_app" / "main.py")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            cmds = [p.info["cmdline"] or [] for p in _started_for(tmp_path)]
            if _executors(state) and any(entry in c for c in cmds):
                break
            assert proc.poll() is None, "aios mcp exited before its services ran"
            time.sleep(0.1)
        else:
            raise AssertionError("the executor and the app did not start")
        time.sleep(1)  # the app registered, MCP served
        children = psutil.Process(proc.pid).children(recursive=True)
        assert len(children) >= 2
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(5)
        assert _wait_gone(children) == []
        assert _started_for(tmp_path) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.slow
def test_with_the_system_running_its_controller_serves_the_calls(tmp_path: Path) -> None:
    apps, state = _apps_dir(tmp_path), tmp_path / "state"
    config = {**TEST_CONFIG, "apps": {"start_at_launch": False}}  # started by the toolbox
    system = launch(tmp_path, apps, state_dir=state, config=config)
    seen: dict[str, Any] = {}
    try:
        assert system.apps()["toolbox_app"]["status"] == "idle"
        # the toolbox routes are the desktop token's only
        for headers in ({}, {"X-AIOS-Token": "wrong"}):
            answer = requests.post(
                f"{system.url}/api/toolbox/toolbox_app/call",
                json={"tool": "shout", "args": {"word": "x"}},
                headers=headers,
                timeout=10,
            )
            assert answer.status_code in (401, 403), answer.text
        executors_before = {p.pid for p in _executors(state)}
        assert len(executors_before) == 1

        async def host() -> None:
            argv = _argv(tmp_path, apps, tmp_path / "config.json", state)
            async with (
                stdio_client(_params(argv)) as (read, write),
                ClientSession(read, write) as s,
            ):
                with anyio.fail_after(90):
                    await s.initialize()
                    seen["tools"] = {t.name for t in (await s.list_tools()).tools}
                    seen["shout"] = await s.call_tool("shout", {"word": "yo"})
                    seen["whoami"] = await s.call_tool("whoami", {})
                    seen["refused"] = await s.call_tool(
                        "process_start", {"cmd": "ls", "background": False}
                    )
                    seen["executors"] = {p.pid for p in _executors(state)}
                    seen["app_procs"] = {p.pid for p in _started_for(apps / "toolbox_app")}

        anyio.run(host)
        assert {"shout", "whoami", "process_start"} <= seen["tools"]
        assert _text(seen["shout"]) == "YO"
        # the call ran in the system's own app process, through its one executor
        assert seen["whoami"].is_error is False
        assert seen["app_procs"] and seen["app_procs"] <= {p.pid for p in system.children()}
        assert seen["executors"] == executors_before
        assert seen["refused"].is_error
        assert "needs_confirmation" in _text(seen["refused"])
        audit = "".join(p.read_text() for p in (state / "tool_calls").glob("*.jsonl"))
        assert '"shout"' in audit
        # the host's disconnect leaves the running system as it was
        assert system.proc.poll() is None
        assert system.apps()["toolbox_app"]["status"] == "running"
    finally:
        system.stop()
