"""The controller's /api/llm routes through a Flask test client; planning by tool calls."""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from aios_runtime.edge import create_service, public, token_matches
from aios_runtime.settings import Settings
from controller.api.llm import allow_app_tokens_for_llm, llm_blueprint
from controller.llm.client import LLMClient
from tests.fakes.openai_server import (
    FakeOpenAI,
    error_reply,
    json_reply,
    text_reply,
    tool_calls_reply,
)

MASTER = "master-token"
APP_TOKENS = {"music-token": "music_app"}
APP = {"X-AIOS-Token": "music-token"}

TOOLS = [
    {
        "name": "http_request",
        "description": "HTTP request",
        "parameters": {
            "type": "object",
            "properties": {"method": {"type": "string"}, "url": {"type": "string"}},
            "required": ["url"],
        },
    },
    {
        "name": "cache_set",
        "description": "store a value",
        "parameters": {
            "type": "object",
            "properties": {"key": {"type": "string"}, "value": {}},
            "required": ["key", "value"],
        },
    },
]
CONTEXT = {
    "role": "音乐助手",
    "available_tools": ["http_request", "cache_set"],
    "history_summary": "用户刚问过“周杰伦”",
    "tool_results": {
        "step_1": {"tool": "cache_get", "status": "ok", "result": {"last": "晴天"}}
    },
}


def app_for_token(presented: str) -> str | None:
    for token, app_id in APP_TOKENS.items():
        if hmac.compare_digest(presented.encode(), token.encode()):
            return app_id
    return None


def build_controller(client: LLMClient) -> Flask:
    """A stand-in controller: the real guard, the LLM blueprint, one master-only route."""
    app = create_service(
        "controller", allow_app_tokens_for_llm(token_matches(MASTER), app_for_token)
    )
    app.register_blueprint(llm_blueprint(client))

    @app.get("/api/health")
    @public
    def health() -> dict[str, Any]:
        return {"status": "ok", "llm": client.status()}

    @app.get("/api/apps")
    def apps() -> list[Any]:
        return []

    return app


@pytest.fixture
def http(client: LLMClient) -> Iterator[FlaskClient]:
    yield build_controller(client).test_client()


def plan(
    http: FlaskClient, instruction: str = "播放周杰伦的歌", tools: list | None = None
) -> Any:
    body = {"instruction": instruction, "context": CONTEXT, "tools": tools or TOOLS}
    return http.post("/api/llm/plan", json=body, headers=APP)


# ------------------------------------------------------------------------ auth


def test_app_token_is_accepted_on_llm_routes_only(
    fake: FakeOpenAI, http: FlaskClient
) -> None:
    fake.script(text_reply("hi"), text_reply("hi"))
    assert (
        http.post(
            "/api/llm/chat",
            json={"messages": [{"role": "user", "content": "x"}]},
            headers=APP,
        ).status_code
        == 200
    )
    master = {"X-AIOS-Token": MASTER}
    assert (
        http.post(
            "/api/llm/chat",
            json={"messages": [{"role": "user", "content": "x"}]},
            headers=master,
        ).status_code
        == 200
    )
    assert http.get("/api/apps", headers=APP).status_code == 403
    assert http.get("/api/apps", headers=master).status_code == 200
    refused = http.post(
        "/api/llm/chat", json={"messages": [{"role": "user", "content": "x"}]}
    )
    assert refused.status_code == 403
    wrong = http.post("/api/llm/plan", json={}, headers={"X-AIOS-Token": "guess"})
    assert wrong.status_code == 403
    assert len(fake.requests) == 2


# ------------------------------------------------------------------------ chat


def test_chat_returns_the_content(fake: FakeOpenAI, http: FlaskClient) -> None:
    fake.script(text_reply("Python 是一种编程语言"))
    answer = http.post(
        "/api/llm/chat",
        json={"messages": [{"role": "user", "content": "介绍 Python"}], "max_tokens": 50},
        headers=APP,
    )
    assert answer.status_code == 200
    assert answer.get_json() == {"content": "Python 是一种编程语言"}
    assert fake.requests[0].body["max_tokens"] == 50


