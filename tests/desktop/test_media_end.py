"""A song that ends is no longer said to be playing: the player tells the music app,
which answers with the song finished and a way to hear it again (Chromium, 1280×800)."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.controller.system import TEST_CONFIG, RunningSystem, copy_shipped_apps, serving
from tests.desktop.conftest import ARTIFACTS, write_tone

pytestmark = [pytest.mark.slow, pytest.mark.browser]
APPS = ("hello_app", "music_app")


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("media_end")
    apps = copy_shipped_apps(root / "apps", APPS)
    write_tone(apps / "music_app" / "workspace" / "music" / "晴天.wav", seconds=0.6)
    config = copy.deepcopy(TEST_CONFIG)
    config["app_settings"] = {"music_app": {"api_base": "http://127.0.0.1:9"}}
    with serving(root, apps, APPS, config=config) as running:
        yield running


@pytest.mark.parametrize(
    ("locale", "ask", "playing", "finished", "again"),
    [
        ("zh-CN", "播放晴天", "正在播放", "播放结束", "再听一遍"),
        ("en-US", "play 晴天", "Now playing", "Finished", "Play again"),
    ],
)
def test_a_song_that_ended_says_so_and_offers_to_play_again(
    browser,
    system: RunningSystem,
    locale: str,
    ask: str,
    playing: str,
    finished: str,
    again: str,
) -> None:
    with desktop_page(browser, system, APPS, locale=locale) as page:
        page.fill("#command_input", ask)
        page.press("#command_input", "Enter")
        window = page.locator("#win_music_app")
        # the catalogue is unreachable: the local library's one song starts
        status = window.locator(".win-status")
        expect(status).to_contain_text(playing)
        audio = window.locator("audio")
        # muted playback needs no click of the user; the end comes within a second
        audio.evaluate("a => { a.muted = true; return a.play(); }")
        expect(status).to_contain_text(finished, timeout=15000)
        expect(window.get_by_role("button", name=again)).to_have_count(1)
        expect(
            window.get_by_role("button", name="暂停" if locale == "zh-CN" else "Pause")
        ).to_have_count(0)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"media-ended-{locale}.png"))
