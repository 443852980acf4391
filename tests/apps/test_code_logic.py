"""The code app's planning and views, without processes (pure tier).

"执行代码 print(2**10)" plans `file_write` + `shell_exec python3 snippet.py` and
shows 1024; unsafe file names are refused before any step; without an LLM a
"写一个…" request gets a template and the hint that Settings holds a model's key; with one
(a stand-in answering like the SDK's `AgentLLM`) the model's code is written. Every
template really runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest

from aios_protocol.messages import AppReply, parse
from apps.code_app.flows import SNIPPET_FILE, CodeFlows
from apps.code_app.intent import CodeIntent, read_intent, safe_filename
from apps.code_app.templates import TEMPLATES, match_template
from apps.code_app.writer import extract_code, generate_code, program_filename
from apps.code_app.writing import CodeWriting
from tests.apps.doubles import (
    CHINESE,
    EN,
    PlanningAgent,
    failed,
    ok,
    readable_texts,
)


@pytest.mark.parametrize(
    ("text", "kind", "detail"),
    [
        ("执行代码 print(2**10)", "run_snippet", "print(2**10)"),
        (
            "执行代码：import math; print(math.pi)",
            "run_snippet",
            "import math; print(math.pi)",
        ),
        ("run print(1+1)", "run_snippet", "print(1+1)"),
        ("```python\nprint(42)\n```", "run_snippet", "print(42)"),
        ("运行 hello.py", "run_file", "hello.py"),
        ("run fib.py", "run_file", "fib.py"),
        ("查看 hello.py", "show", "hello.py"),
        ("open hello.py", "show", "hello.py"),
        ("编辑 fib.py", "edit", "fib.py"),
        ("新建 foo.py", "new", "foo.py"),
        ("列出我的代码文件", "list", ""),
        ("show my python files", "list", ""),
        ("写一个计算斐波那契数列的程序", "write", "计算斐波那契数列的程序"),
        (
            "write a python script that sorts a list",
            "write",
            "a python script that sorts a list",
        ),
        ("", "home", ""),
        ("计算 2**10", "run_snippet", "print(2**10)"),
        ("修改 sort.py 让它按降序排序", "edit", "按降序排序"),
        ("edit hello.py to print a greeting", "edit", "print a greeting"),
        ("用 Python 算一个数的阶乘", "write", "一个数的阶乘"),
        ("打开代码应用", "home", ""),
        ("open the code app", "home", ""),
    ],
)
def test_requests_are_read_into_intents(text: str, kind: str, detail: str) -> None:
    intent = read_intent(text)
    assert intent.kind == kind
    assert detail in (intent.code, intent.path, intent.description)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.py", "a.py"),
        ("workspace/b.py", "b.py"),
        ("./c.py", "c.py"),
        ("dir/d", "dir/d.py"),
        ("七里香.py", "七里香.py"),
        ("../x.py", None),
        ("a/../../x.py", None),
        ("/etc/passwd", None),
        (".bashrc", None),
        ("x y.py", None),
        ("a\x00.py", None),
        ("", None),
    ],
)
def test_file_names_must_stay_in_the_workspace(name: str, expected: str | None) -> None:
    assert safe_filename(name) == expected


def test_run_snippet_plans_write_then_python3() -> None:
    flows = CodeFlows(PlanningAgent())
    plan = flows.handle("执行代码 print(2**10)", {})
    assert plan["view_type"] == "loading"
    assert plan["steps"] == [
        {
            "step_id": 1,
            "tool": "file_write",
            "args": {"path": SNIPPET_FILE, "content": "print(2**10)\n"},
        },
        {
            "step_id": 2,
            "tool": "shell_exec",
            "args": {"cmd": ["python3", SNIPPET_FILE], "timeout": 30},
        },
    ]
    results = {
        "step_1": ok("file_write", {"path": "workspace/snippet.py", "size": 13}),
        "step_2": ok(
            "shell_exec",
            {"returncode": 0, "stdout": "1024\n", "stderr": "", "truncated": False},
        ),
    }
    reply = flows.handle("执行代码 print(2**10)", {"tool_results": results})
    assert reply["view_type"] == "code"
    assert reply["data"]["language"] == "python" and reply["data"]["code"] == "print(2**10)"
    assert reply["data"]["output"] == "1024\n" and reply["data"]["returncode"] == 0
    assert (
        reply["message"] == "运行结果：1024（代码已存为工作区里的 snippet.py）"
    )  # said where it went
    assert reply["state"] == {"last_file": SNIPPET_FILE}
    parse(AppReply, reply)


def test_a_failing_run_shows_the_error() -> None:
    flows = CodeFlows(PlanningAgent())
    results = {
        "step_1": ok("file_read", "1/0\n"),
        "step_2": ok(
            "shell_exec",
            {
                "returncode": 1,
                "stdout": "",
                "stderr": "Traceback…\nZeroDivisionError: division by zero\n",
            },
        ),
    }
    reply = flows.handle("运行 bad.py", {"tool_results": results})
    assert reply["message"] == "运行出错（退出码 1）：ZeroDivisionError: division by zero"
    # the program failed, the app did not: ok, but degraded, with the traceback folded
    assert reply["status"] == "ok" and reply["notice"] == "warning"
    assert reply["detail"].startswith("Traceback")
    refused = {
        "step_1": ok("file_read", "print(1)\n"),
        "step_2": failed(
            "shell_exec", "python3 -c: inline code is not allowed", "command_not_allowed"
        ),
    }
    reply = flows.handle("运行 x.py", {"tool_results": refused})
    assert reply["message"] == "运行失败" and reply["notice"] == "warning"
    assert "not allowed" in reply["detail"]  # the technical text, folded away
    timed_out = {
        "step_1": ok("file_read", "import time; time.sleep(99)\n"),
        "step_2": failed("shell_exec", "python3 killed after 30s", "tool_timeout"),
    }
    reply = flows.handle("运行 slow.py", {"tool_results": timed_out})
    assert reply["message"] == "运行超过 30 秒，已被停止" and reply["notice"] == "warning"
    parse(AppReply, reply)


def test_each_file_s_controls_sit_in_its_row() -> None:
    flows = CodeFlows(PlanningAgent())
    listing = {"files": [{"name": "a.py", "size": 3}, {"name": "b.py", "size": 4}]}
    reply = flows.handle(
        "列出我的代码文件", {"tool_results": {"step_1": ok("file_list", listing)}}
    )
    ids = {item["id"] for item in reply["data"]["items"]}
    placed = [a for a in reply["actions"] if a["action_id"] in ("show", "run")]
    assert len(placed) == 4 and all(a["item_id"] in ids for a in placed)
    assert all(a["item_id"] == a["params"]["path"] for a in placed)
    parse(AppReply, reply)


def test_the_edit_form_has_one_editable_copy() -> None:
    flows = CodeFlows(PlanningAgent())
    form = flows.handle(
        "编辑 a.py", {"tool_results": {"step_1": ok("file_read", "x = 1\n")}}
    )
    assert form["view_type"] == "form"
    assert [f["name"] for f in form["data"]["fields"]] == ["path", "code"]
    saves = [a for a in form["actions"] if a["type"] == "submit_form"]
    assert saves and all(a["fields"] == [] for a in saves)  # they submit the view's form
    assert form["state"] == {"editing": "a.py"}  # saving a.py again asks nothing
    edited = {"action_id": "save", "form_values": {"path": "a.py", "code": "x = 2\n"}}
    plan = flows.handle(None, {"cwd_state": form["state"]}, edited)
    assert plan["steps"][0]["args"] == {"path": "a.py", "content": "x = 2\n"}
    refused = {"step_1": failed("file_write", "disk full", "io_error")}
    reply = flows.handle(
        None, {"cwd_state": form["state"], "tool_results": refused}, edited
    )
    assert reply["status"] == "error" and "已保存" not in reply["message"]
    assert "失败" in reply["message"] and reply["detail"] == "disk full"


def test_unsafe_names_are_refused_before_any_step() -> None:
    flows = CodeFlows(PlanningAgent())
    for text in ("运行 ../music_app/x.py", "查看 /etc/passwd.py", "编辑 ../../secret.py"):
        reply = flows.handle(text, {})
        assert reply["status"] == "error" and "steps" not in reply, text
    saved = flows.handle(
        None, {}, {"action_id": "save", "form_values": {"path": "../x.py", "code": "1"}}
    )
    assert saved["status"] == "error" and "steps" not in saved


def test_edit_is_a_form_with_a_code_field_and_save_writes_it() -> None:
    flows = CodeFlows(PlanningAgent())
    plan = flows.handle(None, {}, {"action_id": "edit", "params": {"path": "hello.py"}})
    assert plan["steps"][0] == {
        "step_id": 1,
        "tool": "file_read",
        "args": {"path": "hello.py"},
    }
    form = flows.handle(
        None,
        {"tool_results": {"step_1": ok("file_read", "print('hi')\n")}},
        {"action_id": "edit", "params": {"path": "hello.py"}},
    )
    assert form["view_type"] == "form"
    code_field = next(f for f in form["data"]["fields"] if f["name"] == "code")
    assert code_field["value"] == "print('hi')\n"
    submit = next(a for a in form["actions"] if a["action_id"] == "save")
    # no fields of its own: it submits the form view, the one editable copy
    assert submit["type"] == "submit_form" and submit["fields"] == []
    parse(AppReply, form)
    save = {
        "action_id": "save",
        "form_values": {"path": "hello.py", "code": "print('bye')\n"},
    }
    editing = {"editing": "hello.py"}
    plan = flows.handle(None, {"cwd_state": editing}, save)
    assert plan["steps"] == [
        {
            "step_id": 1,
            "tool": "file_write",
            "args": {"path": "hello.py", "content": "print('bye')\n"},
        }
    ]
    saved = flows.handle(
        None,
        {
            "cwd_state": editing,
            "tool_results": {"step_1": ok("file_write", {"path": "workspace/hello.py"})},
        },
        save,
    )
    assert saved["view_type"] == "code" and saved["data"]["code"] == "print('bye')\n"


def test_listing_shows_the_python_files() -> None:
    flows = CodeFlows(PlanningAgent())
    plan = flows.handle("列出我的代码文件", {})
    assert plan["steps"][0]["tool"] == "file_list"
    assert plan["steps"][0]["args"]["pattern"] == "*.py"
    listing = {
        "path": "workspace",
        "files": [
            {"name": "a.py", "size": 10, "is_dir": False},
            {"name": "lib", "size": 0, "is_dir": True},
        ],
    }
    reply = flows.handle(
        "列出我的代码文件", {"tool_results": {"step_1": ok("file_list", listing)}}
    )
    assert [i["title"] for i in reply["data"]["items"]] == ["a.py"]
    assert reply["message"] == "工作区有 1 个 Python 文件"
    parse(AppReply, reply)


def opens_settings(reply: dict[str, Any]) -> str | None:
    """The label of the reply's button opening the desktop's Settings, if any."""
    return next(
        (
            a["label"]
            for a in reply.get("actions") or []
            if a["type"] == "link" and a["href"] == "aios:settings"
        ),
        None,
    )


def test_write_without_an_llm_uses_a_template_and_says_how_to_enable() -> None:
    flows = CodeFlows(PlanningAgent())
    plan = flows.handle("写一个计算斐波那契数列的程序", {})
    assert [s["tool"] for s in plan["steps"]] == ["file_write", "file_read"]
    assert plan["steps"][0]["args"]["path"] == "fibonacci.py"
    template = match_template("斐波那契")
    assert template is not None
    results = {
        "step_1": ok("file_write", {"path": "workspace/fibonacci.py", "size": 100}),
        "step_2": ok("file_read", template.code_in("zh-CN")),
    }
    reply = flows.handle("写一个计算斐波那契数列的程序", {"tool_results": results})
    assert reply["view_type"] == "code" and reply["data"]["code"] == template.code_in(
        "zh-CN"
    )
    # where a model key is set, in plain words, and a button there
    assert "“设置”里填写大模型的 API 密钥" in reply["message"]
    assert "llm." not in reply["message"] and "AIOS_" not in reply["message"]
    assert reply["message"].startswith("已用模板“斐波那契数列”写好 fibonacci.py。")
    assert opens_settings(reply) == "打开设置"
    nothing = flows.handle("写一个能飞的程序", {})
    assert nothing["view_type"] == "list" and "“设置”" in nothing["message"]
    assert opens_settings(nothing) == "打开设置"
    assert {a["action_id"] for a in nothing["actions"]} >= {
        "use_template",
        "run_snippet",
        "new",
    }


class AnsweringModel:
    """Answers like the SDK's `AgentLLM` of a configured model: `available`, `chat`."""

    available = True

    def __init__(self, answer: str):
        self.answer = answer
        self.prompts: list[str] = []

    def chat(self, prompt: str, json: bool = False, *, system: str | None = None) -> str:
        self.prompts.append(prompt)
        return self.answer


