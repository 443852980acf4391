"""One streamed model turn through the controller's client, against the fake server:
text and tool-call arguments arrive in pieces and are assembled, with `usage` and
`finish_reason`; the `/api/llm/turn` route answers the assembled message and
publishes the streamed pieces as `agent_progress` events."""

from __future__ import annotations

import pytest
from flask import Flask

from aios_protocol.messages import ToolInfo
from aios_runtime.settings import Settings
from controller.api.llm import llm_blueprint
from controller.events import EventBus
from controller.llm.client import LLMClient
from tests.fakes.openai_server import (
    FakeOpenAI,
    disconnect,
    error_reply,
    text_reply,
    tool_calls_reply,
    truncated_reply,
)


@pytest.fixture(autouse=True)
def _clean(fake: FakeOpenAI) -> None:
    fake.reset()


@pytest.fixture
def client(fake: FakeOpenAI) -> LLMClient:
    return LLMClient(
        Settings(deepseek_api_key="k", llm_base_url=fake.base_url), max_retries=1
    )


def test_streamed_text_is_assembled_with_usage(fake: FakeOpenAI, client: LLMClient) -> None:
    usage = {"prompt_tokens": 321, "completion_tokens": 9, "total_tokens": 330}
    fake.script(text_reply("这是一个分成很多片段流式返回的回答。", usage=usage))
    pieces: list[tuple[str, object]] = []
    done = client.stream([{"role": "user", "content": "hi"}], on_delta=pieces.append)
    assert done.content == "这是一个分成很多片段流式返回的回答。"
    assert done.finish_reason == "stop"
    assert done.usage == {"prompt_tokens": 321, "completion_tokens": 9}
    assert len([p for p in pieces if p[0] == "text"]) >= 2
    sent = fake.requests[0].body
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}


