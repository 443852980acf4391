"""The SDK's agent runtime without processes: the loop over a scripted model double
and a recording agent — duplicate calls, proposal order, a question for the user
answered by a click, the caller's max_turns, the typed messages kept in state."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from aios_sdk.agent import CallScope, current_call, within_call
from aios_sdk.flows import Flows, Turn
from aios_sdk.runtime import background
from aios_sdk.runtime.flows import AgentFlows
from aios_sdk.runtime.loop import LoopSettings
from aios_sdk.runtime.messages import (
    PLACEHOLDER,
    AssistantMessage,
    Conversation,
    ToolMessage,
    ToolUseBlock,
    UserMessage,
)


def said(content: str = "", *calls: tuple[str, Any], reasoning: str = "") -> Any:
    return SimpleNamespace(
        content=content,
        reasoning=reasoning,
        tool_calls=[
            SimpleNamespace(id=f"c{i}", name=name, arguments=json.dumps(args))
            for i, (name, args) in enumerate(calls)
        ],
        usage={},
        finish_reason="tool_calls" if calls else "stop",
    )


class Model:
    available = True

    def __init__(self, *turns: Any) -> None:
        self.turns = list(turns)
        self.seen: list[list[dict[str, Any]]] = []
        self.offered: list[list[dict[str, Any]]] = []

    def turn(self, messages: Any, **kwargs: Any) -> Any:
        self.seen.append([dict(m) for m in messages])
        self.offered.append(list(kwargs.get("tools") or []))
        return self.turns.pop(0)

    def progress(self, *args: Any) -> None:
        pass


class Agent:
    name = "测试"
    role_prompt = "role"

    def __init__(self, model: Model, **settings: Any) -> None:
        self.llm, self.settings = model, settings
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def available_tools(self) -> list[dict[str, Any]]:
        return [
            {"name": n, "description": n, "input_schema": {"type": "object"}}
            for n in ("file_list", "file_read", "file_write")
        ]

    def call_tool(self, name: str, **args: Any) -> Any:
        self.calls.append((name, args))
        return {"files": [], "name": name}

    def run_steps(self, steps: list[dict[str, Any]]) -> dict[str, Any]:
        for step in steps:
            self.calls.append((step["tool"], step["args"]))
        return {
            f"step_{s['step_id']}": {"status": "ok", "result": s["tool"]} for s in steps
        }

    def plan_steps(self, steps: list[dict[str, Any]], message: str = "") -> dict[str, Any]:
        return {"status": "ok", "view_type": "loading", "data": {}, "steps": steps}


def test_a_call_proposed_twice_in_one_message_runs_once() -> None:
    model = Model(
        said("", ("file_list", {"path": "."}), ("file_list", {"path": "."})), said("ok")
    )
    agent = Agent(model)
    reply = AgentFlows(agent).handle("list", {"cwd_state": {}})
    assert reply["data"]["content"] == "ok"
    assert agent.calls == [("file_list", {"path": "."})]
    results = [m for m in model.seen[1] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["c0", "c1"]
    assert results[0]["content"] == results[1]["content"]


def test_a_read_after_a_write_that_waits_waits_with_it_in_order() -> None:
    model = Model(
        said(
            "",
            ("file_write", {"path": "a.txt", "content": "x"}),
            ("file_read", {"path": "a.txt"}),
            ("file_write", {"path": "a.txt", "content": "x"}),
        ),
        said("done"),
    )
    agent = Agent(model)
    plan = AgentFlows(agent).handle("write then read", {"cwd_state": {}})
    assert [s["tool"] for s in plan["steps"]] == ["file_write", "file_read"]
    assert agent.calls == []  # the read did not run before the write
    results = {
        f"step_{s['step_id']}": {"status": "ok", "result": "r"} for s in plan["steps"]
    }
    done = AgentFlows(agent).handle(
        "write then read", {"cwd_state": plan["state"], "tool_results": results}
    )
    assert done["data"]["content"] == "done"
    tools = [m for m in model.seen[1] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["c0", "c1", "c2"]
    assert all(m["content"] == "r" for m in tools)  # the duplicate write shares its result


def test_a_question_waits_and_a_click_answers_it() -> None:
    model = Model(
        said("", ("ask_user", {"question": "哪个文件？", "choices": ["a.txt", "b.txt"]})),
        said("读了 b.txt。", reasoning="用户选了 b"),
    )
    agent = Agent(model)
    asked = AgentFlows(agent).handle("读一个文件", {"cwd_state": {}})
    assert asked["data"]["content"] == "哪个文件？"
    assert asked["awaiting_user_input"] == {
        "question": "哪个文件？",
        "choices": ["a.txt", "b.txt"],
    }
    buttons = [a for a in asked["actions"] if a["type"] == "button"]
    assert [(b["label"], b["params"]) for b in buttons] == [
        ("a.txt", {"answer": "a.txt"}),
        ("b.txt", {"answer": "b.txt"}),
    ]
    assert any(
        a["type"] == "input" and a["action_id"] == "answer" for a in asked["actions"]
    )
    assert AgentFlows.owns(
        agent, None, {"cwd_state": asked["state"]}, {"action_id": "answer"}
    )
    answered = AgentFlows(agent).handle(
        None,
        {"cwd_state": asked["state"]},
        {"action_id": "answer", "params": {"answer": "b.txt"}},
    )
    assert answered["data"]["content"] == "读了 b.txt。"
    assert answered["reasoning"] == "用户选了 b"
    result = [m for m in model.seen[1] if m["role"] == "tool"][-1]
    assert json.loads(result["content"]) == {"answer": "b.txt"}
    assert "用户选了 b" not in json.dumps(
        answered["state"]["model_messages"], ensure_ascii=False
    )
    shown = Conversation.from_state(answered["state"]).messages
    assert [type(m).__name__ for m in shown] == [
        "UserMessage",
        "AssistantMessage",
        "AssistantMessage",  # the question as it was shown
        "ToolMessage",  # the answer as the call's result
        "UserMessage",  # the answer as the user gave it
        "AssistantMessage",
    ]


class OwnFlows(Flows):
    """An app's own flows that hand what they do not understand to the loop."""

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        return self.hand_to_loop(turn) or {}


