"""The `/v1` entry's plain logic, without HTTP: views as Markdown, answer words,
session names, the stream's frames (a real `EventBus`, a scripted turn)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from aios_protocol.messages import AppReply
from aios_protocol.views import VIEW_TYPES
from controller.events import EventBus
from controller.sessions import SessionStore
from openai_entry.markdown import reply_markdown
from openai_entry.stream import turn_stream
from openai_entry.turn import (
    ChatTurn,
    TurnAnswer,
    confirmation_decision,
    estimate_tokens,
    session_id_for,
)
from tests.view_samples import PNG, view_samples


def _reply(view_type: str, data: dict, message: str | None = None) -> AppReply:
    return AppReply(status="ok", view_type=view_type, data=data, message=message)


def test_views_as_markdown() -> None:
    media = reply_markdown(
        _reply("media", {"url": "workspace/music/a b.mp3", "type": "audio", "title": "A"}),
        "music_app",
        "http://127.0.0.1:9/",
    )
    assert (
        media == "[A](http://127.0.0.1:9/api/apps/music_app/files/music/a%20b.mp3) (audio)"
    )
    theirs = reply_markdown(
        _reply("media", {"url": "workspace/music/a b.mp3", "type": "audio", "title": "A"}),
        "music_app",
        "http://127.0.0.1:9/",
        user="alice",
    )
    assert (  # another user's own file, fetched with their key
        theirs
        == "[A](http://127.0.0.1:9/v1/sandbox/files/music_app/music/a%20b.mp3) (audio)"
    )
    image = reply_markdown(_reply("image", {"url": "https://x.test/p.png"}), "a")
    assert image == "![](https://x.test/p.png)"
    rows = reply_markdown(_reply("table", {"columns": ["Name"], "rows": [["x"]]}), "a")
    assert rows.splitlines() == ["| Name |", "| --- |", "| x |"]
    # object rows, an older form, are read as the table they are
    keyed = reply_markdown(_reply("table", {"columns": ["n"], "rows": [{"n": "x"}]}), "a")
    assert keyed.splitlines() == ["| n |", "| --- |", "| x |"]
    # data without its view type's shape is shown as it is, never guessed
    bad = reply_markdown(_reply("table", {"columns": ["n"], "rows": "x"}), "a")
    assert bad.startswith("```json\n") and '"rows": "x"' in bad
    code = reply_markdown(_reply("code", {"code": "a = '```'", "language": "py"}), "a")
    assert code == "````py\na = '```'\n````"
    ran = reply_markdown(_reply("code", {"code": "print(1)", "output": "1\n"}), "a")
    assert ran == "```\nprint(1)\n```\n\n```text\n1\n```"  # what it printed, below
    chart = reply_markdown(_reply("chart", {"labels": ["a"], "values": [3]}), "a")
    assert chart.splitlines()[-1] == "| a | 3 |"
    error = reply_markdown(AppReply.error("boom", "出错了"), "a")
    assert error == "⚠️ 出错了"
    confirm = reply_markdown(_reply("confirm", {}, "需要你的确认：删除"), "a")
    assert confirm == "需要你的确认：删除\n\n回复「确认」执行，或「取消」放弃。"
    unknown = reply_markdown(_reply("sparkles", {"k": 1}, "看看"), "a")
    assert unknown.startswith("看看\n\n```json\n")
    assert reply_markdown(_reply("text", {"content": "  "}, "说完了"), "a") == "说完了"


def test_the_words_markdown_adds_are_in_one_language() -> None:
    """Not "(空列表 / empty list)", nor a hint glossed in the other language."""
    empty = _reply("list", {"items": []})
    assert reply_markdown(empty, "a", language="en-US") == "(empty list)"
    assert reply_markdown(empty, "a", language="zh-CN") == "（空列表）"
    asked = _reply("confirm", {})
    english = reply_markdown(asked, "a", language="en-US")
    assert english == (
        "Your confirmation is needed\n\nReply yes to go ahead, or no to cancel."
    )
    chinese = reply_markdown(asked, "a", language="zh-CN")
    assert chinese == "需要你的确认\n\n回复「确认」执行，或「取消」放弃。"
    # a dashboard's widgets read the same language as the reply around them
    board = _reply("dashboard", {"widgets": [{"type": "list", "data": {"items": []}}]})
    assert "(empty list)" in reply_markdown(board, "a", language="en-US")


def test_each_view_type_as_markdown() -> None:
    """The builders' sample of every view type, read by its shape."""
    samples = {
        view_type: reply_markdown(AppReply.model_validate(body), "gallery_app", "http://h/")
        for view_type, body in view_samples().items()
    }
    assert set(samples) == set(VIEW_TYPES)
    assert samples["text"] == "**文本**\n\n第一行\n第二行"
    assert samples["list"] == "**歌曲**\n\n- **🎵 七里香** — 周杰伦\n- **稻香**"
    assert samples["card"] == (
        f"**卡片**\n\n### 卡片甲\n\n![卡片甲]({PNG})\n\n描述甲\n\n### 卡片乙"
    )
    assert samples["table"].splitlines() == [
        "**文件**",
        "",
        "| 名称 | 大小 |",
        "| --- | --- |",
        "| a.py | 120 |",
        "| b\\|c.txt |  |",
    ]
    assert samples["form"] == (
        "**天气**\n\n- 城市 (text)\n- 数量 (number)\n- 类型 (select)\n- 备注 (textarea)"
    )
    assert samples["media"] == (
        "[测试音](http://h/api/apps/gallery_app/files/tone.wav) (audio) — 画廊"
    )
    assert samples["image"] == f"![红色方块]({PNG})\n\n红色方块"
    assert samples["chart"].splitlines()[0] == "**销量**"
    assert samples["chart"].splitlines()[-3:] == [
        "| 一月 | 3 |",
        "| 二月 | 7 |",
        "| 三月 | 5 |",
    ]
    assert samples["code"] == "**hello.py**\n\n```python\nprint('你好')\n```"
    dashboard = samples["dashboard"].split("\n\n")
    assert dashboard[:3] == ["**总览**", "**状态**", "一切正常"]
    assert dashboard[-2:] == ["**负载**", "CPU: **42 %**"]
    assert samples["metric"] == "CPU: **42 %**"
    assert samples["loading"] == "正在读取…"
    assert samples["error"] == "⚠️ 没有找到这首歌"
    empty = view_samples()["table"]
    empty["data"]["rows"], empty["data"]["row_ids"] = [], []
    assert reply_markdown(AppReply.model_validate(empty), "a").endswith("\n\n没有文件")


