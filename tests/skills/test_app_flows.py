"""技能's flows over a real executor (the skills provider, the sandbox), without processes.

The agent double's `call_tool` is app1 calling the executor service with its own
token, so `install_skill` is refused there as for a real app and must be planned
(the controller asks the user: tests/skills/test_system.py). The model double
answers what a model would.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from aios_protocol.errors import ToolFailed
from apps.skills_app.flows import SkillsFlows
from tests.apps.doubles import PlanningAgent, failed, ok
from tests.executor.conftest import APP_TOKEN, Harness
from tests.skills.conftest import wait_for, write_skill


class ExecutorAgent(PlanningAgent):
    """`call_tool` reaches the real executor as app1."""

    app_id = "skills_app"

    def __init__(self, harness: Harness, llm: Any = None) -> None:
        super().__init__(llm=llm)
        self.harness = harness

    def call_tool(self, tool_name: str, **args: Any) -> Any:
        self.calls.append((tool_name, args))
        answer = self.harness.client.post(
            "/call",
            json={"tool": tool_name, "args": args},
            headers={"X-AIOS-Token": APP_TOKEN},
        ).get_json()
        if answer["status"] != "ok":
            raise ToolFailed(
                answer["error"], code=answer["code"], detail=answer.get("result")
            )
        return answer["result"]


class ModelDouble:
    available = True

    def __init__(self, args: list[str] | None = None, steps: list[dict] | None = None):
        self.args, self.steps = args, steps
        self.asked: list[Any] = []

    def chat(self, prompt: Any, json: bool = False, **kw: Any) -> Any:
        self.asked.append(prompt)
        return {"args": self.args}

    def plan_steps(self, instruction: str, context: Any = None, **kw: Any) -> list[dict]:
        self.asked.append((instruction, context))
        return list(self.steps or [])


def flows(harness: Harness, llm: Any = None) -> tuple[SkillsFlows, ExecutorAgent]:
    agent = ExecutorAgent(harness, llm)
    return SkillsFlows(agent), agent


def widget(reply: dict, title: str) -> dict:
    return next(w for w in reply["data"]["widgets"] if w["title"] == title)


def test_the_window_lists_every_skill_with_kind_source_and_summary(
    skills_harness: Harness,
) -> None:
    app, _ = flows(skills_harness)
    reply = app.handle("", {})
    assert reply["view_type"] == "table" and reply["data"]["columns"] == [
        "名称",
        "类型",
        "来源",
        "说明",
    ]
    rows = {r[0]: r for r in reply["data"]["rows"]}
    assert rows["temp_convert"][1:3] == ["可执行", "共享"]
    assert rows["code_review"][1] == "Markdown" and rows["code_review"][3].startswith(
        "代码审查指南"
    )
    ids = {a["action_id"] for a in reply["actions"]}
    assert {"show", "install", "reload"} <= ids
    assert app.handle("list my skills", {})["view_type"] == "table"
    # a question about the skills (the router gives it here) is answered by the list
    for said in ("介绍一下技能", "tell me about my skills", "tell me about the skills app"):
        listed = app.handle(said, {})
        assert listed["view_type"] == "table" and listed["message"].startswith("共有"), said
    assert "已重新加载" in app.handle("重新加载技能", {})["message"]


def test_an_instruction_that_says_it_all_runs_the_skill_and_answers_first(
    skills_harness: Harness,
) -> None:
    """The one number said fills --value, 华氏 names --to f; the
    skill runs as 运行 runs it, the answer first, the help folded, the form kept."""
    app, agent = flows(skills_harness)
    reply = app.handle("把30摄氏度换算成华氏度", {})
    assert reply["view_type"] == "dashboard" and reply["state"] == {"skill": "temp_convert"}
    assert reply["message"] == "30 °C = 86.0 °F" and "notice" not in reply
    output, about, help_ = reply["data"]["widgets"]
    assert output["title"] == "输出" and output["data"]["code"] == "30 °C = 86.0 °F"
    assert about["title"] == "temp_convert · 可执行 · 共享" and "folded" not in about
    assert help_["title"] == "使用说明" and help_["folded"] is True
    assert "--value" in help_["data"]["code"]
    assert agent.calls == [
        ("search_skills", {"keyword": "把30摄氏度换算成华氏度"}),
        (
            "run_command",
            {
                "command": ["temp_convert", "--value", "30", "--to", "f"],
                "language": "zh-CN",
            },
        ),
    ]
    (run,) = [a for a in reply["actions"] if a["action_id"] == "run"]
    assert {f["name"]: f["value"] for f in run["fields"]} == {"value": 30, "to": "f"}
    # the user changes the form and presses 运行: the same answer first
    ran = app.handle(
        None,
        {"cwd_state": reply["state"]},
        {"action_id": "run", "form_values": {"value": 100, "to": "f"}},
    )
    assert ran["message"] == "100 °C = 212.0 °F"
    assert ran["data"]["widgets"][0] == {
        **output,
        "data": {**output["data"], "code": ran["message"]},
    }
    failed_run = app.handle(
        None,
        {"cwd_state": reply["state"]},
        {"action_id": "run", "form_values": {"value": -900, "to": "f"}},
    )
    assert failed_run["notice"] == "error"
    assert (
        failed_run["message"]
        == "没能完成：技能「temp_convert」运行出错（参数错误或执行失败）。"
    )
    assert widget(failed_run, "输出")["data"]["code"].endswith(
        "退出码 1（参数错误或执行失败）"
    )


def test_a_skill_that_exits_non_zero_is_not_done_and_says_so(
    skills_harness: Harness,
) -> None:
    """The shipped text_stats run without a file exits 1: the answer says in the
    user's language that it was not done, the desktop shows it as an error (its
    `notice`), and the exit code and stderr are the folded `detail`; the form and
    the output stay to fix it."""
    app, agent = flows(skills_harness)
    for said, context, plain, output, stderr in (
        (
            "统计一下文字",
            {},
            "没能完成：技能「text_stats」运行出错（参数错误或执行失败）。",
            "输出",
            "错误: 需要 -t TEXT 或 -f FILE",
        ),
        (
            "count the words",
            EN,
            'Not done: the skill "text_stats" failed (bad arguments or a general failure).',
            "Output",
            "error: -t TEXT or -f FILE is needed",  # the skill ran with the user's LANG
        ),
    ):
        reply = app.handle(said, context)
        assert agent.calls[-1][0] == "run_command"
        assert agent.calls[-1][1]["command"] == ["text_stats"]
        assert reply["message"] == plain
        assert reply["notice"] == "error"  # the desktop's replyLevel: not a success
        assert reply["detail"] == f"exit code 1\nstderr:\n{stderr}"
        assert stderr in widget(reply, output)["data"]["code"]
        assert any(a["action_id"] == "run" for a in reply["actions"])


@pytest.mark.parametrize(
    ("said", "context", "text", "answer", "output"),
    [
        (
            "统计一下文字：今天天气很好，我们去公园",
            {},
            "今天天气很好，我们去公园",
            "行数: 1，词数: 11，字符数: 12",
            "输出",
        ),
        (
            "count the words: the quick brown fox",
            {"language": "en-US"},
            "the quick brown fox",
            "lines: 1; words: 4; characters: 19",
            "Output",
        ),
    ],
)
def test_a_text_given_in_the_request_is_the_text_counted(
    skills_harness: Harness,
    said: str,
    context: dict[str, Any],
    text: str,
    answer: str,
    output: str,
) -> None:
    """The words after the colon are what text_stats counts (its --text option), in
    the reader's language; a number inside them is the text's, not an option's."""
    app, agent = flows(skills_harness)
    reply = app.handle(said, context)
    assert agent.calls[-1] == (
        "run_command",
        {
            "command": ["text_stats", "--text", text],
            "language": context.get("language", "zh-CN"),
        },
    )
    assert reply["message"] == answer and "notice" not in reply
    assert widget(reply, output)["data"]["code"] == answer.replace("，", "\n").replace(
        "; ", "\n"
    )
    (run,) = [a for a in reply["actions"] if a["action_id"] == "run"]
    assert {f["name"]: f.get("value") for f in run["fields"]}["text"] == text
    numbered = app.handle("统计文字「我有3个苹果」", {})
    assert agent.calls[-1][1]["command"] == ["text_stats", "--text", "我有3个苹果"]
    assert numbered["message"] == "行数: 1，词数: 6，字符数: 6"  # 3 is a word