def test_a_question_left_unanswered_when_the_apps_flows_start_the_loop_says_so() -> None:
    """The loop asks the user; the app's own flows start the loop on the next thing
    said: the question's placeholder becomes a result saying it was not answered."""
    model = Model(said("", ("ask_user", {"question": "哪个文件？"})), said("好的。"))
    agent = Agent(model)
    asked = AgentFlows(agent).handle("读一个文件", {"cwd_state": {}})
    assert asked["state"]["pending"]["kind"] == "question"
    reply = OwnFlows(agent).handle("列出文件", {"cwd_state": asked["state"]})
    assert reply["data"]["content"] == "好的。"
    assert reply["state"]["pending"] is None
    [result] = [m for m in model.seen[1] if m["role"] == "tool"]
    assert json.loads(result["content"])["code"] == "not_answered"
    assert "not answered" in json.loads(result["content"])["error"]
    assert PLACEHOLDER not in json.dumps(reply["state"]["model_messages"])
    shown = Conversation.from_state(reply["state"]).messages
    [kept] = [m for m in shown if isinstance(m, ToolMessage)]
    assert kept.result.name == "ask_user" and kept.result.is_error


def test_typed_messages_join_calls_and_results_by_id_and_survive_state() -> None:
    conversation = Conversation()
    conversation.ensure_system("s")
    conversation.add_user("hi")
    asker = conversation.add_assistant(
        "", [{"id": "x1", "name": "file_list", "arguments": "{}"}], reasoning="r"
    ).id
    conversation.add_tool_result("x1", "file_list", "[]", ok=True, asked_by=asker)
    again = Conversation.from_state(json.loads(json.dumps(conversation.to_state())))
    user, assistant, tool = again.messages
    assert isinstance(user, UserMessage) and isinstance(assistant, AssistantMessage)
    assert isinstance(tool, ToolMessage)
    assert assistant.tool_uses == [ToolUseBlock("x1", "file_list", "{}")]
    assert tool.result.tool_use_id == assistant.tool_uses[0].id
    assert assistant.reasoning == "r"
    assert [m["role"] for m in again.model_messages] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]
    assert "reasoning" not in json.dumps(again.model_messages)


