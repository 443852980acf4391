"""The apps' side, in Chromium against the real system with the shipped apps.

Item 1: the code app's edit view holds one editable copy and 保存 saves what was
typed. Item 2: code is not cut at `;`. Item 3: each row's controls sit in that row.
Item 4: a failure is never toasted as a success, says plainly what went wrong and
folds the technical text away. Item 8: a question about one number is answered with
it in the view. Item 12: the greeting has no "None" and no dangling comma; the
dashboard charts percentages on a 0–100 scale and titles its chart once. The last
test takes the README's screenshots (docs/screenshots/).
"""

from __future__ import annotations

import copy
import os
import re
import shutil
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
from tests.desktop.conftest import COUNT_TEXT_VIEWS
from tests.procs import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHIPPED = ("code_app", "hello_app", "music_app", "system_agent")
# the README's pictures are retaken into docs/screenshots/ only when asked
# (AIOS_UPDATE_SCREENSHOTS=1); an ordinary run leaves the source tree as it was
SCREENSHOTS = (
    ROOT / "docs" / "screenshots"
    if os.environ.get("AIOS_UPDATE_SCREENSHOTS") == "1"
    else ROOT / "test-artifacts" / "screenshots"
)


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("walkthrough_apps")
    apps = copy_shipped_apps(root / "apps", SHIPPED)
    shutil.copytree(
        ROOT / "tests" / "security" / "apps" / "risky_app",
        apps / "risky_app",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    config = copy.deepcopy(TEST_CONFIG)
    # the catalogue cannot be reached: nothing listens on port 9
    config["app_settings"] = {"music_app": {"api_base": "http://127.0.0.1:9"}}
    config["tool_sandbox"] = {"http_domain_whitelist": ["127.0.0.1"]}
    with serving(root, apps, (*SHIPPED, "risky_app"), config=config) as running:
        yield running


@pytest.fixture
def page(browser, system: RunningSystem) -> Iterator[object]:
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000) as desktop:
        yield desktop


def say(page, text: str) -> None:
    page.fill("#command_input", text)
    page.press("#command_input", "Enter")


def last_toast(page):
    return page.locator("#toasts .toast").last


CODE = "#win_code_app"


def write_through_the_app(page, code: str) -> None:
    """snippet.py, written by the code app itself (its own file: no confirmation)."""
    say(page, f"执行代码 {code}")
    expect(page.locator(CODE).locator(".v-code code")).to_have_text(f"{code}\n")


def test_1_the_edit_view_has_one_copy_and_save_saves_the_edit(page, system) -> None:
    write_through_the_app(page, "print('old')")
    say(page, "编辑 snippet.py")
    window = page.locator(CODE)
    expect(window.locator("textarea")).to_have_count(1)
    expect(window.locator("textarea")).to_have_value("print('old')\n")
    window.locator("textarea").fill("print('new')\n")
    window.get_by_role("button", name="保存", exact=True).click()
    expect(window.locator(".v-code code")).to_have_text("print('new')\n")
    expect(window.locator(".win-status")).to_contain_text("已保存")
    saved = system.workspace("code_app") / "snippet.py"
    assert saved.read_text("utf-8") == "print('new')\n"


def test_1_a_failed_save_says_so(page, system) -> None:
    write_through_the_app(page, "x = 1")
    say(page, "编辑 snippet.py")
    window = page.locator(CODE)
    window.locator("input[name=path]").fill("../outside.py")  # refused by the app
    window.get_by_role("button", name="保存", exact=True).click()
    expect(window.locator(".win-status")).not_to_contain_text("已保存")
    expect(window.locator(".win-status")).to_have_attribute("data-level", "error")
    assert (system.workspace("code_app") / "snippet.py").read_text("utf-8") == "x = 1\n"


def test_2_code_is_not_cut_at_semicolons(page) -> None:
    say(page, "执行代码 x=5; print(x*2)")
    expect(page.locator(CODE).locator(".win-status")).to_have_text(
        "运行结果：10（代码已存为工作区里的 snippet.py）"
    )
    say(page, "执行代码 import time; time.sleep(2); print('slept')")
    expect(page.locator(CODE).locator(".win-status")).to_have_text(
        "运行结果：slept（代码已存为工作区里的 snippet.py）", timeout=30000
    )


def test_3_each_files_buttons_sit_in_its_row(page, system) -> None:
    for name in ("row_a.py", "row_b.py"):
        (system.workspace("code_app") / name).write_text(f"print('{name}')\n", "utf-8")
    say(page, "列出我的代码文件")
    window = page.locator(CODE)
    row = window.locator(".v-list-item[data-item-id='row_b.py']")
    expect(row.get_by_role("button", name="运行")).to_have_count(1)
    expect(row.get_by_role("button", name="查看")).to_have_count(1)
    expect(window.locator(".win-actions").get_by_role("button", name="运行")).to_have_count(
        0
    )
    row.get_by_role("button", name="运行").click()
    expect(window.locator(".win-status")).to_have_text("运行结果：row_b.py")


