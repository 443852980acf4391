"""The OpenAI-compatible entry end to end: the real `openai` client against a running
system (models, plain and streamed completions, usage, auth, unknown fields,
`triton/<app_id>`, views as Markdown, a paused step confirmed by the next message),
and the raw SSE stream (heartbeats, the run events only on request).
"""

from __future__ import annotations

import json
import re
from typing import Any

import openai
import pytest
import requests

from tests.controller.system import RunningSystem
from tests.openai_api.conftest import EXTRA_KEY

pytestmark = pytest.mark.slow


def _say(client: openai.OpenAI, model: str, text: str, **kw: Any) -> Any:
    return client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": text}], **kw
    )


def _raw(system: RunningSystem, body: Any, **headers: str) -> requests.Response:
    return requests.post(
        f"{system.url}/v1/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {system.token}", **headers},
        timeout=30,
    )


def _assert_openai_error(response: requests.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"]
    return error


def _sse_frames(response: requests.Response) -> list[str]:
    text = response.content.decode("utf-8")
    return [frame for frame in text.split("\n\n") if frame.strip()]


# ------------------------------------------------------------------ the client


def test_models_list_names_triton_and_every_app(client: openai.OpenAI) -> None:
    ids = {model.id for model in client.models.list()}
    assert {"triton", "triton/echo_app", "triton/views_app", "triton/risky_app"} <= ids
    assert "triton/hello_app" in ids


def test_plain_completion_to_a_named_app_carries_the_system_prompt(
    client: openai.OpenAI,
) -> None:
    reply = client.chat.completions.create(
        model="triton/echo_app",
        messages=[
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "hello there"},
        ],
    )
    assert reply.object == "chat.completion"
    assert reply.model == "triton/echo_app"
    choice = reply.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.content == "echo: hello there"
    triton = choice.message.model_extra["triton"]
    (view,) = triton["views"]
    assert view["app_id"] == "echo_app"
    assert view["data"]["context"]["caller_system_prompt"] == "Answer briefly."
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    total = reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert reply.usage.total_tokens == total


def test_model_triton_routes_as_typed(client: openai.OpenAI) -> None:
    reply = _say(client, "triton", "回声一下 abc")
    assert reply.choices[0].message.content == "echo: 回声一下 abc"
    assert (
        reply.choices[0].message.model_extra["triton"]["views"][0]["app_id"] == "echo_app"
    )


NO_APP = {
    "en-US": "No app can do that. The start menu shows what each app can do.",
    "zh-CN": "没有应用能做这件事。开始菜单里列出了每个应用能做什么。",
}


def test_the_answer_is_in_the_language_the_caller_asks_for(client: openai.OpenAI) -> None:
    """The desktop's language (Chinese here) does not decide a /v1
    answer: `metadata.language` or Accept-Language does; a conversation keeps it."""

    def ask(text: str, conversation: str, **kw: Any) -> str:
        headers = {"X-AIOS-Conversation-Id": conversation, **kw.pop("headers", {})}
        reply = _say(client, "triton", text, extra_headers=headers, **kw)
        return str(reply.choices[0].message.content)

    english = ask("xyzzy plugh", "lang-1", extra_body={"metadata": {"language": "en-US"}})
    assert english == NO_APP["en-US"]
    # the same conversation goes on in English without saying it again
    assert ask("frobnicate", "lang-1") == NO_APP["en-US"]
    weighted = {"Accept-Language": "fr;q=1, en-GB;q=0.8, zh-CN;q=0.5"}
    assert ask("xyzzy plugh", "lang-2", headers=weighted) == NO_APP["en-US"]
    chinese = {"Accept-Language": "zh-CN,zh;q=0.9"}
    assert ask("xyzzy plugh", "lang-1", headers=chinese) == NO_APP["zh-CN"]
    assert ask("xyzzy plugh", "lang-3") == NO_APP["zh-CN"]  # nothing said: the settings'


def test_a_language_outside_the_two_is_a_400(system: RunningSystem) -> None:
    body = {
        "model": "triton",
        "messages": [{"role": "user", "content": "hi"}],
        "metadata": {"language": "fr-FR"},
    }
    error = _assert_openai_error(_raw(system, body), 400)
    assert error["param"] == "metadata.language"


