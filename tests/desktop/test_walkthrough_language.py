"""In Chromium: with the settings' `ui_language` "en-US" the apps
answer in English.

A real system with the shipped music and code apps; the music catalogue cannot be
reached (nothing listens on port 9). The page itself is a zh-CN browser: the
settings' language wins, the desktop sends it with each instruction and the apps
write their messages, labels and placeholders in it. A failure is a warning said in
plain English, never a success, its technical text folded away.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    copy_shipped_apps,
    serving,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHIPPED = ("code_app", "music_app")
CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("walkthrough_language")
    apps = copy_shipped_apps(root / "apps", SHIPPED)
    config = copy.deepcopy(TEST_CONFIG)  # apps.start_at_launch: true
    config["ui_language"] = "en-US"
    # the catalogue cannot be reached: nothing listens on port 9
    config["app_settings"] = {"music_app": {"api_base": "http://127.0.0.1:9"}}
    config["tool_sandbox"] = {"http_domain_whitelist": ["127.0.0.1"]}
    with serving(root, apps, SHIPPED, config=config) as running:
        yield running


@pytest.fixture
def page(browser, system: RunningSystem) -> Iterator[object]:
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000) as desktop:
        expect(desktop.locator("#start_button .start-text")).to_have_text("Start")
        yield desktop


def say(page, text: str) -> None:
    page.fill("#command_input", text)
    page.press("#command_input", "Enter")


def test_an_unreachable_catalogue_is_an_english_warning(page) -> None:
    say(page, "play songs by Taylor Swift")
    window = page.locator("#win_music_app")
    notice = window.locator(".win-notice")
    expect(notice).to_contain_text("The music catalogue cannot be reached right now")
    expect(window.locator(".v-empty")).to_contain_text("Your local library has no songs")
    details = notice.locator("details")
    expect(details).to_have_count(1)
    assert details.get_attribute("open") is None  # the technical text, folded away
    visible = window.locator(".win-main").inner_text()
    assert "Errno" not in visible and "refused" not in visible.lower(), visible
    assert "音乐目录" not in visible, visible
    assert window.inner_text().count("The music catalogue cannot be reached") == 1
    expect(window.locator(".win-status")).to_have_text("⚠️ See the note above")
    for label in ("Filter", "Quality", "Search"):
        expect(window.locator(".act-label", has_text=label)).to_have_count(1)
    toast = page.locator("#toasts .toast").last
    expect(toast).to_have_class(re.compile(r"\btoast-warning\b"))
    expect(toast.locator(".toast-icon")).not_to_have_text("✅")
    expect(toast).to_contain_text("The music catalogue cannot be reached")


def test_the_code_app_labels_are_english(page) -> None:
    page.click("#task_code_app")
    window = page.locator("#win_code_app")
    expect(window.locator(".win-status")).to_contain_text(
        "The workspace has no Python files"
    )
    expect(window.get_by_role("button", name="New file")).to_have_count(1)
    run_code = window.get_by_role("textbox", name="Run code")
    expect(run_code).to_have_attribute(
        "placeholder", "One line of Python, e.g. print(2**10)"
    )
    expect(window.get_by_role("combobox", name="Template")).to_contain_text(
        "Fibonacci numbers"
    )
    actions = window.locator(".win-actions").inner_text()
    for chinese in ("执行代码", "新建文件", "模板", "斐波那契"):
        assert chinese not in actions, actions
    say(page, "run print(1/0)")
    expect(window.locator(".win-notice")).to_contain_text(
        "The program failed (exit code 1)"
    )
    expect(window.get_by_role("button", name="Edit", exact=True)).to_have_count(1)
    assert not CHINESE.search(window.locator(".win-notice-text").inner_text())
