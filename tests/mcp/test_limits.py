"""MCP servers under the limits of config.json `mcp_servers.<name>.limits` (else the
executor's `limits`): a server over its memory limit fails clearly, is restarted and
then marked failed, and the executor serving it stays up."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest
import requests

from aios_protocol.errors import ToolFailed
from aios_runtime.settings import McpServerSettings
from executor.providers.base import ToolCall
from executor.providers.mcp import McpProvider, McpRuntime, McpServerConfig
from executor.sandbox.pids_cgroup import PidsCgroups
from tests.mcp.conftest import server_entry, tag_of
from tests.procs import processes_tagged, start_executor, stop

pytestmark = pytest.mark.process

LIMIT = 400 << 20  # room for Python and the mcp package, not for 1 GB more


def _provider(tmp_path: Path, entry: dict) -> McpProvider:
    settings = McpServerSettings.model_validate(entry)
    # the same number of restarts as the executor's, without its seconds of waiting
    backoff = (0.1,) * len(McpRuntime.backoff)
    runtime = McpRuntime(log_dir=tmp_path / "logs", backoff=backoff)
    return McpProvider(McpServerConfig("hog", settings), runtime)


def _call(provider: McpProvider, tool: str, **args):
    name = f"mcp__hog__{tool}"
    return provider.call(ToolCall(app=None, tool=name, args=args, timeout=20))  # type: ignore[arg-type]


def test_a_server_runs_under_its_own_limits(tmp_path: Path) -> None:
    entry = server_entry("hog", limits={"memory_bytes": LIMIT, "file_size_bytes": 1 << 20})
    provider = _provider(tmp_path, entry)
    provider.start(wait=30)
    try:
        status = provider.status()
        assert status["state"] == "running", status
        assert status["limits"]["memory"] == LIMIT and status["limits"]["fsize"] == 1 << 20
        (server,) = [p for p in processes_tagged(tag_of(entry)) if p.name() != "bwrap"][-1:]
        assert server.rlimit(psutil.RLIMIT_AS) == (LIMIT, LIMIT)
        assert server.rlimit(psutil.RLIMIT_FSIZE) == (1 << 20, 1 << 20)
        assert _call(provider, "hog", megabytes=10) == {"result": "held 10 MB"}
        # the allocation fails inside the server: that call's error, nothing else
        with pytest.raises(ToolFailed, match="mcp__hog__hog"):
            _call(provider, "hog", megabytes=1024)
        deadline = time.monotonic() + 20
        while provider.status()["state"] != "running" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _call(provider, "ping") == {
            "result": "pong"
        }  # the same server, or a restarted one
    finally:
        provider.stop()
    assert processes_tagged(tag_of(entry)) == []


def test_a_server_over_its_memory_limit_at_start_is_marked_failed(tmp_path: Path) -> None:
    entry = server_entry("hog", limits={"memory_bytes": LIMIT})
    entry["args"].insert(1, "--hog-at-start=1024")
    provider = _provider(tmp_path, entry)
    provider.start(wait=30)
    try:
        deadline = time.monotonic() + 40
        while provider.status()["state"] != "failed" and time.monotonic() < deadline:
            time.sleep(0.2)
        status = provider.status()
        assert status["state"] == "failed", status
        assert status["restarts"] == len(McpRuntime.backoff), status
        assert "MemoryError" in status["error"], status
    finally:
        provider.stop()
    assert processes_tagged(tag_of(entry)) == []


def test_the_executor_outlives_a_server_over_its_limit(tmp_path: Path) -> None:
    entry = server_entry("hog", limits={"memory_bytes": LIMIT})
    proc, url, token = start_executor(tmp_path, config={"mcp_servers": {"hog": entry}})
    headers = {"X-AIOS-Token": token}
    try:
        (tmp_path / "workdir").mkdir()
        registration = {
            "app_id": "mcp_app",
            "workdir": str(tmp_path / "workdir"),
            "token": "app-token-limits",
        }
        assert (
            requests.put(
                f"{url}/apps/mcp_app", json=registration, headers=headers, timeout=5
            ).status_code
            == 200
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            body = requests.get(f"{url}/tools", headers=headers, timeout=5).json()
            if body["providers"].get("mcp:hog", {}).get("state") == "running":
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the hog server never ran: {body['providers']}")
        if PidsCgroups.detect(8) is not None:  # the server's tasks in their own cgroup
            tagged = processes_tagged(tag_of(entry))
            servers = [s for s in tagged if "mcp_launch.py" not in " ".join(s.cmdline())]
            assert servers
            for server in servers:  # bubblewrap and the server; the relay stays outside
                assert "/mcp-hog-" in Path(f"/proc/{server.pid}/cgroup").read_text()
        answer = requests.post(
            f"{url}/call",
            headers=headers,
            timeout=30,
            json={
                "tool": "mcp__hog__hog",
                "args": {"megabytes": 1024},
                "app_id": "mcp_app",
            },
        ).json()
        assert answer["status"] == "error" and answer["code"] == "tool_failed", answer
        assert proc.poll() is None
        assert requests.get(f"{url}/health", timeout=5).status_code == 200
    finally:
        stop(proc)
    assert processes_tagged(tag_of(entry)) == []
