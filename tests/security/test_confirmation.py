"""Confirmation before risky steps, end to end.

A real system with the risky test app: its plans pause before `process_start`, a
`db_query` write, overwriting a file that is not its own and a command outside the
whitelist (asking is allowed in this config). The pause is seen through the API,
the event stream, the state folder, a controller restart and the real desktop in
Chromium (dialog, reload while pending, the three buttons).
"""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.controller.system import TEST_CONFIG, RunningSystem, build_apps_dir, launch
from tests.security.conftest import add_security_apps, open_desktop, say_in_desktop
from tests.security.wire import services

pytestmark = pytest.mark.slow

CONFIG = copy.deepcopy(TEST_CONFIG)
CONFIG["tool_sandbox"]["ask_outside_whitelist"] = True


def start(root: Path, state: Path | None = None) -> RunningSystem:
    apps = root / "apps"
    if not apps.exists():
        build_apps_dir(apps, test_apps=("echo_app",))
        add_security_apps(apps, ("risky_app",))
    running = launch(root, apps, state_dir=state, config=copy.deepcopy(CONFIG))
    running.wait_app("risky_app", "running")
    return running


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    running = start(tmp_path_factory.mktemp("confirm"))
    try:
        yield running
    finally:
        running.stop()


def ask(system: RunningSystem, what: str) -> dict:
    (task,) = system.say(f"风险应用 {what}")["tasks"]
    assert task["app_id"] == "risky_app", task
    return task["result"]


def pending(system: RunningSystem) -> list[dict]:
    response = system.get("/api/confirmations")
    assert response.status_code == 200
    return response.json()["confirmations"]


def decide(system: RunningSystem, confirmation_id: str, decision: str) -> requests.Response:
    return system.post(f"/api/confirmations/{confirmation_id}", {"decision": decision})


def tool_calls(system: RunningSystem, tool: str) -> int:
    found = 0
    for path in (system.state_dir / "tool_calls").glob("*.jsonl"):
        found += sum(
            1
            for line in path.read_text().splitlines()
            if json.loads(line).get("tool") == tool
        )
    return found


def workspace(system: RunningSystem) -> Path:
    return system.workspace("risky_app")


# ------------------------------------------------------------------- the pause


def test_process_start_pauses_with_the_exact_command_and_allow_once_runs_it(
    system: RunningSystem,
) -> None:
    reply = ask(system, "启动进程")
    assert reply["view_type"] == "confirm" and reply["status"] == "ok"
    data = reply["data"]
    (step,) = data["steps"]
    assert step["tool"] == "process_start" and step["kind"] == "process_start"
    assert "echo started-by-risky-app" in step["sentence"]
    assert "echo started-by-risky-app" in data["summary"]
    assert data["decisions"] == ["allow_once", "allow_always", "deny"]
    assert tool_calls(system, "process_start") == 0  # nothing ran yet
    (listed,) = pending(system)
    assert (
        listed["confirmation_id"] == data["confirmation_id"]
        and listed["app_id"] == "risky_app"
    )
    on_disk = system.state_dir / "confirmations" / f"{data['confirmation_id']}.json"
    assert json.loads(on_disk.read_text())["plan"][0]["tool"] == "process_start"
    events = _events(system, 0)
    assert any(
        e["type"] == "confirm_request"
        and e["data"]["confirmation_id"] == data["confirmation_id"]
        for e in events
    )

    final = decide(system, data["confirmation_id"], "allow_once")
    assert final.status_code == 200, final.text
    body = final.json()
    assert body["view_type"] == "text" and body["app_id"] == "risky_app"
    assert body["data"]["results"]["step_1"]["result"]["stdout"] == "started-by-risky-app\n"
    assert pending(system) == [] and not on_disk.exists()
    assert decide(system, data["confirmation_id"], "allow_once").status_code == 404
    assert ask(system, "启动进程")["view_type"] == "confirm"  # once means once
    for left in pending(system):
        decide(system, left["confirmation_id"], "deny")