NOTES = "今天天气很好\nhello world\n"


@pytest.mark.parametrize(
    ("said", "language", "answer"),
    [
        ("统计一下notes.txt的行数和字数", "zh-CN", "行数: 2，词数: 8，字符数: 19"),
        (
            "count the lines and words of notes.txt",
            "en-US",
            "lines: 2; words: 8; characters: 19",
        ),
    ],
)
def test_a_file_named_in_the_request_is_the_file_counted(
    skills_harness: Harness, said: str, language: str, answer: str
) -> None:
    """A word with an extension that is a file of the workspace fills text_stats's
    -f: it counts that file (it ran without -f and said it needs a text or a file)."""
    (skills_harness.workdir / "notes.txt").write_text(NOTES, encoding="utf-8")
    app, agent = flows(skills_harness)
    context = {"language": language, "workdir": str(skills_harness.workdir)}
    reply = app.handle(said, context)
    assert agent.calls[-1] == (
        "run_command",
        {"command": ["text_stats", "-f", "notes.txt"], "language": language},
    )
    assert reply["message"] == answer and "notice" not in reply
    (run,) = [a for a in reply["actions"] if a["action_id"] == "run"]
    assert {f["name"]: f.get("value") for f in run["fields"]}["f"] == "notes.txt"


@pytest.mark.parametrize(
    ("said", "language", "plain"),
    [
        (
            "统计一下todo.txt的行数和字数",
            "zh-CN",
            "工作区里没有文件「todo.txt」，请检查文件名后点运行。",
        ),
        (
            "count the lines and words of todo.txt",
            "en-US",
            'There is no file "todo.txt" in the workspace; check its name and press Run.',
        ),
    ],
)
def test_a_file_named_that_is_not_there_is_said_by_its_name(
    skills_harness: Harness, said: str, language: str, plain: str
) -> None:
    """Nothing runs; the answer names the file looked for, as a failure, and the
    form holds the name to correct."""
    app, agent = flows(skills_harness)
    context = {"language": language, "workdir": str(skills_harness.workdir)}
    reply = app.handle(said, context)
    assert [call for call, _ in agent.calls] == ["search_skills"]
    assert reply["message"] == plain and reply["notice"] == "error"
    (run,) = [a for a in reply["actions"] if a["action_id"] == "run"]
    assert {f["name"]: f.get("value") for f in run["fields"]}["f"] == "todo.txt"


