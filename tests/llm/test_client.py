"""LLMClient over the real `openai` client against the fake server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

from aios_runtime.settings import Settings
from aios_sdk.llm import (
    LLMBadReply,
    LLMError,
    LLMNotConfigured,
    LLMRateLimited,
    LLMTimeout,
    LLMUnauthorized,
)
from controller.llm.client import LLMClient, parse_json_object
from tests.fakes.openai_server import (
    FakeOpenAI,
    delayed,
    error_reply,
    json_reply,
    text_reply,
)
from tests.procs import ROOT, free_port

USER = [{"role": "user", "content": "hi"}]


def test_no_key_is_not_configured_and_sends_nothing(fake: FakeOpenAI) -> None:
    client = LLMClient(Settings())  # default DeepSeek URL, no key
    assert not client.configured
    assert client.status() == "not_configured"
    with pytest.raises(LLMNotConfigured) as info:
        client.chat(USER)
    assert info.value.code == "llm_not_configured"
    assert fake.requests == []


@pytest.mark.parametrize(
    ("url", "configured"),
    [
        ("https://api.deepseek.com/", False),
        ("https://api.deepseek.com/v1", False),
        ("https://api.openai.com/v1", False),
        ("http://127.0.0.1:11434/v1", True),
    ],
)
def test_keyless_configuration_depends_on_the_server(url: str, configured: bool) -> None:
    assert LLMClient(Settings(llm_base_url=url)).configured is configured
    assert LLMClient(Settings(llm_base_url=url, deepseek_api_key="k")).configured


def test_chat_sends_model_and_messages_with_the_key(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(text_reply("你好！"))
    assert client.status() == "ok"
    assert client.chat(USER) == "你好！"
    [sent] = fake.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.body["model"] == "fake-model"
    assert sent.body["messages"] == USER
    assert "response_format" not in sent.body
    assert client.status() == "ok"


def test_local_server_without_key_is_configured(fake: FakeOpenAI) -> None:
    client = LLMClient(Settings(llm_base_url=fake.url, llm_model="llama3"), timeout=0.5)
    assert client.configured
    fake.script(text_reply("ok"))
    assert client.chat(USER) == "ok"
    assert fake.requests[0].path == "/chat/completions"
    assert fake.requests[0].body["model"] == "llama3"


def test_chat_json_uses_json_mode(fake: FakeOpenAI, client: LLMClient) -> None:
    fake.script(json_reply({"answer": 42}))
    assert client.chat_json([{"role": "user", "content": "reply in JSON"}]) == {
        "answer": 42
    }
    assert fake.requests[0].body["response_format"] == {"type": "json_object"}


def test_chat_json_mentions_json_when_the_prompt_does_not(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(json_reply({"a": 1}))
    client.chat_json(USER)
    assert "json" in fake.requests[0].prompt_text.lower()


def test_json_mode_rejected_falls_back_to_plain_content_and_stays_off(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.reject_json_mode = True
    fake.script(text_reply('```json\n{"a": 1}\n```'), json_reply({"b": 2}))
    assert client.chat_json([{"role": "user", "content": "json please"}]) == {"a": 1}
    assert ["response_format" in r.body for r in fake.requests] == [True, False]
    assert client.chat_json([{"role": "user", "content": "json please"}]) == {"b": 2}
    assert ["response_format" in r.body for r in fake.requests] == [True, False, False]
    assert client.status() == "ok"


def test_malformed_json_is_a_bad_reply_with_the_raw_text(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(text_reply("sure! {tasks: [oops"))
    with pytest.raises(LLMBadReply) as info:
        client.chat_json([{"role": "user", "content": "json"}])
    assert info.value.code == "llm_bad_reply"
    assert info.value.detail["content"] == "sure! {tasks: [oops"
    assert client.status() == "ok"  # the server works; the answer was bad


def test_401_is_unauthorized_not_retried_and_status_failing(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(error_reply(401, "invalid api key"))
    with pytest.raises(LLMUnauthorized) as info:
        client.chat(USER)
    assert info.value.code == "llm_unauthorized"
    assert len(fake.requests) == 1
    assert client.status() == "failing"
    assert client.describe()["last_error"] == "llm_unauthorized"
    assert "sk-test" not in str(client.describe())
    fake.script(text_reply("back"))
    assert client.chat(USER) == "back"
    assert client.status() == "ok"


@pytest.mark.parametrize("retries", [0, 1, 2])
def test_429_is_rate_limited_after_bounded_retries(
    fake: FakeOpenAI, make_client: Callable[..., LLMClient], retries: int
) -> None:
    client = make_client(max_retries=retries)
    fake.script(*[error_reply(429)] * 5)
    with pytest.raises(LLMRateLimited) as info:
        client.chat(USER)
    assert info.value.code == "llm_rate_limited"
    assert len(fake.requests) == retries + 1
    assert client.status() == "failing"


def test_429_then_success_is_retried_once(fake: FakeOpenAI, client: LLMClient) -> None:
    fake.script(error_reply(429), text_reply("after retry"))
    assert client.chat(USER) == "after retry"
    assert len(fake.requests) == 2
    assert client.status() == "ok"


def test_server_error_is_retried_then_llm_error(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(error_reply(500), error_reply(503))
    with pytest.raises(LLMError) as info:
        client.chat(USER)
    assert info.value.code == "llm_error"
    assert len(fake.requests) == 2


def test_timeout_is_llm_timeout_and_not_retried(
    fake: FakeOpenAI, make_client: Callable[..., LLMClient]
) -> None:
    client = make_client(timeout=0.3)
    fake.script(delayed(5, text_reply("too late")))
    with pytest.raises(LLMTimeout) as info:
        client.chat(USER)
    assert info.value.code == "llm_timeout"
    assert len(fake.requests) == 1
    assert client.status() == "failing"


def test_unreachable_server_is_llm_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    client = LLMClient(
        Settings(deepseek_api_key="k", llm_base_url=url), timeout=1, max_retries=0
    )
    with pytest.raises(LLMError) as info:
        client.chat(USER)
    assert info.value.code == "llm_error"
    assert "unreachable" in info.value.message
    assert client.status() == "failing"


def test_reconfigure_takes_new_settings(fake: FakeOpenAI, client: LLMClient) -> None:
    client.reconfigure(Settings())
    assert client.status() == "not_configured"
    client.reconfigure(Settings(deepseek_api_key="sk-new", llm_base_url=fake.base_url))
    fake.script(text_reply("ok"))
    client.chat(USER)
    assert fake.requests[-1].headers["authorization"] == "Bearer sk-new"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here it is: {"a": {"b": 2}} hope it helps', {"a": {"b": 2}}),
    ],
)
def test_parse_json_object_accepts(text: str, expected: dict) -> None:
    assert parse_json_object(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", "[1, 2]", '{"a": '])
def test_parse_json_object_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_json_object(text)


@pytest.mark.process
def test_importing_the_llm_modules_does_not_import_openai() -> None:
    code = (
        "import sys, controller.llm.client, controller.routing.llm_router, controller.llm.summary, "
        "controller.llm.planner, controller.api.llm, aios_sdk.llm\n"
        "assert 'openai' not in sys.modules, 'openai imported eagerly'\n"
        "assert 'requests' not in sys.modules, 'requests imported eagerly'\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)


@pytest.mark.parametrize(
    "module",
    [
        "aios_sdk.llm",
        "controller.llm.client",
        "controller.routing.llm_router",
        "controller.llm.summary",
        "controller.llm.planner",
        "controller.api.llm",
    ],
)
def test_public_names_exist(module: str) -> None:
    import importlib

    loaded = importlib.import_module(module)
    assert loaded.__all__ and all(hasattr(loaded, name) for name in loaded.__all__)


def test_the_warm_up_builds_the_client_only_for_a_configured_model(
    fake: FakeOpenAI,
) -> None:
    """Importing `openai` takes seconds: the launch builds the client before the first
    question (`warm_up`), and only when there is a model to ask."""
    idle = LLMClient(Settings())
    idle.warm_up()
    assert idle._openai_client is None
    client = LLMClient(Settings.model_validate({"llm": {"base_url": fake.url}}))
    client.warm_up()
    assert client._openai_client is not None
    fake.script(text_reply("ok"))
    assert client.chat(USER) == "ok"  # the client built ahead is the one used
    assert len(fake.requests) == 1
