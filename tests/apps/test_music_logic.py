"""The music app's planning and views, without processes (pure tier).

Requests are read into intents; the F-1 and F-2 plans have the design's shape; the
second half of each flow turns step results (built from the fake catalogue's real
answers) into the list, player and download views; the local library reads real
files' tags and never leaves the workspace.
"""

from __future__ import annotations

import json
import os

import pytest

from apps.music_app.catalogue import (
    download_filename,
    format_duration,
    local_file_url,
    parse_search_answer,
    search_request,
)
from apps.music_app.flows import LIBRARY_TOOL, MusicFlows
from apps.music_app.intent import read_intent
from apps.music_app.library import scan_library
from tests.apps.doubles import (
    CHINESE,
    EN,
    PlanningAgent,
    failed,
    ok,
    readable_texts,
)
from tests.fakes.music_api import make_wav


@pytest.mark.parametrize(
    ("text", "kind", "query"),
    [
        # a request to hear something plays
        ("帮我播放周杰伦的歌", "play", "周杰伦"),
        ("来点轻音乐", "play", "轻音乐"),
        ("放一首陈奕迅的十年", "play", "十年 陈奕迅"),
        ("播放七里香", "play", "七里香"),
        ("play songs by Taylor Swift", "play", "Taylor Swift"),
        ("play songs by Jay Chou", "play", "Jay Chou"),
        ("listen to Adele", "play", "Adele"),
        ("play 晴天", "play", "晴天"),
        ("play songs by 周杰伦", "play", "周杰伦"),
        ("播放", "play", ""),
        ("播放音乐", "play", ""),
        # a request to look for something lists
        ("搜索周杰伦的歌", "search", "周杰伦"),
        ("find songs by Taylor Swift", "search", "Taylor Swift"),
        ("帮我下载周杰伦的七里香到本地", "download", "七里香 周杰伦"),
        ("download the song Yesterday", "download", "Yesterday"),
        ("download Yesterday by The Beatles", "download", "Yesterday The Beatles"),
        ("下载周杰伦的歌", "search", "周杰伦"),  # no one song named: let the user pick
        ("我想听音乐", "play", ""),
        ("play some music", "play", ""),
        ("", "home", ""),
        ("下一首", "next", ""),
        ("next track", "next", ""),
        ("上一首", "prev", ""),
        ("暂停", "pause", ""),
        ("pause", "pause", ""),
        ("继续播放", "resume", ""),
        ("最近播放", "recent", ""),
        ("我的音乐", "library", ""),
        ("打开音乐应用", "home", ""),  # routed here instead of to the window manager
        ("open the music app", "home", ""),
        # a question about the app itself (the router gives it here): its home view
        ("介绍一下音乐应用", "home", ""),
        ("tell me about the music app", "home", ""),
        ("说说我的歌曲", "library", ""),
    ],
)
def test_requests_are_read_into_intents(text: str, kind: str, query: str) -> None:
    intent = read_intent(text)
    assert (intent.kind, intent.query) == (kind, query)


def test_download_intent_names_title_and_artist() -> None:
    intent = read_intent("帮我下载周杰伦的七里香到本地")
    assert (intent.title, intent.artist) == ("七里香", "周杰伦")


def test_search_request_is_itunes_shaped() -> None:
    args = search_request("http://cat.test/", "周杰伦", 7)
    assert args == {
        "method": "GET",
        "url": "http://cat.test/search",
        "params": {"term": "周杰伦", "media": "music", "entity": "song", "limit": 7},
    }
    assert search_request("", "x")["url"] == "https://itunes.apple.com/search"


def test_catalogue_answers_parse_from_json_text_or_raw(catalogue) -> None:
    answer = catalogue.search("周杰伦")
    from_json = parse_search_answer(answer)
    assert [s.title for s in from_json] == ["七里香", "稻香", "晴天", "青花瓷"]
    assert from_json[0].url == catalogue.preview_url(1001)
    assert from_json[0].display == "周杰伦 - 七里香"
    assert from_json[0].duration == "4:59"
    # a catalogue that labels its JSON as plain text: the executor hands over text
    assert parse_search_answer(json.dumps(answer, ensure_ascii=False)) == from_json
    assert parse_search_answer({"status_code": 200, "body": answer}) == from_json
    doubled = {"results": answer["results"] * 2}
    assert len(parse_search_answer(doubled)) == 4
    with pytest.raises(ValueError):
        parse_search_answer("<html>busy</html>")
    with pytest.raises(ValueError):
        parse_search_answer({"error": "nope"})


@pytest.mark.parametrize(
    ("title", "ext", "expected"),
    [
        ("七里香", "m4a", "七里香.m4a"),
        ("Yesterday", "m4a", "yesterday.m4a"),
        ("Shake It Off", "wav", "shake_it_off.wav"),
        ("../../etc/passwd", "m4a", "etc_passwd.m4a"),
        ("周杰伦/七里香:live", "m4a", "周杰伦_七里香_live.m4a"),
        ("...", "m4a", "song.m4a"),
        ("", "", "song.m4a"),
        ("稻香", "../sh", "稻香.sh"),
    ],
)
def test_download_file_names_stay_inside_the_workspace(
    title: str, ext: str, expected: str
) -> None:
    assert download_filename(title, ext) == expected