def test_streamed_tool_call_arguments_are_joined(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(
        tool_calls_reply(("file_read", {"path": "notes/long-name.txt"}), ("file_list", {}))
    )
    pieces: list[tuple[str, object]] = []
    done = client.stream(
        [{"role": "user", "content": "x"}], tools=[], on_delta=pieces.append
    )
    assert [(c.name, c.arguments, c.call_id) for c in done.tool_calls] == [
        ("file_read", '{"path": "notes/long-name.txt"}', "call_1"),
        ("file_list", "{}", "call_2"),
    ]
    assert done.finish_reason == "tool_calls"
    assert len([p for p in pieces if p[0] == "tool_call"]) >= 4


def test_streamed_reasoning_is_assembled_apart_from_the_text(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(text_reply("答案是 42。", reasoning="先想一想：六乘七等于四十二。"))
    pieces: list[tuple[str, object]] = []
    done = client.stream([{"role": "user", "content": "6*7"}], on_delta=pieces.append)
    assert done.reasoning == "先想一想：六乘七等于四十二。"
    assert done.content == "答案是 42。"  # no thinking in the answer
    thoughts = [p[1] for p in pieces if p[0] == "reasoning"]
    assert len(thoughts) >= 2 and "".join(map(str, thoughts)) == done.reasoning
    assert pieces.index(("reasoning", thoughts[0])) < next(
        i for i, p in enumerate(pieces) if p[0] == "text"
    )


def test_a_context_too_long_is_its_own_error(fake: FakeOpenAI, client: LLMClient) -> None:
    from aios_sdk.llm import LLMContextTooLong

    fake.script(
        error_reply(
            400, "This model's maximum context length is 8192 tokens; you sent 9000."
        )
    )
    with pytest.raises(LLMContextTooLong) as caught:
        client.stream([{"role": "user", "content": "x"}])
    assert caught.value.code == "llm_context_too_long"


def test_cut_off_answer_says_length(fake: FakeOpenAI, client: LLMClient) -> None:
    fake.script(truncated_reply("The answer stops in the mid"))
    assert client.stream([{"role": "user", "content": "x"}]).finish_reason == "length"


def test_dropped_connection_is_retried_once(fake: FakeOpenAI, client: LLMClient) -> None:
    fake.script(disconnect(), text_reply("second try"))
    assert client.stream([{"role": "user", "content": "x"}]).content == "second try"
    assert len(fake.requests) == 2


def test_turn_route_answers_the_message_and_publishes_pieces(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    bus = EventBus()
    app = Flask("t")
    app.register_blueprint(llm_blueprint(client, events=bus))

    @app.before_request
    def _identity() -> None:
        from flask import g

        g.identity = "assistant_app"

    fake.script(
        tool_calls_reply(
            ("file_read", {"path": "a.txt"}), content="让我看看文件", reasoning="要读文件"
        )
    )
    answer = app.test_client().post(
        "/api/llm/turn",
        json={
            "messages": [{"role": "user", "content": "读 a.txt"}],
            "tools": [
                {
                    "type": "function",
                    "function": {"name": "file_read", "parameters": {"type": "object"}},
                }
            ],
            "live": {"session_id": "sess_x", "turn": 1},
            "surprise": 1,
        },
    )
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    assert body["content"] == "让我看看文件"
    assert body["tool_calls"] == [
        {"id": "call_1", "name": "file_read", "arguments": '{"path": "a.txt"}'}
    ]
    assert body["finish_reason"] == "tool_calls"
    assert body["reasoning"] == "要读文件"
    live = [e for e in bus.since(0) if e.type == "agent_progress"]
    assert "".join(e.data["text"] for e in live if e.data["kind"] == "reasoning") == (
        "要读文件"
    )
    assert all(e.app_id == "assistant_app" and e.session_id == "sess_x" for e in live)
    assert (
        "".join(e.data["text"] for e in live if e.data["kind"] == "text") == "让我看看文件"
    )
    deltas = "".join(
        e.data["arguments"] for e in live if e.data["kind"] == "tool_call_delta"
    )
    assert deltas == '{"path": "a.txt"}'
    progress = app.test_client().post(
        "/api/llm/progress",
        json={
            "session_id": "sess_x",
            "kind": "tool_result",
            "data": {"id": "call_1", "ok": True},
        },
    )
    assert progress.status_code == 200
    assert bus.since(0)[-1].data == {"kind": "tool_result", "id": "call_1", "ok": True}


def _info(name: str, **meta: object) -> ToolInfo:
    facts = {
        "risk_level": "read",
        "requires_confirmation": False,
        "concurrency_safe": True,
        "max_result_size_chars": 1000,
        **meta,
    }
    return ToolInfo.model_validate(
        {"name": name, "description": name, "provider": "atomic", "input_schema": {}}
        | facts
    )


def _early_route(client: LLMClient, ran: list[dict[str, object]]) -> Flask:
    """The turn route as an app (`music_app`) calls it, with a listing that has one
    tool safe to start early and three that are not; the token `alice-token` is the
    app's process serving `alice`."""
    listing = [
        _info("file_read"),
        _info("file_write", risk_level="write", concurrency_safe=False),
        _info("shell_exec", risk_level="execute"),
        _info("ask_first", requires_confirmation=True),
    ]

    def run_steps(body: dict[str, object], timeout: float) -> dict[str, object]:
        ran.append(body)
        return {"tool_results": {"step_1": {"tool": "file_read", "status": "ok"}}}

    app = Flask("t")
    app.register_blueprint(
        llm_blueprint(
            client,
            tool_listing=lambda app_id, user_id: listing,
            run_steps=run_steps,
            user_for_token=lambda token: "alice" if token == "alice-token" else "default",
        )
    )

    @app.before_request
    def _identity() -> None:
        from flask import g

        g.identity = "music_app"

    return app


def _turn_with_early(app: Flask, token: str = "", **early: object) -> dict[str, object]:
    answer = app.test_client().post(
        "/api/llm/turn",
        json={
            "messages": [{"role": "user", "content": "x"}],
            "early": {"session_id": "sess_e", **early},
        },
        headers={"X-AIOS-Token": token} if token else {},
    )
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.get_json()


def test_only_read_only_calls_that_ask_nobody_start_early(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    """An app names the tools it wants started early; the controller starts only the
    ones the executor lists as safe for that, whatever the app asks."""
    ran: list[dict[str, object]] = []
    app = _early_route(client, ran)
    calls = (
        ("shell_exec", {"cmd": "rm -rf ."}),
        ("file_write", {"path": "a", "content": "x"}),
        ("ask_first", {}),
        ("file_read", {"path": "a.txt"}),
        ("file_read", {"path": "b.txt"}),
    )
    fake.script(tool_calls_reply(*calls), tool_calls_reply(*calls[3:]))
    everything = ["shell_exec", "file_write", "ask_first", "file_read"]
    _turn_with_early(app, tools=everything)
    assert ran == []  # a call that may not start early holds back every one after it
    body = _turn_with_early(app, tools=everything)
    assert [b["steps"][0]["tool"] for b in ran] == ["file_read"]  # b.txt: the last is
    assert set(body["early_results"]) == {"call_1"}  # complete only when the turn ends
    assert "user_id" not in ran[0]  # the owner's


def test_an_early_call_works_in_the_sandbox_of_the_user_the_process_serves(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    """The user is the one the calling process's token is for; a user the body
    names is not heard."""
    ran: list[dict[str, object]] = []
    app = _early_route(client, ran)
    two_reads = (("file_read", {"path": "a.txt"}), ("file_read", {"path": "b.txt"}))
    fake.script(*(tool_calls_reply(*two_reads) for _ in range(2)))
    _turn_with_early(app, "alice-token", tools=["file_read"], user_id="bob")
    assert [b.get("user_id") for b in ran] == ["alice"]
    ran.clear()
    _turn_with_early(app, "owner-token", tools=["file_read"], user_id="alice")
    assert [b.get("user_id") for b in ran] == [None]  # the owner's
