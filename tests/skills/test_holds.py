"""A skill's hold cannot be lifted: only the user's next request (the loop says so,
`POST /turns`) ends it; a call of an older or unknown turn is held to every hold in
force; a background sub-agent has a turn of its own, held to its parent's limits;
and the executor's check agrees with the agent loop's.

The executor is the real service (its Flask test client, the real sandbox); the loop
is the SDK's `AgentLoop` over a scripted model, its tools called through that service.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from aios_sdk.agent import _current
from aios_sdk.errors import ToolFailed
from aios_sdk.runtime import background
from aios_sdk.runtime.loop import AgentLoop
from aios_sdk.runtime.messages import Conversation
from aios_sdk.runtime.tools import ToolBox
from tests.executor.conftest import Harness
from tests.skills.conftest import call_in_turn, start_turn, wait_for, write_skill

HELD = "not_allowed_by_skill"
ARGS: dict[str, dict[str, Any]] = {
    "shell_exec": {"command": "true"},
    "file_read": {"path": "a.txt"},
    "file_list": {"path": "."},
    "run_command": {"command": "temp_convert -v 0"},
    "skill": {"name": "free"},
}
TOOLS = tuple(ARGS)


def skills(shared: Path, harness: Harness) -> None:
    """`greet` allows run_command; `scoped` four tools; `free` states no list."""
    for name, allowed in (
        ("greet", "[run_command]"),
        ("scoped", "[skill, task, run_command, file_read]"),
    ):
        write_skill(
            shared / name,
            "SKILL.md",
            f"---\nname: {name}\ndescription: {name}\nallowed-tools: {allowed}\n---\nGo.\n",
            executable=False,
        )
    write_skill(
        shared / "free",
        "SKILL.md",
        "---\nname: free\ndescription: States no list\n---\nAnything.\n",
        executable=False,
    )
    (harness.workdir / "a.txt").write_text("A")

    def listed() -> set[str]:
        found = call_in_turn(harness, "search_skills", None, keyword="")
        return {s["name"] for s in found["result"]["skills"]}

    wait_for(lambda: {"greet", "scoped", "free"} <= listed())


def held_by_executor(harness: Harness, turn: str, tool: str) -> bool:
    return call_in_turn(harness, tool, turn, **ARGS[tool]).get("code") == HELD


def test_a_call_of_an_older_turn_does_not_lift_the_hold(
    skills_harness: Harness, shared: Path
) -> None:
    skills(shared, skills_harness)
    start_turn(skills_harness, "t1")
    start_turn(skills_harness, "t2")
    call_in_turn(skills_harness, "skill", "t2", name="greet")
    assert held_by_executor(skills_harness, "t2", "shell_exec")
    # a call with the older turn id (a background sub-agent that kept it)
    older = call_in_turn(skills_harness, "file_read", "t1", path="a.txt")
    assert held_by_executor(skills_harness, "t2", "shell_exec")  # still refused
    assert older["code"] == HELD  # held to the hold in force, not run unheld
    assert held_by_executor(skills_harness, "never-announced", "shell_exec")
    assert held_by_executor(skills_harness, "t2", "shell_exec")
    # the user's next request, which the loop announces, ends the hold
    start_turn(skills_harness, "t3")
    assert not held_by_executor(skills_harness, "t3", "file_read")


def test_a_background_sub_agents_turn_is_held_to_its_parents_limits(
    skills_harness: Harness, shared: Path
) -> None:
    skills(shared, skills_harness)
    start_turn(skills_harness, "p1")
    call_in_turn(skills_harness, "skill", "p1", name="scoped")
    child = "p1.0123456789abcdef"
    assert start_turn(skills_harness, child, parent="p1")["http_status"] == 200
    assert held_by_executor(skills_harness, child, "shell_exec")
    assert not held_by_executor(skills_harness, child, "file_read")
    # the user's next request ends the parent's hold, not the sub-agent's
    start_turn(skills_harness, "p2")
    assert not held_by_executor(skills_harness, "p2", "shell_exec")
    assert held_by_executor(skills_harness, child, "shell_exec")
    # a skill of its own narrows it further, never widens it
    call_in_turn(skills_harness, "skill", child, name="greet")
    assert held_by_executor(skills_harness, child, "file_read")
    assert not held_by_executor(skills_harness, child, "run_command")
    # a turn that is not its parent's sub-turn, or whose parent is a sub-agent's turn
    # not known here, is refused and held to nothing new
    for turn, parent in (
        ("p2-child", "p2"),
        ("elsewhere.0123456789abcdef", "p2"),
        ("p9.0123456789abcdef.0123456789abcdef", "p9.0123456789abcdef"),
    ):
        answer = start_turn(skills_harness, turn, parent=parent)
        assert answer["http_status"] == 400
        assert "parent_turn_id" in answer["error"]["message"]
    assert held_by_executor(skills_harness, "p9.0123456789abcdef", "file_read")


# ------------------------------------------------- the executor and the loop agree


def said(*calls: tuple[str, dict[str, Any]], text: str = "") -> Any:
    return SimpleNamespace(
        content=text,
        reasoning="",
        tool_calls=[
            SimpleNamespace(id=f"c{i}", name=name, arguments=json.dumps(args))
            for i, (name, args) in enumerate(calls)
        ],
        usage={},
        finish_reason="tool_calls" if calls else "stop",
    )


class Model:
    """Scripted turns: the parent's, and each background sub-agent's by its prompt."""

    available = True

    def __init__(self, scripts: dict[str, list[Any]]) -> None:
        self.scripts = scripts
        self.lock = threading.Lock()

    def turn(self, messages: Any, **kwargs: Any) -> Any:
        last = [m for m in messages if m.get("role") == "user"][-1]
        with self.lock:
            for key in ("ONE", "TWO"):
                if f"PROMPT-{key}" in str(last.get("content")):
                    return self.scripts[key].pop(0)
            return self.scripts["parent"].pop(0)

    def chat(self, *args: Any, **kwargs: Any) -> str:
        return ""

    def progress(self, *args: Any) -> None:
        pass


class ThroughExecutor:
    """An app whose tools run in the harness's executor, in the loop's turn."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness

    def available_tools(self) -> list[dict[str, Any]]:
        return [{"name": name, "input_schema": {"type": "object"}} for name in TOOLS]

    def call_tool(self, tool_name: str, **args: Any) -> Any:
        answer = call_in_turn(
            self.harness, tool_name, getattr(_current, "turn_id", None), **args
        )
        if answer["status"] != "ok":
            raise ToolFailed(answer.get("error") or "failed", code=answer.get("code"))
        return answer["result"]

    def start_turn(self, turn_id: str, parent_turn_id: str | None = None) -> None:
        answer = start_turn(self.harness, turn_id, parent=parent_turn_id)
        assert answer["http_status"] == 200, answer


