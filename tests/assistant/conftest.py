"""A running system with 智能助手 and the fake OpenAI-compatible model server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    build_apps_dir,
    copy_shipped_apps,
    launch,
)
from tests.fakes.openai_server import FakeOpenAI

ASSISTANT = "assistant_app"


def assistant_config(fake: FakeOpenAI, **settings: Any) -> dict[str, Any]:
    return {
        **TEST_CONFIG,
        "deepseek_api_key": "sk-assistant-test",
        "llm_base_url": fake.base_url,
        "app_settings": {ASSISTANT: {"max_turns": 4, **settings}},
    }


def build_assistant_apps(root: Path) -> Path:
    apps = build_apps_dir(root / "apps", test_apps=())
    return copy_shipped_apps(apps, (ASSISTANT,))


@pytest.fixture(scope="module")
def system(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI
) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("assistant")
    running = launch(root, build_assistant_apps(root), config=assistant_config(fake))
    try:
        running.wait_app(ASSISTANT, "running")
        yield running
    finally:
        running.stop()


@pytest.fixture(autouse=True)
def _clean(fake: FakeOpenAI) -> None:
    fake.reset()


def ask(
    system: RunningSystem, fake: FakeOpenAI, text: str, session: str | None = None
) -> dict[str, Any]:
    """`text` sent as an instruction that the (fake) router gives to the assistant."""
    fake.routes[text] = ASSISTANT
    reply = system.say(text, session_id=session)
    tasks = reply["tasks"]
    assert [t["app_id"] for t in tasks] == [ASSISTANT], reply
    return {**tasks[0]["result"], "session_id": reply["session_id"]}


def agent_requests(fake: FakeOpenAI) -> list[Any]:
    """The model requests of the agent loop (not the router's)."""
    return [r for r in fake.requests if not r.is_routing]
