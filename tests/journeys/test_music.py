"""Journeys with the music app: the design's F-1 and F-2, searching, playing,
pausing and resuming in place, the next song, adding one's own songs, the empty
library, and asking another app something while a song plays.

In Chromium at 1280×800, in Chinese and in English, against the real system with
every shipped app and the fake catalogue on 127.0.0.1 (20-second previews). What
happened is read from the page's audio element (its source, paused, its time) and
from the music folder of the user's workspace.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.fakes.music_api import make_wav
from tests.journeys.conftest import LOCALES, Journey, World, start_world

pytestmark = [pytest.mark.browser, pytest.mark.slow]
MUSIC = "music_app"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from start_world(tmp_path_factory, "journeys_music")


def empty_library(world: World) -> Path:
    """The user's music workspace holds no songs; its music folder."""
    workspace = world.workspace(MUSIC)
    shutil.rmtree(workspace / "music", ignore_errors=True)
    for song in workspace.glob("*.m4a"):
        song.unlink()
    return workspace / "music"


def playing(journey: Journey, track_id: int) -> None:
    """The player plays the catalogue's preview of `track_id`."""
    audio = journey.window(MUSIC).locator("audio")
    expect(audio).to_have_attribute("src", journey.world.catalogue.preview_url(track_id))
    journey.wait_playing()


@pytest.mark.parametrize("locale", LOCALES)
def test_f1_play_an_artists_songs_then_another_from_the_list(
    journey: Journey, locale: str
) -> None:
    journey.say(journey.tr("帮我播放周杰伦的歌", "play songs by Jay Chou"))
    window = journey.window(MUSIC)
    status = journey.status(MUSIC)
    expect(status).to_have_text(
        journey.tr("正在播放：周杰伦 - 七里香", "Now playing: Jay Chou - Sunny Day")
    )
    playing(journey, journey.tr(1001, 3001))
    # the rest of the artist's songs, each with its own 播放
    other = journey.tr("晴天", "Blue and White Porcelain")
    row = window.locator(".v-list-item", has_text=other)
    expect(
        row.get_by_role("button", name=journey.tr("播放", "Play"), exact=True)
    ).to_have_count(1)
    journey.shot("1-playing")
    row.get_by_role("button", name=journey.tr("播放", "Play"), exact=True).click()
    expect(status).to_have_text(
        journey.tr(
            "正在播放：周杰伦 - 晴天", "Now playing: Jay Chou - Blue and White Porcelain"
        )
    )
    playing(journey, journey.tr(1003, 3003))
    journey.shot("2-another")


@pytest.mark.parametrize("locale", LOCALES)
def test_f2_download_a_song_and_play_it_from_disk(journey: Journey, locale: str) -> None:
    empty_library(journey.world)
    journey.say(journey.tr("帮我下载周杰伦的七里香到本地", "download the song Yesterday"))
    window = journey.window(MUSIC)
    name = journey.tr("七里香.m4a", "yesterday.m4a")
    expect(window.locator(".v-text")).to_have_text(
        journey.tr(
            f"已下载《七里香》到 workspace/{name}",
            f'Downloaded "Yesterday" to workspace/{name}',
        )
    )
    expect(journey.status(MUSIC)).to_have_text(journey.tr("下载完成", "Download complete"))
    saved = journey.world.workspace(MUSIC) / name
    assert saved.read_bytes() == journey.world.catalogue.preview
    journey.shot("1-downloaded")
    journey.button(MUSIC, journey.tr("播放", "Play")).click()
    audio = window.locator("audio")
    expect(audio).to_have_attribute(
        "src", re.compile(rf"/api/apps/music_app/files/{re.escape(quote(name))}\?")
    )
    # the file is named after the title alone; the song keeps its artist
    song = journey.tr("周杰伦 - 七里香", "The Beatles - Yesterday")
    expect(journey.status(MUSIC)).to_have_text(
        journey.tr(f"正在播放：{song}", f"Now playing: {song}")
    )
    journey.wait_playing()
    journey.shot("2-playing")
    # found again, the catalogue's song and the downloaded copy are one row
    journey.say(journey.tr("搜索周杰伦", "search for Yesterday"))
    rows = window.locator(".v-list-item")
    expect(rows.locator(".v-list-title")).to_have_text(
        journey.tr(["七里香", "稻香", "晴天", "青花瓷"], ["Yesterday"])
    )
    local = journey.tr("周杰伦 · 七里香 · 本地", "The Beatles · Help! · local")
    expect(rows.first.locator(".v-list-sub")).to_have_text(local)
    journey.shot("3-found-once")


@pytest.mark.parametrize("locale", LOCALES)
def test_search_play_and_next(journey: Journey, locale: str) -> None:
    empty_library(journey.world)  # a downloaded copy would be found too
    journey.say(journey.tr("搜索周杰伦", "search for Taylor Swift"))
    window = journey.window(MUSIC)
    status = journey.status(MUSIC)
    expect(status).to_have_text(
        journey.tr("为你找到周杰伦的 4 首歌", "Found 2 songs for Taylor Swift")
    )
    rows = window.locator(".v-list-item .v-list-title")
    expect(rows).to_have_text(
        journey.tr(["七里香", "稻香", "晴天", "青花瓷"], ["Love Story", "Shake It Off"])
    )
    expect(window.locator("audio")).to_have_count(0)  # found, not yet played
    journey.shot("1-found")
    first = window.locator(".v-list-item").first
    first.get_by_role("button", name=journey.tr("播放", "Play"), exact=True).click()
    expect(status).to_have_text(
        journey.tr("正在播放：周杰伦 - 七里香", "Now playing: Taylor Swift - Love Story")
    )
    playing(journey, journey.tr(1001, 2002))
    journey.shot("2-playing")
    journey.button(MUSIC, journey.tr("下一首", "Next")).click()
    expect(status).to_have_text(
        journey.tr("正在播放：周杰伦 - 稻香", "Now playing: Taylor Swift - Shake It Off")
    )
    playing(journey, journey.tr(1002, 2003))
    journey.shot("3-next")


