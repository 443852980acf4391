"""The desktop's part, in Chromium: the user sees how each app runs.

One real system runs the shipped hello app (confined), a copy of the echo app whose
manifest says `"network": true` (confined, reaches the internet) and one whose
manifest asks for `"sandbox": false`, allowed in `app_sandbox.unconfined_apps`
(unconfined). The start menu marks each entry, the unconfined one as a warning with
the controller's reason; the window's title bar marks it too and opens the app's
About panel with the reason in words; an English desktop says it in English only.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    copy_echo,
    copy_shipped_apps,
    serving,
)
from tests.security.conftest import HAS_BWRAP, NEEDS_BWRAP

pytestmark = [pytest.mark.browser, pytest.mark.slow]

APP_IDS = ("hello_app", "web_app", "trusted_app")
# what the desktop itself says an unconfined app can do (desktop/web/dialogs.js)
UNCONFINED_NOTE = "它能读写你能读写的一切：只应运行你信任的应用"


def _echo_copy(apps: Path, app_id: str, name: str, **manifest_fields: object) -> None:
    copy_echo(apps, app_id, name)
    path = apps / app_id / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest.update(manifest_fields)
    path.write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    if not HAS_BWRAP:
        pytest.skip(NEEDS_BWRAP)
    root = tmp_path_factory.mktemp("confinement_shown")
    apps = copy_shipped_apps(root / "apps", ("hello_app",))
    _echo_copy(apps, "web_app", "联网应用", network=True)
    _echo_copy(apps, "trusted_app", "信任应用", sandbox=False)
    config = copy.deepcopy(TEST_CONFIG)
    config["app_sandbox"] = {"unconfined_apps": ["trusted_app"]}
    with serving(root, apps, APP_IDS, config=config) as running:
        yield running


@pytest.fixture
def page(browser, system: RunningSystem) -> Iterator[object]:
    with desktop_page(browser, system, APP_IDS) as desktop:
        yield desktop


def entry(page, app_id: str):
    return page.locator(f"#start_menu .start-item[data-app-id={app_id}]")


def settled(locator) -> None:
    """Wait until the element's animations (a dialog's pop-in) have finished."""
    locator.evaluate(
        "n => Promise.all(n.getAnimations({subtree: true}).map(a => a.finished))"
    )


def test_the_controller_reports_what_the_desktop_shows(system):
    rows = system.apps()
    assert rows["hello_app"]["sandbox"] == "bubblewrap" and not rows["hello_app"]["network"]
    assert rows["web_app"]["sandbox"] == "bubblewrap" and rows["web_app"]["network"]
    assert rows["trusted_app"]["sandbox"] == "none" and not rows["trusted_app"]["network"]
    assert "unconfined_apps" in rows["trusted_app"]["sandbox_note"]


def test_the_start_menu_says_how_each_app_runs(page, system, shot):
    note = system.apps()["trusted_app"]["sandbox_note"]
    page.click("#start_button")

    hello = entry(page, "hello_app").locator(".app-fact")
    expect(hello).to_have_count(1)
    expect(hello).to_have_text("🛡️在沙箱中运行")
    expect(hello).to_have_attribute("data-level", "ok")

    web = entry(page, "web_app").locator(".app-fact")
    expect(web).to_have_text(["🛡️在沙箱中运行", "🌐可访问互联网"])

    trusted = entry(page, "trusted_app").locator(".app-fact")
    expect(trusted).to_have_count(1)
    expect(trusted).to_have_text("⚠️未隔离运行")
    expect(trusted).to_have_attribute("data-level", "warning")
    # plain words only: the controller's technical reason is English
    expect(trusted).to_have_attribute("title", UNCONFINED_NOTE)
    assert note not in trusted.get_attribute("title")
    warm = trusted.evaluate("n => getComputedStyle(n).backgroundColor")
    calm = hello.evaluate("n => getComputedStyle(n).backgroundColor")
    assert warm != calm, (warm, calm)
    menu = page.locator("#start_menu")
    assert "internet" not in menu.inner_text() and "sandbox" not in menu.inner_text()

    icon_title = page.get_attribute("#task_trusted_app", "title")
    assert f"⚠️ 未隔离运行: {UNCONFINED_NOTE}" in icon_title, icon_title
    assert note not in icon_title, icon_title
    assert "可访问互联网" in page.get_attribute("#task_web_app", "title")
    shot(page, "start-menu")


def test_the_window_marks_an_unconfined_app_and_its_about_panel_says_why(
    page, system, shot
):
    note = system.apps()["trusted_app"]["sandbox_note"]
    page.click("#task_trusted_app")
    mark = page.locator("#win_trusted_app .win-titlebar .win-facts")
    expect(mark).to_have_text("⚠️未隔离运行")
    expect(mark).to_have_attribute("data-level", "warning")
    expect(page.locator("#win_trusted_app .v-text")).to_contain_text("echo:")
    shot(page, "window")

    mark.click()
    panel = page.locator("#app_info_dialog")
    expect(panel.locator(".modal-title")).to_have_text("关于“信任应用”")
    fact = panel.locator(".app-info-fact")
    expect(fact).to_have_count(1)
    expect(fact).to_have_attribute("data-level", "warning")
    expect(fact.locator(".app-info-text")).to_have_text("未隔离运行")
    expect(fact.locator(".app-info-note")).to_have_text(UNCONFINED_NOTE)
    # the technical line is English: a Chinese reader gets the plain note only
    expect(fact.locator(".app-info-detail")).to_have_count(0)
    assert note not in panel.inner_text()
    settled(panel)
    shot(page, "about-unconfined")
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(page.locator("#win_trusted_app")).to_be_visible()  # the mark did not close it


def test_a_confined_app_that_reaches_the_internet(page, shot):
    page.click("#task_web_app")
    mark = page.locator("#win_web_app .win-facts")
    expect(mark).to_have_attribute("data-level", "ok")
    expect(mark).to_have_text("🛡️🌐")  # quiet: marks only, no warning words
    mark.click()
    facts = page.locator("#app_info_dialog .app-info-fact")
    expect(facts.locator(".app-info-text")).to_have_text(["在沙箱中运行", "可访问互联网"])
    expect(facts.first).to_have_attribute("data-level", "ok")
    expect(facts.first.locator(".app-info-note")).to_contain_text("看不到你的主目录")
    expect(facts.first.locator(".app-info-detail")).to_have_count(0)
    settled(page.locator("#app_info_dialog"))
    shot(page, "about-network")


def test_an_english_desktop_says_it_in_english_only(browser, system, shot):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    try:
        english = context.new_page()
        english.goto(f"{system.url}/?token={system.token}")
        for app_id in APP_IDS:
            english.wait_for_selector(f"#task_{app_id}")
        english.click("#start_button")
        expect(entry(english, "trusted_app").locator(".app-fact")).to_have_text(
            "⚠️Runs unconfined"
        )
        expect(entry(english, "web_app").locator(".app-fact")).to_have_text(
            ["🛡️Runs in a sandbox", "🌐Can reach the internet"]
        )
        text = english.locator("#start_menu").inner_text()
        assert not re.search(r"沙箱|隔离|互联网", text), text
        # the About panel: the plain note, then the controller's technical reason
        english.keyboard.press("Escape")
        english.click("#task_trusted_app")
        english.locator("#win_trusted_app .win-facts").click()
        panel = english.locator("#app_info_dialog")
        note = system.apps()["trusted_app"]["sandbox_note"]
        expect(panel.locator(".app-info-detail")).to_have_text(f"Details: {note}")
        assert not re.search(r"[\u4e00-\u9fff]", panel.inner_text().replace("信任应用", ""))
        settled(panel)
        shot(english, "about-unconfined-en")
    finally:
        context.close()