def test_4_an_unreachable_catalogue_is_a_warning_said_plainly(page) -> None:
    say(page, "帮我播放周杰伦的歌")
    window = page.locator("#win_music_app")
    notice = window.locator(".win-notice")
    expect(notice).to_contain_text("音乐目录暂时无法访问")
    # the notice says it; the empty list says only its own part
    expect(window.locator(".v-empty")).to_have_text(
        "本地曲库还没有歌曲。点“添加歌曲”选择音乐文件，或把音乐文件拖到这个窗口里；也可以从文件夹导入（如 ~/Music）。"
    )
    expect(window).not_to_contain_text("空列表")
    details = notice.locator("details")
    expect(details).to_have_count(1)
    assert details.get_attribute("open") is None  # folded away
    visible = window.inner_text()
    assert "Errno" not in visible and "refused" not in visible.lower(), visible
    assert visible.count("音乐目录暂时无法访问") == 1, visible  # said once in the window
    expect(window.locator(".win-status")).to_have_text("⚠️ 请看上方的提示")
    toast = last_toast(page)
    expect(toast).to_have_class(re.compile(r"\btoast-warning\b"))
    expect(toast.locator(".toast-icon")).not_to_have_text("✅")


def test_4_a_program_error_and_a_kill_are_not_successes(page) -> None:
    say(page, "执行代码 print(1/0)")
    window = page.locator(CODE)
    expect(window.locator(".win-notice")).to_contain_text("ZeroDivisionError")
    expect(last_toast(page)).to_have_class(re.compile(r"\btoast-warning\b"))
    expect(window.locator(".win-notice details pre")).to_contain_text("Traceback")


def test_8_a_question_about_memory_is_answered_in_the_view(page) -> None:
    say(page, "现在内存占用多少")
    window = page.locator("#win_system_agent")
    expect(window.locator(".v-card-title")).to_contain_text(re.compile(r"内存占用 [\d.]+%"))
    expect(window.locator(".v-dashboard")).to_have_count(0)
    window.get_by_role("button", name="系统总览").click()
    expect(window.locator(".v-dashboard")).to_have_count(1)


def test_12_the_greeting_greets_and_never_says_the_instruction_back(page) -> None:
    page.click("#task_hello_app")
    text = page.locator("#win_hello_app .v-text")
    expect(text).to_have_text("你好！很高兴见到你。")
    page.evaluate(COUNT_TEXT_VIEWS)
    say(page, "跟我打个招呼")
    page.wait_for_function("() => window.__textViews >= 1")  # the answer came
    expect(text).to_have_text("你好！很高兴见到你。")
    page.locator("#win_hello_app").get_by_role("button", name="再说一次").click()
    page.wait_for_function("() => window.__textViews >= 2")
    expect(text).to_have_text("你好！很高兴见到你。")
    expect(text).not_to_contain_text("跟我打个招呼")


def test_12_the_dashboard_scales_percentages_to_100_and_titles_once(page) -> None:
    say(page, "查看系统状态")
    window = page.locator("#win_system_agent")
    chart = window.locator(".v-widget[data-widget-type=chart]")
    expect(chart.locator(".chart-bar")).to_have_count(3)
    expect(chart.get_by_text("资源占用 (%)")).to_have_count(1)
    values = [float(v) for v in chart.locator(".chart-value").all_inner_texts()]
    heights = chart.locator(".chart-bar").evaluate_all(
        "bars => bars.map(b => b.style.height)"
    )
    for value, height in zip(values, heights, strict=True):
        assert abs(float(height.rstrip("%")) - max(2.0, value)) < 0.6, (values, heights)
    cards = window.locator(".v-widget[data-widget-type=text]")
    boxes = [cards.nth(i).bounding_box() for i in range(cards.count())]
    assert max(b["height"] for b in boxes) < 1.6 * min(b["height"] for b in boxes), boxes


def test_readme_screenshots(page, system) -> None:
    """The desktop, an app window and a confirmation, as the README shows them."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(300)
    page.screenshot(path=str(SCREENSHOTS / "desktop.png"))
    for name in ("fib.py", "hello.py"):
        (system.workspace("code_app") / name).write_text("print('hi')\n", "utf-8")
    say(page, "列出我的代码文件")
    window = page.locator(CODE)
    expect(window.locator(".v-list-item[data-item-id='fib.py']")).to_have_count(1)
    page.locator("#toasts .toast").evaluate_all("nodes => nodes.forEach(n => n.remove())")
    page.wait_for_function(  # nothing is still moving (a toast sliding in)
        "() => document.getAnimations().length === 0"
        " && getComputedStyle(document.querySelector('#win_code_app')).opacity === '1'"
    )
    page.screenshot(path=str(SCREENSHOTS / "app-window.png"))
    say(page, "风险应用 启动进程")
    page.locator("#confirm_dialog").wait_for()
    page.locator("#toasts .toast").evaluate_all("nodes => nodes.forEach(n => n.remove())")
    page.screenshot(path=str(SCREENSHOTS / "confirmation.png"))
    page.locator("#confirm_dialog").get_by_role("button", name="拒绝").click()
    for name in ("desktop", "app-window", "confirmation"):
        assert Path(SCREENSHOTS / f"{name}.png").stat().st_size > 10_000
