"""The reference apps with an LLM configured, end to end, against the fake OpenAI server.

One real system (controller, executor, the music, code and system apps copied to a
temporary folder) runs for the whole module with `llm.api_key` and
`llm.base_url` pointing at `tests.fakes.openai_server.FakeOpenAI`, and the music
app at the fake catalogue. Each test scripts the model's replies, sends an
instruction through `/api/instruction` as the desktop does, and checks both what
the user gets and what the model was asked. Should the router ask the model, the
fake answers routing requests by rule (`FakeOpenAI.routes`), so the scripted
replies are the apps' own. Without a model the apps' behaviour is
`test_apps_e2e.py`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.controller.system import RunningSystem, copy_shipped_apps, launch
from tests.fakes.music_api import FakeMusicCatalogue
from tests.fakes.openai_server import (
    FakeOpenAI,
    RecordedRequest,
    error_reply,
    json_reply,
    text_reply,
    tool_calls_reply,
)

pytestmark = pytest.mark.slow

APPS = ("music_app", "code_app", "system_agent")

SNAPSHOT = {
    "viewport": {"width": 1280, "height": 800},
    "elements": [
        {
            "id": "btn_play",
            "type": "button",
            "label": "播放",
            "x": 300,
            "y": 260,
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


@dataclass
class World:
    system: RunningSystem
    model: FakeOpenAI
    catalogue: FakeMusicCatalogue
    apps_dir: Path

    def say(self, text: str, *, app: str | None = None) -> tuple[dict[str, Any], str]:
        """The one task's final reply and the session. With `app`, the fake model
        sends `text` to that app should the router ask it (whether the router is
        confident enough not to ask is the router's business, tested elsewhere)."""
        if app is not None:
            self.model.routes[text] = app
        answer = self.system.say(text)
        assert len(answer["tasks"]) == 1, answer
        if app is not None:
            assert answer["tasks"][0]["app_id"] == app, answer
        return answer["tasks"][0], answer["session_id"]

    def app_requests(self) -> list[RecordedRequest]:
        """What the apps asked the model (the router's requests left out)."""
        return [r for r in self.model.requests if not r.is_routing]

    def act(self, app_id: str, session_id: str, action: dict[str, Any]) -> dict[str, Any]:
        body = {
            "session_id": session_id,
            "action_id": action["action_id"],
            "type": action["type"],
            "params": action.get("params") or {},
        }
        response = self.system.post(f"/api/apps/{app_id}/action", body)
        assert response.status_code == 200, response.text
        return response.json()

    def searched_terms(self) -> list[str]:
        """The `term` of every search the fake catalogue answered, in order."""
        return [
            parse_qs(urlsplit(r).query).get("term", [""])[0]
            for r in self.catalogue.requests
            if r.startswith("/search?")
        ]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("apps_llm")
    apps_dir = copy_shipped_apps(root / "apps", APPS)
    with FakeOpenAI() as model, FakeMusicCatalogue() as catalogue:
        config = {
            "llm": {"api_key": "sk-apps-llm-test", "base_url": model.base_url},
            "apps": {"start_at_launch": True},  # every app supervised from launch
            "tool_sandbox": {"http_allow_private_hosts": ["127.0.0.1"]},
            "app_settings": {"music_app": {"api_base": catalogue.base_url}},
        }
        system = launch(root, apps_dir, config=config)
        try:
            system.wait_for(
                lambda: all(r["status"] == "running" for r in system.apps().values()),
                what="every app running",
            )
            stored = system.post("/api/ui/snapshot", SNAPSHOT)
            assert stored.status_code == 200, stored.text
            yield World(system, model, catalogue, apps_dir)
        finally:
            system.stop()


@pytest.fixture(autouse=True)
def _fresh_model(world: World) -> None:
    world.model.reset()


def action(reply: dict[str, Any], action_id: str) -> dict[str, Any]:
    return next(a for a in reply["actions"] if a["action_id"] == action_id)


# ------------------------------------------------------------------ code_app


def test_code_app_writes_the_models_program_and_runs_it(world: World) -> None:
    code = "print(sum(range(1, 101)))\n"
    world.model.script(
        tool_calls_reply(("file_write", {"path": "sum100.py", "content": code})),
        tool_calls_reply(("shell_exec", {"cmd": ["python3", "sum100.py"]})),
        text_reply("写好了：它打印 1 到 100 的和。"),
    )
    task, session = world.say("写一个计算1到100之和的程序")
    reply = task["result"]
    assert task["app_id"] == "code_app" and reply["status"] == "ok", reply
    assert reply["view_type"] == "code"
    assert reply["data"]["code"] == code
    assert reply["message"] == "已根据描述写好 sum100.py，可以运行或编辑"
    written = world.system.workspace("code_app") / "sum100.py"
    assert written.read_text(encoding="utf-8") == code

    first, second, third = world.model.requests  # the agent loop's three turns
    assert first.messages[0]["role"] == "system" and "代码小AI" in first.prompt_text
    assert "计算1到100之和的程序" in first.messages[-1]["content"]
    offered = {t["function"]["name"] for t in first.body["tools"]}
    assert {"file_write", "shell_exec"} <= offered
    ran = [m for m in third.messages if m["role"] == "tool"][-1]
    assert "5050" in ran["content"]  # the model saw its program's output

    again = world.act("code_app", session, action(reply, "run"))
    assert again["data"]["output"].strip() == "5050"
    assert len(world.model.requests) == 3  # running never asks the model again


def test_code_app_uses_its_template_when_the_model_refuses_the_key(world: World) -> None:
    world.model.script(error_reply(401, "invalid api key"))
    task, session = world.say("写一个计算斐波那契数列的程序")
    reply = task["result"]
    assert reply["status"] == "ok" and reply["view_type"] == "code", reply
    assert reply["message"].startswith("大模型这次没有答上来，已用模板")
    assert "“设置”" not in reply["message"]  # a model is configured
    assert reply["data"]["filename"] == "workspace/fibonacci.py"
    ran = world.act("code_app", session, action(reply, "run"))
    assert ran["data"]["output"].startswith("[0, 1, 1, 2, 3, 5, 8")
    assert len(world.model.requests) == 1


def test_code_app_answer_without_code_is_not_written(world: World) -> None:
    world.model.script(text_reply("抱歉，我现在写不了这个程序。"))
    task, _ = world.say("写一个能飞的程序")
    reply = task["result"]
    assert reply["status"] == "ok" and reply["view_type"] == "list", reply
    assert "没有写出程序" in reply["message"]
    assert "大模型这次没有答上来（llm_bad_reply）" in reply["message"]
    assert {a["action_id"] for a in reply["actions"]} >= {"use_template", "new"}
    assert len(world.model.requests) == 1


# ------------------------------------------------------------------ music_app


def test_music_app_turns_a_wish_into_the_models_search(world: World) -> None:
    wish = "来点适合跑步的歌"
    world.model.script(json_reply({"query": "Taylor Swift"}))
    task, _ = world.say(wish, app="music_app")
    reply = task["result"]
    # a wish is a request to hear something: its first match plays above the rest
    assert task["app_id"] == "music_app" and reply["view_type"] == "dashboard", reply
    assert world.searched_terms()[-1] == "Taylor Swift"
    player, listed = (w["data"] for w in reply["data"]["widgets"])
    assert player["title"] == "Taylor Swift - Love Story" and player["autoplay"] is True
    assert [i["title"] for i in listed["items"]] == ["Love Story", "Shake It Off"]
    assert reply["message"] == (
        "按“来点适合跑步的歌”搜索了“Taylor Swift”。正在播放：Taylor Swift - Love Story"
    )
    [asked] = world.app_requests()  # asked once, not again for the results
    assert asked.body.get("response_format") == {"type": "json_object"}
    assert asked.messages[-1]["content"] == wish

    world.model.reset()
    wish = "play something relaxing for studying"
    world.model.script(json_reply({"query": "周杰伦", "title": "晴天"}))
    task, _ = world.say(wish, app="music_app")
    reply = task["result"]
    assert world.searched_terms()[-1] == "晴天 周杰伦"
    assert reply["view_type"] == "media" and reply["data"]["title"] == "周杰伦 - 晴天"


def test_music_app_searches_the_words_when_the_model_answers_garbage(
    world: World,
) -> None:
    wish = "来点适合跑步的歌"
    world.model.script(text_reply("跑步就听节奏快的歌吧！"))
    task, _ = world.say(wish, app="music_app")
    reply = task["result"]
    assert reply["status"] == "ok" and reply["view_type"] == "list", reply
    assert world.searched_terms()[-1] == "适合跑步"
    assert reply["message"] == (
        "大模型这次没有答上来（llm_bad_reply），按原话搜索。没有找到适合跑步的歌，换个关键词试试？"
    )
    assert len(world.app_requests()) == 1


def test_plain_requests_never_reach_the_model(world: World) -> None:
    task, _ = world.say("搜索周杰伦的歌")
    assert task["result"]["data"]["title"] == "周杰伦的歌曲"
    played, _ = world.say("帮我播放周杰伦的歌")
    assert played["result"]["message"] == "正在播放：周杰伦 - 七里香"
    assert world.model.requests == []


# ------------------------------------------------------------------ system_agent


def test_system_agent_resolves_an_unusual_phrasing_through_the_model(
    world: World,
) -> None:
    odd = "把播放键请到屏幕的西北方向"
    world.model.script(
        json_reply(
            {
                "commands": [
                    {
                        "op": "move",
                        "id": "btn_play",
                        "x": 20,
                        "y": 20,
                        "reason": "西北=左上",
                    },
                    {"op": "move", "id": "btn_not_on_screen", "x": 5, "y": 5},
                    {"op": "explode", "id": "btn_play"},
                    {"op": "resize", "id": "taskbar", "width": "wide"},
                ]
            }
        ),
    )
    task, session = world.say(odd, app="system_agent")
    reply = task["result"]
    assert task["app_id"] == "system_agent" and reply["status"] == "ok", reply
    assert reply["ui_commands"] == [{"op": "move", "id": "btn_play", "x": 20, "y": 20}]
    assert reply["message"] == "已将播放移到 (20, 20)"
    assert action(reply, "undo")  # the model's change is taken back like any other
    [asked] = world.app_requests()
    prompt = asked.prompt_text
    for ident in ("btn_play", "taskbar", "win_music_app", "music_app"):
        assert ident in prompt
    assert odd in prompt and '"op": "move"' in prompt
    assert asked.body.get("response_format") == {"type": "json_object"}


def test_system_agent_falls_back_when_the_model_fails(world: World) -> None:
    odd = "把播放键请到屏幕的西北方向"
    world.model.script(
        text_reply('{"commands": [{"op": "move", "id": "btn_pl'),
    )
    task, _ = world.say(odd, app="system_agent")
    reply = task["result"]
    assert reply["status"] == "ok" and reply["view_type"] == "text", reply
    assert not reply.get("ui_commands")
    # in plain words, not the error's code
    assert reply["message"].startswith("语言模型的回答无法使用。"), reply["message"]
    assert "llm_" not in reply["message"]
    assert "把播放按钮移到左上角" in reply["data"]["content"]  # the usual help

    world.model.reset()
    world.model.script(
        json_reply({"commands": [{"op": "hide", "id": "btn_ghost"}]}),
    )
    task, _ = world.say(odd, app="system_agent")
    reply = task["result"]
    assert not reply.get("ui_commands")
    assert reply["message"].startswith("语言模型给出的操作在这个桌面上做不了。")
    assert "no_valid_command" not in reply["message"]


def test_rule_phrasings_never_reach_the_model(world: World) -> None:
    task, _ = world.say("把播放按钮移到左上角")
    assert task["result"]["ui_commands"] == [
        {"op": "move", "id": "btn_play", "x": 20, "y": 20}
    ]
    assert world.model.requests == []


# ------------------------------------------------------------------ a timeout
# (the controller waits 20 s for the model: the apps' side of it, without processes)


class TimingOutModel:
    """Answers like the SDK's `AgentLLM` when the controller reports `llm_timeout`."""

    available = True

    def chat(self, *args: Any, **kwargs: Any) -> Any:
        from aios_sdk.llm import LLMTimeout

        raise LLMTimeout("no answer within 20 s")

    turn = chat  # the agent loop's turn times out the same way

    def progress(self, *args: Any) -> None:
        pass


def test_a_model_timeout_falls_back_in_every_app() -> None:
    from apps.code_app.flows import CodeFlows
    from apps.music_app.wish import Wish, interpret_wish
    from apps.system_agent.llm import commands_from_llm
    from tests.apps.doubles import PlanningAgent

    plan = CodeFlows(PlanningAgent(llm=TimingOutModel())).handle(
        "写一个计算斐波那契数列的程序", {}
    )
    assert plan["steps"][0]["args"]["path"] == "fibonacci.py"  # the template

    said = Wish("适合跑步", "适合跑步")
    wish = interpret_wish(TimingOutModel(), "来点适合跑步的歌", said)
    assert (wish.query, wish.by_model) == ("适合跑步", False)
    assert "llm_timeout" in wish.note

    asked = commands_from_llm(TimingOutModel(), "把播放键请到西北", SNAPSHOT, False)
    assert asked.commands == []
    assert asked.note == "语言模型没有及时回答。"
