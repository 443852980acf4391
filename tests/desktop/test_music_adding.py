"""Adding one's own songs to the music library in Chromium.

At 1280×800, in both languages: the empty library says how to add songs (not a
folder in the state folder); a song chosen with 添加歌曲 / Add songs, and one
dropped on the music window, arrive in music/ of the user's own workspace, whole,
through the app's `file_write` (one of them in two pieces) and are then in the
library; a text file named .mp3 and a file over the size are refused, saying why,
and nothing of them is written. Songs without tags, added or imported, are named by
their files ("周杰伦 - 晴天": 晴天 by 周杰伦), in the list, in a search by artist and
in the player.
"""

from __future__ import annotations

import base64
import copy
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.controller.system import TEST_CONFIG, RunningSystem, copy_shipped_apps, serving
from tests.desktop.conftest import ARTIFACTS
from tests.fakes.music_api import make_wav

pytestmark = [pytest.mark.slow, pytest.mark.browser]
APPS = ("music_app",)
MUSIC = "#win_music_app"
MAX_MB = 2

WORDS = {
    "zh-CN": {
        "empty": "本地曲库还没有歌曲。点“添加歌曲”选择音乐文件，或把音乐文件拖到这个窗口里；也可以从文件夹导入（如 ~/Music）。",
        "add": "添加歌曲",
        "added": "已把《{}》加入曲库。",
        "library": "本地曲库",
        "not_audio": "的内容不是音乐库能播放的音频",
        "too_big": "超过了一首歌最多 2.0 MB",
    },
    "en-US": {
        "empty": 'Your local library has no songs yet. Choose music files with "Add songs", '
        "drop them onto this window, or import a folder (such as ~/Music).",
        "add": "Add songs",
        "added": 'Added "{}" to your library.',
        "library": "Local library",
        "not_audio": "does not hold audio the library plays",
        "too_big": "more than the 2.0 MB a song may be",
    },
}


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("music_adding")
    apps = copy_shipped_apps(root / "apps", APPS)
    config = copy.deepcopy(TEST_CONFIG)
    config["app_settings"] = {
        "music_app": {"api_base": "http://127.0.0.1:9", "max_song_mb": MAX_MB}
    }
    with serving(root, apps, APPS, config=config) as running:
        yield running


@pytest.fixture
def music(system: RunningSystem) -> Path:
    """The music folder of the user's workspace, empty at the start of each test."""
    folder = system.workspace("music_app") / "music"
    shutil.rmtree(folder, ignore_errors=True)
    return folder


def open_music(page) -> object:
    page.click("#task_music_app")
    window = page.locator(MUSIC)
    expect(window.locator(".v-empty")).to_be_visible()
    return window


def drop(page, name: str, data: bytes) -> None:
    """Drop a file holding `data` on the music window, as a file manager would."""
    page.evaluate(
        """([name, b64]) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const files = new DataTransfer();
          files.items.add(new File([bytes], name));
          const win = document.querySelector('#win_music_app');
          for (const type of ['dragenter', 'dragover', 'drop']) {
            win.dispatchEvent(new DragEvent(type, {dataTransfer: files, bubbles: true, cancelable: true}));
          }
        }""",
        [name, base64.b64encode(data).decode("ascii")],
    )


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"music-{name}.png"))


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_songs_chosen_or_dropped_join_the_library(
    browser, system: RunningSystem, music: Path, tmp_path: Path, locale: str
) -> None:
    words = WORDS[locale]
    chosen = tmp_path / "Sunny Day.wav"
    # 1.5 MB: it goes in two pieces
    chosen.write_bytes(make_wav(190.0, title="Sunny Day", artist="Jay Chou"))
    dropped = make_wav(1.0, title="Rice Field", artist="Jay Chou")
    with desktop_page(browser, system, APPS, locale=locale) as page:
        window = open_music(page)
        expect(window.locator(".v-empty")).to_have_text(words["empty"])
        shot(page, f"empty-library-{locale}")
        with page.expect_file_chooser() as chooser:
            window.get_by_role("button", name=words["add"], exact=True).click()
        assert chooser.value.is_multiple()
        chooser.value.set_files(str(chosen))
        expect(window.locator(".v-text")).to_have_text(words["added"].format(chosen.name))
        assert (music / "Sunny Day.wav").read_bytes() == chosen.read_bytes()  # its own name

        window.get_by_role("button", name=words["library"], exact=True).click()
        expect(window.locator(".v-list-item", has_text="Sunny Day")).to_have_count(1)
        drop(page, "rice field.wav", dropped)
        expect(window.locator(".v-text")).to_have_text(
            words["added"].format("rice field.wav")
        )
        assert (music / "rice field.wav").read_bytes() == dropped
        window.get_by_role("button", name=words["library"], exact=True).click()
        expect(window.locator(".v-list-item")).to_have_count(2)
        shot(page, f"library-after-adding-{locale}")


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_what_is_not_audio_or_too_big_is_refused(
    browser, system: RunningSystem, music: Path, tmp_path: Path, locale: str
) -> None:
    words = WORDS[locale]
    renamed = tmp_path / "晴天.mp3"
    renamed.write_text("these are notes, not a song\n" * 50)
    too_big = tmp_path / "long.mp3"
    too_big.write_bytes(b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes((MAX_MB << 20) + 1))
    with desktop_page(browser, system, APPS, locale=locale) as page:
        window = open_music(page)
        with page.expect_file_chooser() as chooser:
            window.get_by_role("button", name=words["add"], exact=True).click()
        chooser.value.set_files(str(renamed))
        expect(window.locator(".v-text")).to_contain_text(words["not_audio"])
        expect(window.locator(".win-status")).to_have_attribute("data-level", "error")
        shot(page, f"refused-not-audio-{locale}")
        drop(page, too_big.name, too_big.read_bytes())
        expect(window.locator(".v-text")).to_contain_text(words["too_big"])
        assert not music.exists() or list(music.iterdir()) == []