def test_an_instruction_that_leaves_doubt_shows_the_form_and_runs_nothing(
    skills_harness: Harness,
) -> None:
    app, agent = flows(skills_harness)
    for said, left in (
        ("把30或40摄氏度换算成华氏度", "温度数值"),  # which number?
        ("把摄氏度换算成华氏度", "温度数值"),  # no number
        ("30摄氏度换算", "目标单位 f 或 c (默认 f)"),  # to what?
    ):
        agent.calls.clear()
        reply = app.handle(said, {})
        assert reply["message"] == f"找到技能「temp_convert」：请填写「{left}」后点运行"
        assert reply["notice"] == "info"  # a question, not a result
        assert [c[0] for c in agent.calls] == ["search_skills"]  # nothing ran
        assert [w["title"] for w in reply["data"]["widgets"]] == [
            "temp_convert · 可执行 · 共享",
            "使用说明",
        ]
    (run,) = [a for a in reply["actions"] if a["action_id"] == "run"]
    assert {f["name"]: f.get("value") for f in run["fields"]} == {"value": 30, "to": "f"}


def test_with_a_model_the_arguments_are_filled_and_it_runs_in_one_round(
    skills_harness: Harness,
) -> None:
    model = ModelDouble(args=["-v", "98.6", "-t", "c"])
    app, agent = flows(skills_harness, model)
    reply = app.handle("华氏九十八点六度是多少摄氏度", {})  # no digits: the model reads it
    assert "98.6 °F = 37.0 °C" in widget(reply, "输出")["data"]["code"]
    assert len(model.asked) == 1 and "--value" in model.asked[0]
    assert [c[0] for c in agent.calls].count("run_command") == 1


