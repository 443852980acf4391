"""How the code app answers: plan file and shell steps, then show code and output.

Write (`file_write`), show (`file_read` → `code` view), edit (a `form` with a
`submit_form` carrying the code), run (`shell_exec` `python3 FILE`, inside the
executor's sandbox, output shown) and list (`file_list` of `*.py`). "执行代码
print(2**10)" writes the snippet to `snippet.py` and runs it, and its answer says
so. All side effects are steps for the executor; this module only plans and
renders. Each file's 查看 / 运行 sit in its row (`item_id`); a program that fails or is stopped is an
`ok` reply with `notice="warning"`, a plain sentence, and the error text as `detail`.
A run's whole output is shown below its code (`output`). An existing file is never
overwritten unasked: saving under a name other than the file being edited, and
新建文件, check the name first (`saving.SavingFlows`); written programs and templates
get a free name. A step the user refused (`denied_by_user`) is not a failure.
Every text the user reads is in their language (`turn.tr(zh, en)`): each flow gets
the `Turn`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aios_sdk import Flows, Turn, action
from aios_sdk.views import (
    button,
    input_box,
    link,
    list_reply,
    select,
    submit_form,
)

from .intent import CodeIntent, read_intent, safe_filename
from .output import last_line, run_output, said_output
from .saving import (
    DENIED,
    SavingFlows,
    code_view,
    text_view,
    was_denied,
    write_step,
)
from .templates import TEMPLATES, Template, match_template
from .writer import (
    ENABLE_HINT,
    ENABLE_HINT_EN,
    draft_code,
    failure_note,
    free_name,
    revision_prompt,
)
from .writing import CodeWriting

__all__ = ["SNIPPET_FILE", "CodeFlows"]

SNIPPET_FILE = "snippet.py"
RUN_TIMEOUT = 30
SETTINGS = "aios:settings"  # the desktop's Settings, as a link names it
_RUN_WORDS = ("运行", "执行", "run", "execute")


def _run_step(step_id: int, path: str) -> dict[str, Any]:
    return {
        "step_id": step_id,
        "tool": "shell_exec",
        "args": {"cmd": ["python3", path], "timeout": RUN_TIMEOUT},
    }


def _taken_names(turn: Turn) -> set[str]:
    """The top-level names in the workspace, as the controller passed them."""
    return {str(name) for name in turn.state.get("files") or []}


def _run_failure(turn: Turn, entry: Mapping[str, Any]) -> str:
    """Why a run did not finish, said plainly (the tool's own text is the detail)."""
    if entry.get("code") == DENIED:
        return turn.tr("没有运行：你拒绝了这一步", "Not run: you declined this step")
    if entry.get("code") == "tool_timeout":
        return turn.tr(
            f"运行超过 {RUN_TIMEOUT} 秒，已被停止",
            f"The program ran longer than {RUN_TIMEOUT} s and was stopped",
        )
    if entry.get("code") in ("path_outside_workdir", "file_not_found"):
        return turn.tr(
            "运行失败：找不到这个文件", "Could not run it: the file is not there"
        )
    return turn.tr("运行失败", "The program could not be run")


def _enable_hint(turn: Turn) -> str:
    return turn.tr(ENABLE_HINT, ENABLE_HINT_EN)


def _offering_settings(reply: dict[str, Any], turn: Turn) -> dict[str, Any]:
    """`reply` (which says a model key is set in Settings) with a button opening the
    desktop's Settings (a link to the desktop's own place `aios:settings`)."""
    opens = link(turn.tr("打开设置", "Open Settings"), "open_settings", SETTINGS)
    return {**reply, "actions": [*(reply.get("actions") or []), opens]}


def _template_title(turn: Turn, template: Template) -> str:
    return turn.tr(template.title, template.title_en)


def _bad_name(turn: Turn, name: str) -> dict[str, Any]:
    return text_view(
        turn,
        turn.tr(
            f"文件名“{name}”不行：只能是工作区里的 .py 文件（不能含 ..、绝对路径或特殊字符）。",
            f'The file name "{name}" cannot be used: it must be a .py file in the '
            'workspace (no "..", no absolute path, no special characters).',
        ),
        status="error",
    )


class CodeFlows(SavingFlows, Flows):
    """The code app's behaviour, over an agent that plans steps (and has an `llm`)."""

    # ------------------------------------------------------------------ what was said

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        return self.on_intent(read_intent(turn.instruction), turn)

    def on_intent(self, intent: CodeIntent, turn: Turn) -> dict[str, Any]:
        kind = intent.kind
        if kind == "run_snippet":
            return self.run_code(turn, SNIPPET_FILE, intent.code, snippet=True)
        if kind == "run_file":
            return self.run_file(turn, intent.path)
        if kind == "show":
            return self.show(turn, intent.path)
        if kind == "edit":
            return self.edit(turn, intent.path, intent.description)
        if kind == "new":
            name = safe_filename(intent.path)
            if name is None:
                return _bad_name(turn, intent.path)
            return self.edit_form(turn, name, "", editing=None)
        if kind == "write":
            return self.write(turn, intent.description)
        if kind == "run_named":
            return self.run_named(turn, intent.path)
        if kind == "help":
            if any(w in intent.description.lower() for w in _RUN_WORDS):
                return self.run_named(turn, "")  # "运行": which program?
            return self.help(turn)
        return self.listing(turn)

    # ------------------------------------------------------------------ the controls

    @action("run")
    def on_run(self, turn: Turn) -> dict[str, Any]:
        return self.run_file(turn, str(turn.params.get("path") or ""))

    @action("show")
    def on_show(self, turn: Turn) -> dict[str, Any]:
        return self.show(turn, str(turn.params.get("path") or ""))

    @action("edit")
    def on_edit(self, turn: Turn) -> dict[str, Any]:
        return self.edit(turn, str(turn.params.get("path") or ""))

    @action("save", "save_run", "new", "overwrite")
    def on_save(self, turn: Turn) -> dict[str, Any]:
        """保存 / 保存并运行 / 新建文件 / 覆盖: a new file, or a name other than the file
        being edited, is checked first (`save_checked`); 覆盖 is the user's yes."""
        form = turn.form_values
        asked = str(form.get("path") or form.get("name") or "")
        name = safe_filename(asked)
        if name is None:
            return _bad_name(turn, asked)
        code = str(form.get("code") or "")
        run = turn.action_id == "save_run"
        if turn.action_id == "new" or (
            turn.action_id != "overwrite" and name != turn.state.get("editing")
        ):
            return self.save_checked(turn, name, code, run=run)
        if run:
            return self.run_code(turn, name, code)
        return self.save(turn, name, code)

    @action("use_template")
    def on_use_template(self, turn: Turn) -> dict[str, Any]:
        key = str(turn.params.get("key") or turn.selected or "")
        template = next((t for t in TEMPLATES if key in (t.key, t.title, t.title_en)), None)
        if template is None:
            return self.help(turn)
        title = _template_title(turn, template)
        note = turn.tr(f"已用模板“{title}”写好", f'Written from the template "{title}":')
        if turn.results:  # written: under the name the write answered
            written = (turn.results.get("step_1") or {}).get("result")
            path = written.get("path") if isinstance(written, Mapping) else None
            name = str(path or template.filename).removeprefix("workspace/")
        else:  # a fresh name: a template never replaces a file
            name = free_name(template.filename, _taken_names(turn))
        return self.save(turn, name, template.code_in(turn.language), note=note)

    @action("run_snippet")
    def on_run_snippet(self, turn: Turn) -> dict[str, Any]:
        return self.run_code(turn, SNIPPET_FILE, str(turn.value or ""), snippet=True)

    def on_unknown_action(self, turn: Turn) -> dict[str, Any]:
        """`list` and anything else: the workspace's Python files."""
        return self.listing(turn)

    # ------------------------------------------------------------------ flows

    def run_named(self, turn: Turn, name: str) -> dict[str, Any]:
        """Run the workspace's program `name` ("fibonacci" is fibonacci.py); a name
        that is no program here, or none, is a question: the list of programs, each
        with its 运行. Never an earlier program's output in place of an answer."""
        programs = {f for f in _taken_names(turn) if f.endswith(".py")}
        found = next((f for f in (name, f"{name}.py") if name and f in programs), None)
        if found is not None:
            return self.run_file(turn, found)
        return self.listing(turn, which=name)

    def listing(self, turn: Turn, *, which: str | None = None) -> dict[str, Any]:
        """The workspace's Python files; with `which`, as the question which one to
        run (`which` the name asked for that is no program here, or "")."""
        programs = any(f.endswith(".py") for f in _taken_names(turn))
        if turn.results:
            ok, listing, error = turn.outcome(1)
        elif which is not None and not programs:  # nothing to pick from: said now
            ok, listing, error = True, {}, ""
        else:
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "file_list",
                        "args": {"path": "workspace", "pattern": "*.py", "recursive": True},
                    }
                ]
            )
        files = (
            [f for f in (listing or {}).get("files", []) if not f.get("is_dir")]
            if ok
            else []
        )
        items = [
            {
                "title": f["name"],
                "sub": turn.tr(f"{f.get('size', 0)} 字节", f"{f.get('size', 0)} bytes"),
                "id": f["name"],
            }
            for f in files
        ]
        actions: list[dict[str, Any]] = []
        for f in files[:30]:
            actions += [
                button(turn.tr("查看", "View"), "show", path=f["name"], item_id=f["name"]),
                button(turn.tr("运行", "Run"), "run", path=f["name"], item_id=f["name"]),
            ]
        actions += _common_actions(turn)
        title = turn.tr("我的 Python 文件", "My Python files")
        if not ok:
            return list_reply(
                [],
                title,
                empty=turn.tr(
                    "工作区暂时读不出来", "The workspace cannot be read right now"
                ),
                actions=actions,
                message=turn.tr(
                    "读取工作区失败，请稍后再试",
                    "Could not read the workspace; please try again later",
                ),
                notice="warning",
                detail=error,
            )
        missing = (
            turn.tr(f"没有叫“{which}”的程序。", f'There is no program called "{which}". ')
            if which
            else ""
        )
        if files and which is not None:  # a question; a name not found: not done
            message = missing + turn.tr("要运行哪个程序？", "Which program should I run?")
            asked = "warning" if which else "info"
            return list_reply(items, title, actions=actions, message=message, notice=asked)
        if files:
            count = len(files)
            message = turn.tr(
                f"工作区有 {count} 个 Python 文件",
                f"The workspace has {count} Python file{'s' * (count != 1)}",
            )
            return list_reply(items, title, actions=actions, message=message)
        message = missing + turn.tr(
            "工作区还没有 Python 文件。试试“执行代码 print(2**10)”或“写一个计算斐波那契数列的程序”",
            'The workspace has no Python files yet. Try "run print(2**10)" or '
            '"write a program that prints the Fibonacci numbers"',
        )
        nothing_run = "warning" if which is not None else None  # asked to run one
        return list_reply(
            items, title, actions=actions, message=message, notice=nothing_run
        )

    def run_code(
        self, turn: Turn, path: str, code: str, first: int = 1, *, snippet: bool = False
    ) -> dict[str, Any]:
        """Write `code` to `path`, then run it: F "执行代码 print(2**10)" → 1024.
        The steps are numbered from `first` (after a name check, 2). A `snippet` (code
        said, not a file the user named) says where it was saved."""
        if not code.strip():
            return text_view(
                turn,
                turn.tr("没有要运行的代码。", "There is no code to run."),
                status="error",
            )
        if f"step_{first}" not in turn.results:
            return self.agent.plan_steps(
                [
                    write_step(first, path, code.rstrip("\n") + "\n"),
                    _run_step(first + 1, path),
                ],
                turn.tr("正在运行…", "Running…"),
            )
        ok, _, error = turn.outcome(first)
        if not ok and was_denied(turn, first):
            return self.declined(turn, path, code, run=True)
        if not ok:
            message = turn.tr(f"写入 {path} 失败", f"Could not write {path}")
            return text_view(turn, message, status="error", detail=error)
        return self._ran(turn, path, code, first + 1, saved=snippet)

    def run_file(self, turn: Turn, path: str) -> dict[str, Any]:
        name, early = self._read_first(turn, path, run=True)
        if early is not None:
            return early
        ok, code, error = turn.outcome(1)
        if not ok:
            return self._missing(turn, name, error)
        return self._ran(turn, name, str(code), 2)

    def _missing(self, turn: Turn, name: str, error: str) -> dict[str, Any]:
        message = turn.tr(f"找不到程序 {name}", f"There is no program {name}")
        return text_view(turn, message, status="error", detail=error)

    def _read_first(
        self, turn: Turn, path: str, *, run: bool = False
    ) -> tuple[str, dict[str, Any] | None]:
        """(safe name, reply to return now): the refusal, or the plan reading the file
        (and running it, with `run`); no reply once the plan's results are here."""
        name = safe_filename(path)
        if name is None:
            return path, _bad_name(turn, path)
        if turn.results:
            return name, None
        steps = [{"step_id": 1, "tool": "file_read", "args": {"path": name}}]
        if run:
            steps.append(_run_step(2, name))
            return name, self.agent.plan_steps(steps, turn.tr("正在运行…", "Running…"))
        return name, self.agent.plan_steps(steps, turn.tr("正在读取…", "Reading…"))

    def _ran(
        self, turn: Turn, path: str, code: str, step: int, *, saved: bool = False
    ) -> dict[str, Any]:
        """The code view with the whole output of the run of step `step`; `saved`: its
        message says the code was saved as `path`."""
        where = (
            turn.tr(
                f"（代码已存为工作区里的 {path}）",
                f" (the code is saved as {path} in the workspace)",
            )
            if saved
            else ""
        )
        ok, run, error = turn.outcome(step)
        if not ok or not isinstance(run, Mapping):
            entry = turn.results.get(f"step_{step}") or {}
            result = entry.get("result")
            partial = result if isinstance(result, Mapping) else {}
            return code_view(
                turn,
                path,
                code,
                _run_failure(turn, entry) + where,
                output=run_output(partial) if partial else None,
                returncode=None,
                notice="info" if was_denied(turn, step) else "warning",
                detail=error,
            )
        output = run_output(run)
        returncode = run.get("returncode")
        failed: dict[str, Any] = {}
        if returncode == 0:
            message = said_output(turn, output)
        else:
            last = last_line(output.stderr)
            message = turn.tr(
                f"运行出错（退出码 {returncode}）：{last}",
                f"The program failed (exit code {returncode}): {last}",
            )
            failed = {"notice": "warning", "detail": output.stderr.strip() or None}
        return code_view(
            turn,
            path,
            code,
            message + where,
            **failed,
            output=output,
            stdout=output.stdout,
            stderr=output.stderr,
            returncode=returncode,
        )

    def show(self, turn: Turn, path: str) -> dict[str, Any]:
        name, early = self._read_first(turn, path)
        if early is not None:
            return early
        ok, code, error = turn.outcome(1)
        if not ok:
            return self._missing(turn, name, error)
        return code_view(turn, name, str(code), turn.tr(f"这是 {name}", f"This is {name}"))

    def edit(self, turn: Turn, path: str, change: str = "") -> dict[str, Any]:
        """The edit form; with a requested `change`, the model's revision (if any) prefilled."""
        name, early = self._read_first(turn, path)
        if early is not None:
            return early
        ok, code, _ = turn.outcome(1)
        current = str(code) if ok else ""
        editing = name if ok else None  # a file that is not there yet is a new one
        if not change:
            return self.edit_form(turn, name, current, editing=editing)
        prompt = revision_prompt(name, current, change)
        draft = draft_code(self.llm, prompt, turn.language)
        if draft.code is None:
            if draft.note:
                why = draft.note + turn.tr(
                    "请自己修改。", "please make the change yourself."
                )
            else:
                why = _enable_hint(turn)
            message = turn.tr(
                f"请在下面按“{change}”修改 {name}。{why}",
                f'Change {name} below ("{change}"). {why}',
            )
            form = self.edit_form(turn, name, current, message, editing=editing)
            return form if draft.note else _offering_settings(form, turn)
        message = turn.tr(
            f"已按“{change}”改好 {name}，检查后点“保存”",
            f'{name} is changed ("{change}"); check it, then press "Save"',
        )
        return self.edit_form(turn, name, draft.code, message, editing=editing)

    def write(
        self, turn: Turn, description: str, *, use_model: bool = True
    ) -> dict[str, Any]:
        """ "写一个…": the model writes it with the agent loop when configured
        (`writing.CodeWriting`); otherwise (or when it failed) a template.

        Planned as [file_write, file_read]: the second call shows what was written
        (read back), so a model's answer is never asked for twice. A model that
        fails is never an error: the template (or the template list) with a note.
        """
        template = match_template(description)
        if turn.results:
            ok, written, error = turn.outcome(1)
            if not ok:
                message = turn.tr("写入失败", "Could not write the file")
                return text_view(turn, message, status="error", detail=error)
            path = str((written or {}).get("path") or "").removeprefix("workspace/")
            _, code, _ = turn.outcome(2)
            if template is not None and str(code or "") == template.code_in(turn.language):
                title = _template_title(turn, template)
                if self.llm_available():  # the model was asked, and failed
                    message = failure_note(language=turn.language) + turn.tr(
                        f"已用模板“{title}”写好 {path}。",
                        f'wrote {path} from the template "{title}".',
                    )
                else:
                    message = turn.tr(
                        f"已用模板“{title}”写好 {path}。",
                        f'Wrote {path} from the template "{title}". ',
                    ) + _enable_hint(turn)
                    shown = code_view(turn, path, str(code or ""), message)
                    return _offering_settings(shown, turn)
            else:
                message = turn.tr(
                    f"已根据描述写好 {path}，可以运行或编辑",
                    f"Wrote {path} from your description; you can run or edit it",
                )
            return code_view(turn, path, str(code or ""), message)
        if use_model and self.llm_available():
            return CodeWriting(self.agent).begin(turn, description)
        if template is not None:  # a fresh name: a template never replaces a file
            name = free_name(template.filename, _taken_names(turn))
            return self._write_plan(turn, name, template.code_in(turn.language))
        asked = self.llm_available()  # and it failed
        if asked:
            why = failure_note(language=turn.language) + turn.tr(
                "先从模板开始吧。", "start from a template."
            )
        else:
            why = _enable_hint(turn)
        listed = self.templates_view(
            turn, turn.tr(f"没有找到合适的模板。{why}", f"No template fits. {why}")
        )
        return listed if asked else _offering_settings(listed, turn)

    def _write_plan(self, turn: Turn, name: str, code: str) -> dict[str, Any]:
        return self.agent.plan_steps(
            [
                write_step(1, name, code),
                {"step_id": 2, "tool": "file_read", "args": {"path": name}},
            ],
            turn.tr("正在写代码…", "Writing the code…"),
        )

    def templates_view(self, turn: Turn, message: str) -> dict[str, Any]:
        """What the app can do, when it could not do what was asked (`message` says
        why): marked `warning`, so nobody counts it as done (a scheduled run)."""
        items = [
            {"title": _template_title(turn, t), "sub": t.filename, "id": t.key}
            for t in TEMPLATES
        ]
        use = turn.tr("使用", "Use")
        actions = [button(use, "use_template", key=t.key, item_id=t.key) for t in TEMPLATES]
        actions += _common_actions(turn)
        title = turn.tr("代码模板", "Code templates")
        return list_reply(items, title, actions=actions, message=message, notice="warning")

    def help(self, turn: Turn) -> dict[str, Any]:
        return self.templates_view(
            turn,
            turn.tr(
                "我可以写、看、改、运行 Python 代码。试试：“执行代码 print(2**10)”、“运行 hello.py”、"
                "“列出我的代码文件”、“写一个计算斐波那契数列的程序”。",
                'I can write, show, edit and run Python code. Try: "run print(2**10)", '
                '"run hello.py", "list my code files", '
                '"write a program that prints the Fibonacci numbers".',
            ),
        )


def _common_actions(turn: Turn) -> list[dict[str, Any]]:
    """执行代码 (one line of Python), 新建文件, 模板: under every list."""
    file_name, code = turn.tr("文件名", "File name"), turn.tr("代码", "Code")
    return [
        input_box(
            turn.tr("执行代码", "Run code"),
            "run_snippet",
            turn.tr(
                "输入一行 Python，如 print(2**10)", "One line of Python, e.g. print(2**10)"
            ),
        ),
        submit_form(
            turn.tr("新建文件", "New file"),
            "new",
            [
                {"name": "path", "label": file_name, "type": "text"},
                {"name": "code", "label": code, "type": "code"},
            ],
        ),
        select(
            turn.tr("模板", "Template"),
            "use_template",
            [{"label": _template_title(turn, t), "value": t.key} for t in TEMPLATES],
        ),
    ]
