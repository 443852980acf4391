"""Journeys with the desktop's own parts: the start menu, the taskbar, windows opened,
minimised, maximised and closed (by hand and by words), the settings' language (and
the toasts said before it), the wallpaper, moving the play button (the design's F-3),
undo, the taskbar hidden and shown, and a reload that keeps the windows.

In Chromium at 1280×800, in Chinese and in English, against the real system with
every shipped app; the music library holds one song of the user's. What happened is
read from the page (where a control is drawn, the background's colour, which window
is in front), from the apps' processes and from the saved settings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.fakes.music_api import make_wav
from tests.journeys.conftest import LOCALES, SHIPPED, Journey, World, start_world

pytestmark = [pytest.mark.browser, pytest.mark.slow]
NAMES = {
    "zh-CN": [
        "智能助手",
        "代码应用",
        "Hello小AI",
        "音乐应用",
        "定时任务",
        "技能",
        "系统控制",
    ],
    "en-US": [
        "Assistant",
        "Code",
        "Hello AI",
        "Music",
        "Scheduled tasks",
        "Skills",
        "System control",
    ],
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    for started in start_world(tmp_path_factory, "journeys_desktop"):
        music = started.workspace("music_app") / "music"
        music.mkdir(parents=True, exist_ok=True)
        (music / "song.wav").write_bytes(make_wav(20.0, title="Morning Light"))
        (started.workspace("code_app") / "kept.py").write_text("print('kept')\n", "utf-8")
        yield started


def box(journey: Journey, selector: str) -> dict[str, float]:
    found = journey.page.locator(selector).bounding_box()
    assert found is not None, f"{selector} is not drawn"
    return found


def in_front(journey: Journey) -> str:
    """The id of the window drawn above all others."""
    return str(
        journey.page.evaluate(
            "() => [...document.querySelectorAll('.window')]"
            ".filter(w => w.getClientRects().length)"
            ".sort((a, b) => Number(getComputedStyle(b).zIndex) - Number(getComputedStyle(a).zIndex))[0].id"
        )
    )


def running(journey: Journey, app_id: str) -> bool:
    return journey.world.system.apps()[app_id]["status"] == "running"


@pytest.mark.parametrize("locale", LOCALES)
def test_start_menu_lists_every_app_and_opens_one(journey: Journey, locale: str) -> None:
    page = journey.page
    page.click("#start_button")
    menu = page.locator("#start_menu")
    expect(menu).to_be_visible()
    expect(menu.locator(".start-item-name")).to_have_text(NAMES[locale])
    journey.shot("1-menu")
    menu.locator(".start-item", has_text=journey.tr("代码应用", "Code")).click()
    expect(menu).to_be_hidden()
    window = journey.window("code_app")
    expect(window.locator(".win-title")).to_have_text(journey.tr("代码应用", "Code"))
    expect(journey.status("code_app")).to_contain_text(
        journey.tr("工作区有 1 个 Python 文件", "The workspace has 1 Python file")
    )
    expect(window.locator(".v-list-item[data-item-id='kept.py']")).to_have_count(1)
    journey.shot("2-opened")


@pytest.mark.parametrize("locale", LOCALES)
def test_taskbar_icon_opens_minimises_and_restores(journey: Journey, locale: str) -> None:
    page = journey.page
    icon = page.locator("#task_hello_app")
    window = journey.window("hello_app")
    icon.click()
    expect(window.locator(".v-text")).to_have_text(
        journey.tr("你好！很高兴见到你。", "Hello! Nice to meet you.")
    )
    journey.shot("1-opened")
    icon.click()  # its window is in front: the icon puts it away
    expect(window).to_be_hidden()
    expect(icon).to_have_class(re.compile(r"\bminimized\b"))
    assert running(journey, "hello_app")  # minimised, the app goes on running
    journey.shot("2-minimised")
    icon.click()
    expect(window).to_be_visible()
    expect(window.locator(".v-text")).to_have_text(
        journey.tr("你好！很高兴见到你。", "Hello! Nice to meet you.")
    )
    journey.shot("3-restored")


@pytest.mark.parametrize("locale", LOCALES)
def test_window_buttons_minimise_maximise_and_close(journey: Journey, locale: str) -> None:
    page = journey.page
    page.click("#task_skills_app")
    window = journey.window("skills_app")
    expect(journey.status("skills_app")).to_have_text(
        journey.tr("共有 3 个技能", "3 skills")
    )
    window.locator(".win-min").click()
    expect(window).to_be_hidden()
    expect(page.locator("#task_skills_app")).to_have_class(re.compile(r"\bminimized\b"))
    journey.shot("1-minimised")
    page.click("#task_skills_app")
    expect(window).to_be_visible()
    window.locator(".win-max").click()
    full = box(journey, "#win_skills_app")
    taskbar = box(journey, "#taskbar")
    assert (full["x"], full["y"], full["width"]) == (0, 0, 1280)
    assert full["y"] + full["height"] == pytest.approx(taskbar["y"], abs=1)
    journey.shot("2-maximised")
    window.locator(".win-close").click()
    expect(window).to_have_count(0)
    assert running(journey, "skills_app")  # closing the window leaves the app running
    journey.shot("3-closed")


@pytest.mark.parametrize("locale", LOCALES)
def test_settings_switch_the_language(journey: Journey, locale: str) -> None:
    world = journey.world
    other = journey.tr("en-US", "zh-CN")
    page = journey.page
    page.click("#task_code_app")
    expect(journey.window("code_app").locator(".win-title")).to_have_text(
        journey.tr("代码应用", "Code")
    )
    welcome = page.locator("#toasts .toast", has_text=journey.tr("欢迎使用", "Welcome to"))
    try:
        page.click("#start_button")
        page.click("#start_menu [data-system-action=settings]")
        dialog = page.locator("#settings_dialog")
        expect(dialog).to_be_visible()
        page.select_option("#settings_ui_language", other)
        # the welcome, said before the switch, is still on screen
        expect(welcome).to_have_count(1)
        journey.shot("1-chosen")
        page.click("#settings_save")
        expect(dialog).to_have_count(0)
        journey.speaks = other
        # a toast said in the old language does not stay (its ✕ labelled in it too):
        # gone with the switch, not when its time is up
        assert welcome.count() == 0
        expect(page.locator("#toasts .toast")).to_have_count(1)
        expect(page.locator("#toasts .toast-title")).to_have_text(
            journey.tr("Settings saved", "设置已保存")
        )
        expect(page.locator("#toasts .toast-close")).to_have_attribute(
            "aria-label", journey.tr("Close", "关闭")
        )
        assert world.settings()["ui_language"] == other
        expect(page.locator("#start_button .start-text")).to_have_text(
            journey.tr("Start", "开始")
        )
        expect(page.locator("#desktop_status")).to_have_text(journey.tr("Ready", "就绪"))
        # the clock's tooltip follows at its next tick
        weekday = journey.tr(r"^[A-Z][a-z]+day, ", "星期")
        expect(page.locator("#clock")).to_have_attribute("title", re.compile(weekday))
        expect(journey.window("code_app").locator(".win-title")).to_have_text(
            journey.tr("Code", "代码应用")
        )
        expect(journey.status("code_app")).to_have_text(
            journey.tr("The workspace has 1 Python file", "工作区有 1 个 Python 文件")
        )
        journey.shot("2-switched")
    finally:
        world.put_settings({"ui_language": ""})


@pytest.mark.parametrize("locale", LOCALES)
def test_wallpaper_turns_blue_and_undo_takes_it_back(journey: Journey, locale: str) -> None:
    desktop = journey.page.locator("#desktop")
    before = desktop.evaluate("n => getComputedStyle(n).backgroundColor")
    assert before != "rgb(0, 0, 255)"
    journey.say(journey.tr("把背景换成蓝色", "change the wallpaper to blue"))
    expect(journey.status("system_agent")).to_have_text(
        journey.tr("已将背景改成蓝色", "Made the wallpaper blue")
    )
    expect(desktop).to_have_css("background-color", "rgb(0, 0, 255)")
    journey.shot("1-blue")
    journey.say(journey.tr("撤销", "undo"))
    expect(journey.status("system_agent")).to_have_text(
        journey.tr("已撤销：改颜色：桌面背景", "Undone: recolouring the background")
    )
    expect(desktop).to_have_css("background-color", before)
    journey.shot("2-undone")


def open_music_with_its_song(journey: Journey) -> None:
    """The music window on the library's one song, once the desktop has told the
    system app where its play button is."""
    with journey.page.expect_response(
        lambda r: (
            r.url.endswith("/api/ui/snapshot") and "btn_play" in (r.request.post_data or "")
        )
    ):
        journey.page.click("#task_music_app")
    expect(journey.window("music_app").locator(".v-list-item")).to_have_count(1)


def at(journey: Journey, element_id: str, x: int, y: int) -> None:
    journey.page.wait_for_function(
        "([id, x, y]) => { const n = document.getElementById(id); if (!n) return false;"
        " const r = n.getBoundingClientRect();"
        " return Math.round(r.left) === x && Math.round(r.top) === y; }",
        arg=[element_id, x, y],
    )


@pytest.mark.parametrize("locale", LOCALES)
def test_f3_move_the_play_button_to_the_top_left(journey: Journey, locale: str) -> None:
    open_music_with_its_song(journey)
    journey.shot("1-music")
    journey.say(journey.tr("把播放按钮移到左上角", "move the play button to the top-left"))
    expect(journey.status("system_agent")).to_have_text(
        journey.tr("已将播放按钮移到左上角", "Moved the play button to the top-left")
    )
    at(journey, "btn_play", 20, 20)
    expect(journey.page.locator("#btn_play")).to_have_text(journey.tr("播放", "Play"))
    journey.shot("2-moved")
    # where it is drawn now, it still plays its song
    journey.page.click("#btn_play")
    expect(journey.status("music_app")).to_contain_text("Morning Light")
    journey.wait_playing()
    journey.shot("3-plays")


@pytest.mark.parametrize("locale", LOCALES)
def test_undo_button_puts_the_play_button_back(journey: Journey, locale: str) -> None:
    open_music_with_its_song(journey)
    home = box(journey, "#btn_play")
    journey.say(journey.tr("把播放按钮移到左上角", "move the play button to the top-left"))
    at(journey, "btn_play", 20, 20)
    journey.shot("1-moved")
    # the answer's window opened behind the music window, which stays in view
    journey.page.click("#task_system_agent")
    journey.shot("2-answer")
    journey.button("system_agent", journey.tr("撤销", "Undo")).click()
    expect(journey.status("system_agent")).to_have_text(
        journey.tr(
            "已撤销：移动Morning Light的播放按钮",
            "Undone: moving the Play button of Morning Light",
        )
    )
    at(journey, "btn_play", round(home["x"]), round(home["y"]))
    journey.shot("3-back")


@pytest.mark.parametrize("locale", LOCALES)
def test_close_a_window_by_words(journey: Journey, locale: str) -> None:
    journey.page.click("#task_music_app")
    expect(journey.window("music_app").locator(".v-list-item")).to_have_count(1)
    journey.shot("1-open")
    journey.say(journey.tr("关闭音乐窗口", "close the music window"))
    expect(journey.status("system_agent")).to_have_text(
        journey.tr("已关闭音乐窗口", "Closed the music window")
    )
    expect(journey.window("music_app")).to_have_count(0)
    assert running(journey, "music_app")
    journey.shot("2-closed")


@pytest.mark.parametrize("locale", LOCALES)
def test_maximise_and_minimise_a_window_by_words(journey: Journey, locale: str) -> None:
    page = journey.page
    music = journey.window("music_app")
    page.click("#task_music_app")
    expect(music.locator(".v-list-item")).to_have_count(1)
    journey.say(journey.tr("最大化音乐窗口", "maximize the music window"))
    expect(journey.status("system_agent")).to_have_text(
        journey.tr("已最大化音乐窗口", "Maximised the music window")
    )
    expect(music).to_have_class(re.compile(r"\bmaximized\b"))
    full, taskbar = box(journey, "#win_music_app"), box(journey, "#taskbar")
    assert (full["x"], full["y"], full["width"]) == (0, 0, 1280)
    assert full["y"] + full["height"] == pytest.approx(taskbar["y"], abs=1)
    assert in_front(journey) == "win_music_app"
    journey.shot("1-maximised")
    journey.say(journey.tr("把音乐窗口最小化", "minimize the music window"))
    expect(journey.status("system_agent")).to_have_text(
        journey.tr("已最小化音乐窗口", "Minimised the music window")
    )
    expect(music).to_be_hidden()
    expect(page.locator("#task_music_app")).to_have_class(re.compile(r"\bminimized\b"))
    assert running(journey, "music_app")
    journey.shot("2-minimised")
    # words it cannot read: its help, said as not done, never toasted as a success
    journey.say(journey.tr("把音乐窗口摇一摇", "shake the music window"))
    notice = journey.window("system_agent").locator(".win-notice")
    expect(notice).to_contain_text(
        journey.tr("没听懂这条指令", "I did not understand that")
    )
    expect(notice).to_have_attribute("data-level", "warning")
    said = page.locator("#toasts .toast").last
    expect(said).to_contain_text(journey.tr("没听懂这条指令", "I did not understand that"))
    expect(said).to_have_class(re.compile(r"\btoast-warning\b"))
    expect(said.locator(".toast-icon")).not_to_have_text("✅")
    expect(journey.status("system_agent")).to_have_text(
        journey.tr("⚠️ 请看上方的提示", "⚠️ See the note above")
    )
    journey.shot("3-not-understood")


@pytest.mark.parametrize("locale", LOCALES)
def test_switch_to_a_window_by_words(journey: Journey, locale: str) -> None:
    journey.page.click("#task_code_app")
    expect(journey.window("code_app").locator(".v-list-item")).to_have_count(1)
    journey.page.click("#task_hello_app")
    expect(journey.window("hello_app").locator(".v-text")).to_be_visible()
    assert in_front(journey) == "win_hello_app"
    journey.say(journey.tr("切换到代码窗口", "switch to the code window"))
    expect(journey.status("system_agent")).to_have_text(
        journey.tr("已切换到代码窗口", "Switched to the code window")
    )
    journey.page.wait_for_function(
        "() => document.querySelector('#win_code_app').classList.contains('focused')"
    )
    assert in_front(journey) == "win_code_app"
    journey.shot("1-switched")


@pytest.mark.parametrize("locale", LOCALES)
def test_hide_and_show_the_taskbar(journey: Journey, locale: str) -> None:
    taskbar = journey.page.locator("#taskbar")
    journey.say(journey.tr("隐藏任务栏", "hide the taskbar"))
    expect(journey.status("system_agent")).to_have_text(
        journey.tr("已隐藏任务栏", "Hid the taskbar")
    )
    expect(taskbar).to_have_class(re.compile(r"\bui-hidden\b"))
    expect(journey.page.locator("#command_input")).to_be_visible()  # a way back
    journey.shot("1-hidden")
    journey.say(journey.tr("显示任务栏", "show the taskbar"))
    expect(journey.status("system_agent")).to_have_text(
        journey.tr("已显示任务栏", "Showed the taskbar")
    )
    expect(taskbar).not_to_have_class(re.compile(r"\bui-hidden\b"))
    expect(journey.page.locator("#task_code_app")).to_be_visible()
    journey.shot("2-shown")


@pytest.mark.parametrize("locale", LOCALES)
def test_reload_keeps_the_windows(journey: Journey, locale: str) -> None:
    page = journey.page
    journey.say(journey.tr("查看 kept.py", "view kept.py"))
    code = journey.window("code_app")
    expect(code.locator(".v-code code")).to_have_text("print('kept')\n")
    page.click("#task_hello_app")
    expect(journey.window("hello_app").locator(".v-text")).to_have_text(
        journey.tr("你好！很高兴见到你。", "Hello! Nice to meet you.")
    )
    journey.shot("1-before")
    page.reload()
    for app_id in SHIPPED:
        page.wait_for_selector(f"#task_{app_id}")
    expect(code.locator(".v-code code")).to_have_text("print('kept')\n")
    expect(journey.window("hello_app").locator(".v-text")).to_have_text(
        journey.tr("你好！很高兴见到你。", "Hello! Nice to meet you.")
    )
    journey.shot("2-after")