def test_chat_json_returns_an_object(fake: FakeOpenAI, http: FlaskClient) -> None:
    fake.script(json_reply({"query": "跑步 歌曲", "limit": 10}))
    answer = http.post(
        "/api/llm/chat",
        json={"messages": [{"role": "user", "content": "来点适合跑步的歌"}], "json": True},
        headers=APP,
    )
    assert answer.get_json() == {"content": {"query": "跑步 歌曲", "limit": 10}}
    assert fake.requests[0].body["response_format"] == {"type": "json_object"}


def test_chat_errors_keep_their_codes(fake: FakeOpenAI, http: FlaskClient) -> None:
    fake.script(error_reply(401))
    answer = http.post(
        "/api/llm/chat", json={"messages": [{"role": "user", "content": "x"}]}, headers=APP
    )
    assert answer.status_code == 502
    assert answer.get_json()["error"]["code"] == "llm_unauthorized"
    bad = http.post("/api/llm/chat", json={"messages": []}, headers=APP)
    assert bad.status_code == 400 and bad.get_json()["error"]["code"] == "invalid_request"
    role = http.post(
        "/api/llm/chat", json={"messages": [{"role": "tool", "content": "x"}]}, headers=APP
    )
    assert role.status_code == 400


def test_not_configured_is_503_and_calls_nothing(fake: FakeOpenAI) -> None:
    http = build_controller(LLMClient(Settings())).test_client()
    for path, body in (
        ("/api/llm/chat", {"messages": [{"role": "user", "content": "x"}]}),
        ("/api/llm/plan", {"instruction": "x", "tools": TOOLS}),
    ):
        answer = http.post(path, json=body, headers=APP)
        assert answer.status_code == 503
        assert answer.get_json()["error"]["code"] == "llm_not_configured"
    assert http.get("/api/health").get_json()["llm"] == "not_configured"
    assert fake.requests == []


# ------------------------------------------------------------------------ plan


def test_plan_turns_tool_calls_into_steps(fake: FakeOpenAI, http: FlaskClient) -> None:
    fake.script(
        tool_calls_reply(
            (
                "http_request",
                {"method": "GET", "url": "https://itunes.apple.com/search?term=周杰伦"},
            ),
            ("cache_set", {"key": "songs", "value": "{{step_1.result}}"}),
        )
    )
    answer = plan(http)
    assert answer.status_code == 200
    assert answer.get_json()["steps"] == [
        {
            "step_id": 1,
            "tool": "http_request",
            "args": {"method": "GET", "url": "https://itunes.apple.com/search?term=周杰伦"},
        },
        {
            "step_id": 2,
            "tool": "cache_set",
            "args": {"key": "songs", "value": "{{step_1.result}}"},
        },
    ]
    [sent] = fake.requests
    assert [t["function"]["name"] for t in sent.body["tools"]] == [
        "http_request",
        "cache_set",
    ]
    assert sent.body["tools"][0]["function"]["parameters"] == TOOLS[0]["parameters"]
    assert sent.body["tool_choice"] == "auto"
    system = sent.messages[0]["content"]
    assert "音乐助手" in system and "周杰伦" in system and "晴天" in system
    assert sent.messages[-1] == {"role": "user", "content": "播放周杰伦的歌"}


def test_plan_rejects_a_tool_not_in_the_list(fake: FakeOpenAI, http: FlaskClient) -> None:
    fake.script(
        tool_calls_reply(("shell_exec", {"cmd": "rm -rf /"})),
        tool_calls_reply(("shell_exec", {"cmd": "rm -rf /"})),
    )
    answer = plan(http)
    assert answer.status_code == 502
    error = answer.get_json()["error"]
    assert error["code"] == "llm_bad_reply" and "shell_exec" in error["message"]
    assert len(fake.requests) == 2
    assert "not one of" in fake.requests[1].messages[-1]["content"]


