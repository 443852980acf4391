"""The reference apps in the real running system: F-1, F-2 and F-3 end to end.

One controller (with its executor and the three apps, copied into a temporary apps
folder so the repository's workspaces stay clean) runs for the whole module, with a
test config that points `app_settings.music_app.api_base` at a fake iTunes-shaped
catalogue served on 127.0.0.1 (allowed through `http_allow_private_hosts`). Every
instruction goes through `/api/instruction` and every click through
`/api/apps/<id>/action`, as the desktop sends them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.controller.system import RunningSystem, copy_shipped_apps, launch
from tests.fakes.music_api import FakeMusicCatalogue, make_wav

pytestmark = pytest.mark.slow

APPS = ("music_app", "code_app", "system_agent", "hello_app")
ITUNES_CONTENT_TYPE = "text/javascript; charset=utf-8"


@dataclass
class World:
    system: RunningSystem
    catalogue: FakeMusicCatalogue
    apps_dir: Path

    def workspace(self, app_id: str) -> Path:
        return self.system.workspace(app_id)

    def say(self, text: str, session_id: str | None = None) -> tuple[dict[str, Any], str]:
        """The one task's final reply, and the session id."""
        answer = self.system.say(text, session_id)
        assert len(answer["tasks"]) == 1, answer
        return answer["tasks"][0], answer["session_id"]

    def act(
        self, app_id: str, session_id: str, action: dict[str, Any], **payload: Any
    ) -> dict[str, Any]:
        """Trigger `action` (as the app returned it) the way the desktop does."""
        body = {
            "session_id": session_id,
            "action_id": action["action_id"],
            "type": action["type"],
        }
        if action["type"] == "button":
            body["params"] = action.get("params") or {}
        body.update(payload)
        response = self.system.post(f"/api/apps/{app_id}/action", body)
        assert response.status_code == 200, response.text
        return response.json()

    def sandbox(self) -> str:
        """The executor's sandbox ("bubblewrap" or "rlimit"), from its public health."""
        ports = json.loads((self.system.state_dir / "ports.json").read_text())
        health = requests.get(f"http://127.0.0.1:{ports['executor']}/health", timeout=5)
        return str(health.json().get("sandbox"))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("apps_e2e")
    apps_dir = copy_shipped_apps(root / "apps", APPS)
    catalogue = FakeMusicCatalogue().start()
    config = {
        "apps": {"start_at_launch": True},  # every app supervised from launch
        "tool_sandbox": {"http_allow_private_hosts": ["127.0.0.1"]},
        "app_settings": {
            "music_app": {"api_base": catalogue.base_url, "download_ext": "wav"}
        },
    }
    try:
        system = launch(root, apps_dir, config=config)
    except BaseException:
        catalogue.stop()
        raise
    try:
        system.wait_for(
            lambda: all(row["status"] == "running" for row in system.apps().values()),
            what="every app running",
        )
        yield World(system, catalogue, apps_dir)
    finally:
        system.stop()
        catalogue.stop()


def action(
    reply: dict[str, Any], action_id: str, label: str | None = None
) -> dict[str, Any]:
    for item in reply["actions"]:
        if item["action_id"] == action_id and (label is None or item["label"] == label):
            return item
    raise AssertionError(f"no {action_id} action in {reply['actions']}")


def player(reply: dict[str, Any]) -> dict[str, Any]:
    """The data of the player a reply shows (alone, or above the list it came from)."""
    if reply["view_type"] == "media":
        return reply["data"]
    assert reply["view_type"] == "dashboard", reply
    return next(w["data"] for w in reply["data"]["widgets"] if w["type"] == "media")


# ------------------------------------------------------------------ F-1


def test_f1_asking_to_play_starts_the_first_song(world: World) -> None:
    task, _ = world.say("帮我播放周杰伦的歌")
    assert task["app_id"] == "music_app" and task["status"] == "done"
    reply = task["result"]
    assert player(reply)["url"] == world.catalogue.preview_url(1001)
    assert player(reply)["autoplay"] is True
    assert reply["message"] == "正在播放：周杰伦 - 七里香"