def test_streamed_chunks_role_text_finish_and_usage(client: openai.OpenAI) -> None:
    stream = _say(
        client,
        "triton/echo_app",
        "stream me",
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "echo: stream me"
    finishing = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert [c.choices[0].finish_reason for c in finishing] == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens > 0
    assert all(c.usage is None for c in chunks[:-1])


def test_stream_without_include_usage_has_no_usage_chunk(client: openai.OpenAI) -> None:
    chunks = list(_say(client, "triton/echo_app", "no usage please", stream=True))
    assert all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_wrong_or_missing_key_is_401_in_openai_shape(system: RunningSystem) -> None:
    wrong = openai.OpenAI(base_url=f"{system.url}/v1", api_key="nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as caught:
        _say(wrong, "triton", "hello")
    assert caught.value.status_code == 401
    assert caught.value.code == "invalid_api_key"
    url = f"{system.url}/v1/models"
    for headers in (
        {},
        {"Authorization": "Bearer "},
        {"Authorization": f"Basic {system.token}"},
        {"X-AIOS-Token": system.token},  # the desktop header is not the /v1 key
    ):
        response = requests.get(url, headers=headers, timeout=10)
        error = _assert_openai_error(response, 401)
        assert error["code"] == "invalid_api_key"


def test_a_config_api_key_is_accepted(system: RunningSystem) -> None:
    other = openai.OpenAI(base_url=f"{system.url}/v1", api_key=EXTRA_KEY, max_retries=0)
    assert _say(other, "triton/echo_app", "key two").choices[0].message.content == (
        "echo: key two"
    )


def test_loopback_host_rule_still_holds(system: RunningSystem) -> None:
    response = requests.get(
        f"{system.url}/v1/models",
        headers={"Authorization": f"Bearer {system.token}", "Host": "evil.example"},
        timeout=10,
    )
    assert response.status_code == 421
    response = requests.get(
        f"{system.url}/v1/models",
        headers={
            "Authorization": f"Bearer {system.token}",
            "Origin": "https://evil.example",
        },
        timeout=10,
    )
    assert response.status_code == 403


def test_unknown_request_fields_are_ignored(client: openai.OpenAI) -> None:
    reply = _say(
        client,
        "triton/echo_app",
        "extras",
        temperature=0.2,
        max_tokens=5,
        n=1,
        tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
        extra_body={"some_future_field": {"x": 1}},
    )
    assert reply.choices[0].message.content == "echo: extras"


def test_list_table_and_code_views_come_back_as_markdown(client: openai.OpenAI) -> None:
    listed = _say(client, "triton/views_app", "列表").choices[0].message
    assert listed.content.splitlines()[0] == "找到 2 首歌"
    assert "- **七里香** — 周杰伦" in listed.content
    assert "- **晴天** — 周杰伦" in listed.content
    (view,) = listed.model_extra["triton"]["views"]
    assert view["view_type"] == "list" and len(view["data"]["items"]) == 2

    table = _say(client, "triton/views_app", "表格").choices[0].message.content
    assert table.splitlines() == [
        "| 名字 | 大小 |",
        "| --- | --- |",
        "| a.txt | 12 |",
        "| b\\|c.txt | 3 |",
    ]
    code = _say(client, "triton/views_app", "代码").choices[0].message.content
    assert code == "```python\nprint('hi')\n```"


CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def test_an_empty_list_is_said_in_the_callers_language_only(client: openai.OpenAI) -> None:
    """An empty list read "(空列表 / empty list)" whatever the language."""
    english = (
        _say(
            client,
            "triton/views_app",
            "empty",
            extra_body={"metadata": {"language": "en-US"}},
        )
        .choices[0]
        .message.content
    )
    assert english == "(empty list)"
    assert not CJK.search(english), english
    chinese = (
        _say(
            client, "triton/views_app", "empty", extra_headers={"Accept-Language": "zh-CN"}
        )
        .choices[0]
        .message.content
    )
    assert chinese == "（空列表）"


def test_unknown_model_is_404_model_not_found(client: openai.OpenAI) -> None:
    for model in ("gpt-4o", "triton/no_such_app"):
        with pytest.raises(openai.NotFoundError) as caught:
            _say(client, model, "hello")
        assert caught.value.code == "model_not_found"
        assert caught.value.param == "model"


# -------------------------------------------------------------- sessions


def _session_of(reply: Any) -> str:
    return reply.choices[0].message.model_extra["triton"]["session_id"]


def test_user_and_conversation_name_a_session_on_disk(
    system: RunningSystem, client: openai.OpenAI
) -> None:
    first = [{"role": "user", "content": "会话开场白 x1"}]
    again = [
        *first,
        {"role": "assistant", "content": "…"},
        {"role": "user", "content": "第二句"},
    ]
    one = client.chat.completions.create(
        model="triton/echo_app", messages=first, user="ann"
    )
    two = client.chat.completions.create(
        model="triton/echo_app", messages=again, user="ann"
    )
    assert _session_of(one) == _session_of(two)
    other_user = client.chat.completions.create(
        model="triton/echo_app", messages=first, extra_headers={"X-AIOS-User-Id": "bob"}
    )
    assert _session_of(other_user) != _session_of(one)
    other_conversation = client.chat.completions.create(
        model="triton/echo_app",
        messages=first,
        user="ann",
        extra_headers={"X-AIOS-Conversation-Id": "conv-42"},
    )
    assert _session_of(other_conversation) not in (
        _session_of(one),
        _session_of(other_user),
    )
    # the echo app's state of the first turn came back in the second (the same session)
    context = two.choices[0].message.model_extra["triton"]["views"][0]["data"]["context"]
    assert context["cwd_state"]["last_echo"] == "会话开场白 x1"
    saved = system.state_dir / "sessions" / f"{_session_of(one)}.json"
    assert saved.is_file()
    assert "第二句" in saved.read_text(encoding="utf-8")


# ------------------------------------------------------------- bad input


def test_bad_bodies_are_400_and_the_session_keeps_its_turns(system: RunningSystem) -> None:
    conversation = {"X-AIOS-Conversation-Id": "bad-input-check"}
    good = {"model": "triton/echo_app", "messages": [{"role": "user", "content": "ok 1"}]}
    first = _raw(system, good, **conversation)
    assert first.status_code == 200, first.text
    session_id = first.json()["choices"][0]["message"]["triton"]["session_id"]

    cases: list[tuple[Any, str | None]] = [
        (
            {"model": "triton", "messages": [{"role": "robot", "content": "hi"}]},
            "messages[0].role",
        ),
        ({"model": "triton", "messages": []}, "messages"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "model"),
        (
            {
                "model": "triton",
                "messages": [{"role": "tool", "content": "x", "tool_call_id": "1"}],
            },
            "messages[0].role",
        ),
        (
            {
                "model": "triton",
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "look"},
                            {
                                "type": "image_url",
                                "image_url": {"url": "data:image/png;base64,AA"},
                            },
                        ],
                    },
                ],
            },
            "messages[0].content[1].type",
        ),
        (
            {
                "model": "triton",
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "input_audio", "input_audio": {}}],
                    }
                ],
            },
            "messages[0].content[0].type",
        ),
        (
            {
                "model": "triton",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "hello"},
                ],
            },
            "messages[1].role",
        ),
        (
            {"model": "triton", "messages": [{"role": "user", "content": "   "}]},
            "messages[0].content",
        ),
        (
            {"model": "triton", "messages": [{"role": "user", "content": "x" * 4001}]},
            "messages[0].content",
        ),
        (
            {
                "model": "triton",
                "stream": "maybe",
                "messages": [{"role": "user", "content": "x"}],
            },
            "stream",
        ),
        ([1, 2], None),
    ]
    for body, param in cases:
        error = _assert_openai_error(_raw(system, body, **conversation), 400)
        assert error["type"] == "invalid_request_error", body
        assert error["param"] == param, (body, error)
    for payload, content_type in (
        (b"{not json", "application/json"),
        (b"{}", "text/plain"),
    ):
        response = requests.post(
            f"{system.url}/v1/chat/completions",
            data=payload,
            headers={
                "Authorization": f"Bearer {system.token}",
                "Content-Type": content_type,
            },
            timeout=10,
        )
        assert response.status_code in (400, 415)
        _assert_openai_error(response, response.status_code)
    second = _raw(
        system,
        {"model": "triton/echo_app", "messages": [{"role": "user", "content": "ok 2"}]},
        **conversation,
    )
    assert second.status_code == 200
    context = second.json()["choices"][0]["message"]["triton"]["views"][0]["data"][
        "context"
    ]
    assert context["session_id"] == session_id
    assert context["cwd_state"]["last_echo"] == "ok 1"  # nothing lost, nothing added