def test_deny_runs_nothing_and_the_app_answers_gracefully(system: RunningSystem) -> None:
    reply = ask(system, "写数据库")
    assert reply["view_type"] == "confirm"
    kinds = {s["kind"] for s in reply["data"]["steps"]}
    assert kinds == {"db_write"} and len(reply["data"]["steps"]) == 2
    final = decide(system, reply["data"]["confirmation_id"], "deny").json()
    assert final["message"] == "好的，已取消这一步"
    results = final["data"]["results"]
    assert {r["code"] for r in results.values()} == {"denied_by_user"}
    assert {r["status"] for r in results.values()} == {"error"}
    db = workspace(system) / "data.db"
    if db.exists():
        tables = sqlite3.connect(db).execute("SELECT name FROM sqlite_master").fetchall()
        assert ("t",) not in tables


def test_overwriting_a_file_that_is_not_the_apps_own_pauses_its_own_files_do_not(
    system: RunningSystem,
) -> None:
    assert ask(system, "新文件 own.txt")["view_type"] == "text"  # a new file: no question
    assert ask(system, "再写 own.txt")["view_type"] == "text"  # its own file: no question
    notes = workspace(system) / "notes.txt"
    original = notes.read_text()
    reply = ask(system, "覆盖笔记")
    assert reply["view_type"] == "confirm"
    (step,) = reply["data"]["steps"]
    assert step["kind"] == "file_overwrite" and "workspace/notes.txt" in step["sentence"]
    assert notes.read_text() == original  # not touched while it waits
    final = decide(system, reply["data"]["confirmation_id"], "allow_always").json()
    assert final["data"]["results"]["step_1"]["status"] == "ok"
    assert notes.read_text() == "overwritten"
    rules = json.loads((system.state_dir / "permissions.json").read_text())
    assert {"app_id": "risky_app", "tool": "file_write", "command": None} in rules["always"]
    assert "own.txt" in rules["own_files"]["risky_app"]
    assert ask(system, "覆盖笔记")["view_type"] == "text"  # remembered: not asked again


def test_a_command_outside_the_whitelist_is_asked_and_approved_for_that_plan_only(
    system: RunningSystem,
) -> None:
    reply = ask(system, "命令 wc")
    assert reply["view_type"] == "confirm"
    (step,) = reply["data"]["steps"]
    assert step["kind"] == "command_outside_whitelist" and step["command"] == "wc"
    final = decide(system, reply["data"]["confirmation_id"], "allow_once").json()
    result = final["data"]["results"]["step_1"]
    assert result["status"] == "ok" and "notes.txt" in result["result"]["stdout"]
    # the app itself, straight at the executor, still cannot run it
    app = next(s for s in services(system) if s.name == "risky_app")
    executor = next(s for s in services(system) if s.name == "executor")
    direct = requests.post(
        f"http://127.0.0.1:{executor.port}/call",
        json={
            "tool": "shell_exec",
            "args": {"cmd": ["wc", "notes.txt"]},
            "approved_commands": ["wc"],
        },
        headers={"X-AIOS-Token": app.token},
        timeout=10,
    ).json()
    assert direct["status"] == "error" and direct["code"] == "command_not_allowed"
    run = requests.post(
        f"http://127.0.0.1:{executor.port}/run",
        json={
            "steps": [{"step_id": 1, "tool": "shell_exec", "args": {"cmd": ["wc", "x"]}}],
            "approved_commands": ["wc"],
        },
        headers={"X-AIOS-Token": app.token},
        timeout=10,
    ).json()
    assert run["tool_results"]["step_1"]["code"] == "command_not_allowed"


