"""Asking to play plays (F-1), and the player keeps its place.

In Chromium at 1280×800, in both languages, with the fake catalogue on 127.0.0.1
serving 20-second previews: "播放晴天" and "play songs by Jay Chou" start the audio
element (not paused, its time advancing); 暂停 keeps the time and 继续 goes on from
it in the same player; the player's own pause and play reach the app's buttons and
status line; 下一首 after the last song of the list shown says so and plays nothing
else.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.controller.system import TEST_CONFIG, RunningSystem, copy_shipped_apps, serving
from tests.desktop.conftest import ARTIFACTS
from tests.fakes.music_api import CATALOGUE, FakeMusicCatalogue, FakeSong, make_wav

pytestmark = [pytest.mark.slow, pytest.mark.browser]
APPS = ("music_app",)
MUSIC = "#win_music_app"
# the store's English names of the same artist (as an English catalogue answers)
JAY_CHOU = (
    FakeSong(3001, "Sunny Day", "Jay Chou", "Ye Hui Mei", 269_000),
    FakeSong(3002, "Rice Field", "Jay Chou", "Capricorn", 223_000),
    FakeSong(3003, "Blue and White Porcelain", "Jay Chou", "On the Run", 239_000),
)


@dataclass
class World:
    system: RunningSystem
    catalogue: FakeMusicCatalogue


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("music_playing")
    apps = copy_shipped_apps(root / "apps", APPS)
    with FakeMusicCatalogue(CATALOGUE + JAY_CHOU) as catalogue:
        catalogue.preview = make_wav(20.0)  # long enough to pause in the middle
        config = copy.deepcopy(TEST_CONFIG)
        config["tool_sandbox"] = {"http_allow_private_hosts": ["127.0.0.1"]}
        config["app_settings"] = {"music_app": {"api_base": catalogue.base_url}}
        with serving(root, apps, APPS, config=config) as running:
            yield World(running, catalogue)


def say(page, text: str) -> None:
    page.fill("#command_input", text)
    page.press("#command_input", "Enter")


def wait_playing(page, past: float = 0.0) -> float:
    """Wait until the music window's audio plays past `past` seconds; its time then."""
    page.wait_for_function(
        "past => { const a = document.querySelector('#win_music_app audio');"
        " return !!a && !a.paused && a.currentTime > past; }",
        arg=past,
    )
    return float(page.locator(f"{MUSIC} audio").evaluate("a => a.currentTime"))


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"music-{name}.png"))


