"""The agent loop for OpenAI clients, against the scripted model: its reasoning comes
as <think>…</think> ahead of the answer (or as `reasoning_content` when asked for),
its text streams as chunks while the model writes (an attempt the loop retries never
shows), the usage is the model's own, and with `X-AIOS-Events: 1` its tool calls and
results arrive as named events."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import requests

from tests.assistant.conftest import ASSISTANT, agent_requests
from tests.controller.system import RunningSystem
from tests.fakes.openai_server import (
    NO_USAGE,
    FakeOpenAI,
    text_reply,
    tool_calls_reply,
    truncated_reply,
)

pytestmark = pytest.mark.slow


def chat(system: RunningSystem, body: dict[str, Any], **headers: str) -> requests.Response:
    return requests.post(
        f"{system.url}/v1/chat/completions",
        json={"model": f"triton/{ASSISTANT}", **body},
        headers={"Authorization": f"Bearer {system.token}", **headers},
        timeout=60,
    )


def frames_of(response: requests.Response) -> list[str]:
    return [f for f in response.content.decode("utf-8").split("\n\n") if f.strip()]


def test_streamed_reasoning_text_and_named_events(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_calls_reply(
            ("file_read", {"path": "README.txt"}), reasoning="先读一下说明文件。"
        ),
        text_reply("说明文件讲的是这个工作区。", reasoning="读完了，可以回答。"),
    )
    body = {"stream": True, "messages": [{"role": "user", "content": "说明文件讲什么"}]}
    frames = frames_of(chat(system, body, **{"X-AIOS-Events": "1"}))
    chunks = [json.loads(f[6:]) for f in frames if f.startswith("data: {")]
    text = "".join(
        c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]
    )
    assert text.startswith("<think>\n先读一下说明文件。")
    assert "读完了，可以回答。\n</think>\n\n说明文件讲的是这个工作区。" in text
    assert text.count("说明文件讲的是这个工作区。") == 1  # streamed, not sent twice
    events = [f.splitlines() for f in frames if f.startswith("event: ")]
    named = {lines[0][7:]: json.loads(lines[1][6:]) for lines in reversed(events)}
    assert named["tool_call"]["data"]["name"] == "file_read"
    assert json.loads(named["tool_call"]["data"]["arguments"]) == {"path": "README.txt"}
    assert named["tool_result"]["data"]["ok"] is True
    # the result names the message whose call it answers, as the call does
    asker = named["tool_call"]["data"]["message_id"]
    assert asker.startswith("msg_") and named["tool_result"]["data"]["asked_by"] == asker
    # the reasoning never goes back to the model
    second = agent_requests(fake)[1]
    assert "先读一下说明文件" not in json.dumps(second.messages, ensure_ascii=False)


def streamed_text(frames: list[str]) -> str:
    chunks = [json.loads(f[6:]) for f in frames if f.startswith("data: {")]
    return "".join(
        c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]
    )


def test_a_stream_retried_twice_shows_each_piece_once(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    """Cut off, asked again with more room (the first attempt is thrown away), cut
    off again and continued: the stream holds each attempt until it stands."""
    fake.script(
        truncated_reply("AAA-first"),
        truncated_reply("BBB-second"),
        text_reply("CCC-tail"),
    )
    body = {
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "写一段很长的话"}],
    }
    frames = frames_of(chat(system, body))
    assert streamed_text(frames) == "BBB-secondCCC-tail"
    last = json.loads(next(f for f in reversed(frames) if f.startswith("data: {"))[6:])
    # three model calls, each reporting one prompt and one completion token
    assert last["usage"] == {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}
    # the same run, not streamed: the continued answer joins all its parts
    fake.script(
        truncated_reply("AAA-first"),
        truncated_reply("BBB-second"),
        text_reply("CCC-tail"),
    )
    body = {"messages": [{"role": "user", "content": "再写一段很长的话"}]}
    message = chat(system, body).json()["choices"][0]["message"]
    assert message["content"] == "BBB-secondCCC-tail"


def test_usage_is_the_models_own_summed_over_the_requests_calls(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_calls_reply(
            ("task", {"description": "look", "prompt": "看看工作区"}),
            usage={"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107},
        ),
        text_reply(
            "工作区里有说明文件。",
            usage={"prompt_tokens": 150, "completion_tokens": 12, "total_tokens": 162},
        ),
    )
    fake.when(  # the sub-agent's call counts too
        "<fork-boilerplate>",
        text_reply(
            "有 README.txt。",
            usage={"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45},
        ),
    )
    body = {"messages": [{"role": "user", "content": "用子任务看看工作区"}]}
    reply = chat(system, body).json()
    assert reply["choices"][0]["message"]["content"] == "工作区里有说明文件。"
    assert reply["usage"] == {
        "prompt_tokens": 290,
        "completion_tokens": 24,
        "total_tokens": 314,
    }
    assert reply["choices"][0]["message"]["triton"]["usage_estimated"] is False
    # a model that says nothing of its usage: an estimate, and the reply says so
    fake.script(
        tool_calls_reply(("file_list", {}), usage=NO_USAGE),
        text_reply("只有一个文件。", usage=NO_USAGE),
    )
    body = {"messages": [{"role": "user", "content": "列一下工作区"}]}
    reply = chat(system, body).json()
    assert reply["choices"][0]["message"]["triton"]["usage_estimated"] is True
    assert reply["usage"]["prompt_tokens"] > 0 and reply["usage"]["completion_tokens"] > 0
    assert fake.pending == 0


def test_the_routing_call_of_a_bare_triton_request_counts_too(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    text = "请路由之后再回答这个问题"
    fake.routes[text] = ASSISTANT  # the router asks the model: one token each way
    fake.script(
        text_reply(
            "路由之后的回答。",
            usage={"prompt_tokens": 150, "completion_tokens": 12, "total_tokens": 162},
        )
    )
    body = {"model": "triton", "messages": [{"role": "user", "content": text}]}
    reply = chat(system, body).json()
    assert any(r.is_routing for r in fake.requests)
    assert reply["usage"] == {
        "prompt_tokens": 151,
        "completion_tokens": 13,
        "total_tokens": 164,
    }
    assert reply["choices"][0]["message"]["triton"]["usage_estimated"] is False


def test_reasoning_content_when_the_client_asks_for_it(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(text_reply("四十二。", reasoning="六乘七。"))
    body = {
        "include_reasoning": True,
        "messages": [{"role": "user", "content": "六乘七是多少"}],
    }
    message = chat(system, body).json()["choices"][0]["message"]
    assert message["content"] == "四十二。"
    assert message["reasoning_content"] == "六乘七。"
    fake.script(text_reply("还是四十二。", reasoning="再算一次。"))
    body = {"messages": [{"role": "user", "content": "再算一次六乘七"}]}
    plain = chat(system, body).json()["choices"][0]["message"]
    assert plain["content"] == "<think>\n再算一次。\n</think>\n\n还是四十二。"


def test_an_ask_user_round_is_answered_by_the_next_message(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_calls_reply(
            ("ask_user", {"question": "要什么颜色？", "choices": ["红色", "蓝色"]})
        ),
        text_reply("好的，用蓝色。"),
    )
    conversation = {"X-AIOS-Conversation-Id": "ask-round"}
    first = {"messages": [{"role": "user", "content": "帮我选个颜色"}]}
    asked = chat(system, first, **conversation).json()["choices"][0]["message"]
    assert "要什么颜色？" in asked["content"]
    assert "红色" in asked["content"] and "蓝色" in asked["content"]
    assert asked["triton"]["awaiting_user_input"] is True
    # the next message of that conversation, to the base model, answers the question
    body = {"model": "triton", "messages": [{"role": "user", "content": "蓝色"}]}
    answered = chat(system, body, **conversation).json()["choices"][0]["message"]
    assert answered["content"] == "好的，用蓝色。"
    assert answered["triton"]["awaiting_user_input"] is False
    requests_ = agent_requests(fake)
    assert len(requests_) == 2  # no routing: the answer went to the app that asked
    result = [m for m in requests_[1].messages if m["role"] == "tool"][-1]
    assert json.loads(result["content"]) == {"answer": "蓝色"}


def test_an_answer_goes_to_the_app_that_asked_whatever_model_it_names(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_calls_reply(("ask_user", {"question": "几点提醒你？", "choices": []})),
        text_reply("好的，八点提醒你。"),
    )
    conversation = {"X-AIOS-Conversation-Id": "ask-other-model"}
    first = {"messages": [{"role": "user", "content": "提醒我喝水"}]}
    asked = chat(system, first, **conversation).json()["choices"][0]["message"]
    assert asked["triton"]["awaiting_user_input"] is True
    # the next message names another app: the answer still goes to the assistant
    body = {"model": "triton/hello_app", "messages": [{"role": "user", "content": "八点"}]}
    answered = chat(system, body, **conversation).json()["choices"][0]["message"]
    assert answered["content"] == "好的，八点提醒你。"
    result = [m for m in agent_requests(fake)[1].messages if m["role"] == "tool"][-1]
    assert json.loads(result["content"]) == {"answer": "八点"}
    # once answered, a request naming an app goes to that app again; the three
    # exchanges start the history's summary in the background, answered here (one
    # left unanswered is asked again, maybe during the next test)
    fake.when("Summarise the conversation", text_reply("用户让助手八点提醒喝水。"))
    body["messages"] = [{"role": "user", "content": "在吗"}]
    greeted = chat(system, body, **conversation).json()["choices"][0]["message"]
    assert greeted["content"] == "你好！很高兴见到你。"
    deadline = time.monotonic() + 20
    while fake.pending:  # the summary's reply too: every scripted reply was taken
        assert time.monotonic() < deadline, "the history was not summarised"
        time.sleep(0.05)


def test_max_turns_and_the_callers_system_prompt_reach_the_loop(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(*[tool_calls_reply(("file_list", {})) for _ in range(3)])
    body = {
        "max_turns": 2,
        "messages": [
            {"role": "system", "content": "Answer like a pirate."},
            {"role": "user", "content": "一直列文件"},
        ],
    }
    message = chat(system, body).json()["choices"][0]["message"]
    assert "2" in message["content"]  # stopped after the caller's two turns
    made = agent_requests(fake)
    assert len(made) == 2 and fake.pending == 1
    assert "Answer like a pirate." in made[0].messages[0]["content"]
