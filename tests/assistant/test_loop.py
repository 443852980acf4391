"""The agent loop in a running system against a scripted model: tool calls run through
the executor and come back to the model, bad calls become error results, the model
context persists in the session, sub-agents, stop hooks, recoveries, max_turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.assistant.conftest import agent_requests, ask
from tests.controller.system import RunningSystem
from tests.fakes.openai_server import (
    FakeOpenAI,
    disconnect,
    error_reply,
    holding,
    text_reply,
    tool_calls_reply,
    truncated_reply,
)

pytestmark = pytest.mark.slow


def tool_messages(request) -> list[dict]:
    return [m for m in request.messages if m.get("role") == "tool"]


def test_tool_results_go_back_to_the_model_until_it_answers(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_calls_reply(("file_read", {"path": "README.txt"}), ("file_list", {})),
        text_reply("工作区里有一个说明文件。"),
    )
    result = ask(system, fake, "智能助手 看看工作区里有什么")
    assert result["status"] == "ok", result
    assert result["data"]["content"] == "工作区里有一个说明文件。"
    first, second = agent_requests(fake)
    offered = {t["function"]["name"] for t in first.body["tools"]}
    assert {"file_read", "file_list", "task", "ask_user", "skill"} <= offered
    # what the tool providers say about their tools is in the system prompt
    assert "Skills: `search_skills` finds them by keyword" in first.messages[0]["content"]
    assert first.body["stream"] is True
    results = tool_messages(second)
    assert [m["tool_call_id"] for m in results] == ["call_1", "call_2"]
    assert "智能助手的工作区" in results[0]["content"]
    assert "README.txt" in results[1]["content"]
    # the model context is kept in the session: the next request starts from it
    fake.reset()
    fake.script(text_reply("上一轮我读了 README。"))
    ask(system, fake, "智能助手 你刚才做了什么", session=result["session_id"])
    (third,) = agent_requests(fake)
    roles = [m["role"] for m in third.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]


def test_broken_arguments_and_unknown_tools_are_results_for_the_model(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_calls_reply(("file_read", '{"path": "README'), ("no_such_tool", {})),
        text_reply("两个调用都失败了。"),
    )
    result = ask(system, fake, "智能助手 试试坏的调用")
    assert result["data"]["content"] == "两个调用都失败了。"
    broken, unknown = tool_messages(agent_requests(fake)[1])
    assert json.loads(broken["content"])["code"] == "invalid_args"
    assert "not valid JSON" in json.loads(broken["content"])["error"]
    assert json.loads(unknown["content"])["code"] == "unknown_tool"


def test_a_loop_that_never_ends_stops_at_max_turns(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(*[tool_calls_reply(("file_list", {})) for _ in range(4)])
    result = ask(system, fake, "智能助手 一直列文件")
    assert result["status"] == "ok" and result.get("notice") == "warning", result
    assert "4" in result["data"]["content"]
    assert len(agent_requests(fake)) == 4
    assert fake.pending == 0


def test_sub_agent_works_on_a_fork_and_reports_a_summary(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_calls_reply(("task", {"description": "list", "prompt": "列出工作区的文件"})),
        tool_calls_reply(("file_list", {})),  # the sub-agent's first turn
        tool_calls_reply(("task", {"prompt": "again"})),  # it may not fork again
        text_reply("子任务：工作区里有 README.txt。"),
        text_reply("子代理说工作区里有 README.txt。"),
    )
    result = ask(system, fake, "智能助手 用子任务列文件")
    assert result["data"]["content"] == "子代理说工作区里有 README.txt。", result
    parent, child1, child2, child3, parent2 = agent_requests(fake)
    assert "<fork-boilerplate>" in child1.prompt_text
    assert "Skills: `search_skills`" in child1.messages[0]["content"]  # a sub-agent's too
    assert "task" not in {t["function"]["name"] for t in child1.body["tools"]}
    no_fork = json.loads(tool_messages(child3)[-1]["content"])
    assert no_fork["code"] == "no_fork"
    summary = json.loads(tool_messages(parent2)[-1]["content"])
    assert summary["summary"] == "子任务：工作区里有 README.txt。"
    output = system.workspace("assistant_app") / summary["output"]
    assert output.is_file() and "README.txt" in output.read_text()
    assert summary["output"].startswith("task-outputs/")


def test_stop_hook_sends_a_false_claim_back_once(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        text_reply("我已经把结果写到 `report.md` 了。"),
        text_reply("抱歉，我还没有写任何文件。"),
    )
    result = ask(system, fake, "智能助手 写个报告")
    assert result["data"]["content"] == "抱歉，我还没有写任何文件。"
    hook = agent_requests(fake)[1].messages[-1]
    assert hook["role"] == "user" and "[stop hook]" in hook["content"]
    assert "workspace/report.md" in hook["content"]


def test_cut_off_answer_gets_more_tokens_then_a_recovery_message(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(
        truncated_reply("第一段"),
        truncated_reply("第一段又被截断"),
        text_reply("……后半段。"),
    )
    result = ask(system, fake, "智能助手 写一篇长文")
    # the continued answer joins its parts, in order; the retried attempt is not one
    assert result["data"]["content"] == "第一段又被截断……后半段。"
    first, bigger, continued = agent_requests(fake)
    assert bigger.body["max_tokens"] > first.body["max_tokens"]
    assert bigger.messages == first.messages  # nothing kept from the cut-off answer
    assert continued.messages[-2] == {"role": "assistant", "content": "第一段又被截断"}
    assert "cut off" in continued.messages[-1]["content"]


def test_connection_errors_are_retried_without_duplicating_history(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(disconnect(), disconnect(), disconnect(), text_reply("连上了。"))
    result = ask(system, fake, "智能助手 网络不好也要回答")
    assert result["data"]["content"] == "连上了。"
    last = agent_requests(fake)[-1]
    users = [m for m in last.messages if m["role"] == "user"]
    assert [m["content"] for m in users].count("智能助手 网络不好也要回答") == 1


def test_a_context_refused_as_too_long_is_compacted_and_asked_again(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.script(text_reply("第一轮的回答。"))
    first = ask(system, fake, "智能助手 先说点什么")
    fake.reset()
    fake.script(
        error_reply(400, "This model's maximum context length is 4096 tokens."),
        text_reply("之前用户让助手先说点什么。"),  # the summary the compaction asks for
        text_reply("压缩之后也答上了。"),
    )
    result = ask(system, fake, "智能助手 接着说", session=first["session_id"])
    assert result["status"] == "ok", result
    assert result["data"]["content"] == "压缩之后也答上了。"
    refused, summary, retried = agent_requests(fake)
    assert summary.body.get("stream") is not True  # the summary is a plain chat call
    assert "[Summary of the earlier conversation]" in retried.prompt_text
    assert "之前用户让助手先说点什么。" in retried.prompt_text
    earlier = [m.get("content") for m in refused.messages]
    assert "智能助手 先说点什么" in earlier  # the older part, in place of which …
    assert "智能助手 先说点什么" not in [m.get("content") for m in retried.messages]
    assert retried.messages[-1]["content"] == "智能助手 接着说"


def test_a_background_sub_agent_writes_its_output_and_the_parent_reads_its_summary(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.when(
        "<fork-boilerplate>",  # the sub-agent's turns, whenever they come
        tool_calls_reply(("file_list", {})),
        text_reply("后台子任务：工作区里有 README.txt。"),
    )
    background = {"description": "list", "prompt": "列出文件", "background": True}
    fake.script(
        tool_calls_reply(("task", background)),
        tool_calls_reply(("task_output", {"wait": 30})),  # the latest background task
        text_reply("后台的子任务说工作区里有 README.txt。"),
    )
    result = ask(system, fake, "智能助手 在后台列文件")
    assert result["data"]["content"] == "后台的子任务说工作区里有 README.txt。", result
    parent = [r for r in agent_requests(fake) if "<fork-boilerplate>" not in r.prompt_text]
    child = [r for r in agent_requests(fake) if "<fork-boilerplate>" in r.prompt_text]
    assert len(parent) == 3 and len(child) == 2
    started = json.loads(tool_messages(parent[1])[-1]["content"])
    assert started["status"] == "running" and started["output"].startswith("task-outputs/")
    summary = json.loads(tool_messages(parent[2])[-1]["content"])
    assert summary["status"] == "ok" and summary["task_id"] == started["task_id"]
    assert summary["summary"] == "后台子任务：工作区里有 README.txt。"
    output = system.workspace("assistant_app") / started["output"]
    assert "后台子任务：工作区里有 README.txt。" in output.read_text(encoding="utf-8")


def test_a_sub_agents_risky_call_reaches_the_users_permission_pause(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    fake.when(
        "<fork-boilerplate>",
        tool_calls_reply(("file_write", {"path": "README.txt", "content": "子代理写的"})),
        tool_calls_reply(("task", {"prompt": "fork again"})),  # a fork from a fork
        text_reply("子任务：已改写 README.txt。"),
    )
    fake.script(
        tool_calls_reply(("task", {"description": "rewrite", "prompt": "改写说明文件"})),
        text_reply("子代理改写了说明文件。"),
    )
    paused = ask(system, fake, "智能助手 让子代理改写说明")
    assert paused["view_type"] == "confirm", paused  # the user is asked, not refused
    readme = system.workspace("assistant_app") / "README.txt"
    assert "子代理写的" not in readme.read_text()
    confirmation = paused["data"]["confirmation_id"]
    answer = system.post(f"/api/confirmations/{confirmation}", {"decision": "allow_once"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["content"] == "子代理改写了说明文件。", answer.json()
    assert readme.read_text() == "子代理写的"
    child = [r for r in agent_requests(fake) if "<fork-boilerplate>" in r.prompt_text]
    no_fork = json.loads(tool_messages(child[-1])[-1]["content"])
    assert no_fork["code"] == "no_fork"  # a sub-agent asking for another fork
    parent = [r for r in agent_requests(fake) if "<fork-boilerplate>" not in r.prompt_text]
    summary = json.loads(tool_messages(parent[-1])[-1]["content"])
    assert summary["status"] == "ok" and summary["summary"] == "子任务：已改写 README.txt。"


def test_a_concurrency_safe_call_starts_while_the_model_still_writes(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    def audit() -> list[Path]:  # the executor's log of this session's calls
        return list(system.state_dir.rglob("*earlystart*.jsonl"))

    def listed_already() -> bool:  # the executor ran file_list: its audit line is there
        return any('"file_list"' in path.read_text(encoding="utf-8") for path in audit())

    proposed = holding(
        tool_calls_reply(
            ("file_list", {"path": "."}), ("file_read", {"path": "README.txt"})
        ),
        listed_already,
    )
    fake.script(proposed, text_reply("列好也读好了。"))
    session = "sess_earlystart"
    fake.routes["智能助手 先列再读"] = "assistant_app"
    reply = system.say("智能助手 先列再读", session_id=session)
    assert reply["tasks"][0]["result"]["data"]["content"] == "列好也读好了。", reply
    assert proposed.held == [True]  # file_list ran before the model finished its turn
    lines = [
        json.loads(line)
        for path in audit()
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert [line["tool"] for line in lines].count("file_list") == 1  # not run again
    results = tool_messages(agent_requests(fake)[-1])
    assert "README.txt" in results[0]["content"]  # its result reached the model
