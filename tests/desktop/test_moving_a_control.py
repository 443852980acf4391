"""In Chromium: the design's F-3 example ("把播放按钮移到左上角") with the music window
open, on an empty library and on a library of two songs, in Chinese and in English.

A name resolves to the element a person means. On an empty library there is
no play button, and the answer says so and why (no songs yet), once, in the system
window and without an error, offering the music window's 添加歌曲, which opens its file
chooser: a song chosen there joins the library. 最近播放 stays where it is. While a
song plays, the player's button reads 暂停 and is still the play button: the F-3
instruction moves it. With two songs
there are two play buttons: the answer asks which, listing the songs, and moves
nothing until one is chosen (a choice button, or the song named in the instruction).
A moved button keeps its size and its one-line label, says which row it
plays, still plays that row's song, and 撤销 and 还原布局 put it back in its row, where
it goes along when its window is dragged.
"""

from __future__ import annotations

import copy
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
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
from tests.fakes.music_api import make_wav
from tests.procs import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHIPPED = ("music_app", "system_agent")
ARTIFACTS = ROOT / "test-artifacts" / "desktop"
MUSIC = "#win_music_app"
SYSTEM = "#win_system_agent"

# what a person says and reads, per browser language
WORDS = {
    "zh-CN": {
        "f3": "把播放按钮移到左上角",
        "songs": ("七里香", "晴天"),
        "artist": "周杰伦",
        "play": "播放",
        "recent": "最近播放",
        "none": "音乐应用里还没有歌曲，所以没有播放按钮。先添加歌曲吧。",
        "move_it": "移动播放按钮",
        "add": "添加歌曲",
        "added": "已把《{}》加入曲库。",
        "pause": "暂停",
        "moved_playing": "已将播放按钮移到左上角",
        "asks": "有 2 个“播放按钮”",
        "moved": "已将晴天的播放按钮移到左上角",
        "named": "把晴天的播放按钮移到左上角",
        "undo": "撤销",
        "undone": "已撤销：移动晴天的播放按钮",
    },
    "en-US": {
        "f3": "move the play button to the top-left",
        "songs": ("Morning Light", "Evening Rain"),
        "artist": "The Example Band",
        "play": "Play",
        "recent": "Recently played",
        "none": "There is no play button because Music has no songs yet. "
        "Add some songs first.",
        "move_it": "move the play button",
        "add": "Add songs",
        "added": 'Added "{}" to your library.',
        "pause": "Pause",
        "moved_playing": "Moved the play button to the top-left",
        "asks": '2 elements match "play button"',
        "moved": "Moved the play button of Evening Rain to the top-left",
        "named": "move the play button of Evening Rain to the top-left",
        "undo": "Undo",
        "undone": "Undone: moving the Play button of Evening Rain",
    },
}
LOCALES = list(WORDS)


@contextmanager
def serving_music(root: Path, shipped: tuple[str, ...]) -> Iterator[RunningSystem]:
    """The real system with copies of the `shipped` apps, the music app's catalogue
    out of reach (its own library only)."""
    apps = copy_shipped_apps(root / "apps", shipped)
    config = copy.deepcopy(TEST_CONFIG)
    # the catalogue cannot be reached: nothing listens on port 9
    config["app_settings"] = {"music_app": {"api_base": "http://127.0.0.1:9"}}
    config["tool_sandbox"] = {"http_domain_whitelist": ["127.0.0.1"]}
    with serving(root, apps, shipped, config=config) as running:
        yield running


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    with serving_music(tmp_path_factory.mktemp("moving_a_control"), SHIPPED) as running:
        yield running


def seed_library(
    system: RunningSystem, titles: tuple[str, ...], artist: str, seconds: float = 0.3
) -> None:
    """The music app's library holds exactly these songs, in this order."""
    music = system.workspace("music_app") / "music"
    shutil.rmtree(music, ignore_errors=True)
    music.mkdir(parents=True)
    for number, title in enumerate(titles, 1):
        song = make_wav(seconds, title=title, artist=artist)
        (music / f"{number}.wav").write_bytes(song)


