"""The desktop's layout belongs to its user, and its undo says what it takes back.

In Chromium at 1280×800, in Chinese and in English, against the real system with the
shipped music and system apps:

- the layout (a blue wallpaper, a moved control) and its undo history are kept by
  the controller in the state folder (`users/default/layout.json`), never in the
  source tree: a new browser profile shows the same wallpaper, and the moved control
  where it was put once its window opens, after a reload too; 撤销 typed there takes
  back those changes, the latest first; a reset of the layout empties what is kept;
  a layout read only after the windows are drawn moves their controls all the same;
- 撤销 on an answer that changed the layout takes back that change; an answer that
  changed nothing (an app that is not installed) offers no bare 撤销, but
  "撤销上一步界面改动（…）" naming the change it takes back, which it does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.controller.system import RunningSystem
from tests.desktop.test_moving_a_control import (
    open_music,
    say,
    serving_music,
    two_songs,
    wait_at,
)
from tests.procs import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHIPPED = ("music_app", "system_agent")
SHOTS = ROOT / "test-artifacts" / "desktop"
SYSTEM = "#win_system_agent"
MUSIC = "#win_music_app"
BLUE = "rgb(0, 0, 255)"

# the music window shows two songs (`two_songs`): 七里香 and 晴天, or Morning Light
# and Evening Rain
WORDS = {
    "zh-CN": {
        "second": "晴天",
        "blue": "把背景换成蓝色",
        "blue_done": "已将背景改成蓝色",
        "move": "把晴天的播放按钮移到左上角",
        "moved": "已将晴天的播放按钮移到左上角",
        "weather": "打开天气应用",
        "no_weather": "没有找到应用“天气应用”",
        "undo": "撤销",
        "undo_last": "撤销上一步界面改动（改颜色：桌面背景）",
        "undone_blue": "已撤销：改颜色：桌面背景",
        "undone_move": "已撤销：移动晴天的播放按钮",
    },
    "en-US": {
        "second": "Evening Rain",
        "blue": "make the background blue",
        "blue_done": "Made the background blue",
        "move": "move the play button of Evening Rain to the top-left",
        "moved": "Moved the play button of Evening Rain to the top-left",
        "weather": "open the weather app",
        "no_weather": 'No app called "weather',
        "undo": "Undo",
        "undo_last": "Undo the last layout change (recolouring the background)",
        "undone_blue": "Undone: recolouring the background",
        "undone_move": "Undone: moving the Play button of Evening Rain",
    },
}
LOCALES = list(WORDS)


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    with serving_music(tmp_path_factory.mktemp("layout_kept"), SHIPPED) as running:
        yield running


def layout_file(system: RunningSystem) -> Path:
    return system.state_dir / "users" / "default" / "layout.json"


def kept(system: RunningSystem) -> dict[str, Any]:
    """What the state folder holds of the user's layout ({} when nothing yet)."""
    path = layout_file(system)
    return json.loads(path.read_text("utf-8")) if path.exists() else {}


def wait_kept(system: RunningSystem, changes: int) -> dict[str, Any]:
    """Wait until the state folder's layout holds `changes` steps of history."""
    return system.wait_for(
        lambda: kept(system) if len(kept(system).get("history", [])) == changes else None,
        what=f"a layout of {changes} changes in {layout_file(system)}",
    )


def answer(page: Any) -> Any:
    return page.locator(f"{SYSTEM}[data-view-type=text] .v-text")


def snapshot_moved(page: Any, element_id: str) -> Any:
    """Expect the desktop to post a UI snapshot that shows `element_id` moved."""

    def moved(response: Any) -> bool:
        if not response.url.endswith("/api/ui/snapshot"):
            return False
        posted = response.request.post_data_json or {}
        return any(
            e.get("id") == element_id and "move" in e.get("changed", [])
            for e in posted.get("elements", [])
        )

    return page.expect_response(moved)


def snapshot_holding(page: Any, changes: int) -> Any:
    """Expect the desktop to post a UI snapshot (what the system app reads) that lists
    `changes` changes to undo."""

    def holds(response: Any) -> bool:
        if not response.url.endswith("/api/ui/snapshot"):
            return False
        return len((response.request.post_data_json or {}).get("undo", [])) == changes

    return page.expect_response(holds)


def shot(page: Any, locale: str, name: str) -> Path:
    page.wait_for_function("() => document.getAnimations().length === 0")
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"layout-kept-{name}-{locale}.png"
    page.screenshot(path=str(path))
    return path


def source_layout_files() -> list[Path]:
    """Any layout.json written into the source tree (the product's own folders)."""
    found = [ROOT / "layout.json"]
    for folder in ("desktop", "controller", "apps", "aios", "aios_runtime"):
        found += (ROOT / folder).rglob("layout.json")
    return [path for path in found if path.exists()]


