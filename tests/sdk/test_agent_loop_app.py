"""The SDK's agent loop in an app of twenty lines: the example of docs/SDK.md, run as
it is written, in a running system against the scripted OpenAI-compatible model. Its
role prompt reaches the model, its one `@tool` is offered (with the metadata its
author stated) and runs through the executor, the result goes back to the model, and
the model's answer is the reply."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.controller.system import TEST_CONFIG, RunningSystem, build_apps_dir, launch
from tests.fakes.openai_server import FakeOpenAI, text_reply, tool_calls_reply

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
APP = "lengths_app"


def documented_app() -> tuple[str, str]:
    """The manifest and the main.py under "## An agent" in docs/SDK.md."""
    doc = (ROOT / "docs" / "SDK.md").read_text(encoding="utf-8")
    section = doc.split("## An agent: a role prompt, tools and a model", 1)[1]
    manifest = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    return manifest, code


@pytest.fixture(scope="module")
def system(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI
) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("agent_app")
    apps = build_apps_dir(root / "apps", test_apps=())
    folder = apps / APP
    folder.mkdir()
    manifest, code = documented_app()
    lines = manifest.strip().splitlines() + code.strip().splitlines()
    assert len(lines) <= 25  # "an app of about 20 lines"
    (folder / "main.py").write_text(code, encoding="utf-8")
    (folder / "manifest.json").write_text(manifest, encoding="utf-8")
    config = {**TEST_CONFIG, "deepseek_api_key": "sk-test", "llm_base_url": fake.base_url}
    running = launch(root, apps, config=config)
    try:
        running.wait_app(APP, "running")
        yield running
    finally:
        running.stop()


def ask(system: RunningSystem, fake: FakeOpenAI, text: str) -> dict[str, Any]:
    fake.routes[text] = APP
    reply = system.say(text)
    [task] = reply["tasks"]
    assert task["app_id"] == APP, reply
    return task["result"]


def test_the_documented_app_runs_a_tool_using_loop(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_calls_reply(("convert", {"value": 10, "unit": "m"})),
        text_reply("10 m is 32.808 ft."),
    )
    result = ask(system, fake, "长度换算 10 metres in feet")
    assert result["status"] == "ok", result
    assert result["data"]["content"] == "10 m is 32.808 ft."
    first, second = [r for r in fake.requests if not r.is_routing]
    assert first.messages[0]["role"] == "system"
    assert "You convert lengths. Use the convert tool" in first.messages[0]["content"]
    offered = {t["function"]["name"]: t["function"] for t in first.body["tools"]}
    assert offered["convert"]["parameters"]["required"] == ["value", "unit"]
    assert "Convert a length" in offered["convert"]["description"]
    [result_message] = [m for m in second.messages if m["role"] == "tool"]
    assert json.loads(result_message["content"]) == {"value": 32.808, "unit": "ft"}
    # the author's metadata reached the executor's listing
    listing = system.get("/api/tools", params={"app_id": APP}).json()
    [entry] = [t for t in listing["tools"] if t["name"] == "convert"]
    assert entry["risk_level"] == "read" and entry["concurrency_safe"] is True