def test_small_helpers() -> None:
    assert format_duration(299_000) == "4:59"
    assert format_duration(0) == ""
    assert local_file_url("music_app", "music/七里香.wav") == (
        "/api/apps/music_app/files/music/%E4%B8%83%E9%87%8C%E9%A6%99.wav"
    )


def test_library_reads_tags_and_never_leaves_the_workspace(tmp_path) -> None:
    (tmp_path / "music").mkdir()
    (tmp_path / "music" / "a.wav").write_bytes(make_wav(0.5, title="晴天", artist="周杰伦"))
    (tmp_path / "untagged.wav").write_bytes(make_wav(0.2))
    (tmp_path / "notes.txt").write_text("not audio")
    (tmp_path / "broken.mp3").write_bytes(b"not really an mp3")
    outside = tmp_path.parent / f"{tmp_path.name}_outside.wav"
    outside.write_bytes(make_wav(0.1))
    os.symlink(outside, tmp_path / "music" / "escape.wav")
    songs = {s["path"]: s for s in scan_library(tmp_path, "music_app")}
    assert set(songs) == {"music/a.wav", "untagged.wav", "broken.mp3"}
    tagged = songs["music/a.wav"]
    assert (tagged["title"], tagged["artist"], tagged["source"]) == (
        "晴天",
        "周杰伦",
        "local",
    )
    assert tagged["id"] == "local:music/a.wav"
    assert tagged["url"] == "/api/apps/music_app/files/music/a.wav"
    assert 400 <= tagged["duration_ms"] <= 600
    assert songs["untagged.wav"]["title"] == "untagged"
    assert scan_library(tmp_path / "missing", "music_app") == []


@pytest.mark.parametrize(
    ("name", "artist", "title"),
    [
        ("周杰伦 - 晴天.mp3", "周杰伦", "晴天"),
        ("Adele - Hello.ogg", "Adele", "Hello"),
        ("Adele -Hello.ogg", "Adele", "Hello"),
        ("Adele – Hello.flac", "Adele", "Hello"),
        ("周杰伦–稻香.m4a", "周杰伦", "稻香"),
        ("Jay-Z - 99 Problems.mp3", "Jay-Z", "99 Problems"),
        ("01 - Adele - Hello.mp3", "Adele", "Hello"),
        ("周杰伦_-_七里香.wav", "周杰伦", "七里香"),  # as songs were once added
        ("Hello.mp3", "", "Hello"),
        ("a-ha.mp3", "", "a-ha"),
    ],
)
def test_a_file_without_tags_is_named_by_artist_and_title(
    tmp_path, name: str, artist: str, title: str
) -> None:
    (tmp_path / "music").mkdir()
    (tmp_path / "music" / name).write_bytes(b"no tags in here" * 8)
    (song,) = scan_library(tmp_path, "music_app")
    assert (song["artist"], song["title"]) == (artist, title)


def test_tags_come_before_the_file_name(tmp_path) -> None:
    (tmp_path / "Someone - Something.wav").write_bytes(make_wav(0.1, title="晴天"))
    (song,) = scan_library(tmp_path, "music_app")
    # the title the tags give; the artist they leave out, from the name
    assert (song["artist"], song["title"]) == ("Someone", "晴天")


@pytest.mark.parametrize(
    ("said", "language", "unknown", "playing"),
    [
        ("播放周杰伦的歌", {}, "未知歌手", "正在播放：周杰伦 - 晴天"),
        ("play songs by 周杰伦", EN, "Unknown artist", "Now playing: 周杰伦 - 晴天"),
    ],
)
def test_songs_named_by_their_files_are_listed_found_and_played_by_artist(
    catalogue, tmp_path, said: str, language: dict, unknown: str, playing: str
) -> None:
    (tmp_path / "music").mkdir()
    for name in ("周杰伦 - 晴天.mp3", "Adele - Hello.ogg", "Morning.wav"):
        (tmp_path / "music" / name).write_bytes(b"no tags in here" * 8)
    library = scan_library(tmp_path, "music_app")
    flows, _ = _flows(catalogue)
    home = flows.handle(
        "", {**language, "tool_results": {"step_1": ok(LIBRARY_TOOL, library)}}
    )
    rows = {i["title"]: i["sub"] for i in home["data"]["items"]}
    assert rows["晴天"].startswith("周杰伦 · ")
    assert rows["Hello"].startswith("Adele · ")
    assert rows["Morning"].startswith(f"{unknown} · ")
    # the catalogue is out of reach: what plays is the library's song of that artist
    results = {
        "step_1": failed("http_request", "connection refused", "connection_failed"),
        "step_2": failed("cache_set", "depends on a failed step"),
        "step_3": ok("cache_set", {"stored": True}),
        "step_4": ok(LIBRARY_TOOL, library),
        "step_6": ok("file_read", "[]"),
    }
    reply = flows.handle(said, {**language, "tool_results": results})
    assert reply["message"].endswith(playing), reply["message"]
    assert (_player(reply)["title"], _player(reply)["artist"]) == (
        "周杰伦 - 晴天",
        "周杰伦",
    )
    morning = flows.handle(
        None,
        {
            **language,
            "tool_results": {
                "step_1": ok(LIBRARY_TOOL, library),
                "step_2": ok("file_read", "[]"),
            },
        },
        {"action_id": "play", "params": {"song_id": "local:music/Morning.wav"}},
    )
    assert (_player(morning)["title"], _player(morning)["artist"]) == ("Morning", unknown)