def test_with_a_model_a_markdown_skill_is_followed_with_the_atomic_tools(
    skills_harness: Harness,
) -> None:
    steps = [{"tool": "file_list", "args": {"path": "."}}]
    model = ModelDouble(steps=steps)
    app, _ = flows(skills_harness, model)
    planned = app.handle(
        "按代码审查指南的步骤审查",
        {"available_tools": ["file_list", "file_read", "search_skills"]},
    )
    assert planned["view_type"] == "loading" and planned["steps"][0]["tool"] == "file_list"
    instruction, context = model.asked[0]
    assert "代码审查指南" in instruction and "file_read" in instruction
    assert context["available_tools"] == ["file_read", "file_list"]  # atomic ones only
    shown = app.handle(
        "按代码审查指南的步骤审查",
        {"tool_results": {"step_1": ok("file_list", {"entries": []})}},
    )
    assert shown["view_type"] == "text" and "file_list" in shown["data"]["content"]
    # without a model: the steps are shown
    plain, _ = flows(skills_harness)
    shown = plain.handle("按代码审查指南的步骤审查", {})
    assert (
        shown["view_type"] == "dashboard"
        and "file_read" in widget(shown, "步骤")["data"]["code"]
    )


def test_the_code_review_skill_speaks_the_readers_language(
    skills_harness: Harness,
) -> None:
    """The shipped Markdown skill has its steps in each language: an English reader
    gets the English summary and steps (shown, and given to the model with the
    answer asked in English), a Chinese reader the Chinese ones."""
    cjk = re.compile(r"[\u4e00-\u9fff]")
    plain, _ = flows(skills_harness)
    english = plain.handle("follow the code review checklist", EN)
    assert english["message"] == 'The steps of the skill "code_review"'
    assert widget(english, "code_review · Markdown · shared")["data"]["content"] == (
        "Code review checklist"
    )
    steps = widget(english, "Steps")["data"]["code"]
    assert "Read the files to review with `file_read`" in steps
    assert not cjk.search(str(english["data"])), english["data"]
    chinese = plain.handle("按代码审查指南的步骤审查", {})
    assert chinese["message"] == "技能「code_review」的步骤如下"
    assert widget(chinese, "code_review · Markdown · 共享")["data"]["content"] == (
        "代码审查指南"
    )
    zh_steps = widget(chinese, "步骤")["data"]["code"]
    assert "用 `file_read` 读出要审查的文件" in zh_steps and "review" not in zh_steps
    model = ModelDouble(steps=[{"tool": "file_list", "args": {"path": "."}}])
    app, _ = flows(skills_harness, model)
    app.handle("follow the code review checklist", {**EN, "available_tools": ["file_read"]})
    instruction, _context = model.asked[0]
    assert "answering in English" in instruction and steps in instruction
    assert not cjk.search(instruction), instruction


def test_install_is_planned_for_the_users_yes_and_its_outcome_shown(
    skills_harness: Harness,
) -> None:
    app, _ = flows(skills_harness)
    planned = app.handle("安装技能 hello.py", {})
    assert planned["view_type"] == "loading"
    assert planned["steps"] == [
        {"step_id": 1, "tool": "install_skill", "args": {"path": "hello.py"}}
    ]
    clicked = app.handle(None, {}, {"action_id": "install", "value": "tools/x.sh"})
    assert clicked["steps"][0]["args"] == {"path": "tools/x.sh"}
    done = app.handle(
        "安装技能 hello.py",
        {
            "tool_results": {
                "step_1": ok(
                    "install_skill",
                    {
                        "name": "hello",
                        "kind": "executable",
                        "summary": "Say hello",
                        "replaced": False,
                    },
                )
            }
        },
    )
    assert (
        done["view_type"] == "table" and done["message"] == "已安装技能「hello」：Say hello"
    )
    denied = app.handle(
        "安装技能 hello.py",
        {"tool_results": {"step_1": failed("install_skill", "no", "denied_by_user")}},
    )
    assert denied["message"] == "好的，没有安装"
    # an app may not install by itself: the executor refuses the direct call
    try:
        ExecutorAgent(skills_harness).call_tool("install_skill", path="hello.py")
    except ToolFailed as exc:
        assert exc.code == "needs_confirmation"
    else:
        raise AssertionError("install_skill ran without the user's yes")


def test_nothing_matching_shows_the_window(skills_harness: Harness) -> None:
    app, _ = flows(skills_harness)
    reply = app.handle("qwxz zzyy", {})
    assert reply["view_type"] == "table" and "没有找到" in reply["message"]


EN = {"language": "en-US"}


