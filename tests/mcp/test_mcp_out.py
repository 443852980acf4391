"""`aios mcp --app APP_ID` driven by the real `mcp` client (ClientSession over stdio):
the app's tools, confinement, refusals of tools that need the user's yes, and no
executor left once the client disconnects."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import anyio
import psutil
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.procs import ROOT

pytestmark = pytest.mark.process


def _params(tmp_path: Path, config: dict) -> StdioServerParameters:
    apps = tmp_path / "apps"
    shutil.copytree(
        ROOT / "apps" / "hello_app",
        apps / "hello_app",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (tmp_path / "config.json").write_text(json.dumps(config))
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "aios",
            "mcp",
            "--app",
            "hello_app",
            "--apps-dir",
            str(apps),
            "--config",
            str(tmp_path / "config.json"),
            "--state-dir",
            str(tmp_path / "s"),
        ],
        env={"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"]},
        cwd=ROOT,
    )


def _executors_of(state_dir: Path) -> list[psutil.Process]:
    """The executors serving `state_dir`: a process with the executor's command line
    whose parent has another one (not the executor's own child in the moment between
    its fork and its exec, such as the bubblewrap probe it starts)."""
    found = {}
    for proc in psutil.process_iter(["cmdline", "ppid"]):
        cmd = proc.info["cmdline"] or []
        if "executor" in cmd and str(state_dir) in cmd:
            found[proc.pid] = proc
    return [proc for proc in found.values() if proc.info["ppid"] not in found]


def test_an_mcp_host_uses_the_apps_toolbox(tmp_path: Path) -> None:
    params = _params(tmp_path, {"mcp_out": {"allow_confirmed_tools": []}})
    seen: dict = {}

    async def host() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            with anyio.fail_after(60):
                await s.initialize()
                tools = {t.name: t for t in (await s.list_tools()).tools}
                seen["tools"] = tools
                seen["read"] = await s.call_tool("file_read", {"path": "greeting.txt"})
                seen["outside"] = await s.call_tool("file_read", {"path": "/etc/passwd"})
                seen["refused"] = await s.call_tool(
                    "process_start", {"cmd": "ls", "background": False}
                )
                seen["unknown"] = await s.call_tool("no_such_tool", {})
                seen["bad_args"] = await s.call_tool("file_read", {"path": 5})
                seen["executors"] = len(_executors_of(tmp_path / "s"))

    anyio.run(host)
    assert {"file_read", "file_write", "process_start"} <= set(seen["tools"])
    assert "needs the user's yes" in seen["tools"]["process_start"].description
    assert seen["read"].is_error is False and seen["read"].content[0].text.strip()
    assert (
        seen["outside"].is_error
        and "path_outside_workdir" in seen["outside"].content[0].text
    )
    assert (
        seen["refused"].is_error and "needs_confirmation" in seen["refused"].content[0].text
    )
    assert seen["unknown"].is_error and "unknown_tool" in seen["unknown"].content[0].text
    assert seen["bad_args"].is_error and "invalid_args" in seen["bad_args"].content[0].text
    assert seen["executors"] == 1
    audit = list((tmp_path / "s" / "tool_calls").glob("*.jsonl"))
    assert audit and "file_read" in audit[0].read_text()
    deadline = time.monotonic() + 10
    while _executors_of(tmp_path / "s") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _executors_of(tmp_path / "s") == []


def test_config_may_allow_a_confirmed_tool_over_mcp(tmp_path: Path) -> None:
    config = {"mcp_out": {"allow_confirmed_tools": ["process_start"]}}
    params = _params(tmp_path, config)
    seen: dict = {}

    async def host() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            with anyio.fail_after(60):
                await s.initialize()
                seen["run"] = await s.call_tool(
                    "process_start", {"cmd": "ls", "background": False}
                )

    anyio.run(host)
    assert seen["run"].is_error is False, seen["run"].content
