"""In Chromium at 1280×800: one language at a time, dialogs that hold focus,
a Tools window for people, and the walk-through's smaller findings.

One real system with the shipped apps the user meets (code, music, hello, scheduled
tasks, skills, system control; the assistant is another app's work), the settings'
`ui_language` "en-US", a saved LLM key and a music catalogue that cannot be reached.
Each test starts from an English desktop. The screenshots of both languages go to
`test-artifacts/desktop/one-language/`; the language guard reads the rendered text
of every screen (text, titles, labels, placeholders): no Chinese on the English
desktop, no bracketed English gloss on the Chinese one.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.controller.system import TEST_CONFIG, RunningSystem, copy_shipped_apps, serving
from tests.desktop.conftest import ARTIFACTS, write_tone

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHIPPED = (
    "code_app",
    "hello_app",
    "music_app",
    "scheduler_app",
    "skills_app",
    "system_agent",
)
SHOTS = ARTIFACTS / "one-language"
CJK = re.compile(r"[\u3400-\u9fff\uff08\uff09\u3001-\u3011]")
# "（allow once）", "(search, play and download music)": English beside Chinese
GLOSS = re.compile(r"[（(]\s*[A-Za-z][A-Za-z ,;:'’/-]{2,}[)）]")
KEY = "sk-test-key-123456"

# the visible text of the page, and the words a person reads in tooltips and fields
SCREEN_TEXT = """() => {
  const out = [document.body.innerText];
  for (const node of document.querySelectorAll('*')) {
    if (!node.getClientRects().length) continue;
    for (const name of ['title', 'aria-label', 'placeholder']) {
      const value = node.getAttribute(name);
      if (value) out.push(value);
    }
  }
  return out.join('\\n');
}"""


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("one_language")
    apps = copy_shipped_apps(root / "apps", SHIPPED)
    config = copy.deepcopy(TEST_CONFIG)
    config["ui_language"] = "en-US"
    # a saved key whose service is not there: nothing leaves this machine
    config["llm"] = {"api_key": KEY, "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    config["app_settings"] = {"music_app": {"api_base": "http://127.0.0.1:9"}}
    config["tool_sandbox"] = {"http_domain_whitelist": ["127.0.0.1"]}
    with serving(root, apps, SHIPPED, config=config) as running:
        yield running


def put_settings(system: RunningSystem, changes: dict) -> None:
    answer = requests.put(
        f"{system.url}/api/settings", json=changes, headers=system.headers, timeout=30
    )
    assert answer.status_code == 200, answer.text


@pytest.fixture
def page(browser, system: RunningSystem) -> Iterator[object]:
    put_settings(system, {"ui_language": "en-US"})
    with desktop_page(
        browser, system, SHIPPED, timeout_ms=20000, locale="en-US"
    ) as desktop:
        expect(desktop.locator("#start_button .start-text")).to_have_text("Start")
        yield desktop


def shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def say(page, text: str) -> None:
    page.fill("#command_input", text)
    with page.expect_response(lambda r: r.url.endswith("/api/instruction")):
        page.press("#command_input", "Enter")


def no_toasts(page) -> None:
    page.locator("#toasts .toast").evaluate_all("nodes => nodes.forEach(n => n.remove())")


def settled(page) -> None:
    """Animations ended (a window opening, a dialog popping)."""
    page.wait_for_function("() => document.getAnimations().length === 0")


def english_only(page, where: str) -> None:
    text = page.evaluate(SCREEN_TEXT)
    found = sorted({line for line in text.splitlines() if CJK.search(line)})
    assert not found, f"Chinese on the English desktop ({where}): {found}"


def chinese_only(page, where: str) -> None:
    text = page.evaluate(SCREEN_TEXT)
    found = sorted({m.group(0) for m in GLOSS.finditer(text)})
    assert not found, f"English glosses on the Chinese desktop ({where}): {found}"


def open_from_start(page, action: str) -> None:
    page.click("#start_button")
    page.click(f"#start_menu [data-system-action={action}]")


def close_dialog(page) -> None:
    page.keyboard.press("Escape")
    expect(page.locator("#modal_root .modal")).to_have_count(0)


def walk(page, system: RunningSystem, check, suffix: str, words: dict[str, str]) -> None:
    """The screens of the done-when set, each checked by `check` and photographed."""
    settled(page)
    check(page, "desktop")
    shot(page, f"desktop-{suffix}")
    page.click("#start_button")
    settled(page)
    check(page, "start menu")
    shot(page, f"start-menu-{suffix}")
    page.keyboard.press("Escape")
    page.click("#task_music_app")
    page.locator("#win_music_app .win-actions").wait_for()
    (system.workspace("code_app") / "mine.py").write_text("print('mine')\n", "utf-8")
    say(page, words["edit"])
    code = page.locator("#win_code_app")
    expect(code.locator("textarea")).to_have_value("print('mine')\n")
    settled(page)
    check(page, "app windows")
    shot(page, f"app-window-{suffix}")
    code.locator("textarea").fill("print('typed')\n")
    code.get_by_role("button", name=words["save"], exact=True).click()
    dialog = page.locator("#confirm_dialog")
    expect(dialog).to_contain_text("mine.py")
    settled(page)
    check(page, "confirmation")
    shot(page, f"confirmation-{suffix}")
    dialog.locator("#confirm_deny").click()
    expect(dialog).to_have_count(0)
    no_toasts(page)
    open_from_start(page, "settings")
    page.locator("#settings_dialog").wait_for()
    settled(page)
    check(page, "settings")
    shot(page, f"settings-{suffix}")
    close_dialog(page)
    open_from_start(page, "tools")
    page.locator("#tools_groups .tool-card").first.wait_for()
    settled(page)
    check(page, "tools")
    shot(page, f"tools-{suffix}")
    close_dialog(page)


# ---------------------------------------------------------------- item 1


def test_1_the_english_desktop_is_english_and_a_switch_to_chinese_needs_no_reload(
    page, system: RunningSystem
) -> None:
    walk(page, system, english_only, "en", {"edit": "edit mine.py", "save": "Save"})
    start = page.locator("#start_menu_apps")
    for name in ("Code", "Music", "Scheduled tasks", "Skills", "System control"):
        expect(start.locator(".start-item-name", has_text=name)).to_have_count(1)
    expect(page.locator("#win_code_app .win-title")).to_have_text("Code")

    page.evaluate("window.__same_page = true")
    open_from_start(page, "settings")
    page.select_option("#settings_ui_language", "zh-CN")
    page.click("#settings_save")
    expect(page.locator("#start_button .start-text")).to_have_text("开始")
    expect(page.locator("#desktop_status")).to_have_text("就绪")
    expect(page.locator("#win_code_app .win-title")).to_have_text("代码应用")
    expect(page.locator("#win_music_app .win-actions")).to_contain_text(
        "搜索"
    )  # asked again
    # the code the user typed (kept after the refusal) is not thrown away by the switch
    expect(page.locator("#win_code_app textarea")).to_have_value("print('typed')\n")
    no_toasts(page)
    walk(page, system, chinese_only, "zh", {"edit": "编辑 mine.py", "save": "保存"})
    expect(start.locator(".start-item-desc").first).to_have_text(
        "编写、查看、编辑和运行 Python 代码"
    )
    assert page.evaluate("window.__same_page") is True  # no reload


# ---------------------------------------------------------------- item 2


def test_2_the_tools_window_says_what_each_tool_does_by_source(page) -> None:
    open_from_start(page, "tools")
    page.select_option("#tools_app", "code_app")
    built_in = page.locator("#tools_groups .tool-group[data-provider=atomic]")
    expect(built_in.locator(".tool-group-title")).to_contain_text("Built-in tools")
    read = built_in.locator(".tool-card[data-tool=file_read]")
    expect(read.locator(".tool-does")).to_have_text("Reads a file of the workspace")
    expect(read.locator(".tool-risk")).to_have_text("Only reads")
    expect(read.locator(".tool-notes")).to_contain_text("changes nothing")
    start = built_in.locator(".tool-card[data-tool=process_start]")
    expect(start.locator(".tool-risk")).to_have_text("Runs programs")
    expect(start.locator(".tool-asks")).to_have_text("Asks first")
    schema = read.locator("details.tool-schema")
    assert schema.get_attribute("open") is None  # the schema, folded away
    expect(schema.locator("pre")).to_be_hidden()
    text = page.locator("#tools_dialog").inner_text()
    for developer in ("atomic: running", "input_schema", "`", "write —", "— parallel"):
        assert developer not in text, developer
    english_only(page, "tools")
    settled(page)
    shot(page, "tools-code-app-en")


# ---------------------------------------------------------------- item 5


def test_5_an_instruction_no_app_understands_is_one_sentence_with_a_way_on(page) -> None:
    no_toasts(page)
    say(page, "frobnicate the wibble")
    toast = page.locator("#toasts .toast")
    expect(toast).to_have_count(1)
    expect(toast.locator(".toast-body")).to_have_text(
        "No app can do that. The start menu shows what each app can do."
    )
    shot(page, "no-app-en")
    toast.get_by_role("button", name="See what the apps can do").click()
    expect(page.locator("#start_menu")).to_be_visible()
    expect(page.locator("#start_menu .start-item-desc").first).to_be_visible()


# ---------------------------------------------------------------- item 6


def focus_is_inside(page, selector: str) -> bool:
    return bool(
        page.evaluate(
            f"document.querySelector({selector!r}).contains(document.activeElement)"
        )
    )


def test_6_dialogs_take_hold_and_give_back_the_focus(page) -> None:
    page.focus("#command_input")
    open_from_start(page, "settings")
    page.locator("#settings_dialog").wait_for()
    assert focus_is_inside(page, "#settings_dialog")
    for press in range(30):
        page.keyboard.press("Tab")
        assert focus_is_inside(page, "#settings_dialog"), f"Tab {press + 1} left the dialog"
    for press in range(6):
        page.keyboard.press("Shift+Tab")
        assert focus_is_inside(page, "#settings_dialog"), f"Shift+Tab {press + 1} left it"
    close_dialog(page)
    assert page.evaluate("document.activeElement.id") == "command_input"  # given back

    page.focus("#command_input")
    page.click("#task_hello_app")
    page.locator("#win_hello_app .win-facts").click()  # the app's About panel
    page.locator("#app_info_dialog").wait_for()
    for _ in range(5):
        page.keyboard.press("Tab")
        assert focus_is_inside(page, "#app_info_dialog")
    close_dialog(page)
    assert focus_is_inside(page, "#win_hello_app")  # back on the button that opened it


# ---------------------------------------------------------------- item 7


def test_7_a_saved_api_key_can_be_removed_in_settings(page, system: RunningSystem) -> None:
    try:
        open_from_start(page, "settings")
        key = page.locator("#settings_api_key")
        expect(key).to_have_attribute("placeholder", re.compile(r"^Set: .*3456"))
        page.click("#settings_api_key_remove")
        expect(key).to_have_attribute("placeholder", "Removed when you save")
        shot(page, "settings-remove-key-en")
        page.click("#settings_save")
        expect(page.locator("#settings_dialog")).to_have_count(0)
        llm = system.get("/api/settings").json()["llm"]
        assert llm["api_key"] == "" and llm["base_url"] == "http://127.0.0.1:9/v1"
        open_from_start(page, "settings")
        expect(page.locator("#settings_api_key")).to_have_attribute(
            "placeholder", "Not set"
        )
        expect(page.locator("#settings_api_key_remove")).to_have_count(0)
    finally:
        put_settings(system, {"llm": {"api_key": KEY}})


# ---------------------------------------------------------------- item 8


def test_8_all_matches_change_the_hint_shows_once_and_a_reload_keeps_the_desktop(
    page, system: RunningSystem
) -> None:
    music = system.workspace("music_app") / "music"
    music.mkdir(parents=True, exist_ok=True)
    songs = [music / f"{name}.wav" for name in ("Morning Light", "Evening Rain")]
    for song in songs:
        write_tone(song)
    try:
        changes_every_match_and_keeps_over_a_reload(page)
    finally:
        for song in songs:
            song.unlink()


def changes_every_match_and_keeps_over_a_reload(page) -> None:
    def both_plays_seen(request) -> bool:
        return (
            request.url.endswith("/api/ui/snapshot")
            and (request.post_data or "").count('"label":"Play"') >= 2
        )

    with page.expect_request(both_plays_seen):  # the system agent sees both
        page.click("#task_music_app")
    window = page.locator("#win_music_app")
    plays = window.get_by_role("button", name="Play", exact=True)
    expect(plays).to_have_count(2)

    say(page, "make the play button red")  # two of that name: which one?
    expect(page.locator("#win_system_agent")).to_contain_text("Which one?")
    say(page, "make all play buttons red")
    for index in range(2):
        expect(plays.nth(index)).to_have_css("background-color", "rgb(255, 0, 0)")

    no_toasts(page)
    page.evaluate(  # count the hide commands the page performs
        "() => { window.__hides = 0; window.addEventListener('message', e => {"
        " if (e.data && e.data.aios === 'ui_command' && e.data.command.op === 'hide')"
        " window.__hides += 1; }); }"
    )
    say(page, "hide the taskbar")
    expect(page.locator("#taskbar")).to_have_class(re.compile(r"\bui-hidden\b"))
    # the reply's copy and the event stream's copy of the command have both come
    page.wait_for_function("() => window.__hides >= 2")
    expect(page.locator(".toast-title", has_text="Taskbar hidden")).to_have_count(1)

    window.locator(".win-title").hover()
    page.mouse.down()
    page.mouse.move(420, 120)
    page.mouse.up()
    where = "n => [n.style.left, n.style.top, n.style.width, n.style.height]"
    before = window.evaluate(where)
    page.reload()
    page.locator("#win_music_app .win-actions").wait_for()
    expect(page.locator("#taskbar")).to_have_class(re.compile(r"\bui-hidden\b"))
    assert page.locator("#win_music_app").evaluate(where) == before
    for index in range(2):
        expect(plays.nth(index)).to_have_css("background-color", "rgb(255, 0, 0)")
    shot(page, "after-reload-en")
    page.keyboard.press("Control+Alt+r")
    expect(page.locator("#taskbar")).not_to_have_class(re.compile(r"\bui-hidden\b"))


# ---------------------------------------------------------------- item 9


def test_9_the_layout_neither_wraps_mid_word_nor_clips(page, system: RunningSystem) -> None:
    for language, labels in (
        ("en-US", ("Settings", "Tools", "Install", "Layout", "Refresh", "About")),
        ("zh-CN", ("设置", "工具", "安装", "还原布局", "刷新", "关于")),
    ):
        if language == "zh-CN":
            open_from_start(page, "settings")
            page.select_option("#settings_ui_language", "zh-CN")
            page.click("#settings_save")
            expect(page.locator("#start_button .start-text")).to_have_text("开始")
        page.click("#start_button")
        menu = page.locator("#start_menu").bounding_box()
        for label in labels:
            button = page.locator("#start_menu .start-foot button", has_text=label)
            box = button.bounding_box()
            one_line = button.evaluate(
                "b => { const r = document.createRange(); r.selectNodeContents(b);"
                " return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }"
            )
            assert one_line == 1, f"{label} wraps"
            assert button.evaluate("b => b.scrollWidth <= b.clientWidth"), (
                f"{label} clipped"
            )
            assert box["x"] + box["width"] <= menu["x"] + menu["width"], f"{label} outside"
        shot(page, f"start-foot-{language}")
        page.keyboard.press("Escape")
    put_settings(system, {"ui_language": "en-US"})


def test_9_the_install_dialog_is_a_form_and_enter_submits_it(page) -> None:
    open_from_start(page, "install")
    dialog = page.locator("#install_dialog")
    path = dialog.get_by_label("Or a path on this machine")
    expect(path).to_be_focused()
    expect(path).to_have_css("border-radius", "8px")
    path.fill("/nowhere/at/all")
    path.press("Enter")
    expect(dialog.locator("#install_result")).to_contain_text("Not installed")
    english_only(page, "install dialog")
    shot(page, "install-dialog-en")


def test_9_an_unreachable_catalogue_is_said_once(page) -> None:
    say(page, "play songs by Taylor Swift")
    window = page.locator("#win_music_app")
    expect(window.locator(".win-notice")).to_contain_text("cannot be reached")
    settled(page)
    shot(page, "music-offline-en")
    main = window.locator(".win-main").inner_text()
    assert main.count("cannot be reached") == 1, main  # the notice, not the list again
    expect(window.locator(".v-empty")).to_have_text(
        'Your local library has no songs yet. Choose music files with "Add songs", '
        "drop them onto this window, or import a folder (such as ~/Music)."
    )
    toasts = page.locator("#toasts .toast", has_text="cannot be reached")
    expect(toasts).to_have_count(1)


LINES = """c => { const r = document.createRange(); r.selectNodeContents(c);
  return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }"""


def test_9_the_skills_table_keeps_short_cells_on_one_line(
    page, system: RunningSystem
) -> None:
    put_settings(system, {"ui_language": "zh-CN"})
    page.reload()
    expect(page.locator("#start_button .start-text")).to_have_text("开始")
    page.click("#task_skills_app")
    window = page.locator("#win_skills_app")
    table = window.locator("table.v-table")
    table.locator("tbody tr").first.wait_for()
    window.evaluate("w => { w.style.width = '380px'; }")  # a narrow window
    settled(page)
    shot(page, "skills-narrow-zh")
    for row in table.locator("tbody tr").all():
        cells = row.locator("td:not(.v-item-actions)").all()
        for cell in cells[:3]:  # name, kind, source: one line each
            assert cell.evaluate(LINES) == 1, cell.inner_text()
        summary = cells[3]
        box = summary.bounding_box()
        assert box["width"] > 150, box  # wraps at words in a column of its own width
