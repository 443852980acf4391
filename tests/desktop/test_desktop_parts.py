"""In Chromium at 1280×800, in Chinese and in English, against the real
system with the music window open on two songs:

- the desktop's own parts are named and changed like app controls — the
  background (a colour or a gradient, by 背景, 壁纸, 桌面背景 or "wallpaper"), the
  taskbar and a window's title bar; the change survives a reload; a name that fits
  nothing is an answer naming what can be changed, never an error toast;
- a control moved into a corner another moved control holds goes beside it,
  both stay seen, the answer names the control that moved, and a moved control's
  row title is never cut at the screen's edge;
- a typed 撤销 / undo reaches the system app and takes back the latest
  change to the layout, and the one before when said again, across other
  instructions and a reload, until the layout is reset; the system window keeps
  offering a way back while there is a change to take back, named for what it takes
  back ("撤销上一步界面改动（…）"), not a bare 撤销 on an answer that changed nothing;
- the start menu and the taskbar's menu are opaque;
- the question "which one?" is said once, not in a banner, the body, the
  status line and a toast.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.controller.system import RunningSystem
from tests.desktop.test_moving_a_control import (
    open_music,
    say,
    seed_library,
    serving_music,
    wait_at,
)
from tests.procs import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHIPPED = ("music_app", "system_agent", "assistant_app")
SHOTS = ROOT / "test-artifacts" / "desktop"
SYSTEM = "#win_system_agent"
MUSIC = "#win_music_app"

WORDS = {
    "zh-CN": {
        # a long title: a moved button's row title must not be cut at the screen's edge
        "songs": ("七里香", "晴天 - 周杰伦 2003 年台北现场版"),
        "artist": "周杰伦",
        "blue": "把背景换成蓝色",
        "blue_done": "已将背景改成蓝色",
        "wallpaper": "把壁纸换成红色",
        "desktop_bg": "把桌面背景换成蓝紫渐变",
        "which_colour": "换一下壁纸",
        "asks_colour": "要把壁纸换成什么颜色",
        "taskbar": "把任务栏换成绿色",
        "titlebar": "把音乐应用的标题栏改成红色",
        "nothing": "把天空换成蓝色",
        "no_sky": "桌面上没有“天空”",
        "parts": "桌面背景、任务栏、窗口的标题栏",
        "f3": "把播放按钮移到左上角",
        "asks": "有 2 个“播放按钮”",
        "second": "把第二个播放按钮移到左上角",
        "first": "把第一个播放按钮移到左上角",
        "beside": (
            "已将七里香的播放按钮移到左上角，放在晴天 - 周杰伦 2003 年台北现场版的播放按钮旁边"
        ),
        "undo": "撤销",
        "undo_last": "撤销上一步界面改动（移动七里香的播放按钮）",
        "undo_again": "撤回",
        "undone_first": "已撤销：移动七里香的播放按钮",
        "undone_second": "已撤销：移动晴天 - 周杰伦 2003 年台北现场版的播放按钮",
        "nothing_to_undo": "没有可以撤销的界面改动",
        "status": "CPU占用多少",
    },
    "en-US": {
        "songs": ("Morning Light", "Evening Rain - Live at the Old Town Hall, 2003"),
        "artist": "The Example Band",
        "blue": "change the wallpaper to blue",
        "blue_done": "Made the wallpaper blue",
        "wallpaper": "make the background red",
        "desktop_bg": "make the desktop background a blue to purple gradient",
        "which_colour": "change the wallpaper",
        "asks_colour": "Which colour for the wallpaper",
        "taskbar": "make the taskbar green",
        "titlebar": "make the title bar of the music window red",
        "nothing": "make the sky blue",
        "no_sky": 'There is no "sky" on the desktop',
        "parts": "the background, the taskbar and a window's title bar",
        "f3": "move the play button to the top-left",
        "asks": '2 elements match "play button"',
        "second": "move the second play button to the top-left",
        "first": "move the first play button to the top-left",
        "beside": (
            "Moved the play button of Morning Light to the top-left, "
            "beside the Play button of Evening Rain - Live at the Old Town Hall, 2003"
        ),
        "undo": "Undo",
        "undo_last": "Undo the last layout change (moving the Play button of Morning Light)",
        "undo_again": "undo",
        "undone_first": "Undone: moving the Play button of Morning Light",
        "undone_second": (
            "Undone: moving the Play button of Evening Rain - Live at the Old Town Hall, 2003"
        ),
        "nothing_to_undo": "There is no change to the layout to undo",
        "status": "show cpu usage",
    },
}
LOCALES = list(WORDS)


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    with serving_music(tmp_path_factory.mktemp("desktop_parts"), SHIPPED) as running:
        yield running


@contextmanager
def two_songs(browser, system: RunningSystem, locale: str) -> Iterator[object]:
    """A desktop page with the music window open on the library of two songs."""
    words = WORDS[locale]
    seed_library(system, words["songs"], words["artist"])
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000, locale=locale) as page:
        open_music(page, "btn_play_2")
        yield page


def shot(page, locale: str, name: str) -> Path:
    page.wait_for_function("() => document.getAnimations().length === 0")
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"desktop-parts-{name}-{locale}.png"
    page.screenshot(path=str(path))
    return path


def answer(page):
    return page.locator(f"{SYSTEM}[data-view-type=text] .v-text")


def ask(page, text: str, expected: str) -> None:
    """Say `text` and wait until the system window answers `expected` (in part)."""
    say(page, text)
    expect(answer(page)).to_contain_text(expected)


def no_error_toast(page) -> None:
    expect(page.locator("#toasts .toast-error")).to_have_count(0)


def watch_snapshots(page) -> list[dict]:
    """Every UI snapshot the controller has taken from the desktop, in order."""
    posted: list[dict] = []

    def seen(request) -> None:
        if request.url.endswith("/api/ui/snapshot"):
            posted.append(request.post_data_json or {})

    page.on("requestfinished", seen)
    return posted


def wait_posted(page, posted: list[dict], holds, what: str) -> None:
    """Wait until the desktop's latest snapshot `holds` (what the system app reads)."""
    for _ in range(400):
        if posted and holds(posted[-1]):
            return
        page.wait_for_timeout(25)
    raise AssertionError(f"no snapshot where {what}")