class LoopModel(AnsweringModel):
    """A model the agent loop talks to: `turn` answers from `turns` in order."""

    def __init__(self, *turns: Any):
        super().__init__("")
        self.turns = list(turns)
        self.seen: list[list[dict[str, Any]]] = []

    def turn(self, messages: Any, **kwargs: Any) -> Any:
        self.seen.append([dict(m) for m in messages])
        return self.turns.pop(0)

    def progress(self, *args: Any) -> None:
        pass


def said(content: str = "", *calls: tuple[str, dict[str, Any]]) -> SimpleNamespace:
    return SimpleNamespace(
        content=content,
        tool_calls=[
            SimpleNamespace(id=f"c{i}", name=name, arguments=json.dumps(args))
            for i, (name, args) in enumerate(calls)
        ],
        usage={},
        finish_reason="tool_calls" if calls else "stop",
    )


class LoopAgent(PlanningAgent):
    name = "代码应用"
    role_prompt = "你是代码小AI"

    def available_tools(self) -> list[dict[str, Any]]:
        return [
            {"name": n, "description": n, "input_schema": {"type": "object"}}
            for n in ("file_write", "file_list", "shell_exec")
        ]


def test_write_with_an_llm_is_the_agent_loop_and_shows_the_program() -> None:
    code = "print(sum(range(101)))\n"
    model = LoopModel(
        said("", ("file_write", {"path": "adds.py", "content": code})),
        said("写好了，它打印 5050。"),
    )
    agent = LoopAgent(llm=model)
    flows = CodeFlows(agent)
    plan = flows.handle("write a program that adds 1 to 100", {})
    # file_write may need the user's yes: it is a step plan for the controller
    [step] = plan["steps"]
    assert step["tool"] == "file_write" and step["args"]["content"] == code
    task = model.seen[0][-1]["content"]
    assert task.startswith("Write a Python program: a program that adds 1 to 100")
    assert "adds_1_100.py" in task and model.seen[0][0]["content"].startswith(
        "你是代码小AI"
    )
    results = {f"step_{step['step_id']}": ok("file_write", {"path": "workspace/adds.py"})}
    context = {"cwd_state": plan["state"], "tool_results": results}
    instruction = "write a program that adds 1 to 100"
    assert CodeWriting.owns(agent, instruction, context, said=False)
    reply = CodeWriting(agent).handle(instruction, context)
    assert reply["view_type"] == "code" and reply["data"]["code"] == code
    assert reply["message"] == "已根据描述写好 adds.py，可以运行或编辑"
    assert reply["data"]["filename"] == "workspace/adds.py"
    unavailable = AnsweringModel("x")
    unavailable.available = False
    assert generate_code(unavailable, "x") is None
    assert generate_code(None, "x") is None
    assert extract_code("no fence") == "no fence\n"
    assert program_filename("计算", {"program.py"}) == "program_2.py"