def test_f1_search_list_then_play(world: World) -> None:
    task, session = world.say("搜索周杰伦的歌")
    assert task["app_id"] == "music_app" and task["status"] == "done"
    listing = task["result"]
    assert listing["view_type"] == "list"
    assert listing["data"]["title"] == "周杰伦的歌曲"
    assert [i["title"] for i in listing["data"]["items"]] == [
        "七里香",
        "稻香",
        "晴天",
        "青花瓷",
    ]
    assert listing["message"] == "为你找到周杰伦的 4 首歌"
    searches = [r for r in world.catalogue.requests if r.startswith("/search?")]
    assert searches and "media=music" in searches[-1] and "entity=song" in searches[-1]
    assert {a["label"] for a in listing["actions"]} >= {"播放", "筛选", "音质"}

    play = action(listing, "play")
    assert play["params"] == {"song_id": "1001"}
    media = world.act("music_app", session, play)
    assert player(media)["url"] == world.catalogue.preview_url(1001)
    assert player(media)["type"] == "audio"
    assert player(media)["title"] == "周杰伦 - 七里香"
    assert {"暂停", "下一首", "上一首"} <= {a["label"] for a in media["actions"]}
    assert media["message"] == "正在播放：周杰伦 - 七里香"
    assert requests.get(player(media)["url"], timeout=5).content[:4] == b"RIFF"

    # the play history is kept in the workspace, through file_write
    recent = json.loads((world.workspace("music_app") / "recent.json").read_text("utf-8"))
    assert recent[0]["title"] == "七里香"
    playlist = (world.workspace("music_app") / "playlist.m3u").read_text("utf-8")
    assert playlist.startswith("#EXTM3U") and world.catalogue.preview_url(1001) in playlist

    # …and every side effect went through the executor's tools (S-05): its log says so
    logged = [
        json.loads(line)
        for path in world.system.state_dir.rglob(f"{session}.jsonl")
        for line in path.read_text("utf-8").splitlines()
    ]
    music_tools = [(e["tool"], e["status"]) for e in logged if e["app_id"] == "music_app"]
    assert ("http_request", "ok") in music_tools and ("cache_get", "ok") in music_tools
    assert music_tools.count(("file_write", "ok")) == 2  # recent.json, playlist.m3u

    following = world.act("music_app", session, action(media, "next"))
    assert player(following)["title"] == "周杰伦 - 稻香"

    # last_played / now_playing come back in cwd_state: "暂停" knows the song
    paused, _ = world.say("暂停", session)
    assert paused["app_id"] == "music_app"
    assert player(paused["result"])["title"] == "周杰伦 - 稻香"
    assert paused["result"]["data"]["paused"] is True


def test_f1_filter_narrows_the_list(world: World) -> None:
    task, session = world.say("搜索周杰伦的歌")
    filtered = world.act("music_app", session, action(task["result"], "filter"), value="稻")
    assert [i["title"] for i in filtered["data"]["items"]] == ["稻香"]


# ------------------------------------------------------------------ F-2


@pytest.mark.parametrize("content_type", [ITUNES_CONTENT_TYPE, "application/json"])
def test_f2_download_lands_in_the_workspace(world: World, content_type: str) -> None:
    target = world.workspace("music_app") / "七里香.wav"
    target.unlink(missing_ok=True)
    world.catalogue.content_type = content_type
    try:
        task, session = world.say("帮我下载周杰伦的七里香到本地")
    finally:
        world.catalogue.content_type = ITUNES_CONTENT_TYPE
    reply = task["result"]
    assert task["app_id"] == "music_app"
    assert reply["view_type"] == "text"
    assert reply["data"]["content"] == "已下载《七里香》到 workspace/七里香.wav"
    assert target.read_bytes() == world.catalogue.preview
    play_local = action(reply, "play_local")
    assert play_local["params"] == {"path": "workspace/七里香.wav"}

    media = world.act("music_app", session, play_local)
    assert media["view_type"] == "media"
    url = media["data"]["url"]
    assert url.startswith("/api/apps/music_app/files/")
    served = world.system.get(url)
    assert served.status_code == 200 and served.content == world.catalogue.preview


def test_catalogue_down_keeps_the_local_library(world: World) -> None:
    music = world.workspace("music_app") / "music"
    (music / "晴天.wav").write_bytes(make_wav(0.3, title="晴天", artist="周杰伦"))
    world.catalogue.down = True
    try:
        task, session = world.say("搜索周杰伦的歌")
        download, _ = world.say("帮我下载周杰伦的稻香到本地", session)
    finally:
        world.catalogue.down = False
    reply = task["result"]
    assert reply["status"] == "ok"
    assert "音乐目录暂时无法访问" in reply["message"]
    local = [i for i in reply["data"]["items"] if i["title"] == "晴天"]
    assert local and local[0]["artist"] == "周杰伦" and local[0]["source"] == "local"
    assert "音乐目录暂时无法访问" in download["result"]["data"]["content"]

    play = next(a for a in reply["actions"] if a["params"] == {"song_id": local[0]["id"]})
    media = world.act("music_app", session, play)
    assert player(media)["title"] == "周杰伦 - 晴天"
    served = world.system.get(player(media)["url"])
    assert served.status_code == 200 and served.content[:4] == b"RIFF"

    library, _ = world.say("我的音乐", session)
    assert "晴天" in [i["title"] for i in library["result"]["data"]["items"]]


# ------------------------------------------------------------------ code_app


def run_code(world: World, code: str) -> dict[str, Any]:
    task, _ = world.say(f"执行代码 {code}")
    assert task["app_id"] == "code_app", task
    return task["result"]


def test_code_app_runs_a_snippet(world: World) -> None:
    reply = run_code(world, "print(2**10)")
    assert reply["view_type"] == "code"
    assert reply["data"]["output"].strip() == "1024"
    assert reply["message"] == "运行结果：1024（代码已存为工作区里的 snippet.py）"
    assert (world.workspace("code_app") / "snippet.py").read_text() == "print(2**10)\n"