def snapshot_holds(page, posted: list[dict], count: int) -> None:
    """Wait until the latest snapshot lists `count` changes to undo."""
    wait_posted(
        page,
        posted,
        lambda snapshot: len(snapshot.get("undo", [])) == count,
        f"{count} changes can be undone",
    )


def snapshot_moved(page, posted: list[dict], element_id: str) -> None:
    """Wait until the latest snapshot shows `element_id` moved."""
    wait_posted(
        page,
        posted,
        lambda snapshot: any(
            e["id"] == element_id and "move" in e.get("changed", [])
            for e in snapshot.get("elements", [])
        ),
        f"{element_id} moved",
    )


# ---------------------------------------------------- the desktop's own parts


@pytest.mark.parametrize("locale", LOCALES)
def test_the_background_taskbar_and_title_bar_change_like_controls(browser, system, locale):
    words = WORDS[locale]
    with two_songs(browser, system, locale) as page:
        desktop = page.locator("#desktop")
        ask(page, words["blue"], words["blue_done"])
        expect(desktop).to_have_css("background-color", "rgb(0, 0, 255)")
        no_error_toast(page)
        shot(page, locale, "background-blue")

        say(page, words["wallpaper"])
        expect(desktop).to_have_css("background-color", "rgb(255, 0, 0)")
        say(page, words["desktop_bg"])
        expect(desktop).to_have_css(
            "background-image", re.compile(r"linear-gradient\(135deg, rgb\(0, 0, 255\)")
        )
        ask(page, words["which_colour"], words["asks_colour"])
        expect(desktop).to_have_css("background-image", re.compile("linear-gradient"))

        ask(page, words["taskbar"], "")
        expect(page.locator("#taskbar")).to_have_css("background-color", "rgb(0, 128, 0)")
        say(page, words["titlebar"])
        expect(page.locator(f"{MUSIC} .win-titlebar")).to_have_css(
            "background-color", "rgb(255, 0, 0)"
        )
        expect(page.locator(f"{SYSTEM} .win-titlebar")).not_to_have_css(
            "background-color", "rgb(255, 0, 0)"
        )
        no_error_toast(page)
        shot(page, locale, "parts-changed")

        # a reload keeps them
        page.reload()
        page.wait_for_selector("#task_music_app")
        expect(desktop).to_have_css("background-image", re.compile("linear-gradient"))
        expect(page.locator("#taskbar")).to_have_css("background-color", "rgb(0, 128, 0)")
        expect(page.locator(f"{MUSIC} .win-titlebar")).to_have_css(
            "background-color", "rgb(255, 0, 0)"
        )

        # a name that fits nothing: an answer naming what can be changed, no error
        ask(page, words["nothing"], words["no_sky"])
        expect(answer(page)).to_contain_text(words["parts"])
        no_error_toast(page)
        shot(page, locale, "no-such-part")
        page.keyboard.press("Control+Alt+r")
        expect(desktop).not_to_have_css("background-image", re.compile("linear-gradient"))


