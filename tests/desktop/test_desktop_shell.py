"""The desktop shell against the real system (S-20..S-24, F-4): taskbar, start menu,
windows (open, raise, drag, resize, minimise, maximise, close), command bar, tray,
calendar, system menu, settings dialog and the UI snapshot.
"""

from __future__ import annotations

import json
import re

import pytest
import requests
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.desktop.conftest import APP_IDS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def z_index(page, selector: str) -> int:
    return int(page.eval_on_selector(selector, "n => getComputedStyle(n).zIndex"))


def box(page, selector: str) -> dict:
    found = page.locator(selector).bounding_box()
    assert found is not None, f"{selector} is not visible"
    return found


def drag(page, selector: str, dx: float, dy: float) -> None:
    """Press on `selector` (a little inside its top-left), move by (dx, dy), release."""
    start = box(page, selector)
    x, y = (
        start["x"] + min(20, start["width"] / 2),
        start["y"] + min(10, start["height"] / 2),
    )
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx, y + dy, steps=5)
    page.mouse.up()


def test_taskbar_and_start_menu_list_every_app(page, system, shot):
    apps = system.apps()
    assert set(apps) == set(APP_IDS)
    for app_id, info in apps.items():
        icon = page.locator(f"#task_{app_id}")
        expect(icon).to_have_attribute("data-status", "running")
        expect(icon).to_contain_text(info["icon"])
        assert info["name"] in icon.get_attribute("title")
    page.click("#start_button")
    menu = page.locator("#start_menu")
    expect(menu).to_be_visible()
    for info in apps.values():
        expect(menu).to_contain_text(info["name"])
    expect(menu.locator(".start-item")).to_have_count(len(apps))
    shot(page, "start-menu")
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()


def test_icon_click_opens_the_initial_view_and_raises_on_second_click(page, shot):
    page.click("#task_gallery_app")
    gallery = page.locator("#win_gallery_app")
    expect(gallery.locator(".v-text")).to_contain_text("画廊文本 gallery text")
    expect(gallery.locator(".win-status")).to_have_text("画廊：text")
    page.click("#task_hello_app")
    expect(page.locator("#win_hello_app .v-text")).to_contain_text("你好")
    assert z_index(page, "#win_hello_app") > z_index(page, "#win_gallery_app")
    page.click("#task_gallery_app")
    expect(page.locator(".window")).to_have_count(2)
    assert z_index(page, "#win_gallery_app") > z_index(page, "#win_hello_app")
    expect(gallery).to_have_class(re.compile(r"\bfocused\b"))
    # clicking inside the lower window raises it too
    hello = box(page, "#win_hello_app")  # its right edge peeks out from under the gallery
    page.mouse.click(hello["x"] + hello["width"] - 12, hello["y"] + hello["height"] - 40)
    assert z_index(page, "#win_hello_app") > z_index(page, "#win_gallery_app")
    shot(page, "two-windows")


def test_window_drags_resizes_minimises_maximises_and_closes(page, system, shot):
    page.click("#task_gallery_app")
    win = "#win_gallery_app"
    expect(page.locator(f"{win} .v-text")).to_be_visible()
    start = box(page, win)
    drag(page, f"{win} .win-title", 100, 80)
    moved = box(page, win)
    assert (round(moved["x"] - start["x"]), round(moved["y"] - start["y"])) == (100, 80)

    drag(page, f"{win} .win-edge-se", 60, 40)
    resized = box(page, win)
    assert (
        round(resized["width"] - moved["width"]),
        round(resized["height"] - moved["height"]),
    ) == (60, 40)

    page.click(f"{win} .win-min")
    expect(page.locator(win)).to_be_hidden()
    expect(page.locator("#task_gallery_app")).to_have_class(re.compile(r"\bminimized\b"))
    page.click("#task_gallery_app")
    expect(page.locator(win)).to_be_visible()

    page.click(f"{win} .win-max")
    full = box(page, win)
    taskbar = box(page, "#taskbar")
    assert (full["x"], full["y"], full["width"]) == (0, 0, 1280)
    assert full["y"] + full["height"] == pytest.approx(taskbar["y"], abs=1)
    expect(page.locator("#taskbar")).to_be_visible()
    shot(page, "maximised")
    page.dblclick(f"{win} .win-title")
    assert box(page, win)["width"] == pytest.approx(resized["width"], abs=1)

    page.click(f"{win} .win-close")
    expect(page.locator(win)).to_have_count(0)
    assert system.apps()["gallery_app"]["status"] == "running"  # S-24: process lives on
    page.click("#task_gallery_app")  # S-23 again: a fresh window with the initial view
    expect(page.locator(f"{win} .v-text")).to_contain_text("画廊文本")


def test_typed_instruction_opens_the_app_window_with_message(page, shot):
    page.fill("#command_input", "画廊 展示 chart")
    with page.expect_response("**/api/instruction") as answer:
        page.press("#command_input", "Enter")
    response = answer.value.json()
    assert [t["app_id"] for t in response["tasks"]] == ["gallery_app"]
    win = page.locator("#win_gallery_app")
    expect(win.locator(".chart-bar")).to_have_count(3)
    expect(win.locator(".win-status")).to_have_text("画廊：chart")
    expect(page.locator("#toasts")).to_contain_text(response["message"])
    shot(page, "instruction")