WORDS = {
    "zh-CN": {
        "one": "播放晴天",
        "one_playing": "正在播放：周杰伦 - 晴天",
        "artist": "帮我播放周杰伦的歌",
        "artist_first": "正在播放：周杰伦 - 七里香",
        "pause": "暂停",
        "resume": "继续",
        "paused": "已暂停",
        "resumed": "继续播放",
        "next": "下一首",
        "last": "已经是列表里的最后一首了：周杰伦 - 青花瓷",
        "play": "播放",
    },
    "en-US": {
        "one": "play 晴天",
        "one_playing": "Now playing: 周杰伦 - 晴天",
        "artist": "play songs by Jay Chou",
        "artist_first": "Now playing: Jay Chou - Sunny Day",
        "pause": "Pause",
        "resume": "Resume",
        "paused": "Paused",
        "resumed": "Resumed",
        "next": "Next",
        "last": "This is the last song in the list: Jay Chou - Blue and White Porcelain",
        "play": "Play",
    },
}


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_play_one_song_pause_keeps_the_place_and_resume_goes_on(
    browser, world: World, locale: str
) -> None:
    words = WORDS[locale]
    with desktop_page(browser, world.system, APPS, locale=locale) as page:
        say(page, words["one"])
        window = page.locator(MUSIC)
        status = window.locator(".win-status")
        expect(status).to_contain_text(words["one_playing"])
        audio = window.locator("audio")
        expect(audio).to_have_attribute("src", world.catalogue.preview_url(1003))
        started = wait_playing(page)
        wait_playing(page, max(started + 0.3, 1.2))  # its time goes on (past 0:01)
        shot(page, f"one-song-playing-{locale}")

        audio.evaluate("a => { a.dataset.probe = 'the first player'; }")
        window.get_by_role("button", name=words["pause"], exact=True).click()
        expect(status).to_contain_text(words["paused"])
        page.wait_for_function(
            "() => document.querySelector('#win_music_app audio').paused"
        )
        kept = float(audio.evaluate("a => a.currentTime"))
        assert kept > 1.0, f"pausing dropped the place to {kept}"
        expect(
            window.get_by_role("button", name=words["resume"], exact=True)
        ).to_be_visible()
        shot(page, f"paused-{locale}")

        window.get_by_role("button", name=words["resume"], exact=True).click()
        expect(status).to_contain_text(words["resumed"])
        # the same player goes on from where it was, never from 0:00
        expect(audio).to_have_attribute("data-probe", "the first player")
        assert float(audio.evaluate("a => a.currentTime")) >= kept
        wait_playing(page, kept + 0.2)


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_players_own_controls_keep_the_app_in_step(
    browser, world: World, locale: str
) -> None:
    words = WORDS[locale]
    with desktop_page(browser, world.system, APPS, locale=locale) as page:
        say(page, words["one"])
        window = page.locator(MUSIC)
        status = window.locator(".win-status")
        expect(status).to_contain_text(words["one_playing"])
        audio = window.locator("audio")
        wait_playing(page)
        audio.evaluate("a => a.pause()")  # what the player's own ⏸ does
        expect(status).to_contain_text(words["paused"])
        expect(
            window.get_by_role("button", name=words["resume"], exact=True)
        ).to_be_visible()
        expect(window.get_by_role("button", name=words["pause"], exact=True)).to_have_count(
            0
        )
        assert (
            audio.evaluate("a => a.paused") is True
        )  # the app's answer did not restart it
        audio.evaluate("a => a.play()")  # and its ▶
        expect(status).to_contain_text(words["resumed"])
        expect(
            window.get_by_role("button", name=words["pause"], exact=True)
        ).to_be_visible()
        wait_playing(page)


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_an_artist_starts_its_first_song_and_next_stops_at_the_list_end(
    browser, world: World, locale: str
) -> None:
    words = WORDS[locale]
    with desktop_page(browser, world.system, APPS, locale=locale) as page:
        say(page, words["artist"])
        window = page.locator(MUSIC)
        status = window.locator(".win-status")
        expect(status).to_contain_text(words["artist_first"])
        wait_playing(page)
        # the rest is the list of F-1 under the player, 播放 in each other row
        rows = window.locator(".v-list-item")
        expect(rows).to_have_count(4 if locale == "zh-CN" else 3)
        expect(rows.get_by_role("button", name=words["play"], exact=True)).to_have_count(
            3 if locale == "zh-CN" else 2
        )
        shot(page, f"artist-playing-{locale}")
        for _ in range(3 if locale == "zh-CN" else 2):
            before = audio_src(page)
            window.get_by_role("button", name=words["next"], exact=True).click()
            page.wait_for_function(
                "src => { const a = document.querySelector('#win_music_app audio');"
                " return !!a && a.getAttribute('src') !== src; }",
                arg=before,
            )
        last_src = audio_src(page)
        wait_playing(page)
        window.get_by_role("button", name=words["next"], exact=True).click()
        expect(status).to_contain_text(words["last"])
        assert audio_src(page) == last_src
        assert window.locator("audio").evaluate("a => a.paused") is False
        shot(page, f"last-song-{locale}")


def audio_src(page) -> str:
    return str(page.locator(f"{MUSIC} audio").get_attribute("src"))


@pytest.mark.parametrize(
    ("locale", "said", "playing"),
    [
        ("zh-CN", "打开音乐应用，然后播放音乐", "正在播放：Morning"),
        ("en-US", "open the music app, then play some music", "Now playing: Morning"),
    ],
)
def test_play_music_as_half_of_a_compound_starts_the_library(
    browser, world: World, locale: str, said: str, playing: str
) -> None:
    music = world.system.workspace("music_app") / "music"
    music.mkdir(parents=True, exist_ok=True)
    (music / "morning.wav").write_bytes(make_wav(20.0, title="Morning"))
    try:
        with desktop_page(browser, world.system, APPS, locale=locale) as page:
            say(page, said)
            expect(page.locator(f"{MUSIC} .win-status")).to_contain_text(playing)
            wait_playing(page, 0.2)
    finally:
        (music / "morning.wav").unlink()
