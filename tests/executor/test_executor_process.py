"""The real thing: `python -m executor` on a free port, driven over HTTP.

Covers start-up from `--config` / `--state-dir` / `AIOS_TOKEN`, registration, tools over
HTTP, the tool-call log on disk, X6 with the executor as child subreaper (both
sandboxes), and SIGTERM stopping every background process.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from aios_protocol.messages import ATOMIC_TOOLS, RunResponse, ToolResult, ToolsListing
from tests.executor.conftest import HAS_BWRAP
from tests.executor.test_commands import (
    NO_BWRAP,
    alive_with,
    wait_none_alive,
    write_spawner,
)
from tests.procs import start_executor, stop

pytestmark = pytest.mark.process

CONFIG = {
    "tool_timeout": {"shell_exec": 20, "http_request": 5},
    "tool_sandbox": {"http_allow_private_hosts": ["127.0.0.1"]},
}


@dataclass
class Running:
    url: str
    master: str
    home: Path
    app_token: str
    workdir: Path
    pid: int

    def post(self, route: str, body: dict, token: str | None = None) -> requests.Response:
        return requests.post(
            f"{self.url}{route}",
            json=body,
            headers={"X-AIOS-Token": token or self.app_token},
            timeout=30,
        )

    def call(self, tool: str, **args: object) -> ToolResult:
        """Call `tool` for app1 as the controller (which reviewed the call)."""
        body = {"tool": tool, "args": args, "session_id": "sess_proc", "app_id": "app1"}
        response = self.post("/call", body, token=self.master)
        assert response.status_code == 200, response.text
        return ToolResult.model_validate(response.json())


def _launch(tmp_path: Path, config: dict) -> tuple[subprocess.Popen, Running]:
    proc, url, master = start_executor(
        tmp_path, config=config, token=secrets.token_urlsafe(24)
    )
    workdir = tmp_path / "apps" / "app1" / "workspace"
    workdir.mkdir(parents=True)
    app_token = secrets.token_urlsafe(24)
    registration = {"app_id": "app1", "workdir": str(workdir), "token": app_token}
    response = requests.put(
        f"{url}/apps/app1", json=registration, headers={"X-AIOS-Token": master}, timeout=5
    )
    assert response.status_code == 200, response.text
    return proc, Running(url, master, tmp_path / "executor", app_token, workdir, proc.pid)


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    proc, running = _launch(tmp_path_factory.mktemp("exec"), CONFIG)
    try:
        yield running
    finally:
        stop(proc)


def test_health_tokens_and_tool_listing(executor: Running) -> None:
    health = requests.get(f"{executor.url}/health", timeout=5).json()
    assert health == {
        "status": "ok",
        "pid": executor.pid,  # the controller's probe checks it is its own executor
        "sandbox": health["sandbox"],
        "fork_limit": health["fork_limit"],
        "apps": 1,
    }
    assert health["fork_limit"] in ("cgroup", "rlimit", "none")
    assert health["sandbox"] == ("bubblewrap" if HAS_BWRAP else "rlimit")
    assert requests.get(f"{executor.url}/tools", timeout=5).status_code == 403
    wrong = requests.get(
        f"{executor.url}/tools", headers={"X-AIOS-Token": "wrong"}, timeout=5
    )
    assert wrong.status_code == 403
    reg = {"app_id": "evil", "workdir": "/tmp", "token": "e" * 24}
    as_app = requests.put(
        f"{executor.url}/apps/evil",
        json=reg,
        headers={"X-AIOS-Token": executor.app_token},
        timeout=5,
    )
    assert as_app.status_code == 403
    listing = requests.get(
        f"{executor.url}/tools", headers={"X-AIOS-Token": executor.app_token}, timeout=5
    )
    names = [t.name for t in ToolsListing.model_validate(listing.json()).tools]
    skills = ["search_skills", "skill", "run_command", "install_skill", "reload_skills"]
    assert names == [
        *ATOMIC_TOOLS,
        "schedule",
        *skills,
    ]  # the atomic tools, schedule, skills


def test_tools_over_http_and_the_log_on_disk(executor: Running) -> None:
    written = executor.call("file_write", path="workspace/hello.txt", content="你好")
    assert written.status == "ok" and written.result == {
        "path": "workspace/hello.txt",
        "size": 6,
    }
    assert executor.call("file_read", path="hello.txt").result == "你好"
    echo = executor.call("shell_exec", cmd=["echo", "$(id); rm -rf ~"])
    assert echo.result["stdout"] == "$(id); rm -rf ~\n"
    assert (
        executor.call("shell_exec", cmd=["cat", "/etc/passwd"]).code
        == "path_outside_workdir"
    )
    run = executor.post(
        "/run",
        {
            "session_id": "sess_proc",
            "steps": [
                {"step_id": 1, "tool": "file_list", "args": {"path": "workspace"}},
                {
                    "step_id": 2,
                    "tool": "cache_set",
                    "args": {"key": "n", "value": "{{step_1.result.files.0.name}}"},
                },
            ],
        },
    )
    results = RunResponse.model_validate(run.json()).tool_results
    assert results["step_2"].status == "ok"
    assert executor.call("cache_get", key="n").result == "hello.txt"
    log = executor.home / "state" / "tool_calls" / "sess_proc.jsonl"
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["tool"] for e in entries][:3] == ["file_write", "file_read", "shell_exec"]
    assert all(e["app_id"] == "app1" for e in entries)


@pytest.mark.parametrize("bwrap", [True, False], ids=["bubblewrap", "rlimit"])
def test_x6_no_descendant_survives_a_timeout(tmp_path: Path, bwrap: bool) -> None:
    """X6: in the real executor (a child subreaper) a double-forking command that times
    out leaves no process behind, under either sandbox."""
    if bwrap and not HAS_BWRAP:
        pytest.skip(NO_BWRAP)
    config = {**CONFIG, "tool_sandbox": {"use_bubblewrap": bwrap}}
    proc, running = _launch(tmp_path, config)
    try:
        write_spawner(running.workdir)
        tag = f"proc-x6-{bwrap}-{time.monotonic_ns()}"
        result = running.call("shell_exec", cmd=["python3", "spawner.py", tag], timeout=1.5)
        assert result.code == "tool_timeout"
        assert wait_none_alive(tag) == []
    finally:
        stop(proc)


def test_sigterm_stops_every_background_process(tmp_path: Path) -> None:
    """Background processes never outlive the executor (SIGTERM)."""
    proc, running = _launch(tmp_path, CONFIG)
    try:
        write_spawner(running.workdir)
        tag = f"proc-sigterm-{time.monotonic_ns()}"
        started = running.call(
            "process_start", cmd=["python3", "spawner.py", tag], background=True
        )
        assert started.status == "ok"
        deadline = time.monotonic() + 10
        while len(alive_with(tag)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(alive_with(tag)) >= 4
    finally:
        stop(proc)
    assert proc.returncode == 0
    assert wait_none_alive(tag) == []