@contextmanager
def desktop(browser, system: RunningSystem, locale: str) -> Iterator[object]:
    with desktop_page(browser, system, SHIPPED, timeout_ms=20000, locale=locale) as page:
        yield page


@contextmanager
def two_songs(browser, system: RunningSystem, locale: str) -> Iterator[object]:
    """A desktop page with the music window open on the library of two songs."""
    words = WORDS[locale]
    seed_library(system, words["songs"], words["artist"])
    with desktop(browser, system, locale) as page:
        open_music(page, "btn_play_2")
        yield page


def open_music(page, marker: str) -> None:
    """Open the music window and wait until the desktop has posted a snapshot that
    shows `marker` (an element id of its view)."""
    with page.expect_response(
        lambda r: (
            r.url.endswith("/api/ui/snapshot") and marker in (r.request.post_data or "")
        )
    ):
        page.click("#task_music_app")


def say(page, text: str) -> None:
    page.fill("#command_input", text)
    page.press("#command_input", "Enter")


def box(page, selector: str) -> dict:
    found = page.locator(selector).bounding_box()
    assert found is not None, f"{selector} is not visible"
    return found


def wait_at(page, element_id: str, x: int, y: int) -> None:
    page.wait_for_function(
        "([id, x, y]) => { const n = document.getElementById(id); if (!n) return false;"
        " const r = n.getBoundingClientRect();"
        " return Math.round(r.left) === x && Math.round(r.top) === y; }",
        arg=[element_id, x, y],
    )


def shot(page, locale: str, name: str) -> Path:
    page.wait_for_function("() => document.getAnimations().length === 0")  # all drawn
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"moving-a-control-{name}-{locale}.png"
    page.screenshot(path=str(path))
    return path


SEEN_AT_CENTRE = """id => {
  const node = document.getElementById(id);
  const r = node.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return Boolean(hit) && (hit === node || node.contains(hit));
}"""


def in_its_row(page, element_id: str, song: str) -> bool:
    """Whether the control is drawn in the list row of `song`, as the page drew it."""
    return page.evaluate(
        "([id, song]) => { const n = document.getElementById(id);"
        " const row = n && n.closest('[data-item-id]');"
        " return Boolean(row) && row.querySelector('.v-list-title').textContent === song"
        " && !n.classList.contains('ui-moved') && !n.style.position; }",
        [element_id, song],
    )


@pytest.mark.parametrize("locale", LOCALES)
def test_f3_on_an_empty_library_says_there_is_no_play_button(
    browser, system, locale, tmp_path
):
    words = WORDS[locale]
    seed_library(system, (), words["artist"])
    with desktop(browser, system, locale) as page:
        open_music(page, "btn_recent")
        recent = page.locator("#btn_recent")
        expect(recent).to_have_text(words["recent"])
        before = box(page, "#btn_recent")
        for said in (words["f3"], words["move_it"]):
            say(page, said)
            answer = page.locator(f"{SYSTEM} .v-text")
            expect(answer).to_have_text(words["none"])
        # said once, in the window: no toast, and no error
        expect(page.locator("#toasts .toast", has_text=words["none"])).to_have_count(0)
        expect(page.locator("#toasts .toast-error")).to_have_count(0)
        # 最近播放 is where it was, in the music window's action bar
        expect(page.locator(f"{MUSIC} .win-actions #btn_recent")).to_have_count(1)
        expect(recent).not_to_have_class(re.compile(r"\bui-moved\b"))
        add = page.locator(SYSTEM).get_by_role("button", name=words["add"], exact=True)
        expect(add).to_be_visible()
        shot(page, locale, "empty-library")
        page.click("#task_music_app")  # in front again, to see it
        assert box(page, "#btn_recent") == before

        # 添加歌曲 in the answer opens the music window's file chooser
        page.click("#task_system_agent")
        song = tmp_path / "tone.wav"
        song.write_bytes(make_wav(0.3, title=words["songs"][0], artist=words["artist"]))
        with page.expect_file_chooser() as chooser:
            add.click()
        chooser.value.set_files(str(song))
        expect(page.locator(f"{MUSIC} .v-text")).to_have_text(
            words["added"].format(song.name)
        )
        expect(page.locator("#toasts .toast-warning")).to_have_count(0)
        shot(page, locale, "song-added-from-the-answer")


