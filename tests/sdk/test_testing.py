"""`aios_sdk.testing`: apps tested in-process with a scripted model and the test client.

The example of docs/SDK.md ("Testing your app") runs as it is written; a scripted
loop calls two tools in a row and answers; a model asks the user first and the click
answers it; a model call past the script fails with a message saying which; the
shipped hello app and an app made by `aios new-app` (with the test file it writes)
are driven without a system.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from aios.scaffold import scaffold_app
from aios_protocol.errors import ToolFailed
from aios_protocol.llm import LLMBadReply, LLMNotConfigured
from aios_sdk import AIOSAgent
from aios_sdk.testing import AppTestClient, ScriptedModel, UnscriptedCall, call, reply
from tests.procs import PYTHON

ROOT = Path(__file__).resolve().parents[2]


def section(title: str) -> str:
    doc = (ROOT / "docs" / "SDK.md").read_text(encoding="utf-8")
    return doc.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def block(text: str, language: str) -> str:
    found = re.search(rf"```{language}\n(.*?)```", text, re.S)
    assert found, f"no {language} block"
    return found.group(1)


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_tests_of(module: ModuleType) -> list[str]:
    """Call every `test_*` function of `module` (none takes a fixture); their names."""
    ran = []
    for name, value in vars(module).items():
        if name.startswith("test_") and callable(value):
            value()
            ran.append(name)
    return ran


@pytest.fixture
def forget_packages() -> Iterator[list[str]]:
    """Package names an app folder was imported under, dropped from sys.modules after."""
    names: list[str] = []
    yield names
    for loaded in [m for m in sys.modules if m.split(".")[0] in names]:
        del sys.modules[loaded]


# ------------------------------------------------------------------ the docs


def test_the_documented_example_runs_as_written(tmp_path: Path) -> None:
    app = tmp_path / "lengths_app"
    (app / "tests").mkdir(parents=True)
    agent = section("An agent: a role prompt, tools and a model")
    (app / "manifest.json").write_text(block(agent, "json"), encoding="utf-8")
    (app / "main.py").write_text(block(agent, "python"), encoding="utf-8")
    example = block(section("Testing your app"), "python")
    (app / "tests" / "test_app.py").write_text(example, encoding="utf-8")
    module = load(app / "tests" / "test_app.py", "documented_lengths_tests")
    assert run_tests_of(module) == [
        "test_the_model_converts_with_the_tool",
        "test_without_a_model_it_says_it_needs_one",
    ]


# ------------------------------------------------------------------ the loop


class FilesAgent(AIOSAgent):
    name, description, icon = "文件助手", "reads files", "📁"
    role_prompt = "You answer from the workspace's files."
    agent = True


FILES = {"a.txt": "hello from a", "b.txt": "hello from b"}


def file_list(path: str = ".") -> dict[str, Any]:
    """List a folder."""
    return {"path": path, "files": [{"name": n, "size": len(t)} for n, t in FILES.items()]}


def file_read(path: str) -> str:
    """Read a file."""
    if path not in FILES:
        raise ToolFailed(f"{path} does not exist", code="not_found")
    return FILES[path]


TOOLS = {"file_list": file_list, "file_read": file_read}


def tool_results(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


def test_a_scripted_loop_calls_two_tools_in_a_row_then_answers() -> None:
    model = ScriptedModel(
        [
            reply(tool_calls=[call("file_list", {"path": "."})]),
            reply(tool_calls=[call("file_read", {"path": "a.txt"})]),
            reply(text="a.txt says: hello from a"),
        ]
    )
    client = AppTestClient(FilesAgent, model=model, tools=TOOLS, language="en-US")
    answer = client.say("what does the first file say?")
    assert answer.status == "ok" and answer.view_type == "text"
    assert answer.data["content"] == "a.txt says: hello from a"
    assert client.calls == [("file_list", {"path": "."}), ("file_read", {"path": "a.txt"})]
    first, second, third = model.requests
    assert first.kind == "turn" and first.last_user_text == "what does the first file say?"
    assert first.tool_names[:2] == ["file_list", "file_read"]  # the fakes are offered
    assert first.messages[0]["content"].startswith("You answer from the workspace's files.")
    assert tool_results(second.messages) == [json.dumps(file_list("."))]
    assert tool_results(third.messages)[-1] == "hello from a"
    assert model.remaining == 0
    called = [data["name"] for kind, data in model.events if kind == "tool_call"]
    assert called == ["file_list", "file_read"]
    # the conversation is kept: the window shows it when opened again
    assert "hello from a" in client.open().data["content"]


def test_a_model_that_asks_the_user_first_goes_on_with_the_answer() -> None:
    model = ScriptedModel(
        [
            reply(
                tool_calls=[
                    call(
                        "ask_user",
                        {"question": "Which file?", "choices": ["a.txt", "b.txt"]},
                    )
                ]
            ),
            reply(tool_calls=[call("file_read", {"path": "b.txt"})]),
            reply(text="b.txt says: hello from b"),
        ]
    )
    client = AppTestClient(FilesAgent, model=model, tools=TOOLS, language="en-US")
    asked = client.say("read a file")
    assert asked.data["content"] == "Which file?"
    assert (asked.model_extra or {})["awaiting_user_input"] == {
        "question": "Which file?",
        "choices": ["a.txt", "b.txt"],
    }
    buttons = [a for a in asked.actions if a.type == "button" and a.action_id == "answer"]
    assert [(b.label, b.params) for b in buttons] == [
        ("a.txt", {"answer": "a.txt"}),
        ("b.txt", {"answer": "b.txt"}),
    ]
    assert client.calls == [] and len(model.requests) == 1  # nothing ran before the answer
    answered = client.click("answer", answer="b.txt")
    assert answered.data["content"] == "b.txt says: hello from b"
    assert client.calls == [("file_read", {"path": "b.txt"})]
    assert json.loads(tool_results(model.requests[1].messages)[-1]) == {"answer": "b.txt"}


def test_an_unscripted_extra_call_fails_with_a_clear_message() -> None:
    model = ScriptedModel([reply(text="Hello.")])
    client = AppTestClient(FilesAgent, model=model, tools=TOOLS)
    assert client.say("hi").data["content"] == "Hello."
    with pytest.raises(UnscriptedCall) as failed:
        client.say("and again")
    assert str(failed.value) == (
        "ScriptedModel: the app asked the model a 2nd time (turn, last user message "
        "'and again'), but the script has 1 reply; add a reply(...) for this call"
    )
    # without raise_errors the test sees what the user would: the error view
    quiet = AppTestClient(FilesAgent, model=ScriptedModel(), raise_errors=False)
    shown = quiet.say("hi")
    assert shown.status == "error" and shown.view_type == "error"
    assert "the script has 0 replies" in (shown.detail or "")


def test_a_tool_without_a_fake_is_refused_naming_the_tools_there_are() -> None:
    model = ScriptedModel(
        [reply(tool_calls=[call("shell_exec", {"command": "ls"})]), reply(text="Cannot.")]
    )
    client = AppTestClient(FilesAgent, model=model, tools=TOOLS)
    assert client.say("list with ls").data["content"] == "Cannot."
    [refused] = tool_results(model.requests[1].messages)
    assert json.loads(refused)["code"] == "unknown_tool"
    assert "file_list, file_read" in json.loads(refused)["error"]
    assert client.calls == []  # it never ran


def test_the_scripted_model_answers_chat_and_plans() -> None:
    model = ScriptedModel(
        [
            reply(text="plain"),
            reply(text='{"query": "jazz"}'),
            reply(text="[1, 2]"),
            reply(tool_calls=[call("file_list", {}), call("file_read", {"path": "a.txt"})]),
            reply(tool_calls=[call("file_list")]),
        ]
    )
    assert model.available
    assert model.chat("say it", system="be brief") == "plain"
    assert model.requests[0].messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "say it"},
    ]
    assert model.chat("as JSON", json=True) == {"query": "jazz"}
    with pytest.raises(LLMBadReply, match="not a JSON object"):
        model.chat("as JSON", json=True)
    assert model.plan_steps("list then read", {"available_tools": ["file_list"]}) == [
        {"step_id": 1, "tool": "file_list", "args": {}},
        {"step_id": 2, "tool": "file_read", "args": {"path": "a.txt"}},
    ]
    assert model.requests[3].kind == "plan" and model.requests[3].tool_names == [
        "file_list"
    ]
    with pytest.raises(UnscriptedCall, match="proposes tool calls"):
        model.chat("text please")
    offline = ScriptedModel(available=False)
    assert not offline.available
    with pytest.raises(LLMNotConfigured):
        offline.chat("hi")


# ------------------------------------------------------------------ apps


def test_the_client_drives_the_shipped_hello_app() -> None:
    greeting = {"file_read": lambda path: "你好\n" if path == "greeting.txt" else ""}
    client = AppTestClient.from_folder(ROOT / "apps" / "hello_app", tools=greeting)
    said = client.say("世界")  # a greeting, whatever was said
    assert (said.status, said.view_type, said.message) == ("ok", "text", "已回复")
    assert said.data == {"content": "你好！很高兴见到你。"}
    assert [(a.label, a.action_id) for a in said.actions] == [("再说一次", "again")]
    again = client.click("again")
    assert again.data == {"content": "你好！很高兴见到你。"}
    assert client.calls == [("file_read", {"path": "greeting.txt"})] * 2
    client.language = "en-US"
    opened = client.open()
    assert (
        opened.data == {"content": "Hello! Nice to meet you."}
        and opened.actions[0].label == "Say it again"
    )
    without = AppTestClient.from_folder(ROOT / "apps" / "hello_app")
    with pytest.raises(
        ToolFailed, match=r"file_read: no such tool in this test"
    ) as refused:
        without.open()
    assert refused.value.code == "unknown_tool"
    assert "AppTestClient(tools={'file_read': function})" in refused.value.message


def test_the_client_drives_a_scaffolded_app_and_its_own_tests_pass(
    tmp_path: Path, forget_packages: list[str]
) -> None:
    forget_packages.append("sdk_testing_notes")
    folder = scaffold_app(tmp_path, "sdk_testing_notes", name="测试笔记")
    client = AppTestClient.from_folder(folder, tools={"file_list": file_list})
    opened = client.open()
    assert opened.data == {"content": "这里是测试笔记。"}
    listed = client.click("list_files")
    assert listed.view_type == "list" and listed.message == "共 2 个文件"
    assert [item["title"] for item in listed.data["items"]] == ["a.txt", "b.txt"]
    assert client.calls == [("file_list", {"path": "workspace"})]
    # the tests `aios new-app` writes beside the app pass as written
    module = load(folder / "tests" / "test_app.py", "scaffolded_app_tests")
    assert run_tests_of(module) == [
        "test_the_window_opens_with_a_button",
        "test_list_files_shows_the_workspace",
    ]


@pytest.mark.process
def test_importing_the_sdk_does_not_import_testing() -> None:
    probe = (
        "import sys, aios_sdk\n"
        "assert 'aios_sdk.testing' not in sys.modules\n"
        "assert aios_sdk.testing.AppTestClient\n"
        "assert 'aios_sdk.testing' in sys.modules\n"
    )
    done = subprocess.run(
        [PYTHON, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