def test_the_callers_max_turns_lowers_the_cap_but_never_raises_it() -> None:
    settings = LoopSettings(max_turns=6)
    assert settings.within(2).max_turns == 2
    assert settings.within(50).max_turns == 6
    assert settings.within(None) is settings and settings.within("x") is settings


class SkillAgent(Agent):
    def available_tools(self) -> list[dict[str, Any]]:
        return [*super().available_tools(), {"name": "skill"}, {"name": "run_command"}]

    def call_tool(self, tool_name: str, **args: Any) -> Any:
        self.calls.append((tool_name, args))
        if tool_name == "skill":
            return {"name": "greet", "steps": "Greet.", "allowed_tools": ["run_command"]}
        return {"ok": True}


def test_a_skills_allowed_tools_hold_for_the_rest_of_the_request() -> None:
    from aios_sdk.agent import _current

    seen_turns: list[str | None] = []
    model = Model(
        said("", ("skill", {"name": "greet", "arguments": "Ann"})),
        said("", ("file_read", {"path": "a.txt"}), ("run_command", {"command": "x"})),
        said("done"),
        said("next request"),
    )
    agent = SkillAgent(model)
    original = agent.call_tool

    def recording(tool_name: str, **args: Any) -> Any:
        seen_turns.append(getattr(_current, "turn_id", None))
        return original(tool_name, **args)

    agent.call_tool = recording  # type: ignore[method-assign]
    reply = AgentFlows(agent).handle("greet Ann", {"cwd_state": {}})
    assert reply["data"]["content"] == "done"
    refused = [m for m in model.seen[2] if m["role"] == "tool"][-2]  # the file_read
    assert json.loads(refused["content"])["code"] == "not_allowed_by_skill"
    assert [name for name, _ in agent.calls] == ["skill", "run_command"]
    assert len(set(seen_turns)) == 1 and seen_turns[0]  # one request, one turn id
    offered = {t["function"]["name"] for t in model.offered[1]}
    assert offered == {"run_command", "ask_user"}  # only the skill's tools (no fork)
    again = AgentFlows(agent).handle("something else", {"cwd_state": reply["state"]})
    assert again["data"]["content"] == "next request"
    assert again["state"]["allowed_tools"] is None  # a new request: no limit
    assert again["state"]["turn_id"] != reply["state"]["turn_id"]


def test_tools_that_cannot_run_are_left_out_and_the_providers_prompt_is_kept(
    monkeypatch: Any,
) -> None:
    from aios_sdk import AIOSAgent
    from aios_sdk.client import ExecutorClient

    class Probe(AIOSAgent):
        name, description, icon, role_prompt = "p", "d", "i", "r"

        def handle(self, instruction: Any, context: Any, action_request: Any = None) -> Any:
            return {}

    listing = [
        {"name": "file_read", "available": True},
        {"name": "mcp_search", "available": False, "unavailable_reason": "not started"},
    ]
    monkeypatch.setenv("AIOS_EXECUTOR_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AIOS_TOKEN", "t")
    monkeypatch.setattr(
        ExecutorClient, "listing", lambda self, app_id=None, **user: (listing, "Skills: …")
    )
    tools, prompt = Probe().tool_listing()
    assert [t["name"] for t in tools] == ["file_read"] and prompt == "Skills: …"
    assert [t["name"] for t in Probe().available_tools()] == ["file_read"]


