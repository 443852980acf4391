"""In Chromium: slow work shows a
loading state and is cancelled on the controller; multi-line answers go into the
view; menus open above the taskbar and close with Escape; About shows the version;
the focused window's icon minimises it; labels in one language; the system app has
its own icon.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests.desktop.conftest import APP_IDS, desktop_url

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIN = "#win_gallery_app"


def say(page, text: str):
    page.fill("#command_input", text)
    page.press("#command_input", "Enter")


def test_system_menu_opens_above_the_taskbar(page, shot):
    bar = page.locator("#taskbar").bounding_box()
    page.click("#taskbar", button="right", position={"x": 300, "y": 30})
    menu = page.locator("#system_menu")
    expect(menu).to_be_visible()
    box = menu.bounding_box()
    assert box["y"] + box["height"] <= bar["y"], (box, bar)
    shot(page, "system-menu")


def test_escape_closes_menus_and_the_calendar(page):
    page.click("#start_button")
    expect(page.locator("#start_menu")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#start_menu")).to_be_hidden()
    page.click("#desktop", button="right", position={"x": 600, "y": 300})
    expect(page.locator("#system_menu")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#system_menu")).to_be_hidden()
    page.click("#clock")
    expect(page.locator("#calendar")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#calendar")).to_be_hidden()


def test_about_shows_the_version(page, system):
    version = system.get("/api/version").json()["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", version), version
    page.click("#start_button")
    page.click("#start_menu [data-system-action=about]")
    expect(page.locator("#about_version")).to_have_text(f"版本 {version}")


def test_clicking_the_focused_windows_icon_minimises_it(page):
    page.click("#task_gallery_app")
    win = page.locator(WIN)
    expect(win.locator(".v-text")).to_contain_text("画廊文本")
    expect(win).to_have_class(re.compile(r"\bfocused\b"))
    page.click("#task_gallery_app")
    expect(win).to_be_hidden()
    expect(page.locator("#task_gallery_app")).to_have_class(re.compile(r"\bminimized\b"))
    page.click("#task_gallery_app")
    expect(win).to_be_visible()
    expect(win).to_have_class(re.compile(r"\bfocused\b"))


def test_labels_follow_the_system_language(page, browser, system):
    title = page.get_attribute("#task_hello_app", "title")
    assert "运行中" in title and "running" not in title, title
    page.click("#start_button")
    expect(page.locator("#start_menu .start-item-status").first).to_have_text("运行中")
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    try:
        english = context.new_page()
        english.goto(desktop_url(system))
        for app_id in APP_IDS:
            english.wait_for_selector(f"#task_{app_id}")
        title = english.get_attribute("#task_hello_app", "title")
        assert "running" in title and "运行中" not in title, title
        expect(english.locator("#start_button .start-text")).to_have_text("Start")
        placeholder = english.get_attribute("#command_input", "placeholder")
        assert placeholder.startswith("Type an instruction"), placeholder
    finally:
        context.close()


def test_the_system_app_has_its_own_icon(page):
    page.click("#start_button")
    settings_icon = page.text_content("#start_menu [data-system-action=settings]").split()[
        0
    ]
    system_icon = page.text_content("#task_system_agent .task-emoji")
    assert system_icon != settings_icon, (system_icon, settings_icon)


def test_a_multi_line_answer_is_shown_in_the_view(page, shot):
    say(page, "gallery lines")
    answer = page.locator(f"{WIN} .win-answer")
    expect(answer).to_have_text("内存占用 42%\n已用 3.2 GB / 共 7.6 GB\n交换分区 0 B")
    expect(page.locator(f"{WIN} .v-dashboard")).to_be_visible()
    status = page.locator(f"{WIN} .win-status")
    expect(status).to_contain_text("内存占用 42%")
    expect(status).not_to_contain_text("交换分区")
    shot(page, "answer-in-view")


def test_a_quick_answer_changes_nothing_before_it_is_shown(page):
    """A window opens at once, with nothing animated, and a quick instruction's
    status ("处理中…") never flashes: each would cost frames while the answer is being
    made. The status a slow one gets is in the next test."""
    page.click("#task_gallery_app")
    expect(page.locator(f"{WIN} .v-text")).to_contain_text("画廊文本")
    assert page.evaluate(f"document.querySelector('{WIN}').getAnimations().length") == 0
    page.evaluate(
        """(selector) => {
          window.statusSeen = [];
          const win = document.querySelector(selector);
          new MutationObserver(() => {
            const line = win.querySelector(".win-status");
            window.statusSeen.push(line ? line.textContent : "");
            if (win.classList.contains("busy")) window.statusSeen.push("busy");
          }).observe(win, { subtree: true, childList: true, characterData: true, attributes: true });
        }""",
        WIN,
    )
    say(page, "gallery lines")
    expect(page.locator(f"{WIN} .win-status")).to_contain_text("内存占用 42%")
    seen = page.evaluate("window.statusSeen")
    assert seen and not [s for s in seen if "处理中" in s or s == "busy"], seen


def test_slow_work_shows_progress_and_is_cancelled_on_the_controller(page, shot):
    page.click("#task_gallery_app")
    expect(page.locator(f"{WIN} .v-text")).to_contain_text("画廊文本")
    # the command bar's moving stripe waits before it shows (a quick answer never
    # pays for it); a slow one gets it
    page.evaluate(
        """() => {
          const bar = document.getElementById("command_bar");
          window.busyAfter = null;
          bar.addEventListener("submit", () => {
            const sent = performance.now();
            const watch = new MutationObserver(() => {
              if (bar.classList.contains("busy")) { watch.disconnect(); window.busyAfter = performance.now() - sent; }
            });
            watch.observe(bar, { attributes: true });
          }, { once: true, capture: true });
        }"""
    )
    with page.expect_response("**/api/instruction", timeout=30000) as answer:
        say(page, "gallery slow")
        expect(page.locator("#command_bar")).to_have_class(re.compile(r"\bbusy\b"))
        assert page.evaluate("window.busyAfter") >= 295
        busy = page.locator(f"{WIN} .win-busy")
        expect(busy).to_be_visible()
        expect(busy.locator(".win-busy-spinner")).to_be_visible()
        expect(page.locator(f"{WIN} .win-status")).to_have_text("处理中：gallery slow")
        expect(page.locator(f"{WIN} .win-main")).to_have_attribute("inert", "")
        expect(busy.locator(".win-busy-elapsed")).to_have_text(
            re.compile(r"已等待 [1-9]\d* 秒")
        )
        shot(page, "loading")
        with page.expect_response("**/api/tasks/*/cancel") as cancelled:
            started = time.monotonic()
            busy.locator(".win-busy-cancel").click()
        assert cancelled.value.json()["cancelled"] == 1
    waited = time.monotonic() - started
    task = answer.value.json()["tasks"][0]
    assert task["result"]["status"] == "error"
    assert task["result"]["data"]["code"] == "cancelled"
    assert waited < 5, f"the cancel took {waited:.1f} s (the step sleeps 20 s)"
    expect(busy).to_have_count(0)
    # cancelled is no failure: the view it was started from stays, the status says so
    expect(page.locator(f"{WIN} .v-error")).to_have_count(0)
    expect(page.locator(f"{WIN} .v-text")).to_contain_text("画廊文本")
    status = page.locator(f"{WIN} .win-status")
    expect(status).to_contain_text("已取消")
    expect(status).to_have_attribute("data-level", "info")
    shot(page, "cancelled")


def test_a_slow_action_is_cancelled_too(page):
    page.click("#task_gallery_app")
    expect(page.locator(f"{WIN} .v-text")).to_contain_text("画廊文本")
    with page.expect_response("**/api/apps/gallery_app/action", timeout=30000) as answer:
        page.click("#btn_slow")
        busy = page.locator(f"{WIN} .win-busy")
        expect(busy).to_be_visible()
        with page.expect_response("**/api/apps/gallery_app/cancel") as cancelled:
            busy.locator(".win-busy-cancel").click()
        assert cancelled.value.json()["cancelled"] == 1
    assert answer.value.json()["data"]["code"] == "cancelled"
    expect(page.locator(f"{WIN} .v-error")).to_have_count(0)
    expect(page.locator(f"{WIN} .v-text")).to_contain_text("画廊文本")
    expect(page.locator(f"{WIN} .win-status")).to_contain_text("已取消")
