"""Apps start on first use and stop when idle, in a real running system.

Installed apps are `idle` (routable, no process) until an instruction, an open or
an action needs them; that first call waits for the start. An app idle for
`apps.idle_stop_s` is stopped; `"keep_alive": true` keeps one running from launch.
The crash back-off still applies, and a `kill -9` of the controller after lazy
starts leaves no process behind (SECURITY.md C5)."""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.apps_at_scale.conftest import echo_copy, lazy_config
from tests.controller.system import ROOT, TEST_APPS, RunningSystem, launch

pytestmark = pytest.mark.slow

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


def _apps_dir(root: Path, *, keep_alive: bool = False, crash: bool = False) -> Path:
    apps = root / "apps"
    apps.mkdir()
    shutil.copytree(ROOT / "apps" / "hello_app", apps / "hello_app", ignore=_IGNORE)
    echo_copy(apps, "echo_app")
    if keep_alive:
        echo_copy(
            apps,
            "keeper_app",
            name="守护应用",
            keywords=["守护专用词"],
            examples=[],
            keep_alive=True,
        )
    if crash:
        shutil.copytree(TEST_APPS / "crash_app", apps / "crash_app", ignore=_IGNORE)
    return apps


@pytest.fixture(scope="module")
def lazy_system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    """One system with the default lazy start for the tests that do not stop it: each
    uses apps of its own (hello and echo; the crash app and another echo copy; a
    third echo copy), so each finds its apps idle whichever ran before."""
    root = tmp_path_factory.mktemp("lazy")
    apps = _apps_dir(root, crash=True)
    for app_id, name in (("other_app", "其他应用"), ("lister_app", "列表应用")):
        echo_copy(
            apps,
            app_id,
            name=name,
            keywords=[f"{name}专用词"],
            examples=[],
            description=name,
        )
    system = launch(root, apps, config=lazy_config())
    try:
        yield system
    finally:
        system.stop()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_apps_are_idle_until_the_first_instruction_which_waits_for_the_start(
    lazy_system: RunningSystem,
) -> None:
    system = lazy_system
    rows = system.apps()
    assert {rows[a]["status"] for a in ("hello_app", "echo_app")} == {"idle"}, rows
    assert all("pid" not in rows[a] for a in ("hello_app", "echo_app")), rows
    started = time.monotonic()
    answer = system.say("回声一下 lazy")  # routed from the manifest of an idle app
    took = time.monotonic() - started
    task = answer["tasks"][0]
    assert task["app_id"] == "echo_app" and task["status"] == "done", answer
    assert task["result"]["data"]["content"] == "echo: 回声一下 lazy"
    row = system.apps()["echo_app"]
    assert row["status"] == "running" and _alive(row["pid"]), row
    assert system.apps()["hello_app"]["status"] == "idle"  # not started along
    assert took < 15, took
    # an open (an icon click) starts an idle app too
    opened = system.post("/api/apps/hello_app/open", {})
    assert opened.status_code == 200, opened.text
    assert system.apps()["hello_app"]["status"] == "running"


def test_an_idle_app_is_stopped_and_a_keep_alive_one_is_not(tmp_path: Path) -> None:
    apps = _apps_dir(tmp_path, keep_alive=True)
    system = launch(tmp_path, apps, config=lazy_config(idle_stop_s=1.5))
    try:
        keeper = system.wait_app("keeper_app", "running", timeout=20)  # from launch on
        assert system.say("回声一下 one")["tasks"][0]["status"] == "done"
        echo = system.apps()["echo_app"]
        assert echo["status"] == "running"
        system.wait_app("echo_app", "idle", timeout=15)
        system.wait_for(lambda: not _alive(echo["pid"]), 10, "the idle app's process gone")
        time.sleep(1.0)
        now = system.apps()["keeper_app"]
        assert now["status"] == "running" and now["pid"] == keeper["pid"], now
        # the next call starts it again, as a first start (no restart counted)
        again = system.say("回声一下 two")
        assert again["tasks"][0]["result"]["data"]["content"] == "echo: 回声一下 two", again
        row = system.apps()["echo_app"]
        assert row["status"] == "running" and row["pid"] != echo["pid"], row
        assert row.get("restarts", 0) == 0, row
    finally:
        system.stop()


def test_the_crash_back_off_still_applies_to_a_lazily_started_app(
    lazy_system: RunningSystem,
) -> None:
    system = lazy_system
    assert system.apps()["crash_app"]["status"] == "idle"
    answer = system.say("崩溃测试")
    task = answer["tasks"][0]
    assert task["app_id"] == "crash_app" and task["status"] == "error", answer
    assert task["result"]["data"]["code"] == "app_unavailable", task
    row = system.wait_app("crash_app", "failed", timeout=30)
    assert "gave up after 3 restarts" in row["error"], row
    log = (system.state_dir / "logs" / "crash_app.log").read_text()
    starts = [float(line.rsplit(" ", 1)[1]) for line in log.splitlines() if "boom" in line]
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert len(starts) == 4 and all(g >= 0.4 for g in gaps), gaps  # backed off
    fine = system.say("其他应用专用词 fine")["tasks"][0]  # the others are fine
    assert fine["app_id"] == "other_app" and fine["status"] == "done", fine


def test_kill_9_of_the_controller_after_lazy_starts_leaves_no_orphan(
    tmp_path: Path,
) -> None:
    system = launch(tmp_path, _apps_dir(tmp_path), config=lazy_config())
    try:
        assert system.say("回声一下 x")["tasks"][0]["status"] == "done"
        assert system.post("/api/apps/hello_app/open", {}).status_code == 200
        watched = [psutil.Process(system.proc.pid), *system.children()]
        assert len(watched) >= 4, watched  # controller, executor, two apps (and bwrap)
        os.kill(system.proc.pid, signal.SIGKILL)
        system.proc.wait(5)
        deadline = time.monotonic() + 10
        alive = watched
        while time.monotonic() < deadline and alive:
            alive = [p for p in watched if _alive(p.pid)]
            time.sleep(0.05)
        assert not alive, f"orphans after kill -9: {[p.pid for p in alive]}"
    finally:
        system.stop()


def test_an_app_started_at_launch_counts_its_idle_time_from_its_start(
    tmp_path: Path,
) -> None:
    config = lazy_config(start_at_launch=True, idle_stop_s=4)
    system = launch(tmp_path, _apps_dir(tmp_path), config=config)
    try:
        first = system.wait_app("echo_app", "running", timeout=20)
        time.sleep(1.5)  # never called, but not idle for idle_stop_s yet
        row = system.apps()["echo_app"]
        assert row["status"] == "running" and row["pid"] == first["pid"], row
        system.wait_app("echo_app", "idle", timeout=15)  # then stopped
    finally:
        system.stop()


def test_the_tools_of_an_idle_app_are_listed_and_an_unknown_app_is_a_404(
    lazy_system: RunningSystem,
) -> None:
    system = lazy_system
    assert system.apps()["lister_app"]["status"] == "idle"
    listed = system.get("/api/tools?app_id=lister_app")
    assert listed.status_code == 200, listed.text  # was a 500: "not registered"
    names = {tool["name"] for tool in listed.json()["tools"]}
    assert {"file_read", "shell_exec", "schedule"} <= names, names
    assert system.apps()["lister_app"]["status"] == "running"  # started to list
    unknown = system.get("/api/tools?app_id=no_such_app")
    assert unknown.status_code == 404, unknown.text
    assert unknown.json()["error"]["code"] == "not_found"
