"""Launches end to end: `kill -9` of the controller (C5), a session that survives a
restart, the `aios` client commands, a clean `aios stop`, and `aios new-app`.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from controller.apps.discovery import discover_apps
from tests.controller.system import build_apps_dir, launch
from tests.procs import PYTHON, ROOT

pytestmark = pytest.mark.slow


def aios(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "aios", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def still_alive(procs: list[psutil.Process], timeout: float = 10) -> list[psutil.Process]:
    """The processes that have not died (zombies count as dead) within `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for proc in procs:
            try:
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def test_kill9_of_controller_then_relaunch(tmp_path: Path) -> None:
    apps = build_apps_dir(tmp_path / "apps")
    state = tmp_path / "state"
    first = launch(tmp_path, apps, state_dir=state)
    try:
        session_id = first.say("回声一下 记住我")["session_id"]
        children = first.children()
        assert len(children) >= 3  # the executor and two apps
        first.proc.kill()
        first.proc.wait(5)
        assert still_alive(children) == []  # C5: no orphans
    finally:
        first.stop()

    second = launch(tmp_path, apps, state_dir=state)
    try:
        assert second.token != first.token  # a fresh token every launch
        assert (state / "token").read_text() == second.token
        reply = second.say("回声一下 还记得吗", session_id=session_id)
        context = reply["tasks"][0]["result"]["data"]["context"]
        assert "记住我" in context["history_summary"]  # the session survived
        assert context["cwd_state"]["last_echo"] == "回声一下 记住我"

        # the executor dies: restarted, apps registered again, tools work again
        executor = next(p for p in second.children() if "executor" in " ".join(p.cmdline()))
        executor.kill()
        executor.wait(5)

        def greets() -> bool:
            result = second.say("跟我打个招呼")["tasks"][0]["result"]
            return result["status"] == "ok" and result["data"]["content"].startswith("你好")

        second.wait_for(greets, what="hello_app reading its greeting again")

        said = aios("say", "跟我打个招呼", "--state-dir", str(state))
        assert said.returncode == 0, said.stderr
        assert "hello_app" in said.stdout and "你好" in said.stdout
        assert (
            "  你好！很高兴见到你。" in said.stdout.splitlines()
        )  # the text view, as Markdown
        raw = aios("say", "回声一下 json", "--json", "--state-dir", str(state))
        assert json.loads(raw.stdout)["tasks"][0]["app_id"] == "echo_app"
        listed = aios("apps", "--state-dir", str(state))
        assert listed.returncode == 0
        assert any(
            "hello_app" in line and "running" in line for line in listed.stdout.splitlines()
        )
        assert listed.stdout.splitlines()[0].split()[:2] == ["APP", "STATUS"]

        twice = aios("start", "--headless", "--ports", "auto", "--state-dir", str(state))
        assert twice.returncode == 1 and "already running" in twice.stderr
        assert twice.stdout == ""

        children = second.children()
        stopped = aios("stop", "--state-dir", str(state))
        assert stopped.returncode == 0, stopped.stderr
        assert second.proc.wait(15) == 0
        assert still_alive(children) == []
        assert not (state / "token").exists()
    finally:
        second.stop()
    idle = aios("stop", "--state-dir", str(state))
    assert idle.returncode == 1 and "no running controller" in idle.stderr


def test_new_app_scaffolds_a_discoverable_app(tmp_path: Path) -> None:
    made = aios("new-app", "weather_app", "--apps-dir", str(tmp_path))
    assert made.returncode == 0, made.stderr
    [spec] = discover_apps(tmp_path)
    assert spec.app_id == "weather_app" and spec.ok, spec.error
    again = aios("new-app", "weather_app", "--apps-dir", str(tmp_path))
    assert again.returncode == 1 and again.stderr
