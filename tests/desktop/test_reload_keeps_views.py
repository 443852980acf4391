"""A reload of the desktop page in Chromium (1280×800), against the real system with
the shipped code and system apps: each window comes back showing what it
showed, not its app's start view; a view of figures measured at a moment (the system
app's, which offers to refresh itself) is asked of its app again. Screenshots in both
languages under test-artifacts/desktop/.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    copy_shipped_apps,
    serving,
)
from tests.procs import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHIPPED = ("code_app", "system_agent")
CODE = "#win_code_app"
SYSTEM = "#win_system_agent"
ARTIFACTS = ROOT / "test-artifacts" / "desktop"
PROGRAM = "print('kept across a reload')\n"


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("reload_views")
    apps = copy_shipped_apps(root / "apps", SHIPPED)
    with serving(root, apps, SHIPPED, config=copy.deepcopy(TEST_CONFIG)) as running:
        (running.workspace("code_app") / "kept.py").write_text(PROGRAM, "utf-8")
        yield running


def say(page: Any, text: str) -> None:
    page.fill("#command_input", text)
    page.press("#command_input", "Enter")


def reload(page: Any) -> None:
    page.reload()
    for app_id in SHIPPED:
        page.wait_for_selector(f"#task_{app_id}")


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator("#toasts .toast").evaluate_all("nodes => nodes.forEach(n => n.remove())")
    page.wait_for_function("() => document.getAnimations().length === 0")
    page.screenshot(path=str(ARTIFACTS / f"reload-keeps-views-{name}.png"))


@pytest.mark.parametrize(
    ("locale", "show", "status"),
    [("zh-CN", "查看 kept.py", "kept.py"), ("en-US", "view kept.py", "kept.py")],
    ids=["zh-CN", "en-US"],
)
def test_a_window_shows_the_same_view_after_a_reload(
    browser: Any, system: RunningSystem, locale: str, show: str, status: str
) -> None:
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000, locale=locale) as page:
        say(page, show)
        window = page.locator(CODE)
        expect(window.locator(".v-code code")).to_have_text(PROGRAM)
        before = window.locator(".win-main").inner_text()
        opens: list[str] = []
        page.on(
            "request",
            lambda r: opens.append(r.url) if r.url.endswith("/code_app/open") else None,
        )
        reload(page)
        window = page.locator(CODE)
        expect(window.locator(".v-code code")).to_have_text(PROGRAM)
        assert window.locator(".win-main").inner_text() == before
        expect(window.locator(".win-status")).to_contain_text(status)
        shot(page, locale)
        # a second reload still finds it: what the page shows is saved again
        reload(page)
        expect(page.locator(CODE).locator(".v-code code")).to_have_text(PROGRAM)
        assert opens == [], opens  # not opened afresh and then replaced


def test_a_view_of_measured_figures_is_asked_again(
    browser: Any, system: RunningSystem
) -> None:
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000) as page:
        say(page, "查看CPU使用率")
        window = page.locator(SYSTEM)
        expect(window.locator(".win-status")).to_contain_text("CPU")
        view_type = window.get_attribute("data-view-type")
        asked: list[dict[str, Any]] = []
        page.on(
            "request",
            lambda r: (
                asked.append(json.loads(r.post_data or "{}"))
                if r.url.endswith("/system_agent/action")
                else None
            ),
        )
        reload(page)
        window = page.locator(SYSTEM)
        expect(window).to_have_attribute("data-view-type", view_type or "")
        expect(window.locator(".win-status")).to_contain_text("CPU")
        page.wait_for_function("() => !window.aios.views.isWorking('system_agent')")
        assert [a.get("action_id") for a in asked] == ["refresh"], asked
        assert asked[0]["params"]["topic"] == "cpu", asked
