"""What 智能助手 itself says is in the user's language (`context["language"]`), without
processes: the greeting, the history, clearing, no model, a model that fails, the
turn limit. What the model writes is the model's and is not translated."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from aios_sdk.llm import LLMUnauthorized
from aios_sdk.runtime.messages import Conversation
from apps.assistant_app.flows import AssistantFlows

EN = {"language": "en-US"}
ZH = {"language": "zh-CN"}


def has_cjk(text: str) -> bool:
    return bool(re.search(r"[\u3400-\u9fff]", text))


class Model:
    """The parts of `AgentLLM` the loop uses: `turn` answers from `answers` (or
    raises what it holds), `progress` is dropped."""

    available = True

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)

    def turn(self, messages: Any, **kwargs: Any) -> Any:
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def progress(self, *args: Any) -> None:
        pass


def said(content: str = "", *calls: str) -> SimpleNamespace:
    """A model turn: `content`, and a tool call for each name in `calls`."""
    tool_calls = [
        SimpleNamespace(id=f"c{i}", name=name, arguments="{}")
        for i, name in enumerate(calls)
    ]
    return SimpleNamespace(
        content=content,
        tool_calls=tool_calls,
        usage={},
        finish_reason="tool_calls" if calls else "stop",
    )


class Agent:
    role_prompt = "r"

    def __init__(self, llm: Any, **settings: Any) -> None:
        self.llm, self.settings = llm, settings

    def call_tool(self, name: str, **args: Any) -> Any:
        return {"files": []}

    def available_tools(self) -> list[dict[str, Any]]:
        return [{"name": "file_list", "description": "list", "input_schema": {}}]

    def plan_steps(self, steps: list[dict[str, Any]], message: str = "") -> dict[str, Any]:
        return {
            "status": "ok",
            "view_type": "loading",
            "data": {},
            "steps": steps,
            "message": message,
        }


def test_an_answer_the_history_and_clearing_in_english() -> None:
    flows = AssistantFlows(Agent(Model(said("There is one file, README.txt."))))
    greeting = flows.handle("", {**EN, "cwd_state": {}})
    assert greeting["data"]["content"].startswith("Hi, I am the assistant")
    assert not has_cjk(greeting["data"]["content"])
    answer = flows.handle("what is in the workspace", {**EN, "cwd_state": {}})
    assert answer["status"] == "ok" and "notice" not in answer
    assert answer["message"] == "There is one file, README.txt."  # the model's own words
    assert [a["label"] for a in answer["actions"]] == ["Clear the conversation"]
    history = flows.handle("", {**EN, "cwd_state": answer["state"]})
    assert history["data"]["content"] == (
        "You: what is in the workspace\n\nAssistant: There is one file, README.txt."
    )
    cleared = flows.handle(
        None, {**EN, "cwd_state": answer["state"]}, {"action_id": "clear"}
    )
    assert cleared["message"] == "The conversation is cleared"
    assert cleared["data"]["content"] == "The conversation is cleared."
    # the same on a Chinese desktop, as before
    chinese = flows.handle("", {**ZH, "cwd_state": answer["state"]})
    assert chinese["data"]["content"].startswith("你：what is in the workspace\n\n助手：")
    assert [a["label"] for a in chinese["actions"]] == ["清空对话"]
    cleared = flows.handle(None, {**ZH, "cwd_state": {}}, {"action_id": "clear"})
    assert (cleared["message"], cleared["data"]["content"]) == (
        "对话已清空",
        "对话已清空。",
    )


def test_a_model_that_fails_is_said_plainly_with_the_reason_folded_away() -> None:
    failing = Model(LLMUnauthorized("HTTP 401 from https://api.example/v1: bad key"))
    for context, plain in (
        (EN, "The language model refused access: check the API key in Settings."),
        (ZH, "语言模型拒绝了访问：请在设置中检查 API 密钥。"),
    ):
        reply = AssistantFlows(Agent(failing)).handle("do it", {**context, "cwd_state": {}})
        assert reply["status"] == "error" and "notice" not in reply
        assert reply["message"] == reply["data"]["content"] == plain
        assert (
            reply["detail"]
            == "llm_unauthorized: HTTP 401 from https://api.example/v1: bad key"
        )


def test_the_turn_limit_and_no_model_in_english() -> None:
    looping = Agent(Model(said("", "file_list")), max_turns=2)
    stopped = AssistantFlows(looping).handle("list forever", {**EN, "cwd_state": {}})
    assert stopped["status"] == "ok" and stopped["notice"] == "warning"
    assert stopped["message"] == 'Stopped after 2 turns; say "continue" to go on.'
    kept = Conversation.from_state(stopped["state"]).last_answer()
    assert kept == stopped["message"]  # what the history shows later
    chinese = AssistantFlows(looping).handle("一直列文件", {**ZH, "cwd_state": {}})
    assert chinese["message"] == "已达到最多 2 轮，先停在这里；说“继续”可以接着做。"
    offline = AssistantFlows(Agent(SimpleNamespace(available=False)))
    installed = [
        {"id": "music_app", "name": "Music", "system_role": None},
        {"id": "skills_app", "name": "Skills", "system_role": "skills"},
    ]
    context = {**EN, "cwd_state": {}, "installed_apps": installed}
    reply = offline.handle("tidy my files", context)
    # nothing was done, and why; the way to the settings goes with it
    assert reply["status"] == "ok" and reply["notice"] == "error"
    assert reply["message"] == "Nothing was done: the assistant needs a model"
    assert [(a["label"], a["href"]) for a in reply["actions"]] == [
        ("Open Settings", "aios:settings")
    ]
    assert reply["data"]["content"] == (
        "The assistant needs a model, and none is configured (set an API key or an "
        "API address in Settings). These apps work offline: Music, Skills."
    )
    assert not has_cjk(reply["data"]["content"])
