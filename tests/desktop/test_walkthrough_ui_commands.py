"""In Chromium: every UI command has a visible effect,
the system app's reply never covers the element it changed, hiding the taskbar keeps
the command bar, and Ctrl+Alt+R or the menus always restore the desktop layout.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIN = "#win_gallery_app"

SEEN_AT_CENTRE = """id => {
  const node = document.getElementById(id);
  if (!node) return false;
  const r = node.getBoundingClientRect();
  if (!r.width || !r.height) return false;
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return Boolean(hit) && (hit === node || node.contains(hit));
}"""


def post_command(page, command: dict) -> None:
    page.evaluate(
        "c => window.postMessage({aios: 'ui_command', command: c}, location.origin)",
        command,
    )


def open_gallery(page) -> None:
    page.click("#task_gallery_app")
    expect(page.locator(f"{WIN} .v-text")).to_contain_text("画廊文本")


def rect(page, selector: str) -> dict:
    found = page.locator(selector).bounding_box()
    assert found is not None, f"{selector} is not visible"
    return found


def seen(page, element_id: str) -> bool:
    return page.evaluate(SEEN_AT_CENTRE, element_id)


def test_every_ui_command_changes_what_is_seen(page, shot):
    open_gallery(page)
    play = page.locator("#btn_play")
    post_command(page, {"op": "change_color", "id": "btn_play", "color": "red"})
    # the visible background: no gradient painted over the colour
    expect(play).to_have_css("background-image", "none")
    expect(play).to_have_css("background-color", "rgb(255, 0, 0)")
    post_command(page, {"op": "change_color", "id": "win_gallery_app", "color": "#00ff00"})
    titlebar = page.locator(f"{WIN} .win-titlebar")
    expect(titlebar).to_have_css("background-image", "none")
    expect(titlebar).to_have_css("background-color", "rgb(0, 255, 0)")

    post_command(page, {"op": "resize", "id": "btn_play", "width": 180, "height": 48})
    page.wait_for_function(
        "() => { const r = document.getElementById('btn_play').getBoundingClientRect();"
        " return Math.round(r.width) === 180 && Math.round(r.height) === 48; }"
    )
    # an inline element (the link control) takes a size and a rotation too
    before = rect(page, "#btn_site")
    post_command(page, {"op": "resize", "id": "btn_site", "width": 200, "height": 40})
    page.wait_for_function(
        "() => { const r = document.getElementById('btn_site').getBoundingClientRect();"
        " return Math.round(r.width) === 200 && Math.round(r.height) === 40; }"
    )
    post_command(page, {"op": "rotate", "id": "btn_site", "degrees": 90})
    page.wait_for_function(
        "() => { const r = document.getElementById('btn_site').getBoundingClientRect();"
        " return Math.round(r.width) === 40 && Math.round(r.height) === 200; }"
    )
    assert before["width"] != 40

    post_command(page, {"op": "change_text", "id": "btn_play", "text": "开始播放"})
    expect(play).to_have_text("开始播放")
    post_command(page, {"op": "hide", "id": "btn_play"})
    expect(play).to_be_hidden()
    post_command(page, {"op": "show", "id": "btn_play"})
    expect(play).to_be_visible()

    post_command(page, {"op": "move", "id": "btn_play", "x": 40, "y": 60})
    page.wait_for_function(
        "() => { const r = document.getElementById('btn_play').getBoundingClientRect();"
        " return Math.round(r.left) === 40 && Math.round(r.top) === 60; }"
    )
    assert seen(page, "btn_play"), "the moved button is covered"
    shot(page, "every-op")

    # the way back: every change undone, the button back in its window
    page.keyboard.press("Control+Alt+r")
    expect(play).to_have_text("播放")
    expect(page.locator(f"{WIN} .win-actions #btn_play")).to_have_count(1)
    assert page.eval_on_selector(
        "#btn_play", "n => getComputedStyle(n).backgroundImage"
    ).startswith("linear-gradient")
    expect(page.locator("#btn_site")).not_to_have_css(
        "transform", "matrix(0, 1, -1, 0, 0, 0)"
    )
    assert page.eval_on_selector(
        f"{WIN} .win-titlebar", "n => getComputedStyle(n).backgroundImage"
    ).startswith("linear-gradient")


def test_the_system_apps_reply_leaves_the_changed_button_in_view(page, shot):
    with page.expect_response(
        lambda r: (
            r.url.endswith("/api/ui/snapshot") and "btn_play" in (r.request.post_data or "")
        )
    ):
        open_gallery(page)
    # the system app's window lies over the gallery's play button
    post_command(page, {"op": "open_window", "id": "system_agent"})
    expect(page.locator("#win_system_agent .win-main")).to_be_visible()
    play = rect(page, "#btn_play")
    post_command(
        page,
        {"op": "move", "id": "win_system_agent", "x": play["x"] - 40, "y": play["y"] - 60},
    )
    page.click("#task_gallery_app")  # the gallery in front again
    assert seen(page, "btn_play")
    page.fill("#command_input", "把第一个播放按钮改成红色")  # the gallery has two
    with page.expect_response("**/api/instruction") as answer:
        page.press("#command_input", "Enter")
    tasks = answer.value.json()["tasks"]
    assert [t["app_id"] for t in tasks] == ["system_agent"], tasks
    expect(page.locator("#win_system_agent")).to_be_visible()
    expect(page.locator("#btn_play")).to_have_css("background-color", "rgb(255, 0, 0)")
    page.wait_for_function(SEEN_AT_CENTRE, arg="btn_play")
    shot(page, "red-play-in-view")


def test_hiding_the_taskbar_keeps_the_command_bar_and_a_way_back(page, shot):
    post_command(page, {"op": "hide", "id": "taskbar"})
    expect(page.locator("#start_button")).to_be_hidden()
    expect(page.locator("#clock")).to_be_hidden()
    expect(page.locator("#command_input")).to_be_visible()
    assert seen(page, "command_input"), "the command bar is covered or gone"
    page.click("#command_input")  # still usable
    shot(page, "taskbar-hidden")
    page.keyboard.press("Control+Alt+r")
    expect(page.locator("#start_button")).to_be_visible()
    expect(page.locator("#clock")).to_be_visible()
    expect(page.locator("#toasts")).to_contain_text("已还原桌面布局")

    # the desktop's menu and the start menu restore it too
    post_command(page, {"op": "hide", "id": "taskbar"})
    expect(page.locator("#start_button")).to_be_hidden()
    page.click("#desktop", button="right", position={"x": 700, "y": 300})
    page.click("#system_menu [data-system-action=layout]")
    expect(page.locator("#start_button")).to_be_visible()
    post_command(page, {"op": "hide", "id": "clock"})
    expect(page.locator("#clock")).to_be_hidden()
    page.click("#start_button")
    page.click("#start_reset_layout")
    expect(page.locator("#clock")).to_be_visible()