@pytest.mark.parametrize("locale", LOCALES)
def test_f3_while_a_song_plays_moves_its_pause_button(browser, system, locale):
    words = WORDS[locale]
    # long enough to be still playing when it is moved
    seed_library(system, words["songs"][:1], words["artist"], seconds=60.0)
    with desktop(browser, system, locale) as page:
        open_music(page, "btn_play")
        # played: the system app reads a snapshot showing the player's button
        with page.expect_response(
            lambda r: (
                r.url.endswith("/api/ui/snapshot")
                and "btn_pause" in (r.request.post_data or "")
            )
        ):
            page.click("#btn_play")
        page.wait_for_function(
            "() => { const a = document.querySelector('#win_music_app audio');"
            " return !!a && !a.paused && a.currentTime > 0; }"
        )
        pause = page.locator("#btn_pause")
        expect(pause).to_have_text(words["pause"])
        say(page, words["f3"])
        expect(page.locator(f"{SYSTEM} .v-text")).to_have_text(words["moved_playing"])
        wait_at(page, "btn_pause", 20, 20)
        expect(pause).to_have_class(re.compile(r"\bui-moved\b"))
        expect(pause).to_have_text(words["pause"])
        page.click(f"{MUSIC} .win-title")
        shot(page, locale, "pause-button-moved")
        # it still pauses the song
        pause.click()
        page.wait_for_function(
            "() => document.querySelector('#win_music_app audio').paused"
        )


@pytest.mark.parametrize("locale", LOCALES)
def test_f3_on_two_songs_asks_which_and_moves_the_one_meant(browser, system, locale):
    words = WORDS[locale]
    first, second = words["songs"]
    with two_songs(browser, system, locale) as page:
        play = page.locator("#btn_play_2")
        assert in_its_row(page, "btn_play_2", second)
        size = box(page, "#btn_play_2")

        # two play buttons: the answer asks which, lists both songs, moves nothing
        say(page, words["f3"])
        question = page.locator(f"{SYSTEM} .v-text")
        expect(question).to_contain_text(words["asks"])
        expect(question).to_contain_text(first)
        expect(question).to_contain_text(second)
        expect(page.locator("#toasts .toast", has_text=words["asks"])).to_have_count(0)
        assert in_its_row(page, "btn_play", first)
        assert in_its_row(page, "btn_play_2", second)
        shot(page, locale, "asks-which")

        # the second song chosen: its button moves, keeping its size and its label
        page.locator(SYSTEM).get_by_role("button", name=second, exact=True).click()
        wait_at(page, "btn_play_2", 20, 20)
        expect(page.locator(f"{SYSTEM} .v-text")).to_have_text(words["moved"])
        expect(play).to_have_text(words["play"])
        moved = box(page, "#btn_play_2")
        assert abs(moved["width"] - size["width"]) <= 1, (moved, size)
        assert abs(moved["height"] - size["height"]) <= 1, (moved, size)
        # it says which row it plays, and its row keeps its place
        expect(play).to_have_attribute("data-ui-row", second)
        row = page.locator(f"{MUSIC} .v-list-item", has_text=second)
        expect(row.locator(".ui-home")).to_have_count(1)
        assert in_its_row(page, "btn_play", first)
        shot(page, locale, "moved")

        # 撤销 (the system window in front again): back in its row, and it goes along
        # when its window is dragged
        page.click("#task_system_agent")
        page.locator(SYSTEM).get_by_role("button", name=words["undo"], exact=True).click()
        expect(page.locator(f"{SYSTEM} .v-text")).to_contain_text(words["undone"])
        page.wait_for_function(
            "() => !document.getElementById('btn_play_2').classList.contains('ui-moved')"
        )
        assert in_its_row(page, "btn_play_2", second)
        expect(row.locator(".ui-home")).to_have_count(0)
        page.click(f"{MUSIC} .win-title")
        shot(page, locale, "undone")
        start = box(page, "#btn_play_2")
        bar = box(page, f"{MUSIC} .win-title")
        page.mouse.move(bar["x"] + 5, bar["y"] + 5)
        page.mouse.down()
        page.mouse.move(bar["x"] + 65, bar["y"] + 45, steps=4)
        page.mouse.up()
        dragged = box(page, "#btn_play_2")
        assert (round(dragged["x"] - start["x"]), round(dragged["y"] - start["y"])) == (
            60,
            40,
        )

        # the song named in the instruction: moved at once, no question
        say(page, words["named"])
        wait_at(page, "btn_play_2", 20, 20)
        expect(page.locator(f"{SYSTEM} .v-text")).to_have_text(words["moved"])
        # 还原布局 (Ctrl+Alt+R): back in its row, not in the action bar
        page.keyboard.press("Control+Alt+r")
        page.wait_for_function(
            "() => !document.getElementById('btn_play_2').classList.contains('ui-moved')"
        )
        assert in_its_row(page, "btn_play_2", second)
        expect(page.locator(f"{MUSIC} .win-actions #btn_play_2")).to_have_count(0)

        # moved again, it still plays its own row's song
        say(page, words["named"])
        wait_at(page, "btn_play_2", 20, 20)
        page.click("#btn_play_2")
        expect(page.locator(f"{MUSIC} .v-media-title")).to_contain_text(second)