@pytest.mark.parametrize("locale", LOCALES)
def test_the_layout_and_its_history_follow_the_user_into_a_new_browser(
    browser: Any, system: RunningSystem, locale: str
) -> None:
    words = WORDS[locale]
    with two_songs(browser, system, locale) as first:
        say(first, words["blue"])
        expect(answer(first)).to_have_text(words["blue_done"])
        expect(first.locator("#desktop")).to_have_css("background-color", BLUE)
        say(first, words["move"])
        expect(answer(first)).to_have_text(words["moved"])
        wait_at(first, "btn_play_2", 20, 20)
        saved = wait_kept(system, 2)
    # kept in the state folder, not in the browser's storage nor in the source tree
    assert ["desktop", {"change_color": "blue"}] in saved["changed"]
    assert source_layout_files() == []

    # a new browser profile: the same wallpaper, and the moved control where it was put
    with desktop_page(
        browser, system, SHIPPED, timeout_ms=20000, locale=locale, keep_layout=True
    ) as fresh:
        desktop = fresh.locator("#desktop")
        expect(desktop).to_have_css("background-color", BLUE)
        open_music(fresh, "btn_play_2")
        wait_at(fresh, "btn_play_2", 20, 20)
        play = fresh.locator("#btn_play_2")
        expect(play).to_have_class(re.compile(r"\bui-moved\b"))
        row = fresh.locator(f"{MUSIC} .v-list-item", has_text=words["second"])
        expect(row.locator(".ui-home")).to_have_count(1)
        expect(play).to_have_attribute("data-ui-row", words["second"])
        shot(fresh, locale, "new-browser")

        # a reload of that page keeps it all
        with snapshot_moved(fresh, "btn_play_2"):
            fresh.reload()
        for app_id in SHIPPED:
            fresh.wait_for_selector(f"#task_{app_id}")
        expect(desktop).to_have_css("background-color", BLUE)
        wait_at(fresh, "btn_play_2", 20, 20)
        expect(row.locator(".ui-home")).to_have_count(1)

        # the history came along: 撤销 takes back the move, then the wallpaper
        say(fresh, words["undo"])
        expect(answer(fresh)).to_contain_text(words["undone_move"])
        fresh.wait_for_function(
            "() => !document.getElementById('btn_play_2').classList.contains('ui-moved')"
        )
        expect(row.locator("#btn_play_2")).to_have_count(1)
        wait_kept(system, 1)
        say(fresh, words["undo"])
        expect(answer(fresh)).to_contain_text(words["undone_blue"])
        expect(desktop).not_to_have_css("background-color", BLUE)
        assert wait_kept(system, 0)["changed"] == []

        # a reset of the layout empties what is kept
        say(fresh, words["blue"])
        expect(desktop).to_have_css("background-color", BLUE)
        wait_kept(system, 1)
        fresh.keyboard.press("Control+Alt+r")
        expect(desktop).not_to_have_css("background-color", BLUE)
        assert wait_kept(system, 0) == {"changed": [], "history": []}


@pytest.mark.parametrize("locale", LOCALES)
def test_an_answer_that_changed_nothing_offers_no_bare_undo(
    browser: Any, system: RunningSystem, locale: str
) -> None:
    words = WORDS[locale]
    with two_songs(browser, system, locale) as page:
        window = page.locator(SYSTEM)
        desktop = page.locator("#desktop")
        with snapshot_holding(page, 1):
            say(page, words["blue"])
        expect(answer(page)).to_have_text(words["blue_done"])
        expect(desktop).to_have_css("background-color", BLUE)
        # the answer that changed the layout: its 撤销 takes back that change
        this_one = window.get_by_role("button", name=words["undo"], exact=True)
        expect(this_one).to_be_visible()

        # an answer that changed nothing: no bare 撤销, the latest change named
        say(page, words["weather"])
        expect(answer(page)).to_contain_text(words["no_weather"])
        expect(window.get_by_role("button", name=words["undo"], exact=True)).to_have_count(
            0
        )
        named = window.get_by_role("button", name=words["undo_last"], exact=True)
        expect(named).to_be_visible()
        shot(page, locale, "undo-names-the-last-change")
        named.click()
        expect(answer(page)).to_contain_text(words["undone_blue"])
        expect(desktop).not_to_have_css("background-color", BLUE)
        # nothing more to take back: nothing offered
        expect(window.locator(".win-actions button")).to_have_count(0)

        # 撤销 of a change answer, clicked: that change is taken back
        with snapshot_holding(page, 1):
            say(page, words["blue"])
        expect(desktop).to_have_css("background-color", BLUE)
        this_one.click()
        expect(answer(page)).to_contain_text(words["undone_blue"])
        expect(desktop).not_to_have_css("background-color", BLUE)


# the page's reading of its layout waits until the song list is drawn: the layout then
# applies to controls already on screen (else it applies as each is drawn)
LATE_LAYOUT = """
(() => {
  const fetchNow = window.fetch.bind(window);
  window.fetch = async (url, init) => {
    const asked = String(url);
    if (asked.endsWith("/api/layout") && (!init || !init.method || init.method === "GET")) {
      while (!document.getElementById("btn_play_2")) {
        await new Promise((done) => setTimeout(done, 20));
      }
      window.__layoutLate = true;
    }
    return fetchNow(url, init);
  };
})();
"""


def test_a_layout_read_after_the_windows_are_drawn_moves_their_controls(
    browser: Any, system: RunningSystem
) -> None:
    words = WORDS["zh-CN"]
    with two_songs(browser, system, "zh-CN") as page:
        say(page, words["move"])
        wait_at(page, "btn_play_2", 20, 20)
        wait_kept(system, 1)
        page.add_init_script(LATE_LAYOUT)
        page.reload()  # the music window comes back, and only then the layout
        page.wait_for_function("() => window.__layoutLate === true")
        wait_at(page, "btn_play_2", 20, 20)
        play = page.locator("#btn_play_2")
        expect(play).to_have_class(re.compile(r"\bui-moved\b"))
        expect(play).to_have_attribute("data-ui-row", words["second"])
        row = page.locator(f"{MUSIC} .v-list-item", has_text=words["second"])
        expect(row.locator(".ui-home")).to_have_count(1)
        # and it goes back into its row
        page.keyboard.press("Control+Alt+r")
        expect(row.locator("#btn_play_2")).to_have_count(1)
        expect(play).not_to_have_class(re.compile(r"\bui-moved\b"))