def test_code_app_writes_from_a_template_without_an_llm(world: World) -> None:
    task, session = world.say("写一个计算斐波那契数列的程序")
    reply = task["result"]
    assert task["app_id"] == "code_app" and reply["view_type"] == "code"
    assert "“设置”里填写大模型的 API 密钥" in reply["message"]
    ran = world.act("code_app", session, action(reply, "run"))
    assert ran["data"]["output"].startswith("[0, 1, 1, 2, 3, 5, 8")


def test_code_app_cannot_escape_its_workspace(world: World) -> None:
    secret = world.workspace("music_app") / "secret.txt"
    secret.write_text("TOPSECRET")
    refused, _ = world.say("运行 ../music_app/workspace/secret.py")
    assert refused["result"]["status"] == "error"
    assert "不能含 .." in refused["result"]["message"]

    if world.sandbox() != "bubblewrap":
        pytest.skip("the executor runs without bubblewrap here: no file-system isolation")
    read = run_code(world, "print(open('../../music_app/workspace/secret.txt').read())")
    assert read["data"]["returncode"] != 0
    assert "TOPSECRET" not in read["data"]["output"]

    pwned = world.workspace("music_app") / "pwned.txt"
    wrote = run_code(world, "open('../../music_app/workspace/pwned.txt', 'w').write('x')")
    assert wrote["data"]["returncode"] != 0 and not pwned.exists()

    port = world.catalogue.base_url.rsplit(":", 1)[1]
    before = len(world.catalogue.requests)
    network = run_code(
        world,
        f"__import__('urllib.request').request.urlopen('http://127.0.0.1:{port}/search?term=x', timeout=3)",
    )
    assert network["data"]["returncode"] != 0
    assert len(world.catalogue.requests) == before


# ------------------------------------------------------------------ F-3


def _events(
    world: World, since: int, wanted: str, timeout: float = 10
) -> list[dict[str, Any]]:
    """Events of type `wanted` after `since` from the controller's SSE stream."""
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    with world.system.get(
        f"/api/events?since={since}", stream=True, timeout=(5, 5)
    ) as stream:
        for line in stream.iter_lines(decode_unicode=True):
            if line and line.startswith("data:"):
                event = json.loads(line[5:])
                if event["type"] == wanted:
                    found.append(event)
                    break
            if time.monotonic() > deadline:
                break
    return found


def test_f3_move_the_play_button_to_the_top_left(world: World) -> None:
    snapshot = {
        "viewport": {"width": 1280, "height": 800},
        "elements": [
            {
                "id": "btn_play",
                "type": "button",
                "label": "播放",
                "x": 100,
                "y": 200,
                "width": 80,
                "height": 36,
                "visible": True,
            },
            {
                "id": "taskbar",
                "type": "taskbar",
                "label": "任务栏",
                "x": 0,
                "y": 752,
                "width": 1280,
                "height": 48,
                "visible": True,
            },
            {
                "id": "win_music_app",
                "type": "window",
                "label": "音乐应用",
                "x": 40,
                "y": 40,
                "width": 600,
                "height": 480,
                "visible": True,
            },
        ],
    }
    stored = world.system.post("/api/ui/snapshot", snapshot)
    assert stored.status_code == 200, stored.text
    task, session = world.say("把播放按钮移到左上角")
    assert task["app_id"] == "system_agent"
    reply = task["result"]
    assert reply["view_type"] == "text"
    assert reply["data"]["content"] == "已将播放按钮移到左上角"
    assert reply["message"] == "已将播放按钮移到左上角"
    assert reply["ui_commands"] == [{"op": "move", "id": "btn_play", "x": 20, "y": 20}]
    published = _events(world, 0, "ui_commands")
    assert published, "the controller published no ui_commands event"

    english, _ = world.say("make the play button red", session)
    assert english["result"]["ui_commands"] == [
        {"op": "change_color", "id": "btn_play", "color": "red"}
    ]
    hidden, _ = world.say("隐藏任务栏", session)
    assert hidden["result"]["ui_commands"] == [{"op": "hide", "id": "taskbar"}]


def test_window_operations_and_system_status(world: World) -> None:
    closing, session = world.say("关闭音乐窗口")
    assert closing["app_id"] == "system_agent"
    assert closing["result"]["ui_commands"] == [{"op": "close_window", "id": "music_app"}]
    assert closing["result"]["message"] == "已关闭音乐窗口"

    status, _ = world.say("查看系统状态", session)
    dashboard = status["result"]
    assert status["app_id"] == "system_agent" and dashboard["view_type"] == "dashboard"
    assert {w["type"] for w in dashboard["data"]["widgets"]} >= {"text", "chart", "table"}
    processes = world.act("system_agent", session, action(dashboard, "refresh", "进程列表"))
    assert processes["view_type"] == "table"
    assert processes["data"]["columns"][:2] == ["PID", "进程"] and processes["data"]["rows"]