def test_tray_clock_calendar_and_system_menu(page, shot):
    assert page.get_attribute("#tray_llm", "data-state") in {"ok", "bad", "off", "unknown"}
    expect(page.locator("#tray_network")).to_have_attribute("data-state", "ok")
    page.click("#tray_volume")
    expect(page.locator("#tray_volume")).to_have_attribute("data-state", "muted")
    page.click("#tray_volume")
    expect(page.locator("#tray_volume")).to_have_attribute("data-state", "on")

    page.click("#clock")
    calendar = page.locator("#calendar")
    expect(calendar).to_be_visible()
    month = page.evaluate(
        "() => { const d = new Date(); return `${d.getFullYear()}年${d.getMonth() + 1}月`; }"
    )
    expect(calendar.locator(".cal-month")).to_have_text(month)
    expect(calendar.locator(".cal-today")).to_have_count(1)
    shot(page, "calendar")

    page.click("#taskbar", button="right", position={"x": 300, "y": 20})
    menu = page.locator("#system_menu")
    expect(menu).to_be_visible()
    expect(menu).to_contain_text("设置")
    expect(menu).to_contain_text("刷新")
    expect(menu).to_contain_text("关于")
    shot(page, "system-menu")
    page.click("#system_menu [data-system-action=about]")
    expect(page.locator("#about_dialog")).to_contain_text("Triton AIOS")
    page.keyboard.press("Escape")
    expect(page.locator("#about_dialog")).to_have_count(0)


# words of the design a user does not know (About once said 主控…原子工具…沙箱执行器)
DEVELOPER_WORDS = re.compile(r"主控|原子工具|执行器|小AI|controller|atomic|executor", re.I)


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_about_says_what_triton_does_in_plain_words(browser, system, shot, locale):
    with desktop_page(browser, system, APP_IDS, locale=locale) as page:
        page.click("#taskbar", button="right", position={"x": 300, "y": 20})
        page.click("#system_menu [data-system-action=about]")
        about = page.locator("#about_dialog")
        expect(about).to_contain_text("Triton AIOS")
        text = about.inner_text()
        assert not DEVELOPER_WORDS.search(text), text
        said = ("音乐", "沙箱") if locale == "zh-CN" else ("music", "sandbox")
        assert all(word in text for word in said), text
        if locale == "en-US":
            chinese = re.findall(r"[\u4e00-\u9fff]", text)
            assert not chinese, text
        page.wait_for_function("() => document.getAnimations().length === 0")
        shot(page, f"about-{locale}")


def test_settings_dialog_masks_the_key_and_saves(page, system, shot):
    before = system.get("/api/settings").json()
    page.click("#desktop", button="right", position={"x": 900, "y": 600})
    page.click("#system_menu [data-system-action=settings]")
    dialog = page.locator("#settings_dialog")
    expect(dialog).to_be_visible()
    assert page.input_value("#settings_api_key") == ""
    page.fill("#settings_api_key", "sk-desktop-test-123456789")
    page.eval_on_selector(
        "#settings_rate", "n => { n.value = '1.25'; n.dispatchEvent(new Event('input')); }"
    )
    page.fill("#settings_shell_whitelist", "ls\ncat\necho")
    shot(page, "settings")
    with page.expect_response("**/api/settings") as saved:
        page.click("#settings_save")
    assert saved.value.status == 200
    expect(dialog).to_have_count(0)
    stored = system.get("/api/settings").json()
    assert stored["voice_rate"] == 1.25
    assert stored["tool_sandbox"]["shell_whitelist"] == ["ls", "cat", "echo"]
    assert stored["llm"]["api_key"].endswith("6789")
    assert "sk-desktop" not in json.dumps(stored)
    # reopening never shows the key, only its mask as a hint
    page.click("#taskbar", button="right", position={"x": 300, "y": 20})
    page.click("#system_menu [data-system-action=settings]")
    assert page.input_value("#settings_api_key") == ""
    assert "6789" in page.get_attribute("#settings_api_key", "placeholder")
    page.click("#settings_dialog .btn-plain")
    # back to the defaults for the other tests
    reset = {
        "llm": {"api_key": ""},
        "voice_rate": 0.9,
        "tool_sandbox": before["tool_sandbox"],
    }
    requests.put(
        f"{system.url}/api/settings", json=reset, headers=system.headers, timeout=10
    ).raise_for_status()


def test_snapshot_with_geometry_is_posted_when_layout_changes(page):
    with page.expect_request(
        lambda r: (
            r.url.endswith("/api/ui/snapshot") and "win_gallery_app" in (r.post_data or "")
        )
    ) as posted:
        page.click("#task_gallery_app")
    snapshot = json.loads(posted.value.post_data)
    assert snapshot["viewport"] == {"width": 1280, "height": 800}
    ids = {e["id"]: e for e in snapshot["elements"]}
    for required in ("win_gallery_app", "taskbar", "command_bar", "start_menu"):
        assert required in ids, required
    assert ids["start_menu"]["visible"] is False
    win = ids["win_gallery_app"]
    assert win["type"] == "window" and win["visible"] is True
    assert win["width"] > 200 and win["height"] > 150
    for element in snapshot["elements"]:
        # a window also says what view it shows and how many rows that lists
        extra = {"view", "items"} if element["type"] == "window" else set()
        assert set(element) - extra == {
            "id",
            "type",
            "label",
            "x",
            "y",
            "width",
            "height",
            "visible",
            # beyond the design: the row and window a control is in, what is changed
            "row",
            "window",
            "changed",
        }
    assert win["window"] == "" and win["changed"] == []
    assert ids["btn_play"]["window"] == "win_gallery_app"
