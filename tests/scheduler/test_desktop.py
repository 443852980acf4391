"""The scheduler as the user meets it on the desktop, in Debian's Chromium (Playwright).

One real system (`aios start --headless`) with hello_app and the shipped
scheduler_app: the Scheduled Tasks window opened from the taskbar (create by words,
listed, disable, run now, history), a reminder firing a second after it was set
(toast), and a risky command job asking through the confirm dialog at its creation
(allow enables it, deny drops it). Screenshots go to `test-artifacts/desktop/`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
import requests

from tests.browser import desktop_page
from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    build_apps_dir,
    copy_shipped_apps,
    serving,
)
from tests.desktop.conftest import ARTIFACTS

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.slow]

APPS = ("hello_app", "scheduler_app")
CONFIG = copy.deepcopy(TEST_CONFIG)
CONFIG["tool_sandbox"].update(shell_whitelist=["echo"], ask_outside_whitelist=True)


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("scheduler_desktop")
    apps = build_apps_dir(root / "apps", test_apps=())
    copy_shipped_apps(apps, ("scheduler_app",))
    with serving(root, apps, APPS, config=CONFIG) as running:
        yield running


@pytest.fixture
def page(browser, system: RunningSystem) -> Iterator[object]:
    with desktop_page(browser, system, APPS) as desktop:
        yield desktop


def shot(page: object, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"scheduler-{name}.png"))


def say(page: object, text: str) -> None:
    page.fill("#command_input", text)
    with page.expect_response(lambda r: r.url.endswith("/api/instruction")):
        page.press("#command_input", "Enter")


def jobs(system: RunningSystem) -> dict[str, dict]:
    return {j["name"]: j for j in system.get("/api/schedules").json()["jobs"]}


def clear_jobs(system: RunningSystem) -> None:
    for job in jobs(system).values():
        requests.delete(
            f"{system.url}/api/schedules/{job['id']}", headers=system.headers, timeout=10
        )


def test_the_scheduled_tasks_window(page, system: RunningSystem) -> None:
    clear_jobs(system)
    page.click("#task_scheduler_app")
    window = page.locator("#win_scheduler_app")
    window.locator(".v-empty").wait_for()
    say(page, "每隔半小时提醒我休息")
    window.get_by_text("⏰ 休息提醒").wait_for()
    assert "每 30 分钟" in window.inner_text()
    job = jobs(system)["休息提醒"]
    assert (job["interval_s"], job["enabled"]) == (1800, True)

    window.get_by_role("button", name="停用「休息提醒」").click()
    window.get_by_role("button", name="启用「休息提醒」").wait_for()
    assert "已停用" in window.inner_text()
    assert jobs(system)["休息提醒"]["enabled"] is False

    with page.expect_response(lambda r: r.url.endswith("/action")):
        window.get_by_role("button", name="立即运行「休息提醒」").click()
    page.locator(".toast-title", has_text="⏰ 提醒").wait_for()  # what it said
    page.locator(".toast-title", has_text="「休息提醒」已运行").wait_for()  # which job ran
    runs = system.get(f"/api/schedules/{job['id']}/runs").json()["runs"]
    assert [(r["trigger"], r["status"]) for r in runs] == [("manual", "ok")], runs
    # the run's own view (the reminder) and the click's answer (the list) race for
    # the window; either way the list is one click away
    back = window.get_by_role("button", name="查看定时任务")
    to_history = window.get_by_role("button", name="历史「休息提醒」")
    back.or_(to_history).first.wait_for()
    if back.count():
        back.click()
    to_history.click()
    history = window.locator("table")
    history.get_by_text("ok", exact=True).wait_for()
    assert "运行历史「休息提醒」" in window.inner_text()
    shot(page, "window-history")

    window.get_by_role("button", name="返回列表").click()
    window.get_by_role("button", name="取消「休息提醒」").click()
    window.locator(".v-empty").wait_for()
    assert "休息提醒" not in jobs(system)
    shot(page, "window-after-cancel")


def test_a_reminder_pops_a_notification_at_its_time(page, system: RunningSystem) -> None:
    clear_jobs(system)
    at = (datetime.now().astimezone() + timedelta(seconds=1)).isoformat()
    job = {
        "name": "喝水提醒",
        "execution_type": "agent",
        "schedule_type": "once",
        "run_at": at,
        "app_id": "scheduler_app",
        "instruction": "提醒我喝水",
    }
    created = system.post("/api/schedules", job)
    assert created.status_code == 201, created.text
    toast = page.locator(".toast", has_text="喝水").first
    toast.wait_for(timeout=10000)
    assert "提醒" in toast.inner_text()
    shot(page, "reminder-toast")
    runs = system.wait_for(
        lambda: (
            system.get(f"/api/schedules/{created.json()['id']}/runs").json()["runs"] or None
        ),
        timeout=10,
        what="the reminder's run",
    )
    assert runs[0]["status"] == "ok" and "提醒：喝水" in runs[0]["summary"]


def test_a_risky_command_job_asks_in_the_confirm_dialog(
    page, system: RunningSystem
) -> None:
    clear_jobs(system)
    job = {
        "name": "报时",
        "execution_type": "command",
        "schedule_type": "interval",
        "interval_s": 3600,
        "app_id": "hello_app",
        "command": ["date", "-u"],
        "timeout": 5,
    }
    created = system.post("/api/schedules", job).json()
    assert created["enabled"] is False and created["awaiting_confirmation"]
    dialog = page.locator("#confirm_dialog")
    dialog.wait_for()
    text = dialog.inner_text()
    assert "定时任务「报时」" in text and "date -u" in text
    shot(page, "confirm-dialog")
    with page.expect_response(lambda r: "/api/confirmations/" in r.url):
        page.locator("#confirm_allow_once").click()
    page.locator(".toast-title", has_text="已允许").wait_for()
    enabled = jobs(system)["报时"]
    assert enabled["enabled"] is True and enabled["approved_commands"] == ["date"]
    assert system.get("/api/confirmations").json()["confirmations"] == []
    ran = system.post(f"/api/schedules/{enabled['id']}/run", {})
    assert ran.status_code == 202, ran.text
    runs = system.wait_for(
        lambda: system.get(f"/api/schedules/{enabled['id']}/runs").json()["runs"] or None,
        timeout=15,
        what="the approved run",
    )
    assert runs[0]["status"] == "ok", runs  # the approved program ran in the sandbox

    system.post("/api/schedules", {**job, "name": "不要的"})
    page.locator("#confirm_dialog").wait_for()
    with page.expect_response(lambda r: "/api/confirmations/" in r.url):
        page.locator("#confirm_deny").click()
    page.locator(".toast-title", has_text="已拒绝").first.wait_for()
    assert "不要的" not in jobs(system)
    assert page.locator("#confirm_dialog").count() == 0
