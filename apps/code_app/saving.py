"""Saving what the user typed in the code app: the edit form, and writing it.

`SavingFlows` is the part of `flows.CodeFlows` that saves: `edit_form` (the one
editable copy of the code; its `editing` — the existing file it edits, kept as
`cwd_state["editing"]` — says whether saving needs a check), `save` (one
`file_write`), `save_checked` (a `file_list` of the name's folder first: a name in
use asks, offering 覆盖, the typed code kept) and `declined` (the user refused the
overwrite: not a failure; the form comes back with the code and a plain "not
saved"). Also the views every flow ends in: `code_view` (the code and, after a run,
its whole output), `text_view`, and the file controls.
"""

from __future__ import annotations

from typing import Any

from aios_sdk import Turn
from aios_sdk.views import button, code_reply, form_reply, submit_form, text_reply

from .output import RunOutput

__all__ = [
    "DENIED",
    "SavingFlows",
    "code_view",
    "file_actions",
    "files_button",
    "text_view",
    "was_denied",
    "write_step",
]

DENIED = "denied_by_user"  # the code of a step the user refused


def write_step(step_id: int, path: str, content: str) -> dict[str, Any]:
    return {
        "step_id": step_id,
        "tool": "file_write",
        "args": {"path": path, "content": content},
    }


def was_denied(turn: Turn, step: int) -> bool:
    """Whether the user refused step `step` (or another step of its plan)."""
    return (turn.results.get(f"step_{step}") or {}).get("code") == DENIED


def files_button(turn: Turn, label: str | None = None) -> dict[str, Any]:
    return button(label or turn.tr("文件列表", "Files"), "list")


def file_actions(turn: Turn, path: str) -> list[dict[str, Any]]:
    return [
        button(turn.tr("运行", "Run"), "run", path=path),
        button(turn.tr("编辑", "Edit"), "edit", path=path),
        files_button(turn),
    ]


def text_view(
    turn: Turn, content: str, *, status: str = "ok", detail: str | None = None
) -> dict[str, Any]:
    return text_reply(content, actions=[files_button(turn)], status=status, detail=detail)


def code_view(
    turn: Turn,
    path: str,
    code: str,
    message: str,
    *,
    notice: str | None = None,
    detail: str | None = None,
    output: RunOutput | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return code_reply(
        code,
        "python",
        extra_data={"filename": f"workspace/{path}", **extra},
        output=None if output is None else output.text,
        output_truncated=output is not None and output.truncated,
        output_size=None if output is None else output.size,
        actions=file_actions(turn, path),
        message=message,
        state={"last_file": path},
        notice=notice,
        detail=detail,
    )


class SavingFlows:
    """Saving for the code app's flows (mixed into `CodeFlows`, which runs code)."""

    agent: Any

    def run_code(self, turn: Turn, path: str, code: str, first: int = 1) -> dict[str, Any]:
        raise NotImplementedError  # CodeFlows runs code

    def edit_form(
        self,
        turn: Turn,
        name: str,
        code: str,
        message: str = "",
        *,
        editing: str | None,
        notice: str | None = None,
        detail: str | None = None,
        taken: bool = False,
    ) -> dict[str, Any]:
        """The form holding `code`; `editing` is the existing file it edits (None: a new
        one, whose name is checked when saved); `taken` offers 覆盖 for a name in use."""
        fields = [
            {
                "name": "path",
                "label": turn.tr("文件名", "File name"),
                "type": "text",
                "value": name,
            },
            {
                "name": "code",
                "label": turn.tr("代码", "Code"),
                "type": "code",
                "value": code,
            },
        ]
        if not message:
            if code:
                message = turn.tr(f"正在编辑 {name}", f"Editing {name}")
            else:
                message = turn.tr(f"新建 {name}", f"New file {name}")
        # no fields of their own: they submit the form view, the one editable copy
        actions = [
            submit_form(turn.tr("保存", "Save"), "save"),
            submit_form(turn.tr("保存并运行", "Save and run"), "save_run"),
            button(turn.tr("取消", "Cancel"), "show", path=editing)
            if editing
            else files_button(turn, turn.tr("取消", "Cancel")),
        ]
        if taken:
            actions.insert(0, submit_form(turn.tr("覆盖", "Overwrite"), "overwrite"))
        return form_reply(
            fields,
            turn.tr(f"编辑 {name}", f"Edit {name}"),
            actions=actions,
            message=message,
            notice=notice,
            detail=detail,
            state={"editing": editing},
        )

    def save(
        self, turn: Turn, name: str, code: str, note: str = "", step: int = 1
    ) -> dict[str, Any]:
        """Write `code` to `name` as step `step` (after a name check, 2), then show it."""
        if f"step_{step}" not in turn.results:
            return self.agent.plan_steps(
                [write_step(step, name, code)], turn.tr("正在保存…", "Saving…")
            )
        ok, _, error = turn.outcome(step)
        if not ok and was_denied(turn, step):
            return self.declined(turn, name, code)
        if not ok:
            message = turn.tr(
                f"保存 {name} 失败，文件没有改动",
                f"Could not save {name}; the file is unchanged",
            )
            return text_view(turn, message, status="error", detail=error)
        note = note or turn.tr("已保存", "Saved")
        return code_view(turn, name, code, f"{note} {name}")

    def declined(
        self, turn: Turn, name: str, code: str, *, run: bool = False
    ) -> dict[str, Any]:
        """The user refused to overwrite `name`: not a failure; the form, code kept."""
        if run:
            message = turn.tr(
                f"没有保存，也没有运行：你拒绝了覆盖 {name}。你的代码还在下面。",
                f"Not saved and not run: you declined to overwrite {name}. "
                "Your code is still below.",
            )
        else:
            message = turn.tr(
                f"没有保存：你拒绝了覆盖 {name}。你的代码还在下面。",
                f"Not saved: you declined to overwrite {name}. Your code is still below.",
            )
        return self.edit_form(turn, name, code, message, notice="info", editing=name)

    def save_checked(
        self, turn: Turn, name: str, code: str, *, run: bool = False
    ) -> dict[str, Any]:
        """Save (and with `run`, run) `code` as `name` only when no file has that name
        yet: a `file_list` of its folder first; a name in use asks (`edit_form` with
        覆盖), the typed code kept."""
        folder, _, base = name.rpartition("/")
        if not turn.results:
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "file_list",
                        "args": {"path": folder or "workspace", "pattern": base},
                    }
                ],
                turn.tr("正在保存…", "Saving…"),
            )
        if "step_1" in turn.results:  # the check's answer: write now, or ask
            ok, listing, error = turn.outcome(1)
            missing = (turn.results["step_1"] or {}).get("code") == "file_not_found"
            files = (listing or {}).get("files", []) if ok else []
            taken = any(f.get("name") == base for f in files)
            if not ok and not missing:
                message = turn.tr(
                    f"没能确认 {name} 是否已经存在，所以没有保存；请再试一次。",
                    f"Could not check whether {name} exists, so nothing was "
                    "saved; please try again.",
                )
            elif taken:
                message = turn.tr(
                    f"{name} 已经存在。点“覆盖”用你的代码替换它，或改一个文件名再保存。",
                    f'{name} already exists. Press "Overwrite" to replace it '
                    "with your code, or change the file name and save.",
                )
            else:
                message = ""
            if message:  # ask, the typed code kept in the form
                return self.edit_form(
                    turn,
                    name,
                    code,
                    message,
                    notice="warning",
                    detail=error or None,
                    editing=None,
                    taken=taken,
                )
        if run:
            return self.run_code(turn, name, code, first=2)
        return self.save(turn, name, code, step=2)