def loop_of(model: Model, app: ThroughExecutor, conversation: Conversation) -> AgentLoop:
    return AgentLoop(
        llm=model,
        tools=ToolBox.from_agent(app),
        conversation=conversation,
        system_prompt="sys",
        tr=lambda zh, en: en,
        language="en-US",
        session_id="sess_turns",
    )


def test_the_executors_check_and_the_loops_agree(
    skills_harness: Harness, shared: Path
) -> None:
    skills(shared, skills_harness)
    model = Model(
        {
            "parent": [
                said(("skill", {"name": "scoped"})),
                said(
                    (
                        "task",
                        {"description": "d", "prompt": "PROMPT-ONE", "background": True},
                    )
                ),
                said(
                    (
                        "task",
                        {"description": "d", "prompt": "PROMPT-TWO", "background": True},
                    )
                ),
                said(text="started"),
                said(text="the next request, answered"),
            ],
            "ONE": [said(text="one done")],
            "TWO": [said(("skill", {"name": "greet"})), said(text="two done")],
        }
    )
    app = ThroughExecutor(skills_harness)
    parent = loop_of(model, app, Conversation())
    children: list[AgentLoop] = []
    make_child = parent._child

    def recorded(*args: Any, **kwargs: Any) -> AgentLoop:
        children.append(make_child(*args, **kwargs))
        return children[-1]

    parent._child = recorded  # type: ignore[method-assign]
    assert parent.start("first").kind == "answer"
    for task_id in parent.conversation.background:
        assert background.result(task_id, wait=30)["status"] == "ok"
    first = parent.conversation.turn_id
    rows: list[tuple[str, AgentLoop, set[str]]] = [
        ("the request that used `scoped`", parent, {"shell_exec", "file_list"})
    ]

    def agree(rows: list[tuple[str, AgentLoop, set[str]]]) -> None:
        for name, loop, refused in rows:
            turn = loop.conversation.turn_id
            for tool in TOOLS:
                by_loop = loop.tools.check("c", tool, "{}").code == HELD
                by_executor = held_by_executor(skills_harness, turn, tool)
                assert by_loop == by_executor == (tool in refused), (name, turn, tool)

    agree(rows)
    # the user's next request: a new loop on the same conversation, as an app runs it
    after = loop_of(model, app, parent.conversation)
    assert after.start("second").kind == "answer"
    one, two = children
    assert {one.conversation.turn_id, two.conversation.turn_id}.isdisjoint(
        {first, after.conversation.turn_id}
    )
    agree(
        [
            ("the next request, no skill", after, set()),
            ("a background sub-agent of `scoped`", one, {"shell_exec", "file_list"}),
            ("one that used `greet` too", two, set(TOOLS) - {"run_command"}),
        ]
    )
    # turns no loop has now: held to every hold in force (the sub-agents' narrowest)
    for turn in (first, "unknown", f"{after.conversation.turn_id}.0123456789abcdef"):
        for tool in TOOLS:
            expected = tool != "run_command" or "." in turn
            assert held_by_executor(skills_harness, turn, tool) == expected, (turn, tool)
