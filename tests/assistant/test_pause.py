"""Pause and replay: a call that needs the user's yes stops at a restorable point (a
placeholder result, the pending request and the session saved); the desktop's
confirmation replays the same call — also after a restart in the middle of the pause —
and the real result replaces the placeholder. Denying gives the model the refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.sessions import load_session_file
from tests.assistant.conftest import (
    ASSISTANT,
    agent_requests,
    ask,
    assistant_config,
    build_assistant_apps,
)
from tests.controller.system import RunningSystem, launch
from tests.fakes.openai_server import FakeOpenAI, text_reply, tool_calls_reply

pytestmark = pytest.mark.slow

PLACEHOLDER = "waiting for the user's confirmation"


def kept_context(system: RunningSystem, session: str) -> list[dict]:
    """The assistant's model context as the session's journal keeps it."""
    saved = load_session_file(system.state_dir / "sessions" / f"{session}.json")
    return saved["agent_states"][ASSISTANT]["model_messages"]


def test_confirmed_call_replays_after_a_restart(tmp_path: Path, fake: FakeOpenAI) -> None:
    apps = build_assistant_apps(tmp_path)
    config = assistant_config(fake)
    system = launch(tmp_path, apps, config=config)
    try:
        system.wait_app(ASSISTANT, "running")
        fake.script(
            tool_calls_reply(
                ("file_list", {}),
                ("file_write", {"path": "README.txt", "content": "新的说明"}),
            ),
        )
        paused = ask(system, fake, "智能助手 改写说明文件")
        assert paused["view_type"] == "confirm", paused
        confirmation = paused["data"]["confirmation_id"]
        readme = system.workspace(ASSISTANT) / "README.txt"
        assert "新的说明" not in readme.read_text()
        session = paused["session_id"]
        (asking,) = [m for m in kept_context(system, session) if m["role"] == "assistant"]
        assert asking["id"].startswith("msg_")
    finally:
        system.stop()

    system = launch(tmp_path, apps, config=config)  # same state folder
    try:
        system.wait_app(ASSISTANT, "running")
        pending = system.get("/api/confirmations").json()["confirmations"]
        assert [p["confirmation_id"] for p in pending] == [confirmation]
        fake.reset()
        fake.script(text_reply("已改写 `README.txt`。"))
        answer = system.post(
            f"/api/confirmations/{confirmation}", {"decision": "allow_once"}
        )
        assert answer.status_code == 200, answer.text
        final = answer.json()
        assert final["data"]["content"] == "已改写 `README.txt`。", final
        assert readme.read_text() == "新的说明"
        (request,) = agent_requests(fake)
        listed, written = [m for m in request.messages if m["role"] == "tool"]
        assert listed["tool_call_id"] == "call_1" and "README.txt" in listed["content"]
        assert written["tool_call_id"] == "call_2"
        assert PLACEHOLDER not in written["content"] and '"size"' in written["content"]
        assert "id" not in request.messages[2] and "asked_by" not in written  # ours
        # the journal kept the asking message's id through the restart, and both
        # results name it
        context = kept_context(system, session)
        assert [m["id"] for m in context if m["role"] == "assistant"][0] == asking["id"]
        results = [m for m in context if m["role"] == "tool"]
        assert [m["asked_by"] for m in results] == [asking["id"], asking["id"]]
        assert '"size"' in results[1]["content"]
        # the session kept both histories: display has the real result too
        fake.reset()
        fake.script(text_reply("好的。"))
        ask(system, fake, "智能助手 谢谢", session=session)
        (later,) = agent_requests(fake)
        assert PLACEHOLDER not in json.dumps(later.messages, ensure_ascii=False)
    finally:
        system.stop()


@pytest.fixture
def denied_system(tmp_path: Path, fake: FakeOpenAI):
    system = launch(tmp_path, build_assistant_apps(tmp_path), config=assistant_config(fake))
    try:
        system.wait_app(ASSISTANT, "running")
        yield system
    finally:
        system.stop()


def test_denied_call_is_a_refusal_for_the_model(denied_system, fake: FakeOpenAI) -> None:
    system = denied_system
    fake.script(tool_calls_reply(("file_write", {"path": "README.txt", "content": "x"})))
    paused = ask(system, fake, "智能助手 覆盖说明")
    confirmation = paused["data"]["confirmation_id"]
    fake.reset()
    fake.script(text_reply("好的，我没有改动文件。"))
    final = system.post(f"/api/confirmations/{confirmation}", {"decision": "deny"}).json()
    assert final["data"]["content"] == "好的，我没有改动文件。"
    (request,) = agent_requests(fake)
    refused = json.loads(request.messages[-1]["content"])
    assert refused["code"] == "denied_by_user"


def test_a_new_message_instead_of_a_yes_cancels_the_waiting_call(
    denied_system, fake: FakeOpenAI
) -> None:
    system = denied_system
    fake.script(tool_calls_reply(("file_write", {"path": "README.txt", "content": "y"})))
    paused = ask(system, fake, "智能助手 再覆盖说明")
    assert paused["view_type"] == "confirm"
    fake.reset()
    fake.script(text_reply("那就先不改。"))
    ask(system, fake, "智能助手 算了，别改了", session=paused["session_id"])
    (request,) = agent_requests(fake)
    cancelled = [m for m in request.messages if m["role"] == "tool"][-1]
    assert json.loads(cancelled["content"])["code"] == "not_confirmed"


FORKED_SKILL = (
    "---\nname: rewrite_readme\ndescription: Rewrite the README\ncontext: fork\n"
    "allowed-tools: [file_write, file_read]\n---\nRewrite README.txt.\n"
)


def test_a_forked_skills_write_waits_for_the_users_yes_also_after_a_restart(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """A skill marked `context: fork`: its sub-agent's overwrite is the confirmation the
    user meets for any call; after a restart the yes runs it in the sub-agent, which
    goes on in the skill's turn, and its report reaches the main agent."""
    skill = tmp_path / "state" / "users" / "default" / "skills" / "rewrite_readme"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(FORKED_SKILL)
    apps = build_assistant_apps(tmp_path)
    config = assistant_config(fake)
    system = launch(tmp_path, apps, config=config)
    try:
        system.wait_app(ASSISTANT, "running")
        fake.when(
            "<fork-boilerplate>",
            tool_calls_reply(("file_write", {"path": "README.txt", "content": "技能写的"})),
        )
        fake.script(tool_calls_reply(("skill", {"name": "rewrite_readme"})))
        paused = ask(system, fake, "智能助手 用技能改写说明")
        assert paused["view_type"] == "confirm", paused  # asked, not refused
        assert "README.txt" in paused["message"], paused
        readme = system.workspace(ASSISTANT) / "README.txt"
        assert "技能写的" not in readme.read_text()
        confirmation = paused["data"]["confirmation_id"]
    finally:
        system.stop()

    system = launch(tmp_path, apps, config=config)  # same state folder
    try:
        system.wait_app(ASSISTANT, "running")
        pending = system.get("/api/confirmations").json()["confirmations"]
        assert [p["confirmation_id"] for p in pending] == [confirmation]
        fake.reset()
        fake.when(
            "<fork-boilerplate>",
            tool_calls_reply(("file_read", {"path": "README.txt"})),  # the skill's turn
            text_reply("技能：已改写 README.txt。"),
        )
        fake.script(text_reply("技能改写了说明文件。"))
        answer = system.post(
            f"/api/confirmations/{confirmation}", {"decision": "allow_once"}
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["data"]["content"] == "技能改写了说明文件。", answer.json()
        assert readme.read_text() == "技能写的"
        child = [r for r in agent_requests(fake) if "<fork-boilerplate>" in r.prompt_text]
        read = [m for m in child[-1].messages if m["role"] == "tool"][-1]
        assert "技能写的" in read["content"]  # held to the skill, yet its tools run
        parent = [
            r for r in agent_requests(fake) if "<fork-boilerplate>" not in r.prompt_text
        ]
        result = json.loads(
            [m for m in parent[-1].messages if m["role"] == "tool"][-1]["content"]
        )
        assert result["status"] == "ok" and result["summary"] == "技能：已改写 README.txt。"
    finally:
        system.stop()