# ------------------------------------------------------------------ F-1


def _flows(catalogue, **settings) -> tuple[MusicFlows, PlanningAgent]:
    agent = PlanningAgent({"api_base": catalogue.base_url, **settings})
    return MusicFlows(agent), agent


def test_f1_search_plans_http_request_and_cache_set(catalogue) -> None:
    flows, _ = _flows(catalogue)
    reply = flows.handle("搜索周杰伦的歌", {})
    assert reply["view_type"] == "loading"
    steps = reply["steps"]
    assert [s["tool"] for s in steps] == [
        "http_request",
        "cache_set",
        "cache_set",
        LIBRARY_TOOL,
    ]
    assert steps[0]["args"]["url"] == f"{catalogue.base_url}/search"
    assert steps[0]["args"]["params"]["term"] == "周杰伦"
    assert steps[1]["args"]["value"] == "{{step_1.result}}"


def _search_results(catalogue, term: str, library: list | None = None) -> dict:
    return {
        "step_1": ok("http_request", catalogue.search(term)),
        "step_2": ok("cache_set", {"stored": True}),
        "step_3": ok("cache_set", {"stored": True}),
        "step_4": ok(LIBRARY_TOOL, library or []),
    }


def test_f1_search_answers_a_list_with_play_buttons(catalogue) -> None:
    flows, _ = _flows(catalogue)
    results = _search_results(catalogue, "周杰伦")
    reply = flows.handle("搜索周杰伦的歌", {"tool_results": results})
    assert reply["view_type"] == "list"
    assert reply["data"]["title"] == "周杰伦的歌曲"
    assert [i["title"] for i in reply["data"]["items"]] == [
        "七里香",
        "稻香",
        "晴天",
        "青花瓷",
    ]
    assert reply["message"] == "为你找到周杰伦的 4 首歌"
    plays = [a for a in reply["actions"] if a["action_id"] == "play"]
    assert plays[0] == {
        "type": "button",
        "label": "播放",
        "action_id": "play",
        "params": {"song_id": "1001"},
        "item_id": "1001",  # drawn in the row of 七里香
    }
    ids = [i["id"] for i in reply["data"]["items"]]
    assert [a["item_id"] for a in plays] == ids
    kinds = {a["action_id"]: a for a in reply["actions"]}
    assert kinds["filter"]["type"] == "input" and kinds["filter"]["label"] == "筛选"
    assert kinds["set_quality"]["type"] == "select"
    assert kinds["set_quality"]["options"] == ["标准", "高品", "无损"]


def test_f1_local_songs_that_match_come_first(catalogue) -> None:
    flows, _ = _flows(catalogue)
    local = {
        "id": "local:music/a.wav",
        "title": "晴天 (live)",
        "artist": "周杰伦",
        "source": "local",
        "path": "music/a.wav",
        "url": "/api/apps/music_app/files/music/a.wav",
    }
    other = {**local, "id": "local:b.wav", "title": "b", "artist": "", "path": "b.wav"}
    results = _search_results(catalogue, "周杰伦", [local, other])
    reply = flows.handle("搜索周杰伦的歌", {"tool_results": results})
    assert reply["data"]["items"][0]["id"] == "local:music/a.wav"
    assert reply["message"] == "为你找到周杰伦的 5 首歌"


def _player(reply: dict) -> dict:
    """The data of the player a reply shows: the reply's own, or its dashboard's."""
    if reply["view_type"] == "media":
        return reply["data"]
    assert reply["view_type"] == "dashboard", reply
    return next(w["data"] for w in reply["data"]["widgets"] if w["type"] == "media")


def _listed(reply: dict) -> list[str]:
    """The titles of the list shown under the player."""
    widgets = reply["data"]["widgets"]
    return [i["title"] for w in widgets if w["type"] == "list" for i in w["data"]["items"]]


def test_f1_play_reads_the_cache_and_answers_media(catalogue) -> None:
    flows, agent = _flows(catalogue)
    action = {"action_id": "play", "params": {"song_id": "1002"}}
    plan = flows.handle(None, {}, action)
    assert [s["tool"] for s in plan["steps"]] == ["cache_get", "file_read"]
    assert plan["steps"][0]["args"] == {"key": "last_results"}
    cached = json.dumps(catalogue.search("周杰伦"), ensure_ascii=False)  # as text
    results = {"step_1": ok("cache_get", cached), "step_2": failed("file_read", "no file")}
    reply = flows.handle(None, {"tool_results": results}, action)
    player = _player(reply)
    assert player["url"] == catalogue.preview_url(1002)
    assert player["type"] == "audio" and player["autoplay"] is True
    assert player["title"] == "周杰伦 - 稻香"
    # the list it was picked from stays under the player, 播放 in each other row
    assert _listed(reply) == ["七里香", "稻香", "晴天", "青花瓷"]
    labels = [a["label"] for a in reply["actions"]]
    assert labels[:3] == ["暂停", "上一首", "下一首"]
    assert [a["item_id"] for a in reply["actions"] if a["action_id"] == "play"] == [
        "1001",
        "1003",
        "1004",
    ]
    assert reply["message"] == "正在播放：周杰伦 - 稻香"
    assert reply["state"]["last_played"] == "周杰伦 - 稻香"
    written = dict(
        (c[1]["path"], c[1]["content"]) for c in agent.calls if c[0] == "file_write"
    )
    recent = json.loads(written["recent.json"])
    assert recent[0]["title"] == "稻香"
    assert written["playlist.m3u"].startswith("#EXTM3U\n#EXTINF:223,周杰伦 - 稻香\n")
    assert catalogue.preview_url(1002) in written["playlist.m3u"]


