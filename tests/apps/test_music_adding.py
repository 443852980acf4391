"""Adding the user's own songs to the music library, without processes (pure tier).

A file arrives in pieces; the first is checked by its declared
size and by its content's first bytes (never by its name) before anything is
written, and the file goes to music/ through `file_write` under a safe name that
never replaces a song already there.
"""

from __future__ import annotations

import base64

import pytest

from aios_sdk import audio_kind
from apps.music_app.flows import MusicFlows
from tests.apps.doubles import CHINESE, EN, PlanningAgent, readable_texts
from tests.fakes.music_api import make_wav

MP3_HEAD = b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" * 8


def piece(name: str, data: bytes, *, size: int | None = None, offset: int = 0) -> dict:
    value = {
        "name": name,
        "size": len(data) if size is None else size,
        "offset": offset,
        "data": base64.b64encode(data).decode("ascii"),
    }
    return {"action_id": "add_songs", "value": value}


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (MP3_HEAD, "mp3"),
        (b"\xff\xfb\x90\x00rest", "mp3"),
        (b"\xff\xf1\x50\x80rest", "aac"),
        (make_wav(0.01), "wav"),
        (b"fLaC\x00\x00\x00\x22", "flac"),
        (b"OggS\x00\x02", "ogg"),
        (b"\x00\x00\x00\x20ftypM4A \x00", "m4a"),
        (b"FORM\x00\x00\x10\x00AIFF", "aiff"),
        (b"\x30\x26\xb2\x75\x8e\x66\xcf\x11\xa6\xd9", "wma"),
        (b"just some text, named .mp3", None),
        (b"%PDF-1.7", None),
        (b"", None),
    ],
)
def test_audio_is_known_by_its_first_bytes(head: bytes, kind: str | None) -> None:
    assert audio_kind(head[:16]) == kind


def test_a_song_in_pieces_goes_to_music_through_file_write() -> None:
    agent = PlanningAgent({"max_song_mb": 1})
    agent.answers["file_list"] = {"files": [{"name": "Sunny Day.mp3", "size": 9}]}
    flows = MusicFlows(agent)
    song = MP3_HEAD + bytes(300)
    first = flows.handle(None, {}, piece("Sunny Day.mp3", song[:100], size=len(song)))
    assert first["status"] == "ok" and first["message"] == ""  # progress is not spoken
    assert first["state"]["adding"]["path"] == "music/Sunny Day (2).mp3"  # never replaces
    rest = piece("Sunny Day.mp3", song[100:], size=len(song), offset=100)
    done = flows.handle(None, {"cwd_state": first["state"]}, rest)
    writes = [args for tool, args in agent.calls if tool == "file_write"]
    assert [w["path"] for w in writes] == ["music/Sunny Day (2).mp3"] * 2
    assert [w.get("mode") for w in writes] == [None, "append"]
    assert b"".join(base64.b64decode(w["content"]) for w in writes) == song
    assert done["data"]["content"] == "已把《Sunny Day.mp3》加入曲库。"
    assert done["state"] == {"adding": None}
    play = next(a for a in done["actions"] if a["action_id"] == "play_local")
    assert play["params"] == {"path": "workspace/music/Sunny Day (2).mp3"}


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("周杰伦 - 晴天.mp3", "music/周杰伦 - 晴天.mp3"),
        ("Adele - Hello.ogg", "music/Adele - Hello.ogg"),
        ("../../Adele: Hello?.mp3", "music/Adele_ Hello_.mp3"),
        (".hidden.mp3", "music/hidden.mp3"),
    ],
)
def test_an_added_song_keeps_the_name_it_was_given(name: str, kept: str) -> None:
    """The library reads artist and title from that name: it is kept, made safe."""
    agent = PlanningAgent()
    flows = MusicFlows(agent)
    head = b"OggS\x00\x02" + bytes(40) if name.endswith(".ogg") else MP3_HEAD
    reply = flows.handle(None, {}, piece(name, head))
    assert reply["state"] == {"adding": None}, reply
    (write,) = [args for tool, args in agent.calls if tool == "file_write"]
    assert write["path"] == kept


def test_the_ending_follows_the_content_not_the_name() -> None:
    agent = PlanningAgent()
    flows = MusicFlows(agent)
    wav = make_wav(0.05)
    reply = flows.handle(None, EN, piece("recording.mp3", wav))
    assert reply["data"]["content"] == 'Added "recording.mp3" to your library.'
    assert reply["state"] == {"adding": None}
    play = next(a for a in reply["actions"] if a["action_id"] == "play_local")
    assert play["params"] == {"path": "workspace/music/recording.wav"}
    assert not [t for t in readable_texts(reply) if CHINESE.search(t)]