def test_answer_words() -> None:
    for word in ("确认", "好的。", "Yes!", "ok", " 可以 "):
        assert confirmation_decision(word) == "allow_once", word
    for word in ("取消", "不要", "No", "cancel"):
        assert confirmation_decision(word) == "deny", word
    assert confirmation_decision("总是允许") == "allow_always"
    for text in ("好的，帮我播放音乐", "yes and also", "确认一下天气"):
        assert confirmation_decision(text) is None, text


def test_session_names_are_stable_and_restored_from_disk(tmp_path: Path) -> None:
    sid = session_id_for("ann", "conv-1")
    assert sid == session_id_for("ann", "conv-1")
    assert sid != session_id_for("ann", "conv-2") != session_id_for("bob", "conv-1")
    store = SessionStore(tmp_path)
    session = store.get_or_create(sid)
    session.add_turn("instruction", "hello")
    store.save(session)
    again = SessionStore(tmp_path).get_or_create(sid)  # as after a restart
    assert [t["text"] for t in again.history] == ["hello"]


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("你好") == 2
    assert estimate_tokens("abcdefgh") == 2


def _turn() -> ChatTurn:
    return ChatTurn(
        model="triton/x",
        app_id="x",
        instruction="hi",
        system_prompt="",
        user="u",
        conversation_id="c",
        session_id="sess_abcd1234",
        prompt_tokens=3,
    )


def _frames(bus: EventBus, run, *, run_events: bool) -> list[str]:
    stream = turn_stream(
        run,
        _turn(),
        events=bus,
        completion_id="chatcmpl-1",
        created=1,
        include_usage=True,
        run_events=run_events,
        heartbeat=0.05,
    )
    return [frame for frame in "".join(stream).split("\n\n") if frame]


