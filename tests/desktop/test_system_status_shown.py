"""In Chromium: the system status window shows the computer.

The shipped system-control app runs confined; its overview and its process list
come from the executor's `system_info`, which reads the host. The busiest processes
are this computer's (each pid runs here under the name shown), not the sandbox's
`bwrap` and `python3`; while this test process keeps one core busy, the process
list shows it (its pid) among many. In Chinese and, on an en-US browser, in English
only. Screenshots of both go to test-artifacts/desktop/.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.apps.test_system_status_host import busy_here, busy_process, named_here
from tests.controller.system import TEST_CONFIG, RunningSystem, copy_shipped_apps, serving
from tests.procs import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

APP = "system_agent"
WINDOW = f"#win_{APP}"
ARTIFACTS = ROOT / "test-artifacts" / "desktop"


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("system_status_shown")
    apps = copy_shipped_apps(root / "apps", (APP,))
    with serving(root, apps, (APP,), config=copy.deepcopy(TEST_CONFIG)) as running:
        yield running


def open_page(
    browser: Any, system: RunningSystem, locale: str
) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale=locale)
    page = context.new_page()
    page.set_default_timeout(20000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{system.url}/?token={system.token}")
    page.wait_for_selector(f"#task_{APP}")
    return context, page, errors


def say(page: Any, text: str) -> None:
    page.fill("#command_input", text)
    with page.expect_response(lambda r: r.url.endswith("/api/instruction")):
        page.press("#command_input", "Enter")


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"system_status-{name}.png"))


@pytest.mark.parametrize(
    ("locale", "overview", "busiest", "listing", "title", "count"),
    [
        (
            "zh-CN",
            "查看系统状态",
            "最忙的进程",
            "进程列表",
            "进程（按 CPU 排序",
            r"共 (\d+) 个进程",
        ),
        (
            "en-US",
            "show system status",
            "Busiest processes",
            "Processes",
            "Processes (by CPU",
            r"(\d+) processes",
        ),
    ],
    ids=["zh-CN", "en-US"],
)
def test_the_window_shows_the_computers_processes(
    browser: Any,
    system: RunningSystem,
    locale: str,
    overview: str,
    busiest: str,
    listing: str,
    title: str,
    count: str,
) -> None:
    context, page, errors = open_page(browser, system, locale)
    me = re.compile(f"^{os.getpid()}$")
    try:
        window = page.locator(WINDOW)
        say(page, overview)
        table = window.locator(".v-widget[data-widget-type=table]")
        expect(table).to_contain_text(busiest)
        cells = [row.split("\t") for row in table.locator("tbody tr").all_inner_texts()]
        found, other = named_here(cells)
        assert len(cells) == 8 and found >= 4 and not other, cells
        table.scroll_into_view_if_needed()
        shot(page, f"overview-{locale}")
        with busy_here():
            window.get_by_role("button", name=listing, exact=True).click()
            expect(window.locator(".v-dashboard")).to_have_count(0)
            expect(window.locator(".v-table-wrap")).to_contain_text(title)
        rows = window.locator("table.v-table tbody tr")
        expect(rows.locator("td:first-child", has_text=me)).to_have_count(1)
        names = set(rows.locator("td:nth-child(2)").all_inner_texts())
        assert rows.count() > 2 and names - {"bwrap", "python3"}, names
        said = re.match(count, window.locator(".win-status").inner_text())
        assert said and int(said.group(1)) > 2, window.locator(".win-status").inner_text()
        shot(page, f"processes-{locale}")
        if locale == "en-US":  # the view speaks English only (the app's name is its own)
            content = window.locator(".win-content").inner_text()
            assert not re.search(r"[\u4e00-\u9fff]", content), content
    finally:
        context.close()
    assert errors == [], errors


# the lines a text takes on screen: one per distinct top of its text's boxes
_LINE_BOXES = """e => {
  const range = document.createRange();
  range.selectNodeContents(e);
  return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
}"""


@pytest.mark.parametrize(
    ("locale", "question", "said"),
    [
        ("zh-CN", "查看CPU使用率", r"CPU 占用 ([\d.]+)%，共 (\d+) 个核心"),
        ("en-US", "show CPU usage", r"CPU ([\d.]+)%, (\d+) cores"),
    ],
    ids=["zh-CN", "en-US"],
)
def test_the_cpu_card_shows_a_measured_figure_in_lines_that_do_not_wrap(
    browser: Any, system: RunningSystem, locale: str, question: str, said: str
) -> None:
    """With one core busy the CPU card (and its Refresh) show it busy; the
    load is said in words, each fact on a line of its own that does not wrap at
    1280×800 (it wrapped "load … ⏎ 2.07")."""
    context, page, errors = open_page(browser, system, locale)
    try:
        window = page.locator(WINDOW)
        with busy_process():
            say(page, question)
            desc = window.locator(".v-card-desc")
            expect(desc).to_have_count(1)
            for step in ("ask", "refresh"):
                found = re.fullmatch(said, window.locator(".win-status").inner_text())
                assert found, window.locator(".win-status").inner_text()
                assert float(found.group(1)) * int(found.group(2)) >= 50, found.group(0)
                lines = desc.inner_text().split("\n")
                assert len(lines) == 4, lines  # cores, what load is, its figures, time
                assert desc.evaluate(_LINE_BOXES) == len(lines), lines
                shot(page, f"cpu-card-{step}-{locale}")
                if step == "ask":
                    refresh = "刷新" if locale == "zh-CN" else "Refresh"
                    with page.expect_response(lambda r: r.url.endswith("/action")) as got:
                        window.get_by_role("button", name=refresh, exact=True).click()
                    # the window shows the refresh's own answer
                    status = window.locator(".win-status")
                    expect(status).to_have_text(got.value.json()["message"])
        text = desc.inner_text()
        if locale == "en-US":
            assert "tasks running or waiting for the CPU" in text, text
            assert not re.search(
                r"[\u4e00-\u9fff]", window.locator(".win-content").inner_text()
            )
        else:
            assert "正在运行或等待 CPU 的任务数" in text and "近 15 分钟" in text, text
    finally:
        context.close()
    assert errors == [], errors