def test_the_window_and_a_skills_form_in_english(skills_harness: Harness) -> None:
    app, _ = flows(skills_harness)
    window = app.handle("", EN)
    assert window["data"]["title"] == "Skills" and window["status"] == "ok"
    assert window["data"]["columns"] == ["Name", "Kind", "Source", "Summary"]
    rows = {r[0]: r for r in window["data"]["rows"]}
    assert rows["temp_convert"][1:3] == ["executable", "shared"]
    labels = {a["action_id"]: a["label"] for a in window["actions"]}
    assert labels == {
        "show": "Open",
        "reload": "Reload",
        "install": "Install a skill (a file or folder of the workspace)",
    }
    install = next(a for a in window["actions"] if a["action_id"] == "install")
    assert install["placeholder"] == "e.g. my_skill.py"
    assert window["message"].endswith(" skills")
    # the form of an executable skill: labels, the run button, the widgets' titles
    shown = app.handle("convert celsius to fahrenheit with temp_convert", EN)
    assert shown["data"]["title"] == 'Skill "temp_convert"'
    assert (
        shown["message"]
        == 'Found the skill "temp_convert": fill in "The number of degrees" and press Run'
    )
    (run,) = [a for a in shown["actions"] if a["action_id"] == "run"]
    assert run["label"] == "Run"
    # the skill's own English words, no flags, no Chinese
    assert [f["label"] for f in run["fields"]] == [
        "The number of degrees",
        "The unit to convert to, f or c (default f)",
    ]
    assert (
        rows["temp_convert"][3] == "Temperature converter - Celsius to Fahrenheit and back"
    )
    assert not any(re.search(r"[\u4e00-\u9fff]", row[3]) for row in rows.values()), rows
    assert not re.search(r"[\u4e00-\u9fff]", str(shown["data"])), shown["data"]
    assert [a["label"] for a in shown["actions"]] == ["Run", "Back to the list"]
    assert [w["title"] for w in shown["data"]["widgets"]][1] == "How to use it"
    ran = app.handle(
        None,
        {"cwd_state": shown["state"], **EN},
        {"action_id": "run", "form_values": {"value": 30, "to": "f"}},
    )
    assert ran["message"] == "30 °C = 86.0 °F" and "notice" not in ran
    assert [w["title"] for w in ran["data"]["widgets"]][0] == "Output"
    said = app.handle("convert 86 fahrenheit to celsius", EN)  # runs at once
    assert said["message"] == "86 °F = 30.0 °C"
    failed_run = app.handle(
        None,
        {"cwd_state": shown["state"], **EN},
        {"action_id": "run", "form_values": {"value": -900, "to": "f"}},
    )
    assert failed_run["notice"] == "error" and failed_run["detail"].startswith(
        "exit code 1"
    )
    assert failed_run["message"] == (
        'Not done: the skill "temp_convert" failed (bad arguments or a general failure).'
    )


BY_LANG = """#!/bin/sh
case "$LANG" in
  zh*) zh=1 ;;
esac
if [ "$1" = "--help" ]; then
  if [ -n "$zh" ]; then
    echo "掷骰子 - 掷几个骰子并报出点数"
    echo ""
    echo "选项:"
    echo "  -n, --dice N    骰子的个数 (默认 1)"
  else
    echo "Dice - roll a few dice and say the points"
    echo ""
    echo "Options:"
    echo "  -n, --dice N    how many dice to roll (default 1)"
  fi
  exit 0
fi
if [ -n "$zh" ]; then echo "点数: 6"; else echo "points: 6"; fi
"""


@pytest.mark.parametrize(
    ("context", "summary", "label", "said"),
    [
        ({}, "掷骰子 - 掷几个骰子并报出点数", "骰子的个数 (默认 1)", "点数: 6"),
        (
            EN,
            "Dice - roll a few dice and say the points",
            "How many dice to roll (default 1)",
            "points: 6",
        ),
    ],
)
def test_a_skill_installed_by_hand_speaks_the_readers_language(
    skills_harness: Harness, shared: Path, context, summary, label, said
) -> None:
    """Any script skill, not only the shipped ones: its --help is read once per
    language with LANG set, and the reader sees the summary and the labels of theirs
    only (the list, the skill's form, what its run says)."""
    write_skill(shared, "dice", BY_LANG)
    app, _ = flows(skills_harness)
    wait_for(lambda: "dice" in {r[0] for r in app.handle("", context)["data"]["rows"]})
    rows = {r[0]: r for r in app.handle("", context)["data"]["rows"]}
    assert rows["dice"][3] == summary
    shown = app.handle(None, context, {"action_id": "show", "params": {"name": "dice"}})
    assert shown["message"] == summary
    (run,) = [a for a in shown["actions"] if a["action_id"] == "run"]
    assert [f["label"] for f in run["fields"]] == [label]
    folded = widget(shown, "使用说明" if not context else "How to use it")
    assert folded["data"]["code"].startswith(summary)
    ran = app.handle(
        None,
        {"cwd_state": shown["state"], **context},
        {"action_id": "run", "form_values": {"dice": 2}},
    )
    assert ran["message"] == said


