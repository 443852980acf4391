"""A configured model that cannot be reached: one plain sentence naming the address it
tried, in the user's language, and no second window for a task that waited on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.controller.system import TEST_CONFIG, copy_shipped_apps, launch
from tests.procs import free_port

pytestmark = pytest.mark.slow


def test_an_unreachable_model_is_said_once_with_the_address_it_tried(
    tmp_path: Path,
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    apps = copy_shipped_apps(tmp_path / "apps", ("hello_app", "assistant_app", "music_app"))
    config = {**TEST_CONFIG, "llm": {"api_key": "sk-test", "base_url": url, "model": "m"}}
    system = launch(tmp_path, apps, config=config)
    try:
        for text, language, words in (
            ("智能助手，帮我写一首诗", "zh-CN", "无法连接到语言模型服务"),
            ("assistant, write me a poem", "en-US", "could not be reached"),
        ):
            response = system.post(
                "/api/instruction", {"text": text, "language": language}
            ).json()
            shown = [task for task in response["tasks"] if task.get("result")]
            assert [task["app_id"] for task in shown] == ["assistant_app"], response
            assert words in response["message"] and url in response["message"], response
            assert all(
                task["status"] == "skipped"
                for task in response["tasks"]
                if not task.get("result")
            ), response
    finally:
        system.stop()
