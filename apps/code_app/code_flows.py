"""How the code app answers: plan file and shell steps, then show code and output.

Write (`file_write`), show (`file_read` → `code` view), edit (a `form` with a
`submit_form` carrying the code), run (`shell_exec` `python3 FILE`, inside the
executor's sandbox, output shown) and list (`file_list` of `*.py`). "执行代码
print(2**10)" writes the snippet to `snippet.py` and runs it. All side effects are
steps for the executor (S-05); this module only plans and renders.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from code_intent import CodeIntent, read_intent, safe_filename
from code_templates import TEMPLATES, match_template
from code_writer import (
    ENABLE_HINT,
    draft_code,
    failure_note,
    program_filename,
    revision_prompt,
)

from aios_sdk import step_outcome

__all__ = ["SNIPPET_FILE", "CodeFlows"]

SNIPPET_FILE = "snippet.py"
RUN_TIMEOUT = 30
MAX_SPOKEN = 200


class AgentPort(Protocol):
    def plan_steps(
        self, steps: list[dict[str, Any]], message: str = ...
    ) -> dict[str, Any]: ...


def _run_step(step_id: int, path: str) -> dict[str, Any]:
    return {
        "step_id": step_id,
        "tool": "shell_exec",
        "args": {"cmd": ["python3", path], "timeout": RUN_TIMEOUT},
    }


def _file_actions(path: str) -> list[dict[str, Any]]:
    return [
        {"type": "button", "label": "运行", "action_id": "run", "params": {"path": path}},
        {"type": "button", "label": "编辑", "action_id": "edit", "params": {"path": path}},
        {"type": "button", "label": "文件列表", "action_id": "list"},
    ]


def _text(
    content: str, *, status: str = "ok", actions: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "status": status,
        "view_type": "text",
        "data": {"content": content},
        "actions": actions
        or [{"type": "button", "label": "文件列表", "action_id": "list"}],
        "message": content,
    }


def _code_view(path: str, code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {
        "status": "ok",
        "view_type": "code",
        "data": {
            "language": "python",
            "code": code,
            "filename": f"workspace/{path}",
            **extra,
        },
        "actions": _file_actions(path),
        "message": message,
        "state": {"last_file": path},
    }


def _bad_name(name: str) -> dict[str, Any]:
    return _text(
        f"文件名“{name}”不行：只能是工作区里的 .py 文件（不能含 ..、绝对路径或特殊字符）。",
        status="error",
    )


class CodeFlows:
    def __init__(self, agent: AgentPort, llm_provider: Callable[[], Any] | None = None):
        self.agent = agent
        self.llm_provider = llm_provider or (lambda: None)

    def handle(
        self,
        instruction: str | None,
        context: Mapping[str, Any] | None,
        action_request: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        context = context or {}
        results: Mapping[str, Any] = context.get("tool_results") or {}
        state: Mapping[str, Any] = context.get("cwd_state") or {}
        if action_request:
            return self.on_action(dict(action_request), results)
        return self.on_intent(read_intent(instruction), results, state)

    # ------------------------------------------------------------------ dispatch

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

    def on_action(
        self, request: dict[str, Any], results: Mapping[str, Any]
    ) -> dict[str, Any]:
        action = str(request.get("action_id") or "")
        params = request.get("params") or {}
        form = request.get("form_values") or {}
        if action == "run":
            return self.run_file(str(params.get("path") or ""), results)
        if action == "show":
            return self.show(str(params.get("path") or ""), results)
        if action == "edit":
            return self.edit(str(params.get("path") or ""), results)
        if action in ("save", "save_run", "new"):
            name = safe_filename(str(form.get("path") or form.get("name") or ""))
            if name is None:
                return _bad_name(str(form.get("path") or form.get("name") or ""))
            code = str(form.get("code") or "")
            if action == "save_run":
                return self.run_code(name, code, results)
            return self.save(name, code, results)
        if action == "use_template":
            key = str(params.get("key") or request.get("selected") or "")
            template = next((t for t in TEMPLATES if key in (t.key, t.title)), None)
            if template is None:
                return self.help()
            return self.save(
                template.filename,
                template.code,
                results,
                note=f"已用模板“{template.title}”写好",
            )
        if action == "run_snippet":
            return self.run_code(SNIPPET_FILE, str(request.get("value") or ""), results)
        return self.listing(results)

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
            actions.append(
                {
                    "type": "button",
                    "label": "查看",
                    "action_id": "show",
                    "params": {"path": f["name"]},
                }
            )
            actions.append(
                {
                    "type": "button",
                    "label": "运行",
                    "action_id": "run",
                    "params": {"path": f["name"]},
                }
            )
        actions += _common_actions()
        if not ok:
            message = f"读取工作区失败：{error}"
        elif files:
            message = f"工作区有 {len(files)} 个 Python 文件"
        else:
            message = "工作区还没有 Python 文件。试试“执行代码 print(2**10)”或“写一个计算斐波那契数列的程序”"
        return {
            "status": "ok",
            "view_type": "list",
            "data": {"title": "我的 Python 文件", "items": items},
            "actions": actions,
            "message": message,
        }

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
            return _text(f"写入 {path} 失败：{error}", status="error")
        return self._ran(path, code, results, 2)

    def run_file(self, path: str, results: Mapping[str, Any]) -> dict[str, Any]:
        name, early = self._read_first(path, results, run=True)
        if early is not None:
            return early
        ok, code, error = step_outcome(results, 1)
        if not ok:
            return _text(f"找不到 workspace/{name}：{error}", status="error")
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
            return _code_view(
                path, code, f"运行失败：{error}", output=error, returncode=None
            )
        stdout = str(run.get("stdout") or "")
        stderr = str(run.get("stderr") or "")
        returncode = run.get("returncode")
        output = stdout + (
            ("\n" if stdout and not stdout.endswith("\n") else "") + stderr
            if stderr
            else ""
        )
        if returncode == 0:
            shown = stdout.strip() or "（没有输出）"
            message = f"运行结果：{shown[:MAX_SPOKEN]}"
        else:
            last = (stderr.strip().splitlines() or [""])[-1]
            message = f"运行出错（退出码 {returncode}）：{last[:MAX_SPOKEN]}"
        return _code_view(
            path,
            code,
            message,
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
            return _text(f"找不到 workspace/{name}：{error}", status="error")
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
        draft = draft_code(self.llm_provider(), revision_prompt(name, current, change))
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
        return {
            "status": "ok",
            "view_type": "form",
            "data": {"title": f"编辑 {name}", "fields": fields},
            "actions": [
                {
                    "type": "submit_form",
                    "label": "保存",
                    "action_id": "save",
                    "fields": fields,
                },
                {
                    "type": "submit_form",
                    "label": "保存并运行",
                    "action_id": "save_run",
                    "fields": fields,
                },
                {
                    "type": "button",
                    "label": "取消",
                    "action_id": "show",
                    "params": {"path": name},
                },
            ],
            "message": message or (f"正在编辑 {name}" if code else f"新建 {name}"),
        }

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
            return _text(f"保存 {name} 失败：{error}", status="error")
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
                return _text(f"写入失败：{error}", status="error")
            path = str((written or {}).get("path") or "").removeprefix("workspace/")
            _, code, _ = step_outcome(results, 2)
            if template is not None and str(code or "") == template.code:
                why = failure_note() if self._llm_configured() else ""
                message = f"{why}已用模板“{template.title}”写好 {path}。"
                if not why:
                    message += ENABLE_HINT
            else:
                message = f"已根据描述写好 {path}，可以运行或编辑"
            return _code_view(path, str(code or ""), message)
        draft = draft_code(self.llm_provider(), description)
        if draft.code is not None:
            return self._write_plan(program_filename(description), draft.code)
        if template is not None:
            return self._write_plan(template.filename, template.code)
        why = f"{draft.note}先从模板开始吧。" if draft.note else ENABLE_HINT
        return self.templates_view(f"没有找到合适的模板。{why}")

    def _llm_configured(self) -> bool:
        llm = self.llm_provider()
        try:
            return bool(llm is not None and getattr(llm, "available", False))
        except Exception:
            return False

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
            {
                "type": "button",
                "label": t.title,
                "action_id": "use_template",
                "params": {"key": t.key},
            }
            for t in TEMPLATES
        ]
        actions += _common_actions()
        return {
            "status": "ok",
            "view_type": "list",
            "data": {"title": "代码模板", "items": items},
            "actions": actions,
            "message": message,
        }

    def help(self) -> dict[str, Any]:
        return self.templates_view(
            "我可以写、看、改、运行 Python 代码。试试：“执行代码 print(2**10)”、“运行 hello.py”、"
            "“列出我的代码文件”、“写一个计算斐波那契数列的程序”。"
        )


def _common_actions() -> list[dict[str, Any]]:
    return [
        {
            "type": "input",
            "label": "执行代码",
            "action_id": "run_snippet",
            "placeholder": "输入一行 Python，如 print(2**10)",
        },
        {
            "type": "submit_form",
            "label": "新建文件",
            "action_id": "new",
            "fields": [
                {"name": "path", "label": "文件名", "type": "text"},
                {"name": "code", "label": "代码", "type": "textarea"},
            ],
        },
        {
            "type": "select",
            "label": "模板",
            "action_id": "use_template",
            "options": [{"label": t.title, "value": t.key} for t in TEMPLATES],
        },
    ]