def post_command(page, command: dict) -> None:
    page.evaluate(
        "c => window.postMessage({aios: 'ui_command', command: c}, location.origin)",
        command,
    )


@pytest.mark.parametrize("locale", LOCALES)
def test_a_moved_button_keeps_its_look_and_goes_back_to_its_row(browser, system, locale):
    words = WORDS[locale]
    second = words["songs"][1]
    with two_songs(browser, system, locale) as page:
        play = page.locator("#btn_play_2")
        size = box(page, "#btn_play_2")
        line = play.evaluate("n => getComputedStyle(n).fontSize")
        post_command(page, {"op": "move", "id": "btn_play_2", "x": 20, "y": 20})
        wait_at(page, "btn_play_2", 20, 20)
        moved = box(page, "#btn_play_2")
        assert abs(moved["width"] - size["width"]) <= 1, (moved, size)
        assert abs(moved["height"] - size["height"]) <= 1, (moved, size)
        assert play.evaluate("n => getComputedStyle(n).fontSize") == line
        expect(play).to_have_text(words["play"])
        expect(play).to_have_attribute("data-ui-row", second)
        shot(page, locale, "moved-by-command")
        # it belongs to its window's layer: a window in front covers it, and it
        # comes to the front with its own window
        post_command(page, {"op": "open_window", "id": "system_agent"})
        expect(page.locator(f"{SYSTEM} .win-main")).to_be_visible()
        post_command(page, {"op": "move", "id": "win_system_agent", "x": 0, "y": 0})
        page.wait_for_function(f"() => !({SEEN_AT_CENTRE})('btn_play_2')")
        shot(page, locale, "covered-by-a-window")
        page.click("#task_music_app")
        page.wait_for_function(f"() => ({SEEN_AT_CENTRE})('btn_play_2')")
        page.keyboard.press("Control+Alt+r")
        page.wait_for_function(
            "() => !document.getElementById('btn_play_2').classList.contains('ui-moved')"
        )
        assert in_its_row(page, "btn_play_2", second)
        assert box(page, "#btn_play_2") == size
