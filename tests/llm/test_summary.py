"""history_summary: by the model when configured (bounded), deterministic otherwise."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from aios_runtime.settings import Settings
from controller.llm.client import LLMClient
from controller.llm.summary import (
    BackgroundSummarizer,
    deterministic_summary,
    summarize_history,
)
from tests.fakes.openai_server import FakeOpenAI, error_reply, text_reply

TURNS = [
    {
        "text": "帮我播放周杰伦的歌",
        "message": "找到 10 首周杰伦的歌",
        "app_id": "music_app",
    },
    {"text": "下载七里香", "message": "已下载《七里香》", "app_id": "music_app"},
]


@dataclass
class Turn:
    instruction: str
    reply: str = ""


def test_deterministic_summary_names_the_latest_question_first() -> None:
    assert (
        deterministic_summary(TURNS)
        == "用户刚问过“下载七里香”，之前问过“帮我播放周杰伦的歌”"
    )
    assert deterministic_summary(["你好"]) == "用户刚问过“你好”"
    assert deterministic_summary([Turn("打开  音乐\n窗口")]) == "用户刚问过“打开 音乐 窗口”"
    assert deterministic_summary([]) == ""
    assert deterministic_summary([{"message": "only a reply"}]) == ""


def test_deterministic_summary_is_bounded() -> None:
    turns = [
        f"第{i}个很长很长很长很长很长很长很长很长很长很长很长很长很长很长的问题"
        for i in range(50)
    ]
    for limit in (20, 60, 200):
        summary = deterministic_summary(turns, limit)
        assert 0 < len(summary) <= limit
        assert summary.startswith("用户刚问过")
    assert "第49个" in deterministic_summary(turns)


def test_summary_by_the_model_is_bounded(fake: FakeOpenAI, client: LLMClient) -> None:
    fake.script(text_reply("“用户在听周杰伦的歌，刚下载了《七里香》。”\n（以上是摘要）"))
    assert summarize_history(TURNS, client) == "用户在听周杰伦的歌，刚下载了《七里香》。"
    [sent] = fake.requests
    assert "下载七里香" in sent.prompt_text and "已下载《七里香》" in sent.prompt_text
    fake.script(text_reply("用户" + "很" * 500))
    long = summarize_history(TURNS, client, limit=50)
    assert len(long) == 50 and long.startswith("用户很")


def test_summary_falls_back_when_the_model_fails_or_says_nothing(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(error_reply(401), text_reply("   "))
    expected = deterministic_summary(TURNS)
    assert summarize_history(TURNS, client) == expected
    assert summarize_history(TURNS, client) == expected
    assert len(fake.requests) == 2


def test_no_model_call_without_configuration_or_turns(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    assert summarize_history(TURNS, LLMClient(Settings())) == deterministic_summary(TURNS)
    assert summarize_history(TURNS, None) == deterministic_summary(TURNS)
    assert summarize_history([], client) == ""
    assert fake.requests == []


SESSION_HISTORY = [
    {"kind": "open", "text": "", "apps": ["music_app"]},
    {
        "kind": "instruction",
        "text": "帮我播放周杰伦的歌",
        "apps": ["music_app"],
        "message": "找到 10 首歌",
    },
    {"kind": "action", "text": "play", "apps": ["music_app"]},
    {
        "kind": "instruction",
        "text": "把播放按钮移到左上角",
        "apps": ["system_agent"],
        "message": "已移动",
    },
]


def test_session_history_turns_other_than_instructions_are_left_out(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    assert deterministic_summary(SESSION_HISTORY) == (
        "用户刚问过“把播放按钮移到左上角”，之前问过“帮我播放周杰伦的歌”"
    )
    fake.script(text_reply("用户在听周杰伦并调整了播放按钮"))
    summarize_history(SESSION_HISTORY, client)
    prompt = fake.requests[0].messages[-1]["content"]
    assert "系统(system_agent): 已移动" in prompt
    assert "play" not in prompt.replace("播放", "")


def test_background_summarizer_delivers_off_the_request_path(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(text_reply("用户在听周杰伦的歌"))
    done = threading.Event()
    results: list[str] = []

    def on_done(text: str) -> None:
        results.append(text)
        done.set()

    summarizer = BackgroundSummarizer(client)
    try:
        assert summarizer.submit("sess_1", TURNS, on_done)
        assert done.wait(10)
        assert results == ["用户在听周杰伦的歌"]
        done.clear()
        fake.script(error_reply(429), error_reply(429))
        assert summarizer.submit("sess_1", TURNS, on_done)
        assert done.wait(10)
        assert results[-1] == deterministic_summary(TURNS)
    finally:
        summarizer.close()
    assert not BackgroundSummarizer(LLMClient(Settings())).submit("s", TURNS, on_done)


def test_a_summary_submitted_with_a_users_model_asks_that_model(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    done = threading.Event()
    results: list[str] = []

    def on_done(text: str) -> None:
        results.append(text)
        done.set()

    with FakeOpenAI() as theirs:
        theirs.script(text_reply("用户的模型写的摘要"))
        users = LLMClient(Settings(llm={"api_key": "sk-user", "base_url": theirs.base_url}))
        summarizer = BackgroundSummarizer(LLMClient(Settings()))  # the owner has none
        try:
            assert summarizer.submit("sess_u", TURNS, on_done, users)
            assert done.wait(10)
        finally:
            summarizer.close()
        assert results == ["用户的模型写的摘要"]
        assert theirs.requests[0].headers["authorization"] == "Bearer sk-user"
    assert fake.requests == []