def test_next_and_prev_step_through_the_same_list(catalogue) -> None:
    flows, _ = _flows(catalogue)
    results = {
        "step_1": ok("cache_get", catalogue.search("周杰伦")),
        "step_2": ok("file_read", "[]"),
    }
    ctx = {"tool_results": results}
    before = flows.handle(None, ctx, {"action_id": "prev", "params": {"song_id": "1002"}})
    assert _player(before)["title"] == "周杰伦 - 七里香"
    spoken = flows.handle("下一首", {**ctx, "cwd_state": before["state"]})
    assert _player(spoken)["title"] == "周杰伦 - 稻香"


def test_next_after_the_last_song_of_the_list_shown_says_so(catalogue) -> None:
    """The end of the list shown is the end: no song from elsewhere."""
    flows, _ = _flows(catalogue)
    # the list shown: 晴天 and 七里香 only (a filter), though the search found four
    shown = parse_search_answer(catalogue.search("周杰伦"))
    queue = [shown[2].to_dict(), shown[0].to_dict()]
    state = {"queue": queue, "now_playing": queue[1], "paused": False}
    results = {
        "step_1": ok("cache_get", catalogue.search("周杰伦")),
        "step_2": ok("file_read", "[]"),
    }
    ctx = {"tool_results": results, "cwd_state": state}
    last = flows.handle("下一首", ctx)
    assert last["message"] == "已经是列表里的最后一首了：周杰伦 - 七里香"
    assert _player(last)["title"] == "周杰伦 - 七里香"
    assert _player(last)["autoplay"] is True  # it goes on playing
    assert "now_playing" not in last.get("state", {})
    first = flows.handle(
        None, {**ctx, **EN}, {"action_id": "prev", "params": {"song_id": "1003"}}
    )
    assert first["message"] == "This is the first song in the list: 周杰伦 - 晴天"
    back = flows.handle(None, ctx, {"action_id": "prev", "params": {"song_id": "1001"}})
    assert _player(back)["title"] == "周杰伦 - 晴天"


@pytest.mark.parametrize(
    ("said", "language", "playing", "listed"),
    [
        ("帮我播放周杰伦的歌", {}, "周杰伦 - 七里香", ["七里香", "稻香", "晴天", "青花瓷"]),
        (
            "play songs by 周杰伦",
            EN,
            "周杰伦 - 七里香",
            ["七里香", "稻香", "晴天", "青花瓷"],
        ),
    ],
)
def test_asking_to_play_starts_a_song(catalogue, said, language, playing, listed) -> None:
    """An artist's first match starts (F-1); the rest is the list under the player."""
    flows, agent = _flows(catalogue)
    plan = flows.handle(said, dict(language))
    tools = [s["tool"] for s in plan["steps"]]
    assert tools == ["http_request", "cache_set", "cache_set", LIBRARY_TOOL, "file_read"]
    results = {
        **_search_results(catalogue, "周杰伦"),
        "step_6": ok("file_read", "[]"),
    }
    reply = flows.handle(said, {**language, "tool_results": results})
    assert _player(reply)["title"] == playing and _player(reply)["autoplay"] is True
    assert _listed(reply) == listed
    assert reply["state"]["now_playing"]["title"] == playing.split(" - ")[1]
    assert [q["title"] for q in reply["state"]["queue"]] == listed
    written = [c[1]["path"] for c in agent.calls if c[0] == "file_write"]
    assert written == ["recent.json", "playlist.m3u"]


def _local(name: str, artist: str = "") -> dict:
    """A song of the local library, as `music_library` lists it."""
    path = f"music/{name}.wav"
    return {
        "id": f"local:{path}",
        "title": name,
        "artist": artist,
        "source": "local",
        "path": path,
        "url": f"/api/apps/music_app/files/{path}",
    }


def _next(flows: MusicFlows, said: str, language: dict, before: dict) -> dict:
    """What `said` (下一首, next) answers after the reply `before`."""
    results = {"step_1": ok(LIBRARY_TOOL, []), "step_2": ok("file_read", "[]")}
    ctx = {**language, "tool_results": results, "cwd_state": before["state"]}
    return flows.handle(said, ctx)


