"""The code app's window in Chromium (1280×800), against the real system with the
shipped code app: what a run printed, a cancelled run, a refused overwrite.

Output (10): a program's whole output is in the view, scrollable, not only in the status
line and not cut at 200 characters; output the executor had to cut (its
`limits.output_bytes`, 4 KB here) carries a marker with the full size. Cancel (11): a
cancelled run keeps the view with the code and its buttons, says 已取消 in a neutral
status, and the buttons still work. Overwrite (12): a denied overwrite is not a failure: the
edit form still holds the typed code and says plainly nothing was saved; a new file
whose name exists asks first. Each item is also walked in English, with screenshots
under test-artifacts/desktop/.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path

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
OUTPUT_CAP = 4096
ARTIFACTS = ROOT / "test-artifacts" / "desktop"
SLOW = "import time\ntime.sleep(25)\nprint('woke up')\n"
CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("code_window")
    apps = copy_shipped_apps(root / "apps", SHIPPED)
    config = copy.deepcopy(TEST_CONFIG)
    config["limits"] = {"output_bytes": OUTPUT_CAP}
    with serving(root, apps, SHIPPED, config=config) as running:
        yield running


@pytest.fixture
def page(browser, system: RunningSystem) -> Iterator[object]:
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000) as desktop:
        yield desktop


@pytest.fixture
def english(browser, system: RunningSystem) -> Iterator[object]:
    """A desktop page of an en-US browser (the desktop follows the browser's language)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(20000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{system.url}/?token={system.token}")
    page.wait_for_selector("#task_code_app")
    expect(page.locator("#start_button .start-text")).to_have_text("Start")
    try:
        yield page
    finally:
        context.close()
    assert errors == [], f"uncaught script errors on the desktop: {errors}"


def say(page, text: str) -> None:
    page.fill("#command_input", text)
    page.press("#command_input", "Enter")


def shot(page, name: str) -> Path:
    """test-artifacts/desktop/code-window-<name>.png, toasts cleared first."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator("#toasts .toast").evaluate_all("nodes => nodes.forEach(n => n.remove())")
    page.wait_for_function("() => document.getAnimations().length === 0")
    path = ARTIFACTS / f"code-window-{name}.png"
    page.screenshot(path=str(path))
    return path


def put(system: RunningSystem, name: str, text: str) -> Path:
    """A file the user put in the code app's workspace (not one the app created)."""
    path = system.workspace("code_app") / name
    path.write_text(text, "utf-8")
    return path


def cancel_the_run(page) -> None:
    busy = page.locator(CODE).locator(".win-busy")
    expect(busy).to_be_visible()
    busy.locator(".win-busy-cancel").click()
    expect(busy).to_have_count(0, timeout=10000)


# ------------------------------------------------------------------ item 10


def test_10_one_line_output_is_in_the_view(page) -> None:
    say(page, "执行代码 print(2**10)")
    window = page.locator(CODE)
    expect(window.locator(".v-code-output pre")).to_have_text("1024\n")
    expect(window.locator(".win-status")).to_have_text(
        "运行结果：1024（代码已存为工作区里的 snippet.py）"
    )


def test_10_long_output_is_whole_and_scrollable(page) -> None:
    say(page, "执行代码 print('ab' * 300); print('end of it')")
    window = page.locator(CODE)
    output = window.locator(".v-code-output pre")
    expect(output).to_have_text("ab" * 300 + "\nend of it\n")
    expect(window.locator(".v-code-cut")).to_have_count(0)
    scroll = output.evaluate("n => getComputedStyle(n).overflowY")
    assert scroll in ("auto", "scroll"), scroll
    status = window.locator(".win-status").inner_text()
    assert "ab" * 300 not in status, status  # the status line does not pretend to hold it


def test_10_output_the_executor_cut_is_marked_with_its_full_size(page) -> None:
    say(page, "执行代码 print('x' * 20000)")
    window = page.locator(CODE)
    output = window.locator(".v-code-output pre")
    expect(output).to_contain_text("x" * 100)
    shown = len(output.inner_text().strip())
    assert 0 < shown <= OUTPUT_CAP, shown
    marker = window.locator(".v-code-cut")
    expect(marker).to_contain_text("输出太长")
    expect(marker).to_contain_text("19.5 KB")  # 20,001 bytes in all
    expect(window.locator(".win-status")).to_contain_text("截断")
    shot(page, "10-cut-zh")


# ------------------------------------------------------------------ item 11


def test_11_a_cancelled_run_keeps_the_view_and_its_buttons(page, system) -> None:
    put(system, "slow.py", SLOW)
    say(page, "查看 slow.py")
    window = page.locator(CODE)
    expect(window.locator(".v-code code")).to_have_text(SLOW)
    window.locator(".win-actions").get_by_role("button", name="运行").click()
    cancel_the_run(page)
    expect(window.locator(".v-error")).to_have_count(0)
    expect(window.locator(".v-code code")).to_have_text(SLOW)
    status = window.locator(".win-status")
    expect(status).to_have_text(re.compile("已取消"))
    expect(status).not_to_have_attribute("data-level", "error")
    color = status.evaluate("n => getComputedStyle(n).color")
    assert color != "rgb(239, 68, 68)", color  # not the red of errors
    shot(page, "11-cancelled-zh")
    # the buttons still work
    window.locator(".win-actions").get_by_role("button", name="编辑").click()
    expect(window.locator("textarea")).to_have_value(SLOW)


def test_11_a_cancelled_instruction_keeps_the_view_and_is_no_error_toast(
    page, system
) -> None:
    put(system, "slow2.py", SLOW)
    say(page, "查看 slow2.py")
    window = page.locator(CODE)
    expect(window.locator(".v-code code")).to_have_text(SLOW)
    say(page, "运行 slow2.py")
    cancel_the_run(page)
    expect(window.locator(".v-code code")).to_have_text(SLOW)
    expect(window.locator(".v-error")).to_have_count(0)
    expect(window.locator(".win-status")).to_have_text(re.compile("已取消"))
    toast = page.locator("#toasts .toast").last
    expect(toast).to_contain_text("已取消")
    expect(toast).not_to_have_class(re.compile(r"\btoast-error\b"))


# ------------------------------------------------------------------ item 12


def test_12_a_denied_overwrite_keeps_the_typed_code(page, system) -> None:
    mine = put(system, "mine.py", "print('mine')\n")
    say(page, "编辑 mine.py")
    window = page.locator(CODE)
    expect(window.locator("textarea")).to_have_value("print('mine')\n")
    window.locator("textarea").fill("print('typed')\n")
    window.get_by_role("button", name="保存", exact=True).click()
    dialog = page.locator("#confirm_dialog")
    expect(dialog).to_contain_text("覆盖已有文件 workspace/mine.py")
    assert "deny" not in dialog.inner_text().lower()  # one language at a time
    shot(page, "12-question-zh")
    dialog.get_by_role("button", name="拒绝", exact=True).click()
    expect(window.locator("textarea")).to_have_value("print('typed')\n")
    notice = window.locator(".win-notice")
    expect(notice).to_contain_text("没有保存")
    expect(notice).to_have_attribute("data-level", "info")
    expect(window).not_to_contain_text("失败")
    expect(window.locator(".win-status")).not_to_have_attribute("data-level", "error")
    assert mine.read_text("utf-8") == "print('mine')\n"
    shot(page, "12-denied-zh")
    # the edit is still there to save: allowed this time
    window.get_by_role("button", name="保存", exact=True).click()
    page.locator("#confirm_dialog").get_by_role("button", name="允许一次").click()
    expect(window.locator(".v-code code")).to_have_text("print('typed')\n")
    assert mine.read_text("utf-8") == "print('typed')\n"


def test_12_a_new_file_with_a_taken_name_asks_first(page, system) -> None:
    say(page, "执行代码 print('first')")  # snippet.py: the app's own file
    window = page.locator(CODE)
    expect(window.locator(".v-code-output pre")).to_have_text("first\n")
    snippet = system.workspace("code_app") / "snippet.py"
    say(page, "列出我的代码文件")
    new = window.locator(".win-actions form.act-form")
    expect(new).to_have_count(1)
    new.locator("input[name=path]").fill("snippet.py")
    new.locator("textarea[name=code]").fill("print('second')\n")
    new.get_by_role("button", name="新建文件").click()
    notice = window.locator(".win-notice")
    expect(notice).to_contain_text("snippet.py 已经存在")
    expect(window.locator(".v-form textarea")).to_have_value("print('second')\n")
    assert snippet.read_text("utf-8") == "print('first')\n"
    shot(page, "12-exists-zh")
    window.get_by_role("button", name="覆盖", exact=True).click()
    expect(window.locator(".v-code code")).to_have_text("print('second')\n")
    assert snippet.read_text("utf-8") == "print('second')\n"


def test_12_new_file_by_instruction_with_a_taken_name_asks_first(page, system) -> None:
    put(system, "taken.py", "print('taken')\n")
    say(page, "新建 taken.py")
    window = page.locator(CODE)
    window.locator("textarea").fill("print('other')\n")
    window.get_by_role("button", name="保存", exact=True).click()
    expect(window.locator(".win-notice")).to_contain_text("taken.py 已经存在")
    expect(window.locator(".v-form textarea")).to_have_value("print('other')\n")
    # another name saves at once
    window.locator(".v-form input[name=path]").fill("untaken.py")
    window.get_by_role("button", name="保存", exact=True).click()
    expect(window.locator(".v-code code")).to_have_text("print('other')\n")
    assert (system.workspace("code_app") / "untaken.py").read_text("utf-8") == (
        "print('other')\n"
    )
    assert (system.workspace("code_app") / "taken.py").read_text("utf-8") == (
        "print('taken')\n"
    )


# ------------------------------------------------------------------ in English


def test_10_to_12_in_english(english, system) -> None:
    page = english
    window = page.locator(CODE)
    say(page, "run print('y' * 20000)")
    expect(window.locator(".v-code-cut")).to_contain_text("Output too long")
    expect(window.locator(".v-code-cut")).to_contain_text("19.5 KB")
    expect(window.locator(".v-code-output")).to_contain_text("Output")
    shot(page, "10-cut-en")

    put(system, "slow_en.py", SLOW)
    say(page, "show slow_en.py")
    expect(window.locator(".v-code code")).to_have_text(SLOW)
    window.locator(".win-actions").get_by_role("button", name="Run").click()
    cancel_the_run(page)
    expect(window.locator(".v-code code")).to_have_text(SLOW)
    expect(window.locator(".win-status")).to_have_text(re.compile("Cancelled"))
    shot(page, "11-cancelled-en")

    put(system, "mine_en.py", "print('mine')\n")
    say(page, "edit mine_en.py")
    window.locator("textarea").fill("print('typed')\n")
    window.get_by_role("button", name="Save", exact=True).click()
    dialog = page.locator("#confirm_dialog")
    expect(dialog).to_contain_text("overwrite the existing file workspace/mine_en.py")
    said = dialog.inner_text()  # the app's own name is the manifest's, not translated
    assert not CHINESE.search(said.replace("代码应用", "")), said
    shot(page, "12-question-en")
    dialog.get_by_role("button", name="Deny", exact=True).click()
    expect(window.locator("textarea")).to_have_value("print('typed')\n")
    expect(window.locator(".win-notice")).to_contain_text("Not saved")
    shot(page, "12-denied-en")

    say(page, "new file mine_en.py")
    expect(window.locator(".win-status")).to_have_text("New file mine_en.py")
    window.locator("textarea").fill("print('again')\n")
    window.get_by_role("button", name="Save", exact=True).click()
    expect(window.locator(".win-notice")).to_contain_text("mine_en.py already exists")
    expect(window.locator(".v-form textarea")).to_have_value("print('again')\n")
    shot(page, "12-exists-en")


SHOTS = Path("/tmp/shots/routing")


@pytest.mark.parametrize(
    ("locale", "said", "settings", "button"),
    [
        ("zh-CN", "写一个能飞的程序", "“设置”里填写大模型的 API 密钥", "打开设置"),
        ("en-US", "write a program that can fly", "API key in Settings", "Open Settings"),
    ],
)
def test_the_no_model_note_says_settings_and_its_button_opens_them(
    browser, system: RunningSystem, locale: str, said: str, settings: str, button: str
) -> None:
    """The no-model note names no configuration key: it says that Settings is
    where a model's key goes, and its button opens Settings."""
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000, locale=locale) as page:
        say(page, said)
        window = page.locator(CODE)
        try:
            window.get_by_text(settings).first.wait_for()
        finally:
            page.screenshot(path=str(ARTIFACTS / f"code-no-model-{locale}.png"))
        shown = window.inner_text()
        assert "llm." not in shown and "AIOS_" not in shown, shown
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"code-no-model-{locale}.png"))
        window.get_by_role("button", name=button, exact=True).click()
        page.locator("#settings_dialog").wait_for()
        expect(page.locator("#settings_api_key")).to_be_visible()
        page.screenshot(path=str(SHOTS / f"code-opens-settings-{locale}.png"))
