"""The LLM wired into a running system: fallback routing, app chat through the
controller with the app's own token, tray status — against the fake OpenAI server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.controller.system import TEST_CONFIG, RunningSystem, build_apps_dir, launch
from tests.fakes.openai_server import FakeOpenAI, json_reply, text_reply
from tests.security.wire import process_environment

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def system(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI
) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("llm_system")
    apps = build_apps_dir(root / "apps", test_apps=())
    shutil.copytree(HERE / "apps" / "llm_app", apps / "llm_app")
    config = {
        **TEST_CONFIG,
        "deepseek_api_key": "sk-wiring-test",
        "llm_base_url": fake.base_url,
    }
    running = launch(root, apps, config=config)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(autouse=True)
def _clean(fake: FakeOpenAI) -> None:
    fake.reset()


def test_confident_instruction_never_reaches_the_model(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    reply = system.say("跟我打个招呼")
    assert [t["app_id"] for t in reply["tasks"]] == ["hello_app"]
    assert reply["llm_calls"] == 0
    assert fake.requests == []


def test_unclear_instruction_is_decomposed_by_the_model(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        json_reply(
            {
                "tasks": [
                    {
                        "id": "t1",
                        "app_id": "hello_app",
                        "instruction": "打个招呼",
                        "depends_on": [],
                    }
                ]
            }
        )
    )
    reply = system.say("嗯……那个，你懂的")
    assert reply["llm_calls"] == 1
    assert [t["app_id"] for t in reply["tasks"]] == ["hello_app"]
    assert reply["tasks"][0]["result"]["data"]["content"].startswith("你好")
    assert "hello_app" in fake.requests[0].prompt_text
    assert fake.requests[0].headers.get("authorization") == "Bearer sk-wiring-test"
    assert system.get("/api/health").json()["llm"] == "ok"


def test_app_reaches_the_model_through_the_controller_without_the_key(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(text_reply("来自模型的问候"))
    reply = system.post("/api/apps/llm_app/open", {}).json()
    assert reply["status"] == "ok", reply
    assert reply["data"]["content"] == "来自模型的问候"
    assert reply["data"]["key_in_env"] is False
    assert len(fake.requests) == 1


def test_app_token_only_opens_the_llm_routes(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    import requests

    app_proc = next(
        p
        for p in system.children()
        if "llm_app" in " ".join(p.cmdline())
        or process_environment(p).get("AIOS_APP_ID") == "llm_app"
    )
    app_token = process_environment(app_proc)["AIOS_TOKEN"]
    assert app_token != system.token
    headers = {"X-AIOS-Token": app_token}
    assert (
        requests.get(f"{system.url}/api/apps", headers=headers, timeout=5).status_code
        == 403
    )
    denied = requests.post(
        f"{system.url}/api/instruction", json={"text": "你好"}, headers=headers, timeout=5
    )
    assert denied.status_code == 403
    fake.script(text_reply("好"))
    allowed = requests.post(
        f"{system.url}/api/llm/chat",
        json={"messages": [{"role": "user", "content": "hi"}]},
        headers=headers,
        timeout=10,
    )
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["content"] == "好"


def test_long_sessions_get_an_llm_summary(system: RunningSystem, fake: FakeOpenAI) -> None:
    import time

    from controller.sessions import load_session_file

    first = system.say("跟我打个招呼")
    sid = first["session_id"]
    system.say("向我问好", session_id=sid)
    assert fake.requests == []  # two turns: summarised deterministically
    fake.script(text_reply("用户一直在打招呼"))
    system.say("say hello", session_id=sid)
    path = system.state_dir / "sessions" / f"{sid}.json"
    deadline = time.monotonic() + 10
    summary = None
    while time.monotonic() < deadline and summary is None:
        summary = load_session_file(path)["context"].get("llm_summary")
        time.sleep(0.05)
    assert summary == "用户一直在打招呼"
    assert "say hello" in fake.requests[0].prompt_text