# ----------------------------------------------------------- confirmation


def test_the_question_before_a_step_is_in_the_callers_language_only(
    client: openai.OpenAI,
) -> None:
    """The hint read "回复「确认」执行…(Reply yes to go ahead…)" in both."""
    english = (
        client.chat.completions.create(
            model="triton/risky_app",
            messages=[{"role": "user", "content": "启动进程"}],
            extra_headers={"X-AIOS-Conversation-Id": "confirm-english"},
            extra_body={"metadata": {"language": "en-US"}},
        )
        .choices[0]
        .message.content
    )
    assert english.endswith("\n\nReply yes to go ahead, or no to cancel."), english
    assert "确认" not in english and "「" not in english, english
    chinese = (
        client.chat.completions.create(
            model="triton/risky_app",
            messages=[{"role": "user", "content": "启动进程"}],
            extra_headers={"X-AIOS-Conversation-Id": "confirm-chinese"},
            extra_body={"metadata": {"language": "zh-CN"}},
        )
        .choices[0]
        .message.content
    )
    assert chinese.endswith("\n\n回复「确认」执行，或「取消」放弃。"), chinese
    assert "Reply" not in chinese, chinese


def _pending(system: RunningSystem, session_id: str) -> list[dict[str, Any]]:
    listed = system.get("/api/confirmations").json()["confirmations"]
    return [p for p in listed if p["session_id"] == session_id]