IMPORT = {
    "zh-CN": {
        "box": "从文件夹导入",
        "ok": "确定",
        "yes": "允许一次",
        "done": "已从 {} 导入 2 首歌。",
    },
    "en-US": {
        "box": "Import a folder",
        "ok": "OK",
        "yes": "Allow once",
        "done": "Imported 2 songs from {}.",
    },
}


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_a_folder_is_imported_after_a_yes_that_says_what_is_copied(
    browser, system: RunningSystem, music: Path, tmp_path: Path, locale: str
) -> None:
    words = IMPORT[locale]
    folder = tmp_path / "My Music"
    (folder / "live").mkdir(parents=True)
    (folder / "Sunny Day.wav").write_bytes(make_wav(1.0, title="Sunny Day"))
    (folder / "live" / "Rice Field.wav").write_bytes(make_wav(1.0, title="Rice Field"))
    (folder / "cover.jpg").write_bytes(b"\xff\xd8\xff\xe0 not audio")
    with desktop_page(browser, system, APPS, locale=locale) as page:
        window = open_music(page)
        box = window.locator(".act-input-form", has_text=words["box"])
        expect(box.locator("input")).to_have_attribute("placeholder", re.compile("~/Music"))
        box.locator("input").fill(str(folder))
        box.get_by_role("button", name=words["ok"], exact=True).click()
        dialog = page.locator("#confirm_dialog")
        said = (
            f"从 {folder} 复制 2 个音频文件（共 16 KB）到这个应用的 music 文件夹"
            if locale == "zh-CN"
            else f"copy 2 audio files (16 KB) from {folder} into this app's music folder"
        )
        expect(dialog).to_contain_text(said)
        assert not music.exists() or list(music.iterdir()) == []  # nothing before the yes
        shot(page, f"import-question-{locale}")
        dialog.get_by_role("button", name=words["yes"], exact=True).click()
        expect(window.locator(".win-status")).to_contain_text(words["done"].format(folder))
        expect(window.locator(".v-list-item")).to_have_count(2)
        assert (music / "Sunny Day.wav").read_bytes() == (
            folder / "Sunny Day.wav"
        ).read_bytes()
        assert (music / "live" / "Rice Field.wav").exists()
        assert not (music / "cover.jpg").exists()
        shot(page, f"imported-{locale}")


NAMED = {
    "zh-CN": {
        "unknown": "未知歌手",
        "local": "本地",
        "by_artist": "播放周杰伦的歌",
        "playing": "正在播放：周杰伦 - 晴天",
    },
    "en-US": {
        "unknown": "Unknown artist",
        "local": "local",
        "by_artist": "play songs by 周杰伦",
        "playing": "Now playing: 周杰伦 - 晴天",
    },
}


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_songs_are_named_by_artist_and_title_from_their_files(
    browser, system: RunningSystem, music: Path, tmp_path: Path, locale: str
) -> None:
    words = {**WORDS[locale], **IMPORT[locale], **NAMED[locale]}
    chosen = tmp_path / "周杰伦 - 晴天.wav"
    chosen.write_bytes(make_wav(20.0))  # no tags: the name says who and what
    folder = tmp_path / "imported"
    folder.mkdir()
    (folder / "Adele – Hello.wav").write_bytes(make_wav(1.0))
    (folder / "Morning.wav").write_bytes(make_wav(1.0))
    with desktop_page(browser, system, APPS, locale=locale) as page:
        window = open_music(page)
        with page.expect_file_chooser() as chooser:
            window.get_by_role("button", name=words["add"], exact=True).click()
        chooser.value.set_files(str(chosen))
        expect(window.locator(".v-text")).to_have_text(words["added"].format(chosen.name))
        window.get_by_role("button", name=words["library"], exact=True).click()
        box = window.locator(".act-input-form", has_text=words["box"])
        box.locator("input").fill(str(folder))
        box.get_by_role("button", name=words["ok"], exact=True).click()
        page.locator("#confirm_dialog").get_by_role(
            "button", name=words["yes"], exact=True
        ).click()
        rows = window.locator(".v-list-item")
        expect(rows).to_have_count(3)

        def sub(title: str) -> object:
            row = rows.filter(has=page.locator(".v-list-title", has_text=title))
            return row.locator(".v-list-sub")

        expect(sub("晴天")).to_have_text(f"周杰伦 · 0:20 · {words['local']}")
        expect(sub("Hello")).to_have_text(f"Adele · 0:01 · {words['local']}")
        expect(sub("Morning")).to_have_text(f"{words['unknown']} · 0:01 · {words['local']}")
        shot(page, f"named-by-their-files-{locale}")

        page.fill("#command_input", words["by_artist"])
        page.press("#command_input", "Enter")
        expect(window.locator(".win-status")).to_contain_text(words["playing"])
        expect(window.locator(".v-media-title")).to_have_text("🎵 周杰伦 - 晴天")
        expect(window.locator(".v-media-sub")).to_have_text("周杰伦")
        shot(page, f"by-artist-from-a-file-name-{locale}")
