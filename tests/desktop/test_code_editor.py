"""The code app's editor in Chromium (1280×800), against the real system with the
shipped code app: a monospace editor with line numbers, Tab indenting and
Shift+Tab outdenting, at least half the window's height, focused when it opens. Shown
in Chinese and in English, with screenshots under test-artifacts/desktop/.
"""

from __future__ import annotations

import copy
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
from tests.procs import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHIPPED = ("code_app",)
CODE = "#win_code_app"
ARTIFACTS = ROOT / "test-artifacts" / "desktop"
THREE_LINES = "def main():\nprint('hi')\nmain()\n"


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("code_editor")
    apps = copy_shipped_apps(root / "apps", SHIPPED)
    with serving(root, apps, SHIPPED, config=copy.deepcopy(TEST_CONFIG)) as running:
        yield running


def edit(browser, system: RunningSystem, locale: str, instruction: str, shot: str):
    """Open the editor of three.py (written afresh) by typing `instruction`."""
    (system.workspace("code_app") / "three.py").write_text(THREE_LINES, "utf-8")
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000, locale=locale) as page:
        page.fill("#command_input", instruction)
        page.press("#command_input", "Enter")
        editor = page.locator(CODE).locator(".v-editor")
        expect(editor.locator("textarea")).to_have_value(THREE_LINES)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.locator("#toasts .toast").evaluate_all(
            "nodes => nodes.forEach(n => n.remove())"
        )
        page.wait_for_function("() => document.getAnimations().length === 0")
        page.screenshot(path=str(ARTIFACTS / f"code-editor-{shot}.png"))
        yield page


@pytest.fixture
def chinese(browser, system: RunningSystem) -> Iterator[object]:
    yield from edit(browser, system, "zh-CN", "编辑 three.py", "zh")


@pytest.fixture
def english(browser, system: RunningSystem) -> Iterator[object]:
    yield from edit(browser, system, "en-US", "edit three.py", "en")


def test_the_editor_is_monospace_with_a_number_for_each_line(chinese) -> None:
    editor = chinese.locator(CODE).locator(".v-editor")
    text = editor.locator("textarea")
    widths = text.evaluate(
        """n => {
          const c = document.createElement("canvas").getContext("2d");
          c.font = getComputedStyle(n).font;
          return [c.measureText("iiii").width, c.measureText("WWWW").width];
        }"""
    )
    assert widths[0] == widths[1], widths  # every letter as wide as the next
    # three lines and the empty one after the last newline
    expect(editor.locator(".v-editor-lines > div")).to_have_text(["1", "2", "3", "4"])
    text.press("End")
    text.press("Enter")
    expect(editor.locator(".v-editor-lines > div")).to_have_count(5)


def test_the_editor_has_the_focus_and_half_the_window(chinese) -> None:
    window = chinese.locator(CODE)
    text = window.locator(".v-editor textarea")
    expect(text).to_be_focused()
    editor_height = window.locator(".v-editor").bounding_box()["height"]
    window_height = window.bounding_box()["height"]
    assert editor_height >= window_height / 2, (editor_height, window_height)


def test_tab_indents_and_shift_tab_outdents(english) -> None:
    text = english.locator(CODE).locator(".v-editor textarea")
    expect(text).to_be_focused()
    # the caret to the start of the second line: Tab indents it by four spaces
    text.evaluate("n => n.setSelectionRange(12, 12)")
    english.keyboard.press("Tab")
    expect(text).to_have_value("def main():\n    print('hi')\nmain()\n")
    expect(text).to_be_focused()  # the focus stayed in the editor
    # every selected line indented, then taken back
    text.evaluate("n => n.setSelectionRange(0, n.value.length - 1)")
    english.keyboard.press("Tab")
    expect(text).to_have_value("    def main():\n        print('hi')\n    main()\n")
    english.keyboard.press("Shift+Tab")
    expect(text).to_have_value("def main():\n    print('hi')\nmain()\n")
    # Esc, then Tab: the keyboard leaves the editor
    english.keyboard.press("Escape")
    english.keyboard.press("Tab")
    expect(text).not_to_be_focused()
    expect(text).to_have_value("def main():\n    print('hi')\nmain()\n")


def test_saving_keeps_what_was_indented(english, system: RunningSystem) -> None:
    window = english.locator(CODE)
    text = window.locator(".v-editor textarea")
    text.evaluate("n => n.setSelectionRange(12, 12)")
    english.keyboard.press("Tab")
    window.get_by_role("button", name="Save", exact=True).click()
    english.locator("#confirm_dialog").get_by_role("button", name="Allow once").click()
    expect(window.locator(".v-code code")).to_have_text(
        "def main():\n    print('hi')\nmain()\n"
    )
    saved = (system.workspace("code_app") / "three.py").read_text("utf-8")
    assert saved == "def main():\n    print('hi')\nmain()\n"
