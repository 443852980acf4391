"""`AgentLLM` (an app's `self.llm`) over real HTTP: app → controller routes → fake model.

The controller here is the stand-in of test_llm_api (real guard + LLM blueprint)
served by `start_server` on an ephemeral port; a tiny executor stand-in lists the app's
tools the way `GET /tools?app_id=X` does.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import request

from aios_protocol.errors import AiosError
from aios_runtime.edge import ServerHandle, create_service, start_server
from aios_runtime.settings import Settings
from aios_sdk.llm import AgentLLM, LLMNotConfigured, LLMRateLimited
from controller.llm.client import LLMClient
from tests.fakes.openai_server import (
    FakeOpenAI,
    error_reply,
    json_reply,
    text_reply,
    tool_calls_reply,
)
from tests.llm.test_llm_api import TOOLS, app_for_token, build_controller

APP_TOKEN = "music-token"


@pytest.fixture(scope="module")
def llm_client(fake_server: FakeOpenAI) -> LLMClient:
    settings = Settings(deepseek_api_key="sk-test", llm_base_url=fake_server.base_url)
    return LLMClient(settings, timeout=2)


@pytest.fixture(scope="module")
def controller(llm_client: LLMClient) -> Iterator[ServerHandle]:
    handle = start_server(build_controller(llm_client), 0, threads=4)
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture(scope="module")
def executor() -> Iterator[ServerHandle]:
    service = create_service("executor", app_for_token)
    extra = {"name": "notify", "description": "notify", "parameters": {"type": "object"}}

    @service.get("/tools")
    def tools() -> dict:
        return {"app_id": request.args.get("app_id", ""), "tools": [*TOOLS, extra]}

    handle = start_server(service, 0, threads=2)
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def llm(
    fake: FakeOpenAI,
    controller: ServerHandle,
    executor: ServerHandle,
    llm_client: LLMClient,
) -> AgentLLM:
    llm_client.reconfigure(Settings(deepseek_api_key="sk-test", llm_base_url=fake.base_url))
    env = {
        "AIOS_CONTROLLER_URL": controller.url,
        "AIOS_TOKEN": APP_TOKEN,
        "AIOS_EXECUTOR_URL": executor.url,
        "AIOS_APP_ID": "music_app",
    }
    agent_llm = AgentLLM(env=env)
    yield agent_llm
    agent_llm.close()


def test_available_follows_the_controller_health(
    llm: AgentLLM, llm_client: LLMClient, fake: FakeOpenAI
) -> None:
    assert llm.available
    llm_client.reconfigure(Settings())
    other = AgentLLM(llm.controller_url, APP_TOKEN)
    assert other.available is False
    other.close()
    assert AgentLLM(env={}).available is False
    assert fake.requests == []


def test_chat_with_a_prompt_or_messages(llm: AgentLLM, fake: FakeOpenAI) -> None:
    fake.script(text_reply("print('hi')"), json_reply({"query": "跑步"}))
    assert llm.chat("写一行 Python", system="只输出代码") == "print('hi')"
    assert fake.requests[0].messages == [
        {"role": "system", "content": "只输出代码"},
        {"role": "user", "content": "写一行 Python"},
    ]
    assert llm.chat(
        [{"role": "user", "content": "来点适合跑步的歌 (JSON)"}], json=True
    ) == {"query": "跑步"}
    assert "sk-test" not in str(llm.__dict__)


def test_plan_steps_uses_the_executor_schemas_narrowed_to_available_tools(
    llm: AgentLLM, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_calls_reply(
            ("http_request", {"url": "https://itunes.apple.com/search?term=run"})
        )
    )
    context = {"available_tools": ["http_request", "cache_set"], "session_id": "sess_1"}
    steps = llm.plan_steps("来点适合跑步的歌", context)
    assert steps == [
        {
            "step_id": 1,
            "tool": "http_request",
            "args": {"url": "https://itunes.apple.com/search?term=run"},
        }
    ]
    sent = fake.requests[0].body["tools"]
    assert [t["function"]["name"] for t in sent] == ["http_request", "cache_set"]
    assert sent[0]["function"]["parameters"]["required"] == ["url"]


def test_plan_steps_with_explicit_tools(llm: AgentLLM, fake: FakeOpenAI) -> None:
    fake.script(tool_calls_reply(("notify", {"title": "hi"})))
    tools = [{"name": "notify", "parameters": {"type": "object"}}]
    assert llm.plan_steps("提醒我", {}, tools=tools) == [
        {"step_id": 1, "tool": "notify", "args": {"title": "hi"}}
    ]


def test_errors_arrive_with_their_codes(
    llm: AgentLLM, llm_client: LLMClient, fake: FakeOpenAI
) -> None:
    fake.script(error_reply(429), error_reply(429))
    with pytest.raises(LLMRateLimited) as info:
        llm.chat("x")
    assert info.value.code == "llm_rate_limited"
    fake.script(
        tool_calls_reply(("shell_exec", {"cmd": "ls"})),
        tool_calls_reply(("shell_exec", {"cmd": "ls"})),
    )
    with pytest.raises(AiosError) as bad:
        llm.plan_steps("x", {"available_tools": ["http_request"]})
    assert bad.value.code == "llm_bad_reply"
    llm_client.reconfigure(Settings())
    with pytest.raises(LLMNotConfigured) as off:
        llm.chat("x")
    assert off.value.code == "llm_not_configured"


def test_outside_the_system_it_is_not_configured() -> None:
    with pytest.raises(LLMNotConfigured):
        AgentLLM(env={}).chat("x")
