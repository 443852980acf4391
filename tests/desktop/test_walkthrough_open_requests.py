"""In Chromium at 1280×800: an open request opens the assistant, and only it.

A real system with the shipped assistant, music and hello apps and no model. A new
user typed "智能助手，帮我写一首关于秋天的诗" and got both the assistant's and the
music app's windows; "写一首诗" opened the music app. Now the assistant's window
alone opens and says, in the user's language, that nothing was done because it needs
a model, and which apps work without one — not done, never a success.
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

SHIPPED = ("assistant_app", "music_app", "hello_app")
ASSISTANT = "#win_assistant_app"


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("open_requests_desktop")
    apps = copy_shipped_apps(root / "apps", SHIPPED)
    config = copy.deepcopy(TEST_CONFIG)  # no model configured
    config["app_settings"] = {"music_app": {"api_base": "http://127.0.0.1:9"}}
    with serving(root, apps, SHIPPED, config=config) as running:
        yield running


def say(page, text: str) -> None:
    page.fill("#command_input", text)
    page.press("#command_input", "Enter")


def only_the_assistant_answers(page, shown: str) -> None:
    window = page.locator(ASSISTANT)
    expect(window.locator(".win-main")).to_contain_text(shown, timeout=20000)
    expect(window).not_to_have_class(re.compile(r"\bopening\b"))  # shown in full
    expect(window.locator(".win-notice")).to_have_count(1)
    expect(page.locator("#win_music_app")).to_have_count(0)
    toast = page.locator("#toasts .toast").last
    expect(toast).to_have_class(re.compile(r"\btoast-error\b"))
    expect(toast.locator(".toast-icon")).not_to_have_text("✅")


def test_the_named_assistant_alone_answers_in_chinese(browser, system, shot) -> None:
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000) as page:
        say(page, "智能助手，帮我写一首关于秋天的诗")
        only_the_assistant_answers(page, "智能助手需要一个模型才能工作")
        visible = page.locator(ASSISTANT).inner_text()
        assert "The assistant" not in visible, visible
        shot(page, "named-assistant-zh")
        page.locator(f"{ASSISTANT} .win-close").click()
        say(page, "写一首诗")
        only_the_assistant_answers(page, "不用模型也能用的应用")
        shot(page, "poem-zh")


def test_a_poem_opens_the_assistant_in_english(browser, system, shot) -> None:
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000, locale="en-US") as page:
        expect(page.locator("#start_button .start-text")).to_have_text("Start")
        say(page, "write a poem about autumn")
        only_the_assistant_answers(page, "The assistant needs a model")
        visible = page.locator(ASSISTANT).inner_text()
        assert not re.search(r"[\u4e00-\u9fff]", visible), visible
        assert "These apps work offline: Hello AI, Music." in visible  # installed ones
        shot(page, "poem-en")
        page.locator(f"{ASSISTANT} .win-close").click()
        say(page, "assistant, write a poem and play some music")
        only_the_assistant_answers(page, "These apps work offline")
        shot(page, "named-assistant-en")