def test_a_background_sub_agent_serves_the_user_its_parent_served() -> None:
    """A background task's tool calls keep the parent call's session, turn and user
    (so they stay in that user's sandbox), and only that user's calls can read it."""
    seen: list[CallScope] = []
    alice = CallScope("sess_a", "turn_a", "alice")
    with within_call(alice):
        background.start("t-1", lambda: seen.append(current_call()) or {"status": "ok"})
        assert background.result("t-1", wait=5)["status"] == "ok"
    assert seen == [alice]
    with within_call(CallScope("sess_b", "turn_b", "bob")):
        assert background.result("t-1") is None  # another user's task is not known
    assert current_call() == CallScope()  # the scope ends with the block


class ForkSkillAgent(SkillAgent):
    def call_tool(self, tool_name: str, **args: Any) -> Any:
        from aios_sdk.agent import _current

        self.calls.append((tool_name, {**args, "turn": getattr(_current, "turn_id", None)}))
        if tool_name == "skill":
            return {
                "name": "greet",
                "steps": "Greet Ann with run_command.",
                "allowed_tools": ["run_command"],
                "context": "fork",
                "sub_turn_id": "the-sub-turn",
            }
        return {"ok": True}


def test_a_skill_marked_fork_runs_as_a_sub_agent_held_to_its_tools() -> None:
    model = Model(
        said("", ("skill", {"name": "greet"})),  # the parent uses the skill
        said("", ("file_read", {"path": "a.txt"}), ("run_command", {"command": "x"})),
        said("greeted Ann"),  # the sub-agent's report
        said("", ("file_read", {"path": "a.txt"})),  # the parent is not held
        said("done"),
    )
    agent = ForkSkillAgent(model)
    reply = AgentFlows(agent).handle("greet Ann", {"cwd_state": {}})
    assert reply["data"]["content"] == "done"
    child_first = model.seen[1]
    assert "Greet Ann with run_command." in child_first[-1]["content"]
    assert not any(m.get("tool_calls") for m in child_first)  # its own context
    refused = [m for m in model.seen[2] if m["role"] == "tool"][0]  # the child's read
    assert json.loads(refused["content"])["code"] == "not_allowed_by_skill"
    offered = {t["function"]["name"] for t in model.offered[1]}
    assert "file_read" not in offered and "run_command" in offered
    ran = [(name, args["turn"]) for name, args in agent.calls if name != "file_write"]
    assert ran[1] == ("run_command", "the-sub-turn")  # its calls: the skill's turn
    parent_turn = ran[0][1]
    assert ran[2] == ("file_read", parent_turn) and parent_turn != "the-sub-turn"
    result = [m for m in model.seen[3] if m["role"] == "tool"][-1]
    assert json.loads(result["content"])["summary"] == "greeted Ann"
    assert reply["state"]["allowed_tools"] is None  # the parent's tools stay its own


class RiskyForkSkillAgent(ForkSkillAgent):
    """A skill marked fork whose allowed tools include one that needs the user's yes."""

    def call_tool(self, tool_name: str, **args: Any) -> Any:
        used = super().call_tool(tool_name, **args)
        if tool_name == "skill":
            return {**used, "allowed_tools": ["file_write", "run_command"]}
        return used


def paused_by_the_skills_sub_agent(agent: Agent) -> dict[str, Any]:
    """The parent's reply when the forked sub-agent's write waits for the user: a plan
    for the controller, its state as the session keeps it (JSON)."""
    plan = AgentFlows(agent).handle("tidy", {"cwd_state": {}})
    assert [(s["tool"], s["args"]) for s in plan.get("steps", [])] == [
        ("file_write", {"path": "a.txt", "content": "x"})
    ], plan
    assert [name for name, _ in agent.calls] == ["skill"]  # the write waits
    return {**plan, "state": json.loads(json.dumps(plan["state"]))}


