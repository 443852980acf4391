"""What the 技能 window shows: every skill, one skill with its form, and a run's output.

Built with `aios_sdk.views`, every label in the user's language (`turn.tr`). The
window is a table (name, kind, source, summary; a broken skill's summary is its
error) with an 打开 button in each row (`show`, params `name`), an input to install
a file of the workspace (`install`) and 重新加载 (`reload`). A skill is a dashboard:
the last output first, its summary, its help text (folded) or steps; an executable
one has a 运行 form (`run`) whose fields come from its `--help`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aios_sdk import Turn
from aios_sdk.views import (
    button,
    code_reply,
    dashboard_reply,
    input_box,
    submit_form,
    table_reply,
    text_reply,
    widget,
)

__all__ = [
    "exit_meaning",
    "help_text",
    "output_text",
    "skill_view",
    "skills_window",
    "summary",
]


def summary(skill: Mapping[str, Any], turn: Turn) -> str:
    """What the skill does, in the user's language when it says it in theirs."""
    said = skill.get("summaries") or {}
    return str(said.get(turn.language) or skill.get("summary", ""))


def help_text(skill: Mapping[str, Any], turn: Turn) -> str:
    """An executable's `--help` in the user's language; any other skill's content."""
    said = skill.get("contents") or {}
    return str(said.get(turn.language) or skill.get("content", ""))


def _kind_name(kind: str, turn: Turn) -> str:
    """What a skill's kind is called: 可执行 / executable, Markdown, SKILL.md."""
    if kind == "executable":
        return turn.tr("可执行", "executable")
    return {"markdown": "Markdown", "folder": "SKILL.md"}.get(kind, kind)


def _source_name(source: str, turn: Turn) -> str:
    if source == "shared":
        return turn.tr("共享", "shared")
    if source == "workspace":
        return turn.tr("本应用", "this app")
    return source


def _help_title(skill: Mapping[str, Any], turn: Turn) -> str:
    """The title over a skill's text: its `--help`, or its steps."""
    if skill.get("kind") == "executable":
        return turn.tr("使用说明", "How to use it")
    return turn.tr("步骤", "Steps")


def skills_window(
    skills: Sequence[Mapping[str, Any]],
    turn: Turn,
    note: str = "",
    *,
    notice: str | None = None,
    detail: str | None = None,
) -> dict[str, Any]:
    """Every skill with its kind, source and summary (`note`: the spoken message;
    `notice` and `detail` when what was asked did not work)."""
    rows, ids, actions = [], [], []
    for skill in skills:
        name = str(skill["name"])
        said = f"⚠ {skill['error']}" if skill.get("error") else summary(skill, turn)
        rows.append(
            [
                name,
                _kind_name(skill.get("kind", ""), turn),
                _source_name(skill.get("source", ""), turn),
                said,
            ]
        )
        ids.append(name)
        actions.append(button(turn.tr("打开", "Open"), "show", name=name, item_id=name))
    actions += [
        input_box(
            turn.tr(
                "安装技能（工作区里的文件或文件夹）",
                "Install a skill (a file or folder of the workspace)",
            ),
            "install",
            turn.tr("例如 my_skill.py", "e.g. my_skill.py"),
        ),
        button(turn.tr("重新加载", "Reload"), "reload"),
    ]
    usable = sum(1 for s in skills if not s.get("error"))
    none = turn.tr("还没有技能", "No skills installed yet")
    count = turn.tr(f"共有 {usable} 个技能", f"{usable} skill{'' if usable == 1 else 's'}")
    return table_reply(
        [
            turn.tr("名称", "Name"),
            turn.tr("类型", "Kind"),
            turn.tr("来源", "Source"),
            turn.tr("说明", "Summary"),
        ],
        rows,
        row_ids=ids,
        title=turn.tr("技能", "Skills"),
        empty=none,
        actions=actions,
        message=note or (count if skills else none),
        notice=notice,
        detail=detail,
    )


def exit_meaning(code: int, turn: Turn) -> str:
    """What an exit code means by the skills' format, in the user's language."""
    if code == 0:
        return turn.tr("成功", "success")
    if code == 1:
        return turn.tr("参数错误或执行失败", "bad arguments or a general failure")
    if code < 0:
        return turn.tr(f"被信号 {-code} 终止", f"killed by signal {-code}")
    return turn.tr(f"技能自己的错误码 {code}", f"the skill's own error code {code}")


def output_text(result: Mapping[str, Any], turn: Turn) -> str:
    """A run's answer as text: stdout first, then stderr, then the exit code and its
    meaning (left out when the run succeeded and said something)."""
    code = result.get("returncode")
    meaning = exit_meaning(code, turn) if isinstance(code, int) else result.get("meaning")
    parts = []
    if result.get("stdout"):
        parts.append(str(result["stdout"]).rstrip("\n"))
    if result.get("stderr"):
        parts.append("stderr:\n" + str(result["stderr"]).rstrip("\n"))
    if result.get("truncated"):
        parts.append(
            turn.tr("…（输出过长，已截断）", "… (the output was too long and was cut)")
        )
    if code != 0 or not parts:
        parts.append(
            turn.tr(f"退出码 {code}（{meaning}）", f"Exit code {code} ({meaning})")
        )
    return "\n".join(parts)


def skill_view(
    skill: Mapping[str, Any],
    fields: list[dict[str, Any]],
    turn: Turn,
    *,
    output: str | None = None,
    note: str = "",
    notice: str | None = None,
    detail: str | None = None,
) -> dict[str, Any]:
    """One skill: the last output first, what it does, its help (folded: the form's
    labels carry each option's help) or its steps, and its run form."""
    name = str(skill["name"])
    kind = _kind_name(skill.get("kind", ""), turn)
    source = _source_name(skill.get("source", ""), turn)
    widgets = []
    if output is not None:
        widgets.append(widget(code_reply(output, "text"), turn.tr("输出", "Output")))
    widgets += [
        widget(
            text_reply(str(skill.get("error") or summary(skill, turn))),
            f"{name} · {kind} · {source}",
        ),
        widget(
            code_reply(help_text(skill, turn), "text"),
            _help_title(skill, turn),
            folded=skill.get("kind") == "executable",
        ),
    ]
    actions: list[dict[str, Any]] = []
    if skill.get("kind") == "executable" and not skill.get("error"):
        actions.append(submit_form(turn.tr("运行", "Run"), "run", fields))
    actions.append(button(turn.tr("返回列表", "Back to the list"), "refresh"))
    return dashboard_reply(
        widgets,
        turn.tr(f"技能「{name}」", f'Skill "{name}"'),
        actions=actions,
        message=note or summary(skill, turn),
        state={"skill": name},
        notice=notice,
        detail=detail,
    )