def test_a_model_that_writes_nothing_gets_the_templates() -> None:
    flows = CodeFlows(LoopAgent(llm=LoopModel(said("抱歉，我写不了。"))))
    reply = flows.handle("写一个能飞的程序", {})
    assert reply["view_type"] == "list"
    assert "大模型这次没有答上来（llm_bad_reply）" in reply["message"]
    assert {a["action_id"] for a in reply["actions"]} >= {"use_template", "new"}


def test_a_denied_write_is_not_the_program_when_a_later_call_reuses_its_id() -> None:
    """The model numbers its calls afresh each turn (`c0` every time): the user says
    no to its `file_write`, its next turn's `c0` (a listing) succeeds. That success is
    not the write's: no program was written, and the templates are offered."""
    code = "print(sum(range(101)))\n"
    model = LoopModel(
        said("", ("file_write", {"path": "adds.py", "content": code})),
        said("", ("file_list", {})),
        said("没能写入。"),
    )
    agent = LoopAgent(llm=model)
    plan = CodeFlows(agent).handle("write a program that adds 1 to 100", {})
    [step] = plan["steps"]
    refused = failed("file_write", "the user said no", "denied_by_user")
    context = {
        "cwd_state": plan["state"],
        "tool_results": {f"step_{step['step_id']}": refused},
    }
    reply = CodeWriting(agent).handle("write a program that adds 1 to 100", context)
    assert agent.calls == [("file_list", {})]  # the listing ran, the write did not
    assert reply["view_type"] == "list", reply
    assert reply["message"].startswith("没有写出程序。")