def test_a_skills_sub_agents_risky_call_waits_for_the_yes_and_runs_in_its_turn() -> None:
    model = Model(
        said("", ("skill", {"name": "greet"})),  # the parent uses the skill
        said("", ("file_write", {"path": "a.txt", "content": "x"})),  # waits
        said(  # after the yes: a tool outside the skill's list, a fork, an allowed one
            "",
            ("file_read", {"path": "a.txt"}),
            ("task", {"prompt": "again"}),
            ("run_command", {"command": "x"}),
        ),
        said("wrote a.txt"),  # the sub-agent's report
        said("done"),  # the parent's answer
    )
    agent = RiskyForkSkillAgent(model)
    plan = paused_by_the_skills_sub_agent(agent)
    (step,) = plan["steps"]
    assert step["turn_id"] == "the-sub-turn"  # the executor holds it there after the yes
    results = {f"step_{step['step_id']}": {"status": "ok", "result": {"size": 1}}}
    reply = AgentFlows(agent).handle(
        "tidy", {"cwd_state": plan["state"], "tool_results": results}
    )
    assert reply["data"]["content"] == "done"
    written = [m for m in model.seen[2] if m["role"] == "tool"][-1]
    assert json.loads(written["content"]) == {"size": 1}  # the sub-agent read its result
    after = {m["tool_call_id"]: m["content"] for m in model.seen[3] if m["role"] == "tool"}
    assert json.loads(after["c0"])["code"] == "not_allowed_by_skill"  # still held
    assert json.loads(after["c1"])["code"] == "no_fork"  # a fork from a fork
    ran = [(name, args["turn"]) for name, args in agent.calls]
    parent_turn = plan["state"]["turn_id"]
    assert ran[0] == ("skill", parent_turn) and parent_turn != "the-sub-turn"
    assert ran[1] == ("run_command", "the-sub-turn")  # in the skill's own turn
    assert ran[2:] == [("file_write", parent_turn)]  # the parent writes its output
    summary = json.loads([m for m in model.seen[4] if m["role"] == "tool"][-1]["content"])
    assert summary["status"] == "ok" and summary["summary"] == "wrote a.txt"
    assert "denied_by_user" not in summary
    assert reply["state"]["pending"] is None and reply["state"]["allowed_tools"] is None


def test_a_skills_sub_agents_risky_call_denied_runs_nothing_and_both_see_it() -> None:
    model = Model(
        said("", ("skill", {"name": "greet"})),
        said("", ("file_write", {"path": "a.txt", "content": "x"})),
        said("the user said no: a.txt is unchanged"),  # the sub-agent's report
        said("not done: you said no"),
    )
    agent = RiskyForkSkillAgent(model)
    plan = paused_by_the_skills_sub_agent(agent)
    (step,) = plan["steps"]
    denied = {"status": "error", "error": "you said no", "code": "denied_by_user"}
    reply = AgentFlows(agent).handle(
        "tidy",
        {"cwd_state": plan["state"], "tool_results": {f"step_{step['step_id']}": denied}},
    )
    assert reply["data"]["content"] == "not done: you said no"
    written = [args["path"] for name, args in agent.calls if name == "file_write"]
    assert [name for name, _ in agent.calls] == ["skill", "file_write"]
    assert written[0].startswith("task-outputs/skill-greet-")  # only the report
    refusal = json.loads([m for m in model.seen[2] if m["role"] == "tool"][-1]["content"])
    assert refusal == {"error": "you said no", "code": "denied_by_user"}
    summary = json.loads([m for m in model.seen[3] if m["role"] == "tool"][-1]["content"])
    assert summary["summary"] == "the user said no: a.txt is unchanged"
    assert summary["denied_by_user"] == ["you said no"]  # whatever the report says


def test_a_new_message_instead_of_the_yes_ends_the_skills_waiting_call() -> None:
    model = Model(
        said("", ("skill", {"name": "greet"})),
        said("", ("file_write", {"path": "a.txt", "content": "x"})),
        said("something else, then"),
    )
    agent = RiskyForkSkillAgent(model)
    plan = paused_by_the_skills_sub_agent(agent)
    reply = AgentFlows(agent).handle("never mind", {"cwd_state": plan["state"]})
    assert reply["data"]["content"] == "something else, then"
    skill_result = [m for m in model.seen[2] if m["role"] == "tool"][-1]
    assert json.loads(skill_result["content"])["code"] == "not_confirmed"
    assert [name for name, _ in agent.calls] == ["skill"]