def test_plan_repairs_once(fake: FakeOpenAI, http: FlaskClient) -> None:
    fake.script(
        tool_calls_reply(("http_request", "[1, 2]")),
        tool_calls_reply(("http_request", {"url": "https://example.org"})),
    )
    answer = plan(http)
    assert answer.status_code == 200
    assert answer.get_json()["steps"] == [
        {"step_id": 1, "tool": "http_request", "args": {"url": "https://example.org"}}
    ]
    assert "JSON object" in fake.requests[1].messages[-1]["content"]


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        (("http_request", "{not json"), "not JSON"),
        (("http_request", '"a string"'), "JSON object"),
        (("cache_set", {"key": "k"}), "missing argument"),
    ],
)
def test_plan_refuses_bad_arguments(
    fake: FakeOpenAI, http: FlaskClient, call: tuple, problem: str
) -> None:
    fake.script(tool_calls_reply(call), tool_calls_reply(call))
    answer = plan(http)
    assert answer.status_code == 502
    assert problem in answer.get_json()["error"]["message"]


def test_plan_in_words_gives_no_steps(fake: FakeOpenAI, http: FlaskClient) -> None:
    fake.script(text_reply("这个不需要工具：周杰伦是歌手。"))
    answer = plan(http)
    assert answer.get_json() == {"steps": [], "message": "这个不需要工具：周杰伦是歌手。"}


def test_tool_names_openai_refuses_are_aliased_and_mapped_back(
    fake: FakeOpenAI, http: FlaskClient
) -> None:
    tools = [
        {
            "name": "music.search",
            "description": "search songs",
            "parameters": {"type": "object"},
        }
    ]
    fake.script(tool_calls_reply(("tool_1", {"q": "晴天"})))
    answer = plan(http, tools=tools)
    assert answer.get_json()["steps"] == [
        {"step_id": 1, "tool": "music.search", "args": {"q": "晴天"}}
    ]
    function = fake.requests[0].body["tools"][0]["function"]
    assert function["name"] == "tool_1" and function["description"].startswith(
        "music.search"
    )


def test_plan_needs_tools(http: FlaskClient, fake: FakeOpenAI) -> None:
    answer = http.post("/api/llm/plan", json={"instruction": "x", "tools": []}, headers=APP)
    assert answer.status_code == 400
    assert fake.requests == []


def test_a_users_own_model_serves_only_the_process_serving_that_user(
    fake: FakeOpenAI, make_client: Any
) -> None:
    """The user is the one the calling process serves (its token says which); what
    a body names is not heard."""
    owner, alice = make_client(key="sk-owner"), make_client(key="sk-alice")
    tokens = {"music-token": "music_app", "music-alice-token": "music_app"}
    served = {"music-alice-token": "alice"}
    app = create_service(
        "controller",
        allow_app_tokens_for_llm(token_matches(MASTER), lambda t: tokens.get(t)),
    )
    app.register_blueprint(
        llm_blueprint(
            owner,
            user_for_token=lambda token: served.get(token, "default"),
            client_for_user=lambda user: alice if user == "alice" else None,
        )
    )
    http = app.test_client()
    said = {"messages": [{"role": "user", "content": "hi"}]}
    for token, scope, key in (
        ("music-alice-token", {}, "sk-alice"),
        ("music-alice-token", {"user_id": "bob"}, "sk-alice"),
        ("music-token", {"user_id": "alice"}, "sk-owner"),
        ("music-token", {"user_id": "alice", "user_grant": "0" * 40}, "sk-owner"),
        ("music-token", {}, "sk-owner"),
    ):
        fake.script(text_reply("ok"))
        answer = http.post(
            "/api/llm/chat", json={**said, **scope}, headers={"X-AIOS-Token": token}
        )
        assert answer.status_code == 200, answer.get_data(as_text=True)
        headers = {k.lower(): v for k, v in fake.requests[-1].headers.items()}
        assert headers["authorization"] == f"Bearer {key}", (token, scope)
