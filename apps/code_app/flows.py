"""How the code app answers: plan file and shell steps, then show code and output.

Write (`file_write`), show (`file_read` → `code` view), edit (a `form` with a
`submit_form` carrying the code), run (`shell_exec` `python3 FILE`, inside the
executor's sandbox, output shown) and list (`file_list` of `*.py`). "执行代码
print(2**10)" writes the snippet to `snippet.py` and runs it. All side effects are
steps for the executor (S-05); this module only plans and renders. Each file's
查看 / 运行 sit in its row (`item_id`); a program that fails or is stopped is an
`ok` reply with `notice="warning"`, a plain sentence, and the error text as `detail`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aios_sdk import Flows, Turn, action, step_outcome
from aios_sdk.views import button, input_box, reply, select, submit_form, text_reply

from .intent import CodeIntent, read_intent, safe_filename
from .templates import TEMPLATES, match_template
from .writer import (
    ENABLE_HINT,
    draft_code,
    failure_note,
    program_filename,
    revision_prompt,
)

__all__ = ["SNIPPET_FILE", "CodeFlows"]

SNIPPET_FILE = "snippet.py"
RUN_TIMEOUT = 30
MAX_SPOKEN = 200


def _run_step(step_id: int, path: str) -> dict[str, Any]:
    return {
        "step_id": step_id,
        "tool": "shell_exec",
        "args": {"cmd": ["python3", path], "timeout": RUN_TIMEOUT},
    }


def _plain_failure(entry: Mapping[str, Any], doing: str) -> str:
    """What went wrong with a step, said plainly (the tool's own text is the detail)."""
    if entry.get("code") == "tool_timeout":
        return f"{doing}超过 {RUN_TIMEOUT} 秒，已被停止"
    if entry.get("code") in ("path_outside_workdir", "file_not_found"):
        return f"{doing}失败：找不到这个文件"
    return f"{doing}失败"


def _file_actions(path: str) -> list[dict[str, Any]]:
    return [
        button("运行", "run", path=path),
        button("编辑", "edit", path=path),
        button("文件列表", "list"),
    ]


def _text(content: str, *, status: str = "ok", detail: str | None = None) -> dict[str, Any]:
    return text_reply(
        content, actions=[button("文件列表", "list")], status=status, detail=detail
    )


def _code_view(
    path: str,
    code: str,
    message: str,
    *,
    notice: str | None = None,
    detail: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return reply(
        "code",
        {"language": "python", "code": code, "filename": f"workspace/{path}", **extra},
        actions=_file_actions(path),
        message=message,
        state={"last_file": path},
        notice=notice,
        detail=detail,
    )


def _bad_name(name: str) -> dict[str, Any]:
    return _text(
        f"文件名“{name}”不行：只能是工作区里的 .py 文件（不能含 ..、绝对路径或特殊字符）。",
        status="error",
    )


class CodeFlows(Flows):
    """The code app's behaviour, over an agent that plans steps (and has an `llm`)."""

    # ------------------------------------------------------------------ what was said

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        return self.on_intent(read_intent(turn.instruction), turn.results, turn.state)

    def on_intent(
        self, intent: CodeIntent, results: Mapping[str, Any], state: Mapping[str, Any]
    ) -> dict[str, Any]:
        kind = intent.kind
        if kind == "run_snippet":
            return self.run_code(SNIPPET_FILE, intent.code, results)
        if kind == "run_file":
            return self.run_file(intent.path, results)
        if kind == "show":
            return self.show(intent.path, results)
        if kind == "edit":
            return self.edit(intent.path, results, intent.description)
        if kind == "new":
            name = safe_filename(intent.path)
            return self.edit_form(name, "") if name else _bad_name(intent.path)
        if kind == "write":
            return self.write(intent.description, results)
        if kind == "help":
            last = state.get("last_file")
            if last and any(
                w in intent.description.lower() for w in ("运行", "执行", "run", "execute")
            ):
                return self.run_file(str(last), results)
            return self.help()
        return self.listing(results)

    # ------------------------------------------------------------------ the controls

    @action("run")
    def on_run(self, turn: Turn) -> dict[str, Any]:
        return self.run_file(str(turn.params.get("path") or ""), turn.results)

    @action("show")
    def on_show(self, turn: Turn) -> dict[str, Any]:
        return self.show(str(turn.params.get("path") or ""), turn.results)

    @action("edit")
    def on_edit(self, turn: Turn) -> dict[str, Any]:
        return self.edit(str(turn.params.get("path") or ""), turn.results)

    @action("save", "save_run", "new")
    def on_save(self, turn: Turn) -> dict[str, Any]:
        form = turn.form_values
        asked = str(form.get("path") or form.get("name") or "")
        name = safe_filename(asked)
        if name is None:
            return _bad_name(asked)
        code = str(form.get("code") or "")
        if turn.action_id == "save_run":
            return self.run_code(name, code, turn.results)
        return self.save(name, code, turn.results)

    @action("use_template")
    def on_use_template(self, turn: Turn) -> dict[str, Any]:
        key = str(turn.params.get("key") or turn.selected or "")
        template = next((t for t in TEMPLATES if key in (t.key, t.title)), None)
        if template is None:
            return self.help()
        note = f"已用模板“{template.title}”写好"
        return self.save(template.filename, template.code, turn.results, note=note)

    @action("run_snippet")
    def on_run_snippet(self, turn: Turn) -> dict[str, Any]:
        return self.run_code(SNIPPET_FILE, str(turn.value or ""), turn.results)

    def on_unknown_action(self, turn: Turn) -> dict[str, Any]:
        """`list` and anything else: the workspace's Python files."""
        return self.listing(turn.results)

    # ------------------------------------------------------------------ flows

    def listing(self, results: Mapping[str, Any]) -> dict[str, Any]:
        if not results:
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "file_list",
                        "args": {"path": "workspace", "pattern": "*.py", "recursive": True},
                    }
                ]
            )
        ok, listing, error = step_outcome(results, 1)
        files = (
            [f for f in (listing or {}).get("files", []) if not f.get("is_dir")]
            if ok
            else []
        )
        items = [
            {"title": f["name"], "sub": f"{f.get('size', 0)} 字节", "id": f["name"]}
            for f in files
        ]
        actions: list[dict[str, Any]] = []
        for f in files[:30]:
            actions += [
                button("查看", "show", path=f["name"], item_id=f["name"]),
                button("运行", "run", path=f["name"], item_id=f["name"]),
            ]
        actions += _common_actions()
        if not ok:
            return reply(
                "list",
                {"title": "我的 Python 文件", "items": [], "empty": "工作区暂时读不出来"},
                actions=actions,
                message="读取工作区失败，请稍后再试",
                notice="warning",
                detail=error,
            )
        elif files:
            message = f"工作区有 {len(files)} 个 Python 文件"
        else:
            message = "工作区还没有 Python 文件。试试“执行代码 print(2**10)”或“写一个计算斐波那契数列的程序”"
        return reply(
            "list",
            {"title": "我的 Python 文件", "items": items},
            actions=actions,
            message=message,
        )

    def run_code(self, path: str, code: str, results: Mapping[str, Any]) -> dict[str, Any]:
        """Write `code` to `path`, then run it: F "执行代码 print(2**10)" → 1024."""
        if not code.strip():
            return _text("没有要运行的代码。", status="error")
        if not results:
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "file_write",
                        "args": {"path": path, "content": code.rstrip("\n") + "\n"},
                    },
                    _run_step(2, path),
                ],
                "正在运行…",
            )
        ok, _, error = step_outcome(results, 1)
        if not ok:
            return _text(f"写入 {path} 失败", status="error", detail=error)
        return self._ran(path, code, results, 2)

    def run_file(self, path: str, results: Mapping[str, Any]) -> dict[str, Any]:
        name, early = self._read_first(path, results, run=True)
        if early is not None:
            return early
        ok, code, error = step_outcome(results, 1)
        if not ok:
            return _text(f"找不到 workspace/{name}", status="error", detail=error)
        return self._ran(name, str(code), results, 2)

    def _read_first(
        self, path: str, results: Mapping[str, Any], *, run: bool = False
    ) -> tuple[str, dict[str, Any] | None]:
        """(safe name, reply to return now): the refusal, or the plan reading the file
        (and running it, with `run`); no reply once the plan's results are here."""
        name = safe_filename(path)
        if name is None:
            return path, _bad_name(path)
        if results:
            return name, None
        steps = [{"step_id": 1, "tool": "file_read", "args": {"path": name}}]
        if run:
            steps.append(_run_step(2, name))
        return name, self.agent.plan_steps(steps, "正在运行…" if run else "正在读取…")

    def _ran(
        self, path: str, code: str, results: Mapping[str, Any], step: int
    ) -> dict[str, Any]:
        ok, run, error = step_outcome(results, step)
        if not ok or not isinstance(run, Mapping):
            entry = results.get(f"step_{step}") or {}
            partial = (
                entry.get("result") if isinstance(entry.get("result"), Mapping) else {}
            )
            output = str(partial.get("stdout") or "") + str(partial.get("stderr") or "")
            return _code_view(
                path,
                code,
                _plain_failure(entry, "运行"),
                output=output,
                returncode=None,
                notice="warning",
                detail=error,
            )
        stdout = str(run.get("stdout") or "")
        stderr = str(run.get("stderr") or "")
        returncode = run.get("returncode")
        output = stdout + (
            ("\n" if stdout and not stdout.endswith("\n") else "") + stderr
            if stderr
            else ""
        )
        failed: dict[str, Any] = {}
        if returncode == 0:
            shown = stdout.strip() or "（没有输出）"
            message = f"运行结果：{shown[:MAX_SPOKEN]}"
        else:
            last = (stderr.strip().splitlines() or [""])[-1]
            message = f"运行出错（退出码 {returncode}）：{last[:MAX_SPOKEN]}"
            failed = {"notice": "warning", "detail": stderr.strip() or None}
        return _code_view(
            path,
            code,
            message,
            **failed,
            output=output,
            stdout=stdout,
            stderr=stderr,
            returncode=returncode,
            truncated=bool(run.get("truncated")),
        )

    def show(self, path: str, results: Mapping[str, Any]) -> dict[str, Any]:
        name, early = self._read_first(path, results)
        if early is not None:
            return early
        ok, code, error = step_outcome(results, 1)
        if not ok:
            return _text(f"找不到 workspace/{name}", status="error", detail=error)
        return _code_view(name, str(code), f"这是 {name}")

    def edit(
        self, path: str, results: Mapping[str, Any], change: str = ""
    ) -> dict[str, Any]:
        """The edit form; with a requested `change`, the model's revision (if any) prefilled."""
        name, early = self._read_first(path, results)
        if early is not None:
            return early
        ok, code, _ = step_outcome(results, 1)
        current = str(code) if ok else ""
        if not change:
            return self.edit_form(name, current)
        draft = draft_code(self.llm, revision_prompt(name, current, change))
        if draft.code is None:
            why = f"{draft.note}请自己修改。" if draft.note else ENABLE_HINT
            return self.edit_form(name, current, f"请在下面按“{change}”修改 {name}。{why}")
        return self.edit_form(
            name, draft.code, f"已按“{change}”改好 {name}，检查后点“保存”"
        )

    def edit_form(self, name: str, code: str, message: str = "") -> dict[str, Any]:
        fields = [
            {"name": "path", "label": "文件名", "type": "text", "value": name},
            {"name": "code", "label": "代码", "type": "textarea", "value": code},
        ]
        return reply(
            "form",
            {"title": f"编辑 {name}", "fields": fields},
            # no fields of their own: they submit the form view, the one editable copy
            actions=[
                submit_form("保存", "save"),
                submit_form("保存并运行", "save_run"),
                button("取消", "show", path=name),
            ],
            message=message or (f"正在编辑 {name}" if code else f"新建 {name}"),
        )

    def save(
        self, name: str, code: str, results: Mapping[str, Any], note: str = "已保存"
    ) -> dict[str, Any]:
        if not results:
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "file_write",
                        "args": {"path": name, "content": code},
                    }
                ]
            )
        ok, _, error = step_outcome(results, 1)
        if not ok:
            return _text(f"保存 {name} 失败，文件没有改动", status="error", detail=error)
        return _code_view(name, code, f"{note} workspace/{name}")

    def write(self, description: str, results: Mapping[str, Any]) -> dict[str, Any]:
        """ "写一个…": the LLM writes it when configured; otherwise a template.

        Planned as [file_write, file_read]: the second call shows what was written
        (read back), so a model's answer is never asked for twice. A model that
        fails is never an error: the template (or the template list) with a note.
        """
        template = match_template(description)
        if results:
            ok, written, error = step_outcome(results, 1)
            if not ok:
                return _text("写入失败", status="error", detail=error)
            path = str((written or {}).get("path") or "").removeprefix("workspace/")
            _, code, _ = step_outcome(results, 2)
            if template is not None and str(code or "") == template.code:
                why = failure_note() if self.llm_available() else ""
                message = f"{why}已用模板“{template.title}”写好 {path}。"
                if not why:
                    message += ENABLE_HINT
            else:
                message = f"已根据描述写好 {path}，可以运行或编辑"
            return _code_view(path, str(code or ""), message)
        draft = draft_code(self.llm, description)
        if draft.code is not None:
            return self._write_plan(program_filename(description), draft.code)
        if template is not None:
            return self._write_plan(template.filename, template.code)
        why = f"{draft.note}先从模板开始吧。" if draft.note else ENABLE_HINT
        return self.templates_view(f"没有找到合适的模板。{why}")

    def _write_plan(self, name: str, code: str) -> dict[str, Any]:
        return self.agent.plan_steps(
            [
                {
                    "step_id": 1,
                    "tool": "file_write",
                    "args": {"path": name, "content": code},
                },
                {"step_id": 2, "tool": "file_read", "args": {"path": name}},
            ],
            "正在写代码…",
        )

    def templates_view(self, message: str) -> dict[str, Any]:
        items = [{"title": t.title, "sub": t.filename, "id": t.key} for t in TEMPLATES]
        actions = [
            button("使用", "use_template", key=t.key, item_id=t.key) for t in TEMPLATES
        ]
        actions += _common_actions()
        return reply(
            "list", {"title": "代码模板", "items": items}, actions=actions, message=message
        )

    def help(self) -> dict[str, Any]:
        return self.templates_view(
            "我可以写、看、改、运行 Python 代码。试试：“执行代码 print(2**10)”、“运行 hello.py”、"
            "“列出我的代码文件”、“写一个计算斐波那契数列的程序”。"
        )


def _common_actions() -> list[dict[str, Any]]:
    """执行代码 (one line of Python), 新建文件, 模板: under every list."""
    return [
        input_box("执行代码", "run_snippet", "输入一行 Python，如 print(2**10)"),
        submit_form(
            "新建文件",
            "new",
            [
                {"name": "path", "label": "文件名", "type": "text"},
                {"name": "code", "label": "代码", "type": "textarea"},
            ],
        ),
        select(
            "模板",
            "use_template",
            [{"label": t.title, "value": t.key} for t in TEMPLATES],
        ),
    ]
