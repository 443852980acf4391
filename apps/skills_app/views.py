"""What the 技能 window shows: every skill, one skill with its form, and a run's output.

Built with `aios_sdk.views`. The window is a table (name, kind, source, summary; a
broken skill's summary is its error) with an 打开 button in each row (`show`, params
`name`), an input to install a file of the workspace (`install`) and 重新加载
(`reload`). A skill is a dashboard: its summary, its help text or steps, the last
output; an executable one has a 运行 form (`run`) whose fields come from its
`--help`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aios_sdk.views import button, input_box, reply, submit_form

__all__ = ["KINDS", "output_text", "skill_view", "skills_window"]

TITLE = "技能 (Skills)"
KINDS = {"executable": "可执行", "markdown": "Markdown", "folder": "SKILL.md"}
SOURCES = {"shared": "共享", "workspace": "本应用"}


def skills_window(skills: list[Mapping[str, Any]], note: str = "") -> dict[str, Any]:
    """Every skill with its kind, source and summary (`note`: the spoken message)."""
    rows, ids, actions = [], [], []
    for skill in skills:
        name = str(skill["name"])
        summary = f"⚠ {skill['error']}" if skill.get("error") else skill.get("summary", "")
        rows.append(
            [
                name,
                KINDS.get(skill.get("kind", ""), skill.get("kind", "")),
                SOURCES.get(skill.get("source", ""), skill.get("source", "")),
                summary,
            ]
        )
        ids.append(name)
        actions.append(button("打开", "show", name=name, item_id=name))
    actions += [
        input_box("安装技能（工作区里的文件或文件夹）", "install", "例如 my_skill.py"),
        button("重新加载", "reload"),
    ]
    usable = sum(1 for s in skills if not s.get("error"))
    message = note or (f"共有 {usable} 个技能" if skills else "还没有技能")
    return reply(
        "table",
        {
            "title": TITLE,
            "columns": ["名称", "类型", "来源", "说明"],
            "rows": rows,
            "row_ids": ids,
            "empty": "还没有技能 (no skills installed)",
        },
        actions=actions,
        message=message,
    )


def output_text(result: Mapping[str, Any]) -> str:
    """A run's answer as text: the exit code and its meaning, stdout, stderr."""
    parts = [f"退出码 {result.get('returncode')}（{result.get('meaning', '')}）"]
    if result.get("stdout"):
        parts.append(str(result["stdout"]).rstrip("\n"))
    if result.get("stderr"):
        parts.append("stderr:\n" + str(result["stderr"]).rstrip("\n"))
    if result.get("truncated"):
        parts.append("…（输出过长，已截断）")
    return "\n".join(parts)


def skill_view(
    skill: Mapping[str, Any],
    fields: list[dict[str, Any]],
    *,
    output: str | None = None,
    note: str = "",
    notice: str | None = None,
) -> dict[str, Any]:
    """One skill: what it does, its help or steps, the last output, its run form."""
    name = str(skill["name"])
    kind = KINDS.get(skill.get("kind", ""), skill.get("kind", ""))
    source = SOURCES.get(skill.get("source", ""), skill.get("source", ""))
    widgets: list[dict[str, Any]] = [
        {
            "type": "text",
            "title": f"{name} · {kind} · {source}",
            "data": {"content": skill.get("error") or skill.get("summary", "")},
        },
        {
            "type": "code",
            "title": "说明 (--help)" if skill.get("kind") == "executable" else "步骤",
            "data": {"language": "text", "code": skill.get("content", "")},
        },
    ]
    if output is not None:
        widgets.append(
            {"type": "code", "title": "输出", "data": {"language": "text", "code": output}}
        )
    actions: list[dict[str, Any]] = []
    if skill.get("kind") == "executable" and not skill.get("error"):
        actions.append(submit_form("运行", "run", fields))
    actions.append(button("返回列表", "refresh"))
    return reply(
        "dashboard",
        {"title": f"技能「{name}」", "widgets": widgets},
        actions=actions,
        message=note or str(skill.get("summary", "")),
        state={"skill": name},
        notice=notice,
    )