@pytest.mark.parametrize("language", [{}, EN])
def test_a_file_that_is_not_audio_is_refused_whatever_its_name(language) -> None:
    agent = PlanningAgent()
    flows = MusicFlows(agent)
    reply = flows.handle(None, dict(language), piece("晴天.mp3", b"not a song at all" * 4))
    assert reply["status"] == "error"
    assert ("没有添加" if not language else "it was not added") in reply["data"]["content"]
    assert not [c for c in agent.calls if c[0] == "file_write"]


@pytest.mark.parametrize("language", [{}, EN])
def test_a_file_over_the_size_is_refused_before_anything_is_written(language) -> None:
    agent = PlanningAgent({"max_song_mb": 1})
    flows = MusicFlows(agent)
    too_big = (1 << 20) + 1
    reply = flows.handle(None, dict(language), piece("long.mp3", MP3_HEAD, size=too_big))
    assert reply["status"] == "error"
    said = reply["data"]["content"]
    assert "1.0 MB" in said and ("超过" in said if not language else "more than" in said)
    assert not [c for c in agent.calls if c[0] == "file_write"]


def test_a_piece_out_of_order_or_past_the_size_is_refused() -> None:
    agent = PlanningAgent()
    flows = MusicFlows(agent)
    first = flows.handle(None, {}, piece("a.mp3", MP3_HEAD, size=len(MP3_HEAD) + 10))
    state = {"cwd_state": first["state"]}
    skipped = piece("a.mp3", bytes(5), size=len(MP3_HEAD) + 10, offset=len(MP3_HEAD) + 5)
    assert flows.handle(None, state, skipped)["status"] == "error"
    over = piece("a.mp3", bytes(11), size=len(MP3_HEAD) + 10, offset=len(MP3_HEAD))
    assert flows.handle(None, state, over)["status"] == "error"
    assert len([c for c in agent.calls if c[0] == "file_write"]) == 1


def test_the_empty_library_says_how_to_add_songs() -> None:
    from tests.apps.doubles import ok

    flows = MusicFlows(PlanningAgent())
    for language, words in (({}, "添加歌曲"), (EN, "Add songs")):
        home = flows.handle(
            "", {**language, "tool_results": {"step_1": ok("music_library", [])}}
        )
        assert words in home["data"]["empty"] and "workspace/music" not in home["message"]
        adding = next(a for a in home["actions"] if a["action_id"] == "add_songs")
        assert adding["type"] == "file" and adding["drop"] is True
        assert adding["label"] == words


def test_a_folder_import_plans_file_import_and_says_what_came_in() -> None:
    from tests.apps.doubles import failed, ok

    flows = MusicFlows(PlanningAgent())
    asked = {"action_id": "import_folder", "value": "~/Music"}
    plan = flows.handle(None, {}, asked)
    assert [s["tool"] for s in plan["steps"]] == ["file_import", "music_library"]
    assert plan["steps"][0]["args"] == {"source": "~/Music", "dest": "music"}
    song = {
        "id": "local:music/a.wav",
        "title": "a",
        "source": "local",
        "path": "music/a.wav",
    }
    copied = {"copied": ["workspace/music/a.wav"], "too_large": 0, "limited": False}
    done = flows.handle(
        None,
        {
            "tool_results": {
                "step_1": ok("file_import", copied),
                "step_2": ok("music_library", [song]),
            }
        },
        asked,
    )
    assert done["view_type"] == "list" and done["message"].startswith(
        "已从 ~/Music 导入 1 首歌。"
    )
    denied = {
        "step_1": failed("file_import", "the user said no", "denied_by_user"),
        "step_2": ok("music_library", []),
    }
    no = flows.handle(None, {**EN, "tool_results": denied}, asked)
    assert no["message"].startswith("Nothing was imported from ~/Music.")
    home = flows.handle("", {"tool_results": {"step_1": ok("music_library", [])}})
    box = next(a for a in home["actions"] if a["action_id"] == "import_folder")
    assert box["type"] == "input" and "~/Music" in box["placeholder"]
    empty = flows.handle(None, {}, {"action_id": "import_folder", "value": ""})
    assert empty["steps"][0]["args"]["source"] == "~/Music"  # the default