# ------------------------------------------------------ one sentence, once


@pytest.mark.parametrize("locale", LOCALES)
def test_the_question_which_one_is_said_once(browser, system, locale):
    words = WORDS[locale]
    with two_songs(browser, system, locale) as page:
        say(page, words["f3"])
        expect(answer(page)).to_contain_text(words["asks"])
        page.wait_for_timeout(300)  # a toast, if any, has come
        seen = page.evaluate("() => document.body.innerText")
        assert seen.count(words["asks"]) == 1, seen
        expect(page.locator(f"{SYSTEM} .win-notice")).to_have_count(0)
        shot(page, locale, "asks-once")


# ------------------------------------------------- a corner already taken

ROW_TITLE_BOX = """id => {
  const node = document.getElementById(id);
  const r = node.getBoundingClientRect();
  const after = getComputedStyle(node, '::after');
  const shift = new DOMMatrix(after.transform === 'none' ? undefined : after.transform);
  const width = parseFloat(after.width);
  const left = after.left === 'auto'
    ? r.width - parseFloat(after.right) - width
    : parseFloat(after.left);
  return { left: r.left + left + shift.e, right: r.left + left + shift.e + width,
           content: after.content, viewport: window.innerWidth };
}"""

SEEN_AT_CENTRE = """id => {
  const node = document.getElementById(id);
  const r = node.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return Boolean(hit) && (hit === node || node.contains(hit));
}"""


def rect(page, element_id: str) -> dict:
    found = page.locator(f"#{element_id}").bounding_box()
    assert found is not None
    return found


@pytest.mark.parametrize("locale", LOCALES)
def test_a_second_control_moved_to_a_corner_goes_beside_the_first(browser, system, locale):
    words = WORDS[locale]
    first, second = words["songs"]
    with two_songs(browser, system, locale) as page:
        posted = watch_snapshots(page)
        say(page, words["second"])
        wait_at(page, "btn_play_2", 20, 20)
        snapshot_moved(page, posted, "btn_play_2")
        # its row's title is whole on screen, not cut at the left edge
        label = page.evaluate(ROW_TITLE_BOX, "btn_play_2")
        assert second in label["content"]
        assert label["left"] >= 0 and label["right"] <= label["viewport"], label

        ask(page, words["first"], words["beside"])
        page.wait_for_function(
            "() => document.getElementById('btn_play').classList.contains('ui-moved')"
        )
        one, two = rect(page, "btn_play"), rect(page, "btn_play_2")
        assert (round(two["x"]), round(two["y"])) == (20, 20)
        assert round(one["x"]) == 20 and one["y"] >= two["y"] + two["height"], (one, two)
        page.click(f"{MUSIC} .win-title")  # its window in front: both controls are seen
        assert page.evaluate(SEEN_AT_CENTRE, "btn_play")
        assert page.evaluate(SEEN_AT_CENTRE, "btn_play_2")
        for element_id in ("btn_play", "btn_play_2"):
            label = page.evaluate(ROW_TITLE_BOX, element_id)
            assert label["left"] >= 0 and label["right"] <= label["viewport"], label
        shot(page, locale, "beside")

        # in the top-right corner the row's title goes on the control's left
        post = "c => window.postMessage({aios: 'ui_command', command: c}, location.origin)"
        page.evaluate(post, {"op": "move", "id": "btn_play_2", "x": 1200, "y": 20})
        wait_at(page, "btn_play_2", 1200, 20)
        label = page.evaluate(ROW_TITLE_BOX, "btn_play_2")
        assert label["left"] >= 0 and label["right"] <= label["viewport"], label
        shot(page, locale, "row-title-at-the-right")


# ------------------------------------------------------------------ undo