def test_failures_in_english_are_plain_and_keep_their_detail(
    skills_harness: Harness,
) -> None:
    app, _ = flows(skills_harness)
    results = {
        "tool_results": {
            "step_1": failed(
                "install_skill", "hello.py: no such file in the workspace", "file_not_found"
            )
        }
    }
    for context, plain in ((EN, "The skill was not installed"), ({}, "安装失败")):
        reply = app.handle("install skill hello.py", {**results, **context})
        assert reply["view_type"] == "table" and reply["status"] == "ok"
        assert reply["notice"] == "warning" and reply["message"] == plain
        assert reply["detail"] == "hello.py: no such file in the workspace"
    denied = {"tool_results": {"step_1": failed("install_skill", "no", "denied_by_user")}}
    assert (
        app.handle("install skill hello.py", {**denied, **EN})["message"]
        == "OK, nothing was installed"
    )
    gone = app.handle(None, EN, {"action_id": "show", "params": {"name": "no_such_skill"}})
    assert gone["message"] == "This skill is no longer installed"


class FailingModel(ModelDouble):
    def chat(self, prompt: Any, json: bool = False, **kw: Any) -> Any:
        raise ToolFailed("the model answered no argument list", code="llm_bad_reply")


def test_a_model_that_fails_is_a_warning_with_the_reason_folded_away(
    skills_harness: Harness,
) -> None:
    app, _ = flows(skills_harness, FailingModel())
    for context, plain in (
        (EN, "The model could not fill in the fields; fill them in and press Run"),
        ({"language": "zh-CN"}, "模型没能填好参数，请手动填写后运行"),
    ):
        reply = app.handle("把三十摄氏度换算成华氏度", context)
        assert reply["status"] == "ok" and reply["notice"] == "warning"
        assert reply["message"] == plain
        assert reply["detail"] == "llm_bad_reply: the model answered no argument list"


def test_a_skills_allowed_tools_are_exactly_what_the_model_may_plan_with(
    skills_harness: Harness, shared: Path
) -> None:
    for name, allowed in (("only_cmd", "[run_command]"), ("no_tools", "[]")):
        write_skill(
            shared / name,
            "SKILL.md",
            f"---\nname: {name}\ndescription: {name} steps\nallowed-tools: {allowed}\n"
            f"---\n1. do the {name} thing\n",
            executable=False,
        )
    available = {"available_tools": ["file_list", "file_read", "run_command"]}

    def listed_names() -> set[str]:
        answer = skills_harness.call("search_skills", keyword="")
        return {s["name"] for s in answer["result"]["skills"]}

    wait_for(lambda: {"only_cmd", "no_tools"} <= listed_names())
    model = ModelDouble(steps=[{"tool": "run_command", "args": {"command": "x"}}])
    app, _ = flows(skills_harness, model)
    app.handle("按 only_cmd 的步骤做", available)
    _, context = model.asked[0]
    assert context["available_tools"] == ["run_command"]  # not every tool
    model = ModelDouble(steps=[{"tool": "file_list", "args": {}}])
    app, _ = flows(skills_harness, model)
    shown = app.handle("按 no_tools 的步骤做", available)
    assert model.asked == []  # nothing to plan with: the model is not asked
    assert shown["view_type"] == "dashboard" and "allows no tools" not in str(shown)
    assert "这个技能不允许使用任何工具" in str(shown)


@pytest.mark.parametrize(
    "said", ["open the skills app", "open skills", "Open the skills window"]
)
def test_opening_the_skills_app_shows_its_window_and_runs_nothing(
    skills_harness: Harness, said: str
) -> None:
    app, _ = flows(skills_harness)
    reply = app.handle(said, EN)
    assert reply["view_type"] == "table", reply
    assert "steps" not in reply