def confirmed(agent: Agent, reply: dict[str, Any]) -> dict[str, Any]:
    """The next reply after the user's yes to `reply`'s plan (every step ran)."""
    results = {
        f"step_{s['step_id']}": {"status": "ok", "result": {"size": 1}}
        for s in reply["steps"]
    }
    state = json.loads(json.dumps(reply["state"]))
    return AgentFlows(agent).handle("tidy", {"cwd_state": state, "tool_results": results})


def test_a_skills_sub_agent_pauses_count_among_the_requests_plans() -> None:
    write = ("file_write", {"path": "a.txt", "content": "x"})
    model = Model(
        said("", write),  # the parent's own write waits: the request's first plan
        said("", ("skill", {"name": "greet"})),
        said("", ("file_write", {"path": "b.txt", "content": "x"})),  # the second
        said("", ("file_write", {"path": "c.txt", "content": "x"})),  # the third
        said("", ("file_write", {"path": "d.txt", "content": "x"})),  # one too many
        said("stopped at the limit"),
        said("done"),
    )
    agent = RiskyForkSkillAgent(model)
    reply = AgentFlows(agent).handle("tidy", {"cwd_state": {}})
    for path in ("a.txt", "b.txt", "c.txt"):
        assert [s["args"]["path"] for s in reply.get("steps", [])] == [path], reply
        reply = confirmed(agent, reply)
    assert reply["data"]["content"] == "done"  # never a plan the controller refuses
    refused = [m for m in model.seen[5] if m["role"] == "tool"][-1]
    assert json.loads(refused["content"])["code"] == "round_limit"


def test_a_skill_that_waited_behind_a_call_for_the_users_yes_is_not_followed() -> None:
    model = Model(
        said(
            "", ("file_write", {"path": "a.txt", "content": "x"}), ("skill", {"name": "g"})
        ),
        said("done"),
    )
    agent = RiskyForkSkillAgent(model)
    plan = AgentFlows(agent).handle("tidy", {"cwd_state": {}})
    assert [s["tool"] for s in plan["steps"]] == ["file_write", "skill"]
    results = {
        f"step_{plan['steps'][0]['step_id']}": {"status": "ok", "result": {"size": 1}},
        f"step_{plan['steps'][1]['step_id']}": {
            "status": "ok",
            "result": {"name": "g", "steps": "Do it.", "allowed_tools": ["run_command"]},
        },
    }
    reply = AgentFlows(agent).handle(
        "tidy", {"cwd_state": plan["state"], "tool_results": results}
    )
    assert reply["data"]["content"] == "done"
    used = [m for m in model.seen[1] if m["role"] == "tool"][-1]
    assert "Do it." not in used["content"]  # its steps are not given unheld
    assert json.loads(used["content"])["code"] == "not_run"


def test_a_sub_agents_summary_names_only_its_own_refused_calls() -> None:
    model = Model(
        said("", ("file_write", {"path": "a.txt", "content": "x"})),  # the parent's
        said("", ("task", {"prompt": "look around"})),  # after the user's no
        said("looked around"),  # the sub-agent, on a fork of that context
        said("done"),
    )
    agent = Agent(model)
    plan = AgentFlows(agent).handle("write", {"cwd_state": {}})
    (step,) = plan["steps"]
    denied = {"status": "error", "error": "you said no", "code": "denied_by_user"}
    reply = AgentFlows(agent).handle(
        "write",
        {"cwd_state": plan["state"], "tool_results": {f"step_{step['step_id']}": denied}},
    )
    assert reply["data"]["content"] == "done"
    assert "you said no" in json.dumps(model.seen[2])  # the fork sees the parent's no
    summary = json.loads([m for m in model.seen[3] if m["role"] == "tool"][-1]["content"])
    assert summary["summary"] == "looked around" and "denied_by_user" not in summary
