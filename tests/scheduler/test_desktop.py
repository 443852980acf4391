"""The scheduler as the user meets it on the desktop, in Debian's Chromium (Playwright).

One real system (`aios start --headless`) with hello_app and the shipped
scheduler_app: the Scheduled Tasks window opened from the taskbar (create by words,
listed, disable, run now, history), a reminder firing a second after it was set
(toast), and a risky command job asking through the confirm dialog at its creation
(allow enables it, deny drops it). Screenshots go to `test-artifacts/desktop/`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

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
expect = playwright_api.expect
pytestmark = [pytest.mark.slow, pytest.mark.browser]

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
    mine = row(window, job["id"])  # the job's controls sit in its row

    mine.get_by_role("button", name="暂停").click()
    mine.get_by_role("button", name="恢复").wait_for()
    assert "已暂停" in window.inner_text()
    assert jobs(system)["休息提醒"]["enabled"] is False

    with page.expect_response(lambda r: r.url.endswith("/action")):
        mine.get_by_role("button", name="立即运行").click()
    page.locator(".toast-title", has_text="⏰ 提醒").wait_for()  # what it said
    runs = system.wait_for(
        lambda: system.get(f"/api/schedules/{job['id']}/runs").json()["runs"] or None,
        timeout=10,
        what="the run",
    )
    # the reminder said itself: the scheduler's "it ran" is not a second toast
    expect(page.locator(".toast-title", has_text="⏰ 提醒")).to_have_count(1)
    expect(page.locator(".toast-title", has_text="已运行")).to_have_count(0)
    assert [(r["trigger"], r["status"]) for r in runs] == [("manual", "ok")], runs
    # the run's own view (the reminder) and the click's answer (the list) race for
    # the window; either way the list is one click away
    back = window.get_by_role("button", name="查看定时任务")
    to_history = mine.get_by_role("button", name="历史")
    back.or_(to_history).first.wait_for()
    if back.count():
        back.click()
    to_history.click()
    history = window.locator("table")
    history.get_by_text("✅ 成功", exact=True).wait_for()
    assert "运行历史「休息提醒」" in window.inner_text()
    shot(page, "window-history")

    window.get_by_role("button", name="返回列表").click()
    mine.get_by_role("button", name="删除").click()
    window.locator(".v-title", has_text="删除定时任务「休息提醒」？").wait_for()
    assert "休息提醒" in jobs(system)  # asked first
    window.get_by_role("button", name="删除").click()
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


def remind_soon(system: RunningSystem, what: str) -> str:
    at = (datetime.now().astimezone() + timedelta(seconds=1)).isoformat()
    job = {
        "name": f"{what}提醒",
        "execution_type": "agent",
        "schedule_type": "once",
        "run_at": at,
        "app_id": "scheduler_app",
        "instruction": f"提醒我{what}",
    }
    created = system.post("/api/schedules", job)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def test_a_reminder_is_one_toast_and_takes_nothing_over(
    page, system: RunningSystem
) -> None:
    """A reminder firing is one toast (and the spoken line); the open
    scheduler window keeps its list, the window in front stays in front, the keyboard
    stays where the user types, and a closed scheduler window stays closed."""
    clear_jobs(system)
    page.click("#task_scheduler_app")
    scheduler = page.locator("#win_scheduler_app")
    scheduler.locator(".v-empty").wait_for()
    page.click("#task_hello_app")
    hello = page.locator("#win_hello_app")
    hello.locator(".win-status").wait_for()
    page.locator("#toasts .toast").evaluate_all("nodes => nodes.forEach(n => n.remove())")
    page.fill("#command_input", "我正在打")
    page.focus("#command_input")

    job_id = remind_soon(system, "伸展")
    page.locator(".toast", has_text="伸展").first.wait_for(timeout=10000)
    system.wait_for(
        lambda: system.get(f"/api/schedules/{job_id}/runs").json()["runs"] or None,
        timeout=10,
        what="the reminder's run",
    )
    expect(page.locator("#toasts .toast")).to_have_count(1)
    expect(page.locator(".toast-title")).to_have_text(["⏰ 提醒"])
    shot(page, "reminder-one-toast")
    assert page.evaluate("document.activeElement.id") == "command_input"
    expect(page.locator("#command_input")).to_have_value("我正在打")
    z = page.evaluate(
        "() => ['win_hello_app', 'win_scheduler_app']"
        ".map(id => Number(document.getElementById(id).style.zIndex))"
    )
    assert z[0] > z[1], z  # the window the user was in stays in front
    expect(hello).to_have_class(re.compile(r"\bfocused\b"))
    expect(scheduler).to_have_attribute("data-view-type", "list")  # not the reminder
    expect(scheduler).not_to_contain_text("⏰ 提醒：伸展")

    scheduler.locator(".win-close").click()
    expect(scheduler).to_have_count(0)
    page.locator("#toasts .toast").evaluate_all("nodes => nodes.forEach(n => n.remove())")
    second = remind_soon(system, "喝茶")
    page.locator(".toast", has_text="喝茶").first.wait_for(timeout=10000)
    system.wait_for(
        lambda: system.get(f"/api/schedules/{second}/runs").json()["runs"] or None,
        timeout=10,
        what="the second reminder's run",
    )
    expect(page.locator("#toasts .toast")).to_have_count(1)
    expect(page.locator("#win_scheduler_app")).to_have_count(0)  # not reopened


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


def two_of_one_name(system: RunningSystem) -> tuple[str, str]:
    """Two 喝水提醒 jobs, a daily one and one in ten minutes (as the issue found them)."""
    soon = (datetime.now().astimezone() + timedelta(minutes=10)).replace(microsecond=0)
    made = []
    for schedule in (
        {"schedule_type": "cron", "cron": "0 9 * * *"},
        {"schedule_type": "once", "run_at": soon.isoformat()},
    ):
        job = {
            "name": "喝水提醒",
            "execution_type": "agent",
            "app_id": "scheduler_app",
            "instruction": "提醒我喝水",
            **schedule,
        }
        created = system.post("/api/schedules", job)
        assert created.status_code == 201, created.text
        made.append(created.json()["id"])
    return made[0], made[1]


def row(window: object, job_id: str) -> object:
    return window.locator(f'.v-list-item[data-item-id="{job_id}"]')


def test_two_jobs_of_one_name_have_their_controls_in_their_rows_and_cancel_asks(
    browser, system: RunningSystem
) -> None:
    """In Chinese and in English: each job's controls sit in its row
    (none piled below the list), its time is in the row, and "取消喝水提醒" asks
    which of the two, deleting nothing until one is picked."""
    for locale, cancel, words in (
        ("zh-CN", "删除", ("取消喝水提醒", "每天 9:00", "哪一个", "刷新")),
        (
            "en-US",
            "Delete",
            ("cancel 喝水提醒", "every day at 9:00", "which one", "Refresh"),
        ),
    ):
        said, daily_time, asking, refresh = words
        clear_jobs(system)
        daily, soon = two_of_one_name(system)
        context = browser.new_context(
            viewport={"width": 1280, "height": 800}, locale=locale
        )
        page = context.new_page()
        page.set_default_timeout(15000)
        errors: list[str] = []
        page.on("pageerror", lambda exc, seen=errors: seen.append(str(exc)))
        try:
            page.goto(f"{system.url}/?token={system.token}")
            page.click("#task_scheduler_app")
            window = page.locator("#win_scheduler_app")
            row(window, soon).wait_for()
            for job_id in (daily, soon):
                assert row(window, job_id).get_by_role("button").count() == 4
            assert daily_time in row(window, daily).inner_text()
            bar = window.locator(".win-actions button")
            assert [b.inner_text() for b in bar.all()] == [refresh]  # only 刷新 below
            shot(page, f"same-name-rows-{locale}")

            say(page, said)
            window.locator(".v-title", has_text=asking).wait_for()
            assert set(jobs_by_id(system)) == {daily, soon}  # nothing deleted yet
            for job_id in (daily, soon):
                row(window, job_id).get_by_role("button", name=cancel).wait_for()
            assert daily_time in row(window, daily).inner_text()
            shot(page, f"same-name-asks-which-{locale}")

            row(window, soon).get_by_role("button", name=cancel).click()
            sure = window.locator(".win-actions").get_by_role("button", name=cancel)
            sure.wait_for()  # 删除 asks first
            assert set(jobs_by_id(system)) == {daily, soon}
            with page.expect_response(lambda r: r.url.endswith("/action")):
                sure.click()
            row(window, soon).wait_for(state="detached")
            assert set(jobs_by_id(system)) == {daily}  # the daily one stays
            row(window, daily).wait_for()
        finally:
            context.close()
        assert errors == [], errors


def jobs_by_id(system: RunningSystem) -> dict[str, dict]:
    return {j["id"]: j for j in system.get("/api/schedules").json()["jobs"]}


def test_a_daily_command_said_in_words_asks_runs_and_shows_its_output(
    browser, system: RunningSystem
) -> None:
    """In Chinese and in English: "每天早上9点运行命令 date" is a
    command job; `date` is outside this launch's whitelist with asking on, so the
    confirm dialog asks first; once allowed, 立即运行 runs it in the sandbox and its
    history shows the output and that it went well."""
    year = str(datetime.now().year)
    for locale, said, words in (
        (
            "zh-CN",
            "每天早上9点运行命令 date",
            ("刷新", "立即运行", "历史", "✅ 成功"),
        ),
        (
            "en-US",
            "every day at 9am run the command date",
            ("Refresh", "Run now", "History", "✅ Succeeded"),
        ),
    ):
        refresh, run_now, history, done = words
        clear_jobs(system)
        context = browser.new_context(
            viewport={"width": 1280, "height": 800}, locale=locale
        )
        page = context.new_page()
        page.set_default_timeout(15000)
        errors: list[str] = []
        page.on("pageerror", lambda exc, seen=errors: seen.append(str(exc)))
        try:
            page.goto(f"{system.url}/?token={system.token}")
            page.click("#task_scheduler_app")
            window = page.locator("#win_scheduler_app")
            say(page, said)
            dialog = page.locator("#confirm_dialog")
            dialog.wait_for()
            assert "date" in dialog.inner_text()
            [job] = system.get("/api/schedules").json()["jobs"]
            assert (job["execution_type"], job["command"]) == ("command", "date")
            with page.expect_response(lambda r: "/api/confirmations/" in r.url):
                page.locator("#confirm_allow_once").click()
            window.get_by_role("button", name=refresh).click()
            mine = row(window, job["id"])
            with page.expect_response(lambda r: r.url.endswith("/action")):
                mine.get_by_role("button", name=run_now).click()
            # the toast names the job (its words follow Settings' ui_language: a
            # job has no desktop session)
            page.locator(".toast-title", has_text=job["name"]).first.wait_for()
            runs_path = f"/api/schedules/{job['id']}/runs"
            runs = system.wait_for(
                lambda path=runs_path: system.get(path).json()["runs"] or None,
                timeout=15,
                what="the run of date",
            )
            assert runs[0]["status"] == "ok" and year in runs[0]["output_tail"], runs
            mine.get_by_role("button", name=history).click()
            table = window.locator("table")
            table.get_by_text(done, exact=True).wait_for()
            assert year in table.inner_text()
            shot(page, f"command-history-{locale}")
        finally:
            context.close()
        assert errors == [], errors


SHOTS = Path("/tmp/shots/routing")

DELETE_WORDS = {
    "zh-CN": ("删除", "保留", "删除定时任务「喝水提醒」？", "取消", "已删除「喝水提醒」"),
    "en-US": (
        "Delete",
        "Keep",
        'Delete the scheduled task "喝水提醒"?',
        "Cancel",
        'Deleted "喝水提醒"',
    ),
}


def one_line(locator: object, words: str) -> bool:
    """Whether `words` inside the element stand on one line (one box)."""
    return bool(
        locator.evaluate(
            """(node, words) => {
              const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
              for (let text = walker.nextNode(); text; text = walker.nextNode()) {
                const at = text.data.indexOf(words);
                if (at < 0) continue;
                const range = document.createRange();
                range.setStart(text, at);
                range.setEnd(text, at + words.length);
                const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                return lines.size === 1;
              }
              return false;
            }""",
            words,
        )
    )


@pytest.mark.parametrize("locale", list(DELETE_WORDS))
def test_a_daily_job_is_deleted_only_through_delete_after_a_question(
    browser, system: RunningSystem, locale: str
) -> None:
    """A job is never deleted by a 取消 / Cancel (in a dialog it means dismiss). Each
    row has 删除 / Delete, which asks first: 保留 / Keep deletes nothing, the question's 删除 does.
    At 1280×800 no row button wraps its label and "ran 0 times" stays on one line."""
    delete, keep, asking, cancel, deleted = DELETE_WORDS[locale]
    clear_jobs(system)
    daily, soon = two_of_one_name(system)
    SHOTS.mkdir(parents=True, exist_ok=True)
    with desktop_page(browser, system, APPS, locale=locale) as page:
        page.click("#task_scheduler_app")
        window = page.locator("#win_scheduler_app")
        mine = row(window, daily)
        mine.wait_for()
        assert mine.get_by_role("button", name=cancel, exact=True).count() == 0
        buttons = mine.get_by_role("button")
        heights = {round(b.bounding_box()["height"]) for b in buttons.all()}
        assert len(heights) == 1 and max(heights) < 32, heights  # one line each
        ran = "已运行 0 次" if locale == "zh-CN" else "ran 0 times"
        assert one_line(mine.locator(".v-list-sub"), ran)
        page.screenshot(path=str(SHOTS / f"scheduler-window-{locale}.png"))

        mine.get_by_role("button", name=delete, exact=True).click()
        window.locator(".v-title", has_text=asking).wait_for()
        question = window.locator(".win-actions").get_by_role("button")
        assert [b.inner_text() for b in question.all()] == [keep, delete]
        assert set(jobs_by_id(system)) == {daily, soon}  # asked, nothing deleted
        page.screenshot(path=str(SHOTS / f"scheduler-delete-asks-{locale}.png"))

        question.first.click()  # 保留 / Keep
        mine.wait_for()
        assert set(jobs_by_id(system)) == {daily, soon}
        mine.get_by_role("button", name=delete, exact=True).click()
        sure = window.locator(".win-actions").get_by_role("button", name=delete)
        with page.expect_response(lambda r: r.url.endswith("/action")):
            sure.click()
        mine.wait_for(state="detached")
        window.locator(".win-status", has_text=deleted).wait_for()
        assert set(jobs_by_id(system)) == {soon}
        page.screenshot(path=str(SHOTS / f"scheduler-deleted-{locale}.png"))