def test_stream_passes_streamed_text_and_sends_only_the_rest() -> None:
    bus = EventBus()
    go = threading.Event()

    def run() -> TurnAnswer:
        go.wait(5)
        for piece in ("Hel", "lo"):
            bus.publish("notify", {"text_delta": piece}, session_id="sess_abcd1234")
        bus.publish("notify", {"text_delta": "other"}, session_id="sess_other")
        return TurnAnswer(content="Hello world", session_id="sess_abcd1234")

    threading.Timer(0.2, go.set).start()
    frames = _frames(bus, run, run_events=False)
    assert ": ping" in frames
    chunks = [json.loads(f[6:]) for f in frames if f.startswith("data: {")]
    texts = [c["choices"][0]["delta"].get("content") for c in chunks if c["choices"]]
    assert texts[0] == "" and chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert "".join(t or "" for t in texts) == "Hello world"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == 3
    assert frames[-1] == "data: [DONE]"
    assert not any(f.startswith("event:") for f in frames)


def test_stream_error_is_openai_shaped() -> None:
    from aios_protocol.errors import Overloaded

    def run() -> TurnAnswer:
        raise Overloaded("too busy")

    frames = _frames(EventBus(), run, run_events=True)
    (error,) = [json.loads(f[6:]) for f in frames if f.startswith('data: {"error"')]
    assert error["error"]["code"] == "overloaded"
    assert error["error"]["type"] == "server_error"
    assert frames[-1] == "data: [DONE]"


def _progress(bus: EventBus, kind: str, **data: object) -> None:
    bus.publish(
        "agent_progress", {"kind": kind, **data}, app_id="x", session_id="sess_abcd1234"
    )


def _texts(frames: list[str], field: str = "content") -> str:
    chunks = [json.loads(f[6:]) for f in frames if f.startswith("data: {")]
    return "".join(
        c["choices"][0]["delta"].get(field) or "" for c in chunks if c["choices"]
    )


def test_an_agent_loops_reasoning_and_text_stream_as_chunks_with_named_events() -> None:
    bus = EventBus()
    go = threading.Event()

    def run() -> TurnAnswer:
        go.wait(5)
        _progress(bus, "reasoning", turn=1, text="先想")
        _progress(bus, "reasoning", turn=1, text="一想")
        _progress(bus, "tool_call", id="c1", name="file_list", arguments="{}")
        _progress(bus, "tool_result", id="c1", name="file_list", ok=True, result="[]")
        _progress(bus, "text", turn=2, text="工作区")
        _progress(bus, "text", turn=2, text="是空的。")
        _progress(bus, "text", turn=1, text="子任务的话", agent="c9")  # a sub-agent's
        return TurnAnswer(content="工作区是空的。", session_id="sess_abcd1234")

    threading.Timer(0.2, go.set).start()
    frames = _frames(bus, run, run_events=True)
    assert _texts(frames) == "<think>\n先想一想\n</think>\n\n工作区是空的。"
    names = [f.splitlines()[0][7:] for f in frames if f.startswith("event: ")]
    assert "heartbeat" in names  # with each ping, for a client that asked for events
    assert [n for n in names if n in ("tool_call", "tool_result")] == [
        "tool_call",
        "tool_result",
    ]
    assert "agent_progress" not in names


def test_reasoning_as_reasoning_content_and_kept_reasoning_at_the_end() -> None:
    bus = EventBus()

    def streamed() -> TurnAnswer:
        _progress(bus, "reasoning", turn=1, text="想过了")
        _progress(bus, "text", turn=1, text="好")
        return TurnAnswer(content="好", session_id="sess_abcd1234")

    frames = list(
        turn_stream(
            streamed,
            _turn(),
            events=bus,
            completion_id="c",
            created=1,
            include_usage=False,
            run_events=False,
            heartbeat=5,
            reasoning_field=True,
        )
    )
    frames = [f for f in "".join(frames).split("\n\n") if f]
    assert _texts(frames) == "好" and _texts(frames, "reasoning_content") == "想过了"

    def kept() -> TurnAnswer:  # nothing streamed live: the reply's reasoning, first
        return TurnAnswer(content="答案", session_id="sess_abcd1234", reasoning="理由")

    frames = _frames(EventBus(), kept, run_events=False)
    assert _texts(frames) == "<think>\n理由\n</think>\n\n答案"
    assert TurnAnswer("答案", "s", reasoning="理由").with_thinking() == (
        "<think>\n理由\n</think>\n\n答案"
    )