def test_bad_decisions_unknown_ids_and_app_tokens_are_refused(
    system: RunningSystem,
) -> None:
    reply = ask(system, "启动进程")
    cid = reply["data"]["confirmation_id"]
    assert decide(system, cid, "maybe").status_code == 400
    assert decide(system, "conf_0000000000000000", "deny").status_code == 404
    assert decide(system, "../../token", "deny").status_code == 404
    app = next(s for s in services(system) if s.name == "risky_app")
    as_app = system.post(
        f"/api/confirmations/{cid}",
        {"decision": "allow_once"},
        headers={"X-AIOS-Token": app.token},
    )
    assert as_app.status_code == 403
    assert [p["confirmation_id"] for p in pending(system)] == [cid]
    assert decide(system, cid, "deny").status_code == 200


def test_the_pause_survives_a_controller_restart(tmp_path: Path) -> None:
    first = start(tmp_path)
    try:
        reply = ask(first, "启动进程")
        cid = reply["data"]["confirmation_id"]
    finally:
        first.stop()
    second = start(tmp_path, state=first.state_dir)
    try:
        assert [p["confirmation_id"] for p in pending(second)] == [cid]
        final = decide(second, cid, "allow_once").json()
        assert (
            final["data"]["results"]["step_1"]["result"]["stdout"]
            == "started-by-risky-app\n"
        )
        assert final["session_id"] == reply["data"]["session_id"]
        assert pending(second) == []
    finally:
        second.stop()


# ------------------------------------------------------------------- desktop


@pytest.mark.browser
def test_the_desktop_asks_survives_a_reload_and_allow_once_shows_the_result(
    browser: object, system: RunningSystem
) -> None:
    desktop = open_desktop(browser, system)
    page = desktop.page
    try:
        say_in_desktop(desktop, "风险应用 启动进程")
        dialog = page.locator("#confirm_dialog")
        dialog.wait_for()
        assert "echo started-by-risky-app" in dialog.inner_text()
        for label in ("允许一次", "总是允许此应用", "拒绝"):
            assert dialog.get_by_role("button", name=label).count() == 1
        # the paused task's window asks too
        page.locator("#win_risky_app .view-confirm").wait_for()
        page.reload()
        page.wait_for_selector("#task_risky_app")
        dialog = page.locator("#confirm_dialog")
        dialog.wait_for()  # still pending after the reload: shown again
        assert "echo started-by-risky-app" in dialog.inner_text()
        with page.expect_response(lambda r: "/api/confirmations/" in r.url):
            page.locator("#confirm_allow_once").click()
        page.locator("#win_risky_app .view-text").wait_for()
        assert "started-by-risky-app" in page.locator("#win_risky_app").inner_text()
        assert page.locator("#confirm_dialog").count() == 0
        assert pending(system) == []
        assert desktop.errors == []
    finally:
        page.context.close()


@pytest.mark.browser
def test_the_desktop_deny_button_cancels_the_step(
    browser: object, system: RunningSystem
) -> None:
    desktop = open_desktop(browser, system)
    page = desktop.page
    try:
        say_in_desktop(desktop, "风险应用 写数据库")
        page.locator("#confirm_dialog").wait_for()
        assert page.locator("#confirm_dialog .confirm-step").count() == 2
        with page.expect_response(lambda r: "/api/confirmations/" in r.url):
            page.locator("#confirm_deny").click()
        page.locator("#win_risky_app .view-text").wait_for()
        assert "denied_by_user" in page.locator("#win_risky_app").inner_text()
        assert pending(system) == []
        assert desktop.errors == []
    finally:
        page.context.close()


# ------------------------------------------------------------------- helpers


def _events(system: RunningSystem, since: int) -> list[dict]:
    found = []
    with system.get(
        f"/api/events?since={since}&limit=500", stream=True, timeout=(5, 3)
    ) as stream:
        try:
            for line in stream.iter_lines(decode_unicode=True):
                if line and line.startswith("data:"):
                    found.append(json.loads(line[5:]))
        except requests.RequestException:
            pass  # the stream stays open; what came in is enough
    return found