@pytest.mark.parametrize(
    ("said", "next_", "language", "playing", "went_on", "last"),
    [
        (
            "播放晴天",
            "下一首",
            {},
            "正在播放：周杰伦 - 晴天",
            "正在播放：Morning Light - Sunrise",
            "已经是列表里的最后一首了：Rain",
        ),
        (
            "play 晴天",
            "next",
            EN,
            "Now playing: 周杰伦 - 晴天",
            "Now playing: Morning Light - Sunrise",
            "This is the last song in the list: Rain",
        ),
    ],
)
def test_next_after_one_song_by_name_goes_on_with_the_library(
    catalogue, said, next_, language, playing, went_on, last
) -> None:
    """The search for one song finds only it: 下一首 is not the end, the library
    goes on after it (the song was not in the library: it comes first)."""
    flows, _ = _flows(catalogue)
    library = [_local("Sunrise", "Morning Light"), _local("Rain")]
    results = {
        **_search_results(catalogue, "晴天", library),
        "step_6": ok("file_read", "[]"),
    }
    assert len(catalogue.search("晴天")["results"]) == 1
    reply = flows.handle(said, {**language, "tool_results": results})
    assert reply["message"] == playing
    assert _listed(reply) == ["晴天", "Sunrise", "Rain"]
    went = _next(flows, next_, language, reply)
    assert went["message"] == went_on
    assert _player(went)["title"] == "Morning Light - Sunrise"
    assert _player(went)["autoplay"] is True
    rain = _next(flows, next_, language, went)
    assert _player(rain)["title"] == "Rain"
    assert _next(flows, next_, language, rain)["message"] == last


@pytest.mark.parametrize(("said", "next_"), [("播放晴天", "下一首"), ("play 晴天", "next")])
def test_a_song_of_the_library_by_name_goes_on_with_the_songs_after_it(
    catalogue, said, next_
) -> None:
    flows, _ = _flows(catalogue)
    library = [_local("Sunrise"), _local("晴天", "周杰伦"), _local("Rain")]
    results = {
        **_search_results(catalogue, "晴天", library),
        "step_6": ok("file_read", "[]"),
    }
    reply = flows.handle(said, {"tool_results": results})
    assert reply["state"]["now_playing"]["id"] == "local:music/晴天.wav"
    # from that song on, then the songs before it
    assert _listed(reply) == ["晴天", "Rain", "Sunrise"]
    went = _next(flows, next_, {}, reply)
    assert went["message"] == "正在播放：Rain"


def test_play_alone_goes_on_or_starts_the_library(catalogue) -> None:
    flows, _ = _flows(catalogue)
    song = parse_search_answer(catalogue.search("七里香"))[0].to_dict()
    resumed = flows.handle("播放", {"cwd_state": {"now_playing": song, "paused": True}})
    assert _player(resumed)["autoplay"] is True
    assert resumed["message"] == "继续播放：周杰伦 - 七里香"
    plan = flows.handle("播放音乐", {})
    assert [s["tool"] for s in plan["steps"]] == [LIBRARY_TOOL, "file_read"]
    local = [
        {"id": f"local:{n}.wav", "title": n, "source": "local", "path": f"{n}.wav"}
        for n in ("a", "b")
    ]
    results = {"step_1": ok(LIBRARY_TOOL, local), "step_2": ok("file_read", "[]")}
    started = flows.handle("播放音乐", {"tool_results": results})
    assert _player(started)["title"] == "a" and _listed(started) == ["a", "b"]
    empty = {"step_1": ok(LIBRARY_TOOL, []), "step_2": ok("file_read", "[]")}
    nothing = flows.handle("play", {**EN, "tool_results": empty})
    assert nothing["view_type"] == "list" and nothing["data"]["items"] == []


def test_play_of_an_expired_result_says_so(catalogue) -> None:
    flows, _ = _flows(catalogue)
    results = {"step_1": ok("cache_get", None), "step_2": ok("file_read", "[]")}
    reply = flows.handle(
        None,
        {"tool_results": results},
        {"action_id": "play", "params": {"song_id": "1001"}},
    )
    assert reply["status"] == "error"
    assert "重新搜索" in reply["data"]["content"]


def test_pause_and_resume_keep_the_song(catalogue) -> None:
    flows, _ = _flows(catalogue)
    song = parse_search_answer(catalogue.search("七里香"))[0].to_dict()
    paused = flows.handle(None, {}, {"action_id": "pause", "params": song})
    assert paused["view_type"] == "media" and paused["data"]["paused"] is True
    assert "autoplay" not in paused["data"]  # the desktop pauses the same player
    # the player's own controls say so too: the app hears of them as these clicks
    assert paused["data"]["on_pause"]["action_id"] == "pause"
    assert paused["data"]["on_play"]["action_id"] == "resume"
    assert paused["actions"][0]["label"] == "继续"
    assert paused["message"] == "已暂停：周杰伦 - 七里香"
    assert "steps" not in paused
    resumed = flows.handle("继续播放", {"cwd_state": {"now_playing": song}})
    assert resumed["data"]["autoplay"] is True and resumed["actions"][0]["label"] == "暂停"


def test_filter_and_quality_relist_the_cached_search(catalogue) -> None:
    flows, _ = _flows(catalogue)
    plan = flows.handle(None, {}, {"action_id": "filter", "value": "稻"})
    assert [s["tool"] for s in plan["steps"]] == ["cache_get", "cache_get", LIBRARY_TOOL]
    results = {
        "step_1": ok("cache_get", catalogue.search("周杰伦")),
        "step_2": ok("cache_get", {"query": "周杰伦", "shown": "周杰伦"}),
        "step_3": ok(LIBRARY_TOOL, []),
    }
    filtered = flows.handle(
        None, {"tool_results": results}, {"action_id": "filter", "value": "稻"}
    )
    assert [i["title"] for i in filtered["data"]["items"]] == ["稻香"]
    quality = flows.handle(
        None, {"tool_results": results}, {"action_id": "set_quality", "selected": "无损"}
    )
    assert quality["state"]["quality"] == "无损"
    assert len(quality["state"]["queue"]) == 4
    assert quality["message"].startswith("音质已设为无损")
    assert len(quality["data"]["items"]) == 4