@pytest.mark.parametrize(
    ("answer", "expected"), [("确认", "已完成"), ("取消", "好的，已取消这一步")]
)
def test_a_paused_step_is_answered_by_the_next_message(
    system: RunningSystem, client: openai.OpenAI, answer: str, expected: str
) -> None:
    opening = {"role": "user", "content": "启动进程"}
    conversation = {"X-AIOS-Conversation-Id": f"confirm-{expected == '已完成'}"}
    asked = client.chat.completions.create(
        model="triton/risky_app", messages=[opening], extra_headers=conversation
    )
    message = asked.choices[0].message
    triton = message.model_extra["triton"]
    assert "需要你的确认" in message.content and "确认" in message.content
    assert triton["awaiting_confirmation"]
    (pending,) = _pending(system, triton["session_id"])
    assert pending["confirmation_id"] == triton["awaiting_confirmation"]

    answered = client.chat.completions.create(
        model="triton/risky_app",
        messages=[
            opening,
            {"role": "assistant", "content": message.content},
            {"role": "user", "content": answer},
        ],
        extra_headers=conversation,
    )
    reply = answered.choices[0].message
    assert _session_of(answered) == triton["session_id"]
    assert reply.model_extra["triton"]["views"][0]["message"] == expected
    assert reply.model_extra["triton"]["awaiting_confirmation"] is None
    assert _pending(system, triton["session_id"]) == []
    results = reply.model_extra["triton"]["views"][0]["data"]["results"]
    status = results["step_1"]["status"]
    assert status == ("ok" if answer == "确认" else "error")


# ---------------------------------------------------------------- raw SSE


def test_heartbeats_while_a_slow_app_works(
    system: RunningSystem, client: openai.OpenAI
) -> None:
    body = {
        "model": "triton/views_app",
        "stream": True,
        "messages": [{"role": "user", "content": "慢 1"}],
    }
    frames = _sse_frames(_raw(system, body))
    assert frames[0].startswith("data: ")
    assert json.loads(frames[0][6:])["choices"][0]["delta"]["role"] == "assistant"
    pings = [f for f in frames if f == ": ping"]
    assert len(pings) >= 3  # 1 s of work, a ping every 0.2 s
    assert not any(line.startswith("event:") for f in frames for line in f.splitlines())
    assert frames[-1] == "data: [DONE]"
    # the openai client reads the same stream (comments are skipped)
    chunks = list(_say(client, "triton/views_app", "慢 0.5", stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "慢慢来，好了"


def test_run_events_only_when_asked(system: RunningSystem) -> None:
    body = {
        "model": "triton/views_app",
        "stream": True,
        "messages": [{"role": "user", "content": "读文件"}],
    }
    plain = _sse_frames(_raw(system, body))
    assert all(f.startswith("data: ") or f == ": ping" for f in plain)
    named = _sse_frames(_raw(system, body, **{"X-AIOS-Events": "1"}))
    events: list[tuple[str, dict[str, Any]]] = []
    for frame in named:
        lines = frame.splitlines()
        if lines[0].startswith("event: "):
            events.append((lines[0][7:], json.loads(lines[1][6:])))
    names = [name for name, _ in events]
    assert names[0] == "run_state" and events[0][1]["state"] == "running"
    assert names[-1] == "run_state" and events[-1][1]["state"] == "idle"
    progress = [data for name, data in events if name == "task_progress"]
    assert [p["source"] for p in progress] == ["task_started", "task_done"]
    (tool,) = [data for name, data in events if name == "tool_result"]
    assert tool["data"]["tool"] == "file_read" and tool["data"]["status"] == "ok"
    text = "".join(
        (json.loads(f[6:])["choices"] or [{}])[0].get("delta", {}).get("content") or ""
        for f in named
        if f.startswith("data: {")
    )
    assert text == "hello from the views app"


def test_awaiting_permission_event_in_the_stream(system: RunningSystem) -> None:
    body = {
        "model": "triton/risky_app",
        "stream": True,
        "messages": [{"role": "user", "content": "启动进程"}],
    }
    frames = _sse_frames(
        _raw(
            system,
            body,
            **{"X-AIOS-Events": "1", "X-AIOS-Conversation-Id": "sse-permission"},
        )
    )
    names = [f.splitlines()[0][7:] for f in frames if f.startswith("event: ")]
    assert "awaiting_permission" in names
    last_state = [f for f in frames if f.startswith("event: run_state")][-1]
    assert json.loads(last_state.splitlines()[1][6:])["state"] == "awaiting_permission"