@pytest.mark.parametrize("locale", LOCALES)
def test_pause_and_resume_keep_the_place(journey: Journey, locale: str) -> None:
    journey.say(journey.tr("播放晴天", "play Love Story"))
    status = journey.status(MUSIC)
    song = journey.tr("周杰伦 - 晴天", "Taylor Swift - Love Story")
    expect(status).to_have_text(journey.tr(f"正在播放：{song}", f"Now playing: {song}"))
    audio = journey.window(MUSIC).locator("audio")
    audio.evaluate("a => { a.dataset.probe = 'the first player'; }")
    journey.wait_playing(0.5)
    journey.button(MUSIC, journey.tr("暂停", "Pause")).click()
    expect(status).to_have_text(journey.tr(f"已暂停：{song}", f"Paused: {song}"))
    journey.page.wait_for_function(
        "() => document.querySelector('#win_music_app audio').paused"
    )
    kept = journey.audio()["time"]
    assert kept > 0.5, f"pausing dropped the place to {kept}"
    journey.shot("1-paused")
    journey.button(MUSIC, journey.tr("继续", "Resume")).click()
    expect(status).to_have_text(journey.tr(f"继续播放：{song}", f"Resumed: {song}"))
    expect(audio).to_have_attribute("data-probe", "the first player")  # the same player
    assert journey.audio()["time"] >= kept
    journey.wait_playing(kept + 0.2)
    journey.shot("2-resumed")


@pytest.mark.parametrize("locale", LOCALES)
def test_pause_and_resume_by_words(journey: Journey, locale: str) -> None:
    journey.say(journey.tr("播放晴天", "play Love Story"))
    status = journey.status(MUSIC)
    song = journey.tr("周杰伦 - 晴天", "Taylor Swift - Love Story")
    journey.wait_playing(0.3)
    journey.say(journey.tr("暂停", "pause the song"))
    expect(status).to_have_text(journey.tr(f"已暂停：{song}", f"Paused: {song}"))
    journey.page.wait_for_function(
        "() => document.querySelector('#win_music_app audio').paused"
    )
    kept = journey.audio()["time"]
    journey.shot("1-paused")
    journey.say(journey.tr("继续播放", "resume the song"))
    expect(status).to_have_text(journey.tr(f"继续播放：{song}", f"Resumed: {song}"))
    journey.wait_playing(kept + 0.1)
    journey.shot("2-resumed")


@pytest.mark.parametrize("locale", LOCALES)
def test_an_empty_library_then_a_song_added_and_played(
    journey: Journey, locale: str, tmp_path: Path
) -> None:
    music = empty_library(journey.world)
    journey.page.click("#task_music_app")
    window = journey.window(MUSIC)
    expect(window.locator(".v-empty")).to_have_text(
        journey.tr(
            "本地曲库还没有歌曲。点“添加歌曲”选择音乐文件，或把音乐文件拖到这个窗口里；也可以从文件夹导入（如 ~/Music）。",
            'Your local library has no songs yet. Choose music files with "Add songs", '
            "drop them onto this window, or import a folder (such as ~/Music).",
        )
    )
    journey.shot("1-empty")
    title = journey.tr("夜曲", "Night Song")
    chosen = tmp_path / "night.wav"
    chosen.write_bytes(make_wav(20.0, title=title, artist=journey.tr("周杰伦", "Jay Chou")))
    with journey.page.expect_file_chooser() as chooser:
        journey.button(MUSIC, journey.tr("添加歌曲", "Add songs")).click()
    chooser.value.set_files(str(chosen))
    expect(window.locator(".v-text")).to_have_text(
        journey.tr("已把《night.wav》加入曲库。", 'Added "night.wav" to your library.')
    )
    stored = list(music.iterdir())
    assert [p.read_bytes() for p in stored] == [chosen.read_bytes()], stored
    journey.shot("2-added")
    journey.button(MUSIC, journey.tr("本地曲库", "Local library")).click()
    row = window.locator(".v-list-item", has_text=title)
    expect(row).to_have_count(1)
    row.get_by_role("button", name=journey.tr("播放", "Play"), exact=True).click()
    expect(journey.status(MUSIC)).to_contain_text(title)
    expect(window.locator("audio")).to_have_attribute(
        "src", re.compile(r"/api/apps/music_app/files/music/")
    )
    journey.wait_playing()
    journey.shot("3-playing")


@pytest.mark.parametrize("locale", LOCALES)
def test_ask_the_system_while_a_song_plays(journey: Journey, locale: str) -> None:
    journey.say(journey.tr("播放晴天", "play Love Story"))
    started = journey.wait_playing()
    journey.shot("1-playing")
    journey.say(journey.tr("现在内存占用多少", "how much memory is used"))
    expect(journey.status("system_agent")).to_contain_text(journey.tr("内存占用", "Memory"))
    # the music window stays open and its song goes on
    expect(journey.window(MUSIC)).to_be_visible()
    journey.wait_playing(started + 0.3)
    expect(journey.status(MUSIC)).to_contain_text(
        journey.tr("正在播放：周杰伦 - 晴天", "Now playing: Taylor Swift - Love Story")
    )
    journey.shot("2-asked")