def test_catalogue_down_shows_the_local_library(catalogue) -> None:
    flows, _ = _flows(catalogue)
    local = {
        "id": "local:music/a.wav",
        "title": "晴天",
        "artist": "周杰伦",
        "source": "local",
        "path": "music/a.wav",
    }
    results = {
        "step_1": failed("http_request", "HTTP 503 Service Unavailable", "http_error"),
        "step_2": failed("cache_set", "depends on a failed step"),
        "step_3": ok("cache_set", {"stored": True}),
        "step_4": ok(LIBRARY_TOOL, [local]),
    }
    reply = flows.handle("搜索周杰伦的歌", {"tool_results": results})
    assert reply["status"] == "ok"
    assert "音乐目录暂时无法访问" in reply["message"] and "503" not in reply["message"]
    # ok, but degraded: the window says why, the technical reason is folded away
    assert reply["notice"] == "warning" and "503" in reply["detail"]
    assert reply["data"]["offline"] is True
    assert [i["id"] for i in reply["data"]["items"]] == ["local:music/a.wav"]


# ------------------------------------------------------------------ F-2


def test_f2_download_plans_search_save_to_and_file_list(catalogue) -> None:
    flows, _ = _flows(catalogue)
    plan = flows.handle("帮我下载周杰伦的七里香到本地", {})
    steps = plan["steps"]
    assert [s["tool"] for s in steps] == ["http_request", "http_request", "file_list"]
    assert steps[0]["args"]["params"]["term"] == "七里香 周杰伦"
    assert steps[1]["args"] == {
        "method": "GET",
        "url": "{{step_1.result.results.0.previewUrl}}",
        "save_to": "workspace/七里香.m4a",
    }
    assert steps[2]["args"] == {"path": "workspace"}


def test_f2_download_answers_text_with_play_local(catalogue) -> None:
    flows, _ = _flows(catalogue)
    results = {
        "step_1": ok("http_request", catalogue.search("七里香 周杰伦")),
        "step_2": ok("http_request", {"path": "workspace/七里香.m4a", "size": 2044}),
        "step_3": ok("file_list", {"path": "workspace", "files": []}),
    }
    reply = flows.handle("帮我下载周杰伦的七里香到本地", {"tool_results": results})
    assert reply["view_type"] == "text"
    assert reply["data"]["content"] == "已下载《七里香》到 workspace/七里香.m4a"
    assert reply["actions"][0] == {
        "type": "button",
        "label": "播放",
        "action_id": "play_local",
        "params": {"path": "workspace/七里香.m4a"},
    }
    assert reply["message"] == "下载完成"


@pytest.mark.parametrize(
    ("said", "context", "name", "track", "playing", "search"),
    [
        (
            "帮我下载周杰伦的七里香到本地",
            {},
            "七里香.m4a",
            "七里香 周杰伦",
            "周杰伦 - 七里香",
            "周杰伦",
        ),
        (
            "download the song Yesterday",
            EN,
            "yesterday.m4a",
            "Yesterday",
            "The Beatles - Yesterday",
            "Yesterday",
        ),
    ],
)
def test_f2_a_downloaded_song_keeps_its_title_and_artist_and_is_listed_once(
    catalogue,
    tmp_path,
    said: str,
    context: dict,
    name: str,
    track: str,
    playing: str,
    search: str,
) -> None:
    """The file is named after the title alone; what the catalogue said of the song
    goes into the library's record, so it plays as itself and a search lists it once."""
    flows, agent = _flows(catalogue)
    results = {
        "step_1": ok("http_request", catalogue.search(track)),
        "step_2": ok("http_request", {"path": f"workspace/{name}", "size": 2044}),
        "step_3": ok("file_list", {"path": "workspace", "files": []}),
    }
    flows.handle(said, {**context, "tool_results": results})
    (written,) = [args for tool, args in agent.calls if tool == "file_write"]
    assert written["path"] == "downloads.json"
    (tmp_path / name).write_bytes(make_wav(0.2))  # the preview, without tags
    (tmp_path / "downloads.json").write_text(written["content"], "utf-8")
    library = scan_library(tmp_path, "music_app")
    (song,) = library
    assert f"{song['artist']} - {song['title']}" == playing
    assert song["album"]  # the catalogue's, kept
    played = flows.handle(
        None,
        {
            **context,
            "tool_results": {
                "step_1": ok(LIBRARY_TOOL, library),
                "step_2": ok("file_read", "[]"),
            },
        },
        {"action_id": "play_local", "params": {"path": f"workspace/{name}"}},
    )
    assert _player(played)["title"] == playing
    # found again: the catalogue's row and the downloaded copy are one song
    searched = {
        "step_1": ok("http_request", catalogue.search(search)),
        "step_2": ok("cache_set", {"stored": True}),
        "step_3": ok("cache_set", {"stored": True}),
        "step_4": ok(LIBRARY_TOOL, library),
    }
    said_search = f"search for {search}" if context else f"搜索{search}"
    found = flows.handle(said_search, {**context, "tool_results": searched})
    rows = [(i["title"], i["source"]) for i in found["data"]["items"]]
    assert rows[0] == (song["title"], "local"), rows
    assert [title for title, _ in rows].count(song["title"]) == 1, rows


