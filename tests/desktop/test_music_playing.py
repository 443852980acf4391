"""Asking to play plays (F-1), and the player keeps its place.

In Chromium at 1280×800, in both languages, with the fake catalogue on 127.0.0.1
serving 20-second previews: "播放晴天" and "play songs by Jay Chou" start the audio
element (not paused, its time advancing); 暂停 keeps the time and 继续 goes on from
it in the same player; the player's own pause and play reach the app's buttons and
status line; 下一首 after the last song of the list shown says so and plays nothing
else, while 下一首 after one song asked for by name goes on with the library; a
reload of the page keeps the song that played, at its place.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import expect

from bench.browser import CHROMIUM_ARGS
from tests.browser import desktop_page
from tests.controller.system import TEST_CONFIG, RunningSystem, copy_shipped_apps, serving
from tests.desktop.conftest import ARTIFACTS, write_tone
from tests.fakes.music_api import CATALOGUE, FakeMusicCatalogue, FakeSong, make_wav
from tests.procs import CHROMIUM

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


@pytest.fixture
def library(world: World) -> Iterator[list[str]]:
    """Two songs of the user's own, named "artist - title" (no tags); gone after."""
    music = world.system.workspace("music_app") / "music"
    music.mkdir(parents=True, exist_ok=True)
    names = ["Morning Light - Sunrise.wav", "Rain.wav"]
    for name in names:
        write_tone(music / name, seconds=30.0)
    try:
        yield names
    finally:
        for name in names:
            (music / name).unlink()


NEXT = {
    "zh-CN": {
        "one": "播放晴天",
        "one_playing": "正在播放：周杰伦 - 晴天",
        "next": "下一首",
        "went_on": "正在播放：Morning Light - Sunrise",
        "then": "正在播放：Rain",
        "last": "已经是列表里的最后一首了：Rain",
    },
    "en-US": {
        "one": "play Sunny Day",
        "one_playing": "Now playing: Jay Chou - Sunny Day",
        "next": "Next",
        "went_on": "Now playing: Morning Light - Sunrise",
        "then": "Now playing: Rain",
        "last": "This is the last song in the list: Rain",
    },
}


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_next_after_one_song_by_name_goes_on_with_the_library(
    browser, world: World, library: list[str], locale: str
) -> None:
    """The catalogue finds only the song named; 下一首 then plays the library's songs,
    and only after the last of them says it is the last."""
    words = NEXT[locale]
    with desktop_page(browser, world.system, APPS, locale=locale) as page:
        say(page, words["one"])
        window = page.locator(MUSIC)
        status = window.locator(".win-status")
        expect(status).to_contain_text(words["one_playing"])
        wait_playing(page)
        first = audio_src(page)
        say(page, words["next"] if locale == "zh-CN" else "next")
        expect(status).to_contain_text(words["went_on"])
        expect(window.locator(".v-media-title")).to_contain_text("Morning Light - Sunrise")
        assert audio_src(page) != first
        assert "/music/Morning%20Light%20-%20Sunrise.wav" in audio_src(page)
        wait_playing(page)
        shot(page, f"next-goes-on-with-the-library-{locale}")
        window.get_by_role("button", name=words["next"], exact=True).click()
        expect(status).to_contain_text(words["then"])
        window.get_by_role("button", name=words["next"], exact=True).click()
        expect(status).to_contain_text(words["last"])


RELOAD = {
    "zh-CN": {
        "play": "播放Sunrise",
        "playing": "正在播放：Morning Light - Sunrise",
        "paused": "已暂停：Morning Light - Sunrise",
        "pause": "暂停",
        "resume": "继续",
    },
    "en-US": {
        "play": "play Sunrise",
        "playing": "Now playing: Morning Light - Sunrise",
        "paused": "Paused: Morning Light - Sunrise",
        "pause": "Pause",
        "resume": "Resume",
    },
}


def reload_page(page) -> None:
    page.reload()
    page.wait_for_selector("#task_music_app")


@pytest.fixture(scope="module")
def free_browser(browser) -> Iterator[object]:
    """Chromium that lets a page play by itself (as a browser may for a site in use)."""
    free = browser.browser_type.launch(
        executable_path=str(CHROMIUM),
        args=[*CHROMIUM_ARGS, "--autoplay-policy=no-user-gesture-required"],
    )
    try:
        yield free
    finally:
        free.close()


# A page that may not play by itself: play() is refused until the user clicks or
# types there (a browser's rule; Playwright's own calls would count as the user's).
REFUSE_UNTIL_THE_USER = """(() => {
  let allowed = false;
  const allow = (event) => { if (event.isTrusted) allowed = true; };
  for (const type of ["click", "keydown"]) addEventListener(type, allow, true);
  const play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function () {
    if (allowed) return play.call(this);
    return Promise.reject(new DOMException("the user has not played yet", "NotAllowedError"));
  };
})();"""


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
@pytest.mark.parametrize("autoplay", ["allowed", "refused"])
def test_a_reload_keeps_the_song_that_played_at_its_place(
    request, world: World, library: list[str], locale: str, autoplay: str
) -> None:
    """After a reload the window shows the same song, from about the place it had
    reached (not from 0:00): playing on where the browser lets a page play by itself
    (and a typed pause then pauses it: the same session goes on), else paused there,
    the app saying so, its 继续 going on from there."""
    words = RELOAD[locale]
    browser = request.getfixturevalue(
        "free_browser" if autoplay == "allowed" else "browser"
    )
    with desktop_page(browser, world.system, APPS, locale=locale) as page:
        say(page, words["play"])
        window = page.locator(MUSIC)
        expect(window.locator(".win-status")).to_contain_text(words["playing"])
        src = audio_src(page)
        reached = wait_playing(page, 2.0)
        if autoplay == "refused":
            page.add_init_script(REFUSE_UNTIL_THE_USER)  # the page after the reload
        reload_page(page)
        window = page.locator(MUSIC)
        expect(window.locator(".v-media-title")).to_contain_text("Morning Light - Sunrise")
        expect(window.locator("audio")).to_have_attribute("src", src)
        page.wait_for_function(
            "past => { const a = document.querySelector('#win_music_app audio');"
            " return !!a && a.readyState > 0 && a.currentTime >= past; }",
            arg=reached - 0.5,
        )
        # what it played after the reload began there, not at 0:00
        began = window.locator("audio").evaluate(
            "a => a.played.length ? a.played.start(0) : a.currentTime"
        )
        assert began >= reached - 0.5, f"played from {began}, had reached {reached}"
        if autoplay == "allowed":
            wait_playing(page, reached)
            expect(
                window.get_by_role("button", name=words["pause"], exact=True)
            ).to_be_visible()
            shot(page, f"after-a-reload-{autoplay}-{locale}")
            # the reload talks on in the same session: the app still knows the song
            say(page, words["pause"])
            expect(window.locator(".win-status")).to_contain_text(words["paused"])
            assert window.locator("audio").evaluate("a => a.paused") is True
            return
        expect(window.locator(".win-status")).to_contain_text(words["paused"])
        resume = window.get_by_role("button", name=words["resume"], exact=True)
        expect(resume).to_be_visible()
        audio = window.locator("audio")
        assert audio.evaluate("a => a.paused") is True
        kept = float(audio.evaluate("a => a.currentTime"))
        assert kept >= reached - 0.5, f"paused at {kept}, had reached {reached}"
        shot(page, f"after-a-reload-{autoplay}-{locale}")
        resume.click()
        wait_playing(page, kept)
        assert float(audio.evaluate("a => a.played.start(0)")) >= reached - 0.5
