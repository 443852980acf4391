"""What a person sees when an app dies, is uninstalled, or the controller goes away
(issue #27 items 8, 9 and 17), in a real Chromium at 1280×800, in Chinese and in
English, against the real system:

- a window that shows that its app is restarting opens the app again by itself once
  the app runs again (no click);
- the start menu offers to uninstall an app, asking first (a dialog that takes the
  focus on its safe choice, so Enter and Escape keep the app; only
  its Uninstall button uninstalls); an uninstall, from the menu or from
  elsewhere, closes the app's window with a notice; apps the system relies on (a
  manifest `system_role`) are not offered;
- when the controller cannot be reached the desktop says so and that it retries, the
  taskbar's status dots go grey, and once it is back the desktop is ready again
  without a reload.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from playwright.sync_api import expect

from tests.controller.system import TEST_CONFIG, RunningSystem, serving
from tests.desktop.link import link_to
from tests.procs import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
ECHO = ROOT / "tests" / "controller" / "apps" / "echo_app"
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")

# a restart waits 3 s, so the window is seen while its app is down
CONFIG: dict[str, Any] = copy.deepcopy(TEST_CONFIG)
CONFIG["supervisor"]["backoff"] = [3.0, 3.0, 3.0]

LANGUAGES = ["zh-CN", "en-US"]


def echo_copy(folder: Path, name: str, **manifest: Any) -> Path:
    shutil.copytree(ECHO, folder, ignore=_IGNORE)
    data = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    data.update(
        name=name, description=name, keywords=[f"{name}专用词"], examples=[], **manifest
    )
    (folder / "manifest.json").write_text(
        json.dumps(data, ensure_ascii=False), encoding="utf-8"
    )
    return folder


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("recovery_system")
    apps = root / "apps"
    apps.mkdir()
    shutil.copytree(ROOT / "apps" / "hello_app", apps / "hello_app", ignore=_IGNORE)
    echo_copy(apps / "helper_app", "助手测试", system_role="catch_all")
    with serving(root, apps, ("hello_app", "helper_app"), config=CONFIG) as running:
        yield running


@pytest.fixture(params=LANGUAGES)
def lang(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def tr(lang: str, zh: str, en: str) -> str:
    return en if lang == "en-US" else zh


def open_page(browser: Any, url: str, lang: str) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale=lang)
    page = context.new_page()
    page.set_default_timeout(15000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url)
    page.wait_for_selector("#task_hello_app")
    expect(page.locator("#desktop_status")).to_have_text(tr(lang, "就绪", "Ready"))
    return context, page, errors


@pytest.fixture
def page(browser: Any, system: RunningSystem, lang: str) -> Iterator[Any]:
    context, desktop, errors = open_page(
        browser, f"{system.url}/?token={system.token}", lang
    )
    try:
        yield desktop
    finally:
        context.close()
    assert errors == [], f"uncaught script errors on the desktop: {errors}"


def settled(page: Any) -> Any:
    """`page`, once its windows, menus and dialogs have animated in (for a screenshot)."""
    page.wait_for_timeout(400)
    return page


# ------------------------------------------------------- item 8: a killed app


def test_a_window_whose_app_was_restarting_opens_it_again_by_itself(
    page: Any, system: RunningSystem, lang: str, shot: Callable[[Any, str], Path]
) -> None:
    window = page.locator("#win_hello_app")
    page.click("#task_hello_app")
    expect(window.locator(".v-text")).to_have_text(
        tr(lang, "你好！很高兴见到你。", "Hello! Nice to meet you.")
    )
    old_pid = system.apps()["hello_app"]["pid"]
    psutil.Process(old_pid).kill()
    system.wait_app("hello_app", "restarting", timeout=10)
    # the person clicks while the app is down: the window says it is restarting
    window.get_by_role("button", name=tr(lang, "再说一次", "Say it again")).click()
    expect(window.locator(".v-error-message")).to_contain_text(
        tr(lang, "正在重启", "is restarting")
    )
    shot(settled(page), "restarting")
    # no click: once the app runs again the window shows its view again
    expect(window.locator(".v-text")).to_have_text(
        tr(lang, "你好！很高兴见到你。", "Hello! Nice to meet you."), timeout=20000
    )
    expect(window.locator(".v-error")).to_have_count(0)
    assert system.apps()["hello_app"]["pid"] != old_pid
    shot(settled(page), "back")


# ------------------------------------------------------ item 9: uninstalling


def install_and_open(page: Any, system: RunningSystem, tmp_path: Path, app_id: str) -> Any:
    """Install a copy of the echo app named "Echo test" as `app_id`; open its window."""
    source = echo_copy(tmp_path / app_id, "Echo test")
    response = system.post("/api/apps/install", {"path": str(source)})
    assert response.status_code == 200, response.text
    page.wait_for_selector(f"#task_{app_id}")
    page.click(f"#task_{app_id}")
    window = page.locator(f"#win_{app_id}")
    expect(window.locator(".win-status")).to_have_text("回声完毕")
    return window


def start_entry(page: Any, app_id: str) -> Any:
    return page.locator("#start_menu_apps li").filter(
        has=page.locator(f".start-item[data-app-id='{app_id}']")
    )


def test_the_start_menu_uninstalls_an_app_after_asking_and_closes_its_window(
    page: Any,
    system: RunningSystem,
    lang: str,
    tmp_path: Path,
    shot: Callable[[Any, str], Path],
) -> None:
    app_id = "my_test_app"
    window = install_and_open(page, system, tmp_path, app_id)

    page.click("#start_button")
    uninstall = start_entry(page, app_id).locator(".start-item-uninstall")
    expect(uninstall).to_have_count(1)
    expect(uninstall).to_have_attribute(
        "aria-label", tr(lang, "卸载「Echo test」", "Uninstall Echo test")
    )
    expect(start_entry(page, "hello_app").locator(".start-item-uninstall")).to_have_count(1)
    # the system relies on an app with a system role: not offered
    expect(start_entry(page, "helper_app").locator(".start-item-uninstall")).to_have_count(
        0
    )
    shot(settled(page), "menu")

    # Escape keeps the app
    uninstall.click()
    dialog = page.locator("#uninstall_dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Echo test")
    # the focus is on the safe choice, not on the destructive one
    cancel = dialog.get_by_role("button", name=tr(lang, "取消", "Cancel"), exact=True)
    expect(cancel).to_be_focused()
    shot(settled(page), "confirm")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert app_id in system.apps()
    expect(window).to_be_visible()

    # Enter, straight away, keeps the app too
    page.click("#start_button")
    uninstall.click()
    expect(cancel).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog).to_have_count(0)
    assert app_id in system.apps()
    expect(window).to_be_visible()

    # the Uninstall button uninstalls: the window closes with a notice, the app
    # leaves the desktop
    page.click("#start_button")
    uninstall.click()
    dialog.get_by_role("button", name=tr(lang, "卸载", "Uninstall"), exact=True).click()
    expect(dialog).to_have_count(0)
    expect(window).to_have_count(0)
    notice = page.locator(".toast").filter(has_text="Echo test")
    expect(notice).to_contain_text(tr(lang, "已卸载", "uninstalled"))
    expect(notice).to_contain_text(tr(lang, "窗口已关闭", "window was closed"))
    expect(page.locator(f"#task_{app_id}")).to_have_count(0)
    expect(page.locator(".v-error")).to_have_count(0)
    system.wait_for(lambda: app_id not in system.apps(), what=f"{app_id} gone")
    kept = list(
        (system.state_dir / "users" / "default" / "workspaces" / ".removed").glob(
            f"{app_id}-*"
        )
    )
    assert kept, "the workspace was not kept aside"
    shot(settled(page), "uninstalled")


def test_an_uninstall_from_elsewhere_closes_the_window_with_a_notice(
    page: Any, system: RunningSystem, lang: str, tmp_path: Path
) -> None:
    app_id = "other_test_app"
    window = install_and_open(page, system, tmp_path, app_id)
    response = system.post(f"/api/apps/{app_id}/uninstall", {"keep_workspace": True})
    assert response.status_code == 200, response.text
    expect(window).to_have_count(0)
    notice = page.locator(".toast").filter(has_text="Echo test")
    expect(notice).to_contain_text(tr(lang, "窗口已关闭", "window was closed"))
    expect(page.locator(f"#task_{app_id}")).to_have_count(0)


# ------------------------------------------- item 17: the controller goes away


def test_the_desktop_says_the_controller_is_gone_and_comes_back_by_itself(
    browser: Any, system: RunningSystem, lang: str, shot: Callable[[Any, str], Path]
) -> None:
    port = int(system.url.rsplit(":", 1)[1])
    with link_to(port) as link:
        context, page, errors = open_page(
            browser, f"{link.url}/?token={system.token}", lang
        )
        try:
            page.evaluate("() => { window.__loads = 0; }")
            icon = page.locator("#task_hello_app")
            expect(icon).to_have_attribute("data-status", "running")
            status = page.locator("#desktop_status")

            link.cut()
            expect(status).to_contain_text(
                tr(lang, "无法连接主控", "Controller not reachable"), timeout=10000
            )
            expect(status).to_contain_text(tr(lang, "正在重试", "retrying"))
            expect(icon).to_have_attribute("data-status", "unknown")
            expect(page.locator("#tray_network")).to_have_attribute("data-state", "bad")
            dot = icon.locator(".task-status-dot")
            grey = dot.evaluate("d => getComputedStyle(d).backgroundColor")
            assert grey == "rgb(107, 114, 128)", grey  # not the green of running
            shot(settled(page), "lost")

            link.mend()
            expect(status).to_have_text(tr(lang, "就绪", "Ready"), timeout=15000)
            expect(icon).to_have_attribute("data-status", "running")
            expect(page.locator("#tray_network")).not_to_have_attribute("data-state", "bad")
            # the same page (no reload): its marker survived
            assert page.evaluate("() => window.__loads") == 0
            # and its event stream works again: an instruction from elsewhere shows
            said = tr(lang, "跟我打个招呼", "say hello")
            answer = system.post("/api/instruction", {"text": said, "language": lang})
            assert answer.status_code == 200, answer.text
            greeting = tr(lang, "你好！很高兴见到你。", "Hello! Nice to meet you.")
            expect(page.locator("#win_hello_app .v-text")).to_have_text(greeting)
            shot(settled(page), "back")
        finally:
            context.close()
    assert errors == [], f"uncaught script errors on the desktop: {errors}"