def test_f2_text_answer_falls_back_to_a_second_round(catalogue) -> None:
    flows, _ = _flows(catalogue, download_ext="wav")
    as_text = json.dumps(catalogue.search("七里香 周杰伦"), ensure_ascii=False)
    results = {
        "step_1": ok("http_request", as_text),
        "step_2": failed(
            "http_request", "step_1.result.results: not found", "template_error"
        ),
        "step_3": ok("file_list", {"files": []}),
    }
    plan = flows.handle("帮我下载周杰伦的七里香到本地", {"tool_results": results})
    assert plan["view_type"] == "loading"
    assert plan["steps"][0]["args"] == {
        "method": "GET",
        "url": catalogue.preview_url(1001),
        "save_to": "workspace/七里香.wav",
    }
    second = {
        "step_1": ok("http_request", {"path": "workspace/七里香.wav", "size": 2044}),
        "step_2": ok("file_list", {"files": []}),
    }
    reply = flows.handle("帮我下载周杰伦的七里香到本地", {"tool_results": second})
    assert reply["data"]["content"] == "已下载《七里香》到 workspace/七里香.wav"


def test_f2_not_found_and_catalogue_down(catalogue) -> None:
    flows, _ = _flows(catalogue)
    missing = {
        "step_1": ok("http_request", {"resultCount": 0, "results": []}),
        "step_2": failed("http_request", "no result"),
        "step_3": ok("file_list", {"files": []}),
    }
    reply = flows.handle("下载《不存在的歌》", {"tool_results": missing})
    assert "没有在音乐目录里找到《不存在的歌》" in reply["data"]["content"]
    down = {
        **missing,
        "step_1": failed("http_request", "connection refused", "connection_failed"),
    }
    reply = flows.handle("下载《不存在的歌》", {"tool_results": down})
    assert reply["status"] == "error" and "音乐目录暂时无法访问" in reply["data"]["content"]
    assert reply["actions"][0]["action_id"] == "library"


def test_play_local_finds_the_file_in_the_library(catalogue) -> None:
    flows, _ = _flows(catalogue)
    song = {
        "id": "local:七里香.wav",
        "title": "七里香",
        "source": "local",
        "path": "七里香.wav",
        "url": "/api/apps/music_app/files/%E4%B8%83%E9%87%8C%E9%A6%99.wav",
    }
    action = {"action_id": "play_local", "params": {"path": "workspace/七里香.wav"}}
    plan = flows.handle(None, {}, action)
    assert [s["tool"] for s in plan["steps"]] == [LIBRARY_TOOL, "file_read"]
    results = {"step_1": ok(LIBRARY_TOOL, [song]), "step_2": ok("file_read", "[]")}
    reply = flows.handle(None, {"tool_results": results}, action)
    assert reply["view_type"] == "media" and reply["data"]["url"] == song["url"]
    assert [q["id"] for q in reply["state"]["queue"]] == [song["id"]]
    gone = {"step_1": ok(LIBRARY_TOOL, []), "step_2": ok("file_read", "[]")}
    missing = flows.handle(None, {"tool_results": gone}, action)
    assert missing["status"] == "error"
    # the song it looked for, not a folder of the state directory
    assert missing["data"]["content"] == "音乐库里没有 七里香.wav。"
    english = flows.handle(None, {**EN, "tool_results": gone}, action)
    assert english["data"]["content"] == "七里香.wav is not in the music library."


def test_history_failure_does_not_stop_playing(catalogue) -> None:
    from aios_protocol.errors import ToolFailed

    flows, agent = _flows(catalogue)
    agent.answers["file_write"] = ToolFailed("disk full", code="io_error")
    results = {
        "step_1": ok("cache_get", catalogue.search("周杰伦")),
        "step_2": ok("file_read", "[]"),
    }
    reply = flows.handle(
        None,
        {"tool_results": results},
        {"action_id": "play", "params": {"song_id": "1001"}},
    )
    assert _player(reply)["title"] == "周杰伦 - 七里香"


# ------------------------------------------------------------------ in English


def test_catalogue_down_in_english_is_a_plain_english_warning(catalogue) -> None:
    flows, _ = _flows(catalogue)
    local = {
        "id": "local:music/a.wav",
        "title": "晴天",
        "artist": "周杰伦",
        "source": "local",
        "path": "music/a.wav",
    }
    refused = "[Errno 111] Connection refused"
    results = {
        "step_1": failed("http_request", refused, "connection_failed"),
        "step_2": failed("cache_set", "depends on a failed step"),
        "step_3": ok("cache_set", {"stored": True}),
        "step_4": ok(LIBRARY_TOOL, [local]),
    }
    reply = flows.handle("play songs by Taylor Swift", {**EN, "tool_results": results})
    assert reply["status"] == "ok" and reply["notice"] == "warning"
    assert reply["message"] == (
        "The music catalogue cannot be reached right now (check the network); "
        "here is your local library (1 song) instead"
    )
    assert reply["detail"] == refused and "Errno" not in reply["message"]
    assert reply["data"]["title"] == "Local library"
    assert reply["data"]["items"][0]["title"] == "晴天"  # a song's name is data
    assert reply["data"]["items"][0]["sub"] == "周杰伦 · local"
    labels = readable_texts(reply)
    assert "Play" in labels and "Filter" in labels and "Quality" in labels
    assert not [t for t in labels if CHINESE.search(t)], labels
    quality = next(a for a in reply["actions"] if a["action_id"] == "set_quality")
    assert [o["value"] for o in quality["options"]] == ["标准", "高品", "无损"]
    assert quality["options"][2]["label"] == "Lossless"
    nothing = {**results, "step_4": ok(LIBRARY_TOOL, [])}
    empty = flows.handle("play songs by Taylor Swift", {**EN, "tool_results": nothing})
    # the notice says all of it; the empty list only its own part, not the same again
    assert empty["message"].startswith("The music catalogue cannot be reached")
    assert empty["data"]["empty"] == (
        'Your local library has no songs yet. Choose music files with "Add songs", '
        "drop them onto this window, or import a folder (such as ~/Music)."
    )
    assert "workspace/music" not in json.dumps(empty)  # a folder no user can find
    assert not CHINESE.search(empty["message"]) and empty["notice"] == "warning"