@pytest.mark.parametrize("locale", LOCALES)
def test_a_typed_undo_takes_back_one_change_after_another(browser, system, locale):
    words = WORDS[locale]
    first, second = words["songs"]
    with two_songs(browser, system, locale) as page:
        posted = watch_snapshots(page)
        say(page, words["second"])
        wait_at(page, "btn_play_2", 20, 20)
        snapshot_holds(page, posted, 1)
        ask(page, words["first"], words["beside"])
        snapshot_holds(page, posted, 2)
        # another instruction between: the system window still offers a way back,
        # saying which change it takes back
        say(page, words["status"])
        expect(page.locator(SYSTEM)).to_have_attribute(
            "data-view-type", re.compile("card|dashboard")
        )
        undo_button = page.locator(SYSTEM).get_by_role(
            "button", name=words["undo_last"], exact=True
        )
        expect(undo_button).to_have_count(1)
        expect(
            page.locator(SYSTEM).get_by_role("button", name=words["undo"], exact=True)
        ).to_have_count(0)
        shot(page, locale, "undo-offered-after-status")

        # a reload keeps the history (what the reloaded page posts)
        posted.clear()
        page.reload()
        page.wait_for_selector("#task_music_app")
        expect(page.locator("#btn_play")).to_have_class(re.compile(r"\bui-moved\b"))
        snapshot_holds(page, posted, 2)

        # typed: the latest change first, then the one before
        ask(page, words["undo"], words["undone_first"])
        page.wait_for_function(
            "() => !document.getElementById('btn_play').classList.contains('ui-moved')"
        )
        expect(page.locator("#btn_play_2")).to_have_class(re.compile(r"\bui-moved\b"))
        expect(page.locator("#toasts .toast-error")).to_have_count(0)
        shot(page, locale, "undone-once")
        snapshot_holds(page, posted, 1)
        ask(page, words["undo_again"], words["undone_second"])
        page.wait_for_function(
            "() => !document.getElementById('btn_play_2').classList.contains('ui-moved')"
        )
        expect(
            page.locator(f"{MUSIC} .v-list-item", has_text=second).locator("#btn_play_2")
        ).to_have_count(1)
        snapshot_holds(page, posted, 0)
        ask(page, words["undo"], words["nothing_to_undo"])

        # a reset ends the history
        say(page, words["second"])
        wait_at(page, "btn_play_2", 20, 20)
        snapshot_holds(page, posted, 1)
        page.keyboard.press("Control+Alt+r")
        snapshot_holds(page, posted, 0)
        ask(page, words["undo"], words["nothing_to_undo"])
        expect(page.locator("#btn_play_2")).not_to_have_class(re.compile(r"\bui-moved\b"))
        shot(page, locale, "nothing-to-undo")


# --------------------------------------------------------------- menus

OPAQUE = """selector => {
  const style = getComputedStyle(document.querySelector(selector));
  const alpha = (style.backgroundColor.match(/rgba\\(.*,\\s*([\\d.]+)\\)/) || [0, '1'])[1];
  return Number(alpha) === 1 && Number(style.opacity) === 1;
}"""


@pytest.mark.parametrize("locale", LOCALES)
def test_the_start_menu_and_the_taskbar_menu_are_opaque(browser, system, locale):
    words = WORDS[locale]
    with two_songs(browser, system, locale) as page:
        page.click("#start_button")
        expect(page.locator("#start_menu")).to_be_visible()
        assert page.evaluate(OPAQUE, "#start_menu")
        shot(page, locale, "start-menu")
        page.keyboard.press("Escape")
        page.locator("#taskbar").click(button="right", position={"x": 330, "y": 26})
        expect(page.locator("#system_menu")).to_be_visible()
        assert page.evaluate(OPAQUE, "#system_menu")
        shot(page, locale, "taskbar-menu")
        assert words  # the same in both languages; the screenshots show each


POST = "c => window.postMessage({aios: 'ui_command', command: c}, location.origin)"


def test_undo_puts_a_moved_window_back_and_comes_once(browser, system):
    """A window's place is part of the history; the same undo delivered twice (the
    answer and the event stream) takes back one step, not two."""
    with two_songs(browser, system, "zh-CN") as page:
        music = page.locator(MUSIC)
        before = music.bounding_box()
        page.evaluate(POST, {"op": "change_color", "id": "desktop", "color": "teal"})
        page.evaluate(POST, {"op": "move", "id": "win_music_app", "x": 500, "y": 200})
        wait_at(page, "win_music_app", 500, 200)
        undo = {"op": "undo", "id": "layout", "ref": "one"}
        page.evaluate(POST, undo)
        page.evaluate(POST, undo)
        page.wait_for_function(
            "([x, y]) => { const r = document.getElementById('win_music_app')"
            ".getBoundingClientRect(); return Math.round(r.left) === x"
            " && Math.round(r.top) === y; }",
            arg=[round(before["x"]), round(before["y"])],
        )
        # the colour, one step earlier, is still there
        expect(page.locator("#desktop")).to_have_css("background-color", "rgb(0, 128, 128)")
        page.evaluate(POST, {"op": "undo", "id": "layout", "ref": "two"})
        expect(page.locator("#desktop")).not_to_have_css(
            "background-color", "rgb(0, 128, 128)"
        )