def test_edit_with_a_requested_change() -> None:
    read = {"step_1": ok("file_read", "print(sorted([3, 1, 2]))\n")}
    without = CodeFlows(PlanningAgent()).handle(
        "修改 sort.py 让它按降序排序", {"tool_results": read}
    )
    assert without["view_type"] == "form"
    assert next(f for f in without["data"]["fields"] if f["name"] == "code")["value"] == (
        "print(sorted([3, 1, 2]))\n"
    )
    assert "“设置”" in without["message"] and opens_settings(without) == "打开设置"
    model = AnsweringModel("```python\nprint(sorted([3, 1, 2], reverse=True))\n```")
    flows = CodeFlows(PlanningAgent(llm=model))
    revised = flows.handle("修改 sort.py 让它按降序排序", {"tool_results": read})
    code = next(f for f in revised["data"]["fields"] if f["name"] == "code")["value"]
    assert code == "print(sorted([3, 1, 2], reverse=True))\n"
    assert (
        "按降序排序" in model.prompts[0] and "print(sorted([3, 1, 2]))" in model.prompts[0]
    )
    assert "steps" not in revised  # nothing is saved until the user presses 保存


@pytest.mark.parametrize("language", ["zh-CN", "en-US"])
@pytest.mark.parametrize("template", TEMPLATES, ids=[t.key for t in TEMPLATES])
def test_every_template_runs_and_prints(template, language, tmp_path) -> None:
    path = tmp_path / template.filename
    path.write_text(template.code_in(language), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


@pytest.mark.parametrize(
    ("said", "code"),
    [
        ("执行代码 x=5; print(x*2)", "x=5; print(x*2)"),
        ("执行代码 import time; time.sleep(4)", "import time; time.sleep(4)"),
        ("run code a=1;b=2;print(a+b)", "a=1;b=2;print(a+b)"),
    ],
)
def test_code_is_never_cut_at_a_semicolon(said: str, code: str) -> None:
    from controller.routing.split import split_pieces

    assert [piece.text for piece in split_pieces(said)] == [said]
    assert read_intent(said) == CodeIntent("run_snippet", code=code)
    # a sentence end between instructions still splits them
    assert [p.text for p in split_pieces("打开音乐; 播放七里香")] == [
        "打开音乐",
        "播放七里香",
    ]


# ------------------------------------------------------------------ in English


def test_in_english_the_views_and_labels_are_english() -> None:
    flows = CodeFlows(PlanningAgent())
    listing = {"files": [{"name": "a.py", "size": 3}]}
    reply = flows.handle(
        "show my python files", {**EN, "tool_results": {"step_1": ok("file_list", listing)}}
    )
    assert reply["data"]["title"] == "My Python files"
    assert reply["message"] == "The workspace has 1 Python file"
    assert reply["data"]["items"][0]["sub"] == "3 bytes"
    texts = readable_texts(reply)
    assert {"View", "Run", "Run code", "New file", "File name", "Template"} <= set(texts)
    assert not [t for t in texts if CHINESE.search(t)], texts
    form = flows.handle(
        "edit a.py", {**EN, "tool_results": {"step_1": ok("file_read", "x = 1\n")}}
    )
    assert form["data"]["title"] == "Edit a.py" and form["message"] == "Editing a.py"
    assert [f["label"] for f in form["data"]["fields"]] == ["File name", "Code"]
    assert [a["label"] for a in form["actions"]] == ["Save", "Save and run", "Cancel"]
    templates = flows.handle("write a program that can fly", EN)
    assert templates["data"]["title"] == "Code templates"
    assert templates["message"] == (
        "No template fits. No model is set up yet. To have code written from your "
        "description, enter a model's API key in Settings."
    )
    assert opens_settings(templates) == "Open Settings"
    assert not [i for i in templates["data"]["items"] if CHINESE.search(i["title"])]


def test_in_english_a_template_is_written_in_english() -> None:
    """The Fibonacci template's docstring was Chinese in English."""
    flows = CodeFlows(PlanningAgent())
    plan = flows.handle("write a program that prints the Fibonacci numbers", EN)
    written = plan["steps"][0]["args"]["content"]
    assert '"""Print the first n Fibonacci numbers."""' in written
    assert not CHINESE.search(written), written
    for template in TEMPLATES:  # each program, as an English reader gets it
        assert not CHINESE.search(template.code_in("en-US")), template.key


def test_in_english_errors_are_english_with_the_detail_folded() -> None:
    flows = CodeFlows(PlanningAgent())
    plan = flows.handle("run print(2**10)", EN)
    assert plan["message"] == "Running…"
    ran = {
        "step_1": ok("file_write", {"path": "workspace/snippet.py"}),
        "step_2": ok("shell_exec", {"returncode": 0, "stdout": "1024\n", "stderr": ""}),
    }
    assert flows.handle("run print(2**10)", {**EN, "tool_results": ran})["message"] == (
        "Output: 1024 (the code is saved as snippet.py in the workspace)"
    )
    crashed = {
        "step_1": ok("file_read", "1/0\n"),
        "step_2": ok(
            "shell_exec",
            {
                "returncode": 1,
                "stdout": "",
                "stderr": "Traceback…\nZeroDivisionError: division by zero\n",
            },
        ),
    }
    reply = flows.handle("run bad.py", {**EN, "tool_results": crashed})
    assert reply["message"] == (
        "The program failed (exit code 1): ZeroDivisionError: division by zero"
    )
    assert reply["notice"] == "warning" and reply["detail"].startswith("Traceback")
    assert [a["label"] for a in reply["actions"]] == ["Run", "Edit", "Files"]
    missing = {"step_1": failed("file_read", "[Errno 2] No such file", "file_not_found")}
    gone = flows.handle("run gone.py", {**EN, "tool_results": missing})
    assert gone["status"] == "error" and gone["data"]["content"] == (
        "There is no program gone.py"
    )
    assert gone["detail"] == "[Errno 2] No such file"
    refused = flows.handle("run ../x.py", EN)
    assert refused["status"] == "error" and not CHINESE.search(refused["data"]["content"])
    saved = {"action_id": "save", "form_values": {"path": "a.py", "code": "x = 2\n"}}
    disk_full = {"step_1": failed("file_write", "disk full", "io_error")}
    editing = {"editing": "a.py"}
    reply = flows.handle(
        None, {**EN, "cwd_state": editing, "tool_results": disk_full}, saved
    )
    assert reply["message"] == "Could not save a.py; the file is unchanged"
    assert reply["detail"] == "disk full"


# ------------------------------------------------------------------ output, overwrites


def test_a_run_shows_its_whole_output_and_marks_a_cut() -> None:
    flows = CodeFlows(PlanningAgent())
    long = "ab" * 300 + "\nend\n"
    ran = {
        "step_1": ok("file_write", {"path": "workspace/snippet.py"}),
        "step_2": ok(
            "shell_exec",
            {"returncode": 0, "stdout": long, "stderr": "", "truncated": False},
        ),
    }
    reply = flows.handle("执行代码 print('ab' * 300)", {"tool_results": ran})
    assert reply["data"]["output"] == long  # whole, not cut at 200 characters
    assert "output_truncated" not in reply["data"]
    assert reply["message"] == "运行完成，输出 2 行（代码已存为工作区里的 snippet.py）"
    cut = {
        "step_1": ok("file_write", {"path": "workspace/snippet.py"}),
        "step_2": ok(
            "shell_exec",
            {
                "returncode": 0,
                "stdout": "x" * 4096,
                "stderr": "",
                "truncated": True,
                "stdout_size": 20001,
                "stderr_size": 0,
            },
        ),
    }
    reply = flows.handle("执行代码 print('x' * 20000)", {"tool_results": cut})
    assert reply["data"]["output"] == "x" * 4096
    assert reply["data"]["output_truncated"] is True
    assert reply["data"]["output_size"] == 20001
    assert reply["message"] == (
        "运行完成；输出太长，已截断：只显示前 4.0 KB，共 19.5 KB（代码已存为工作区里的 snippet.py）"
    )
    parse(AppReply, reply)
    english = flows.handle("run print('x' * 20000)", {**EN, "tool_results": cut})
    assert english["message"] == (
        "Finished; the output was too long and is cut: showing the first 4.0 KB of 19.5 KB"
        " (the code is saved as snippet.py in the workspace)"
    )


def test_a_new_file_whose_name_is_taken_asks_first() -> None:
    flows = CodeFlows(PlanningAgent())
    new = {"action_id": "new", "form_values": {"path": "a.py", "code": "x = 2\n"}}
    check = flows.handle(None, {}, new)
    assert check["steps"] == [
        {
            "step_id": 1,
            "tool": "file_list",
            "args": {"path": "workspace", "pattern": "a.py"},
        }
    ]
    taken = {"files": [{"name": "a.py", "size": 6, "is_dir": False}]}
    asked = flows.handle(None, {"tool_results": {"step_1": ok("file_list", taken)}}, new)
    assert "steps" not in asked and asked["view_type"] == "form"
    assert asked["notice"] == "warning" and asked["message"].startswith("a.py 已经存在")
    code = next(f for f in asked["data"]["fields"] if f["name"] == "code")
    assert code["value"] == "x = 2\n"  # what was typed stays
    assert [a["action_id"] for a in asked["actions"]][0] == "overwrite"
    assert asked["state"] == {"editing": None}
    parse(AppReply, asked)
    # 覆盖 is the user's yes: written at once
    overwrite = {**new, "action_id": "overwrite"}
    assert flows.handle(None, {}, overwrite)["steps"][0]["tool"] == "file_write"
    # a free name is written in the next round (step 2), then shown
    free = flows.handle(
        None, {"tool_results": {"step_1": ok("file_list", {"files": []})}}, new
    )
    assert free["steps"] == [
        {"step_id": 2, "tool": "file_write", "args": {"path": "a.py", "content": "x = 2\n"}}
    ]
    saved = flows.handle(
        None,
        {"tool_results": {"step_2": ok("file_write", {"path": "workspace/a.py"})}},
        new,
    )
    assert saved["view_type"] == "code" and saved["message"] == "已保存 a.py"
    # a folder that is not there yet: the name is free too
    missing = failed("file_list", "'lib' does not exist", "file_not_found")
    deep = {"action_id": "new", "form_values": {"path": "lib/b.py", "code": "y = 1\n"}}
    assert flows.handle(None, {}, deep)["steps"][0]["args"] == {
        "path": "lib",
        "pattern": "b.py",
    }
    planned = flows.handle(None, {"tool_results": {"step_1": missing}}, deep)
    assert planned["steps"][0]["tool"] == "file_write"


def test_saving_the_edited_file_asks_nothing_another_name_is_checked() -> None:
    flows = CodeFlows(PlanningAgent())
    editing = {"cwd_state": {"editing": "a.py"}}
    same = {"action_id": "save", "form_values": {"path": "a.py", "code": "1\n"}}
    assert flows.handle(None, editing, same)["steps"][0]["tool"] == "file_write"
    renamed = {"action_id": "save", "form_values": {"path": "b.py", "code": "1\n"}}
    assert flows.handle(None, editing, renamed)["steps"][0]["tool"] == "file_list"
    run = {"action_id": "save_run", "form_values": {"path": "b.py", "code": "1\n"}}
    listed = {**editing, "tool_results": {"step_1": ok("file_list", {"files": []})}}
    assert [s["tool"] for s in flows.handle(None, listed, run)["steps"]] == [
        "file_write",
        "shell_exec",
    ]


def test_a_denied_overwrite_is_not_a_failure_and_keeps_the_code() -> None:
    flows = CodeFlows(PlanningAgent())
    editing = {"cwd_state": {"editing": "a.py"}}
    save = {"action_id": "save", "form_values": {"path": "a.py", "code": "typed\n"}}
    denied = failed(
        "file_write", "用户拒绝了：覆盖已有文件 workspace/a.py", "denied_by_user"
    )
    reply = flows.handle(None, {**editing, "tool_results": {"step_1": denied}}, save)
    assert reply["status"] == "ok" and reply["notice"] == "info"
    assert reply["view_type"] == "form"
    assert reply["message"].startswith("没有保存：你拒绝了覆盖 a.py。")
    assert "失败" not in reply["message"]
    code = next(f for f in reply["data"]["fields"] if f["name"] == "code")
    assert code["value"] == "typed\n"
    assert reply["state"] == {"editing": "a.py"}
    parse(AppReply, reply)
    run = {**save, "action_id": "save_run"}
    other = failed("shell_exec", "没有执行", "denied_by_user")
    both = {"step_1": denied, "step_2": other}
    reply = flows.handle(None, {**EN, **editing, "tool_results": both}, run)
    assert reply["view_type"] == "form" and reply["notice"] == "info"
    assert reply["message"].startswith("Not saved and not run: you declined")


def test_templates_and_written_programs_get_a_free_name() -> None:
    flows = CodeFlows(PlanningAgent())
    files = {"cwd_state": {"files": ["fibonacci.py", "fibonacci_2.py"]}}
    use = {"action_id": "use_template", "params": {"key": "fibonacci"}}
    plan = flows.handle(None, files, use)
    assert plan["steps"][0]["args"]["path"] == "fibonacci_3.py"
    wrote = {"step_1": ok("file_write", {"path": "workspace/fibonacci_3.py"})}
    shown = flows.handle(None, {**files, "tool_results": wrote}, use)
    assert shown["data"]["filename"] == "workspace/fibonacci_3.py"
    written = flows.handle("写一个计算斐波那契数列的程序", files)
    assert written["steps"][0]["args"]["path"] == "fibonacci_3.py"


EARLIER = {
    "cwd_state": {"last_file": "fibonacci.py", "files": ["fibonacci.py", "notes.txt"]}
}
LISTED = {
    "step_1": ok(
        "file_list", {"files": [{"name": "fibonacci.py", "size": 120, "is_dir": False}]}
    )
}


@pytest.mark.parametrize(
    ("said", "context", "asked"),
    [
        ("运行技能 temp_convert 37", {}, "没有叫“temp_convert”的程序。要运行哪个程序？"),
        ("运行技能temp_convert", {}, "没有叫“temp_convert”的程序。要运行哪个程序？"),
        (
            "run temp_convert",
            EN,
            'There is no program called "temp_convert". Which program should I run?',
        ),
        ("运行", {}, "要运行哪个程序？"),
        ("运行程序", {}, "要运行哪个程序？"),
        ("run the code", EN, "Which program should I run?"),
    ],
)
def test_a_run_that_names_no_program_here_asks_which_and_never_runs_an_old_one(
    said: str, context: dict, asked: str
) -> None:
    """A run never runs the last program in place of one it does not name ("运行技能
    temp_convert 37" once showed fibonacci.py's output). It names its program or is
    asked which:
    the plan only lists the files, and the answer is a question with each file's Run."""
    flows = CodeFlows(PlanningAgent())
    plan = flows.handle(said, {**context, **EARLIER})
    assert [s["tool"] for s in plan["steps"]] == ["file_list"]  # nothing runs
    reply = flows.handle(said, {**context, **EARLIER, "tool_results": LISTED})
    assert reply["view_type"] == "list" and reply["message"] == asked
    # a question; "no program called …" also says that nothing was done
    assert reply["notice"] == ("warning" if "temp_convert" in asked else "info")
    assert "output" not in reply["data"] and "stdout" not in reply["data"]
    runs = [a for a in reply["actions"] if a["action_id"] == "run"]
    assert [a["params"] for a in runs] == [{"path": "fibonacci.py"}]
    parse(AppReply, reply)


def test_a_run_that_names_a_program_runs_that_one() -> None:
    flows = CodeFlows(PlanningAgent())
    for said in ("run fibonacci", "运行 fibonacci", "运行程序 fibonacci"):
        plan = flows.handle(said, EARLIER)
        assert [s["tool"] for s in plan["steps"]] == ["file_read", "shell_exec"], said
        assert plan["steps"][1]["args"]["cmd"] == ["python3", "fibonacci.py"]


def test_no_program_at_all_is_said_and_nothing_was_run() -> None:
    flows = CodeFlows(PlanningAgent())
    none = {"step_1": ok("file_list", {"files": []})}
    assert flows.handle("run temp_convert", EN)["message"].startswith(
        'There is no program called "temp_convert".'
    )  # no program in the workspace: said at once, nothing listed first
    reply = flows.handle("run temp_convert", {**EN, "tool_results": none})
    assert reply["notice"] == "warning"
    assert reply["message"].startswith(
        'There is no program called "temp_convert". The workspace has no Python files yet.'
    )


@pytest.mark.parametrize(
    ("context", "said", "saved"),
    [
        (
            {},
            "运行结果：1（代码已存为工作区里的 snippet.py）",
            "（代码已存为工作区里的 snippet.py）",
        ),
        (
            EN,
            "Output: 1 (the code is saved as snippet.py in the workspace)",
            "snippet.py in the workspace)",
        ),
    ],
)
def test_code_said_to_run_says_it_was_saved_as_snippet_py(context, said, saved) -> None:
    """ "执行代码 print(1)" writes snippet.py: the answer says so, typed or clicked,
    run or failed; running a file the user named says nothing of saving."""
    flows = CodeFlows(PlanningAgent())
    wrote = ok("file_write", {"path": "workspace/snippet.py"})
    printed = ok("shell_exec", {"returncode": 0, "stdout": "1\n", "stderr": ""})
    ran = {"step_1": wrote, "step_2": printed}
    asked = flows.handle("执行代码 print(1)", {**context, "tool_results": ran})
    assert asked["message"] == said
    clicked = flows.handle(
        None,
        {**context, "tool_results": ran},
        {"action_id": "run_snippet", "value": "print(1)"},
    )
    assert clicked["message"] == said
    crashed = ok("shell_exec", {"returncode": 1, "stdout": "", "stderr": "NameError: x\n"})
    failed_run = flows.handle(
        "执行代码 print(x)",
        {**context, "tool_results": {"step_1": wrote, "step_2": crashed}},
    )
    assert failed_run["message"].endswith(saved) and "NameError" in failed_run["message"]
    named = flows.handle(
        "运行 hello.py",
        {
            **context,
            "tool_results": {"step_1": ok("file_read", "print(1)\n"), "step_2": printed},
        },
    )
    assert "snippet.py" not in named["message"]