def test_search_player_and_download_speak_english(catalogue) -> None:
    flows, _ = _flows(catalogue)
    plan = flows.handle("play songs by Taylor Swift", EN)
    assert plan["message"] == "Searching for Taylor Swift…"
    assert plan["steps"][0]["args"]["params"]["term"] == "Taylor Swift"
    found = flows.handle(
        "周杰伦", {**EN, "tool_results": _search_results(catalogue, "周杰伦")}
    )
    assert found["message"] == "Found 4 songs for 周杰伦"
    assert found["data"]["title"] == "Songs: 周杰伦"
    song = parse_search_answer(catalogue.search("七里香"))[0].to_dict()
    paused = flows.handle(None, EN, {"action_id": "pause", "params": song})
    assert paused["message"] == "Paused: 周杰伦 - 七里香"
    assert [a["label"] for a in paused["actions"]] == [
        "Resume",
        "Previous",
        "Next",
        "Download",
        "Back to the list",
    ]
    down = {
        "step_1": failed("http_request", "[Errno -2] Name or service not known"),
        "step_2": failed("http_request", "depends on a failed step"),
        "step_3": ok("file_list", {"files": []}),
    }
    reply = flows.handle("download the song Yesterday", {**EN, "tool_results": down})
    assert reply["status"] == "error" and "Errno" in reply["detail"]
    assert reply["data"]["content"].startswith("The music catalogue cannot be reached")
    assert reply["actions"] == [
        {"type": "button", "label": "Local library", "action_id": "library"}
    ]
    home = flows.handle("", {**EN, "tool_results": {"step_1": ok(LIBRARY_TOOL, [])}})
    assert home["data"]["title"] == "My music"
    assert home["message"].startswith("Your local library has no songs yet.")
    assert not [t for t in readable_texts(home) if CHINESE.search(t)]


def test_play_while_the_catalogue_is_down_plays_a_local_match(catalogue) -> None:
    flows, _ = _flows(catalogue)
    local = {
        "id": "local:music/a.wav",
        "title": "晴天",
        "artist": "周杰伦",
        "source": "local",
        "path": "music/a.wav",
    }
    results = {
        "step_1": failed("http_request", "HTTP 503 Service Unavailable", "http_error"),
        "step_2": failed("cache_set", "depends on a failed step"),
        "step_3": ok("cache_set", {"stored": True}),
        "step_4": ok(LIBRARY_TOOL, [local]),
        "step_6": ok("file_read", "[]"),
    }
    reply = flows.handle("播放晴天", {"tool_results": results})
    assert _player(reply)["title"] == "周杰伦 - 晴天"
    # it plays: said as information, not as something that failed
    assert reply["notice"] == "info" and "503" in reply["detail"]
    assert reply["message"].endswith("正在播放：周杰伦 - 晴天")


def test_a_mood_starts_its_first_match(catalogue) -> None:
    """A wish plays too (searched by its own words without a model)."""
    flows, _ = _flows(catalogue)
    plan = flows.handle("来点适合跑步的周杰伦", {})
    assert [s["tool"] for s in plan["steps"]][-1] == "file_read"
    results = {
        **_search_results(catalogue, "周杰伦"),
        "step_5": ok("cache_get", {"query": "周杰伦", "shown": "周杰伦", "note": ""}),
        "step_6": ok("file_read", "[]"),
    }
    reply = flows.handle("来点适合跑步的周杰伦", {"tool_results": results})
    assert _player(reply)["title"] == "周杰伦 - 七里香"
    assert _listed(reply) == ["七里香", "稻香", "晴天", "青花瓷"]


@pytest.mark.parametrize(("typed", "language"), [("暂停", "zh-CN"), ("resume", "en-US")])
def test_pause_with_nothing_playing_keeps_the_library_in_view(
    catalogue, typed: str, language: str
) -> None:
    flows, _ = _flows(catalogue)
    plan = flows.handle(typed, {"language": language})
    assert [s["tool"] for s in plan["steps"]] == [LIBRARY_TOOL]
    reply = flows.handle(
        typed, {"language": language, "tool_results": {"step_1": ok(LIBRARY_TOOL, [])}}
    )
    said = {"zh-CN": "还没有正在播放的歌", "en-US": "Nothing is playing yet"}[language]
    assert said in reply["message"], reply["message"]
    ids = {a.get("action_id") for a in reply["actions"]}
    assert "add_songs" in ids, ids  # the ways to add songs stay in the window
