"""`file_import`: a named folder's audio files, known by content, copied into the
workdir — and only through a plan the user said yes to."""

from __future__ import annotations

import os
from pathlib import Path

from tests.executor.conftest import APP_TOKEN, Harness
from tests.fakes.music_api import make_wav


def _folder(tmp_path: Path) -> Path:
    music = tmp_path / "Music"
    (music / "album").mkdir(parents=True)
    (music / "a.wav").write_bytes(make_wav(0.05))
    (music / "album" / "b.mp3").write_bytes(b"ID3\x04\x00" + bytes(100))
    (music / "notes.mp3").write_text("a text file named like a song")
    (music / ".hidden.wav").write_bytes(make_wav(0.05))
    (music / "big.wav").write_bytes(make_wav(2.0))  # 16 kB: over the test's cap below
    os.symlink(music / "a.wav", music / "link.wav")
    return music


def test_audio_files_are_copied_by_content_and_nothing_is_replaced(
    make_harness, tmp_path: Path
) -> None:
    harness: Harness = make_harness({"limits": {"file_size_bytes": 10_000}})
    music = _folder(tmp_path)
    (harness.workdir / "music").mkdir()
    (harness.workdir / "music" / "a.wav").write_bytes(b"the user's own")
    result = harness.call("file_import", source=str(music), dest="music")
    assert result["status"] == "ok", result
    assert result["result"]["copied"] == [
        "workspace/music/a_2.wav",
        "workspace/music/album/b.mp3",
    ]
    assert result["result"]["too_large"] == 1
    assert (harness.workdir / "music" / "a.wav").read_bytes() == b"the user's own"
    assert (harness.workdir / "music" / "a_2.wav").read_bytes() == (
        music / "a.wav"
    ).read_bytes()
    assert not (harness.workdir / "music" / "notes.mp3").exists()


def test_an_app_cannot_import_without_the_users_yes(
    harness: Harness, tmp_path: Path
) -> None:
    music = _folder(tmp_path)
    refused = harness.call("file_import", token=APP_TOKEN, source=str(music), dest="m")
    assert refused["code"] == "needs_confirmation"
    assert not (harness.workdir / "m").exists()


def test_a_missing_folder_or_a_way_out_of_the_workdir_fails(
    harness: Harness, tmp_path: Path
) -> None:
    missing = harness.call("file_import", source=str(tmp_path / "nope"), dest="music")
    assert missing["code"] == "file_not_found"
    out = harness.call("file_import", source=str(_folder(tmp_path)), dest="../outside")
    assert out["code"] == "path_outside_workdir"
