"""How 技能 answers: find the skill an instruction asks for, show it, fill it, run it.

Opening the window, or asking for the list, shows every skill (`search_skills` with
an empty keyword). "重新加载技能" / "reload skills" calls `reload_skills`; "安装技能
<path>" / "install skill <path>", or the window's install input, plans an
`install_skill` step — the controller asks the user first — and shows the outcome.
Anything else is a request for a skill: the best `search_skills` match for the
instruction. An executable skill is shown with a form built from its `--help`
(`helpform`); with a model configured its arguments are filled by the model in one
round and it runs at once (`run_command`), the form still shown to run it again.
A Markdown or SKILL.md skill is shown with its steps; with a model the steps are
planned with the atomic tools (narrowed to a SKILL.md's `allowed-tools`) and their
results shown. Without a model nothing here fails: the form and the steps are there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from aios_sdk import Flows, Turn, action
from aios_sdk.errors import AiosError, ToolFailed
from aios_sdk.protocol import ATOMIC_TOOLS
from aios_sdk.views import error_reply, text_reply

from .helpform import build_argv, form_fields, parse_help
from .views import output_text, skill_view, skills_window

__all__ = ["SkillsFlows"]

_LIST = re.compile(
    r"(哪些技能|技能列表|所有技能|列出.*技能|打开技能|^技能$|list.*skills?|show.*skills?|^skills?$)",
    re.I,
)
_RELOAD = re.compile(r"(重新加载|重载|刷新).*技能|技能.*(重新加载|重载|刷新)|reload", re.I)
_INSTALL = re.compile(r"安装|install", re.I)
_PATHLIKE = re.compile(r"[\w./-]*[\w-]\.[A-Za-z0-9]+|[\w.-]+/[\w./-]*")
_FILL_SYSTEM = (
    "You fill in the command line of a command-line skill. Read its --help and the "
    'user\'s request and answer JSON {"args": ["--option", "value", ...]} with the '
    "arguments only (not the skill's name). Use only options the help shows."
)


class SkillsFlows(Flows):
    """Every answer of 技能; the skills live with the executor (the skills tools)."""

    def handle(self, instruction, context, action_request=None) -> dict[str, Any]:
        try:
            return super().handle(instruction, context, action_request)
        except ToolFailed as exc:
            return error_reply(exc.code, exc.message)

    # ------------------------------------------------------------- reading

    def search(self, keyword: str = "") -> list[dict[str, Any]]:
        return list(self.agent.call_tool("search_skills", keyword=keyword)["skills"])

    def named(self, name: str) -> dict[str, Any] | None:
        return next((s for s in self.search(name) if s["name"] == name), None)

    def window(self, note: str = "") -> dict[str, Any]:
        return skills_window(self.search(""), note)

    # --------------------------------------------------------------- words

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        if turn.results:
            return self.after_plan(turn)
        said = turn.instruction.strip()
        if not said or _LIST.search(said):
            return self.window()
        if _RELOAD.search(said):
            return self.reload(turn)
        if _INSTALL.search(said):
            path = _install_path(said)
            if path:
                return self.install(path)
        found = [s for s in self.search(said) if not s.get("error")]
        if not found:
            return self.window(f"没有找到与「{said}」相符的技能，这是已安装的技能")
        return self.use(found[0], said, turn)

    def use(self, skill: Mapping[str, Any], said: str, turn: Turn) -> dict[str, Any]:
        """Show `skill` for `said`; with a model, run it (or plan its steps) at once."""
        if skill["kind"] == "executable":
            fields = form_fields(skill.get("content", ""))
            if not self.llm_available():
                return skill_view(
                    skill, fields, note=f"找到技能「{skill['name']}」：填好参数后点运行"
                )
            try:
                args = self.fill(skill, said)
            except AiosError as exc:
                return skill_view(
                    skill,
                    fields,
                    note=f"模型没能填好参数（{exc.message}），请手动填写后运行",
                    notice="warning",
                )
            return self.run_and_show(skill, [skill["name"], *args], fields)
        if not self.llm_available():
            return skill_view(skill, [], note=f"技能「{skill['name']}」的步骤如下")
        return self.follow(skill, said, turn)

    def fill(self, skill: Mapping[str, Any], said: str) -> list[str]:
        """The arguments the model reads from `said` for the skill's `--help`."""
        answer = self.llm.chat(
            f"--help of {skill['name']}:\n{skill.get('content', '')}\n\nRequest: {said}",
            json=True,
            system=_FILL_SYSTEM,
        )
        args = answer.get("args") if isinstance(answer, dict) else None
        if not isinstance(args, list) or not all(
            isinstance(a, (str, int, float)) for a in args
        ):
            raise ToolFailed("the model answered no argument list", code="llm_bad_reply")
        return [str(a) for a in args]

    def follow(self, skill: Mapping[str, Any], said: str, turn: Turn) -> dict[str, Any]:
        """Plan a Markdown skill's steps with the atomic tools (a SKILL.md's allowed ones)."""
        allowed = [
            t for t in ATOMIC_TOOLS if t in (skill.get("allowed_tools") or ATOMIC_TOOLS)
        ]
        available = turn.context.get("available_tools") or list(ATOMIC_TOOLS)
        tools = [t for t in allowed if t in available]
        instruction = (
            f"{said}\n\n按照技能「{skill['name']}」的步骤完成 (follow these steps):\n"
            f"{skill.get('content', '')}"
        )
        try:
            steps = self.llm.plan_steps(
                instruction, {**dict(turn.context), "available_tools": tools}
            )
        except AiosError as exc:
            return skill_view(
                skill,
                [],
                note=f"模型没能规划步骤（{exc.message}），步骤如下",
                notice="warning",
            )
        if not steps:
            return skill_view(skill, [], note="这个技能不需要运行工具，步骤如下")
        return self.agent.plan_steps(steps, f"正在按技能「{skill['name']}」执行…")

    # --------------------------------------------------------------- plans

    def after_plan(self, turn: Turn) -> dict[str, Any]:
        first = turn.results.get("step_1") or {}
        if first.get("tool") == "install_skill":
            return self.installed(turn)
        lines = []
        for key in sorted(turn.results, key=lambda k: int(k.split("_")[-1])):
            step = turn.results[key]
            result = step.get("result") if step.get("status") == "ok" else step.get("error")
            lines.append(f"{key} {step.get('tool')}: {str(result)[:500]}")
        return text_reply("\n".join(lines) or "没有步骤", message="已按技能的步骤执行完毕")

    def install(self, path: str) -> dict[str, Any]:
        return self.agent.plan_steps(
            [{"tool": "install_skill", "args": {"path": path}}], f"正在安装 {path}…"
        )

    def installed(self, turn: Turn) -> dict[str, Any]:
        ok, result, reason = turn.outcome(1)
        if ok:
            verb = "已更新" if result.get("replaced") else "已安装"
            return self.window(
                f"{verb}技能「{result['name']}」：{result.get('summary', '')}"
            )
        first = turn.results.get("step_1") or {}
        if first.get("code") == "denied_by_user":
            return self.window("好的，没有安装")
        return self.window(f"安装失败：{reason}")

    # -------------------------------------------------------------- clicks

    @action("refresh")
    def refresh(self, turn: Turn) -> dict[str, Any]:
        return self.window()

    @action("reload")
    def reload(self, turn: Turn) -> dict[str, Any]:
        done = self.agent.call_tool("reload_skills")
        broken = len(done.get("broken") or [])
        note = f"已重新加载：{done.get('skills', 0)} 个技能" + (
            f"，{broken} 个有问题" if broken else ""
        )
        return self.window(note)

    @action("install")
    def install_clicked(self, turn: Turn) -> dict[str, Any]:
        if turn.results:
            return self.installed(turn)
        path = str(turn.value or "").strip()
        if not path:
            return self.window("请输入工作区里技能文件的路径")
        return self.install(path)

    @action("show")
    def show(self, turn: Turn) -> dict[str, Any]:
        skill = self.named(str(turn.params.get("name") or ""))
        if skill is None:
            return self.window("这个技能已经不在了")
        fields = (
            form_fields(skill.get("content", "")) if skill["kind"] == "executable" else []
        )
        return skill_view(skill, fields)

    @action("run")
    def run(self, turn: Turn) -> dict[str, Any]:
        skill = self.named(str(turn.state.get("skill") or ""))
        if skill is None:
            return self.window("这个技能已经不在了")
        fields = parse_help(skill.get("content", ""))
        argv = build_argv(skill["name"], fields, turn.form_values)
        return self.run_and_show(
            skill, argv, [f.to_field() for f in fields], turn.form_values
        )

    def run_and_show(
        self,
        skill: Mapping[str, Any],
        argv: list[str],
        fields: list[dict[str, Any]],
        values: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Run `argv` and show the skill with its output (the form keeps `values`)."""
        try:
            result = self.agent.call_tool("run_command", command=argv)
        except ToolFailed as exc:
            detail = exc.detail if isinstance(exc.detail, dict) else {}
            text = (
                output_text({**detail, "meaning": exc.message}) if detail else exc.message
            )
            return skill_view(
                skill,
                _kept(fields, values),
                output=text,
                note=f"运行失败：{exc.message}",
                notice="warning",
            )
        ok = result.get("returncode") == 0
        return skill_view(
            skill,
            _kept(fields, values),
            output=output_text(result),
            note="运行完成" if ok else f"运行结束，退出码 {result.get('returncode')}",
            notice=None if ok else "warning",
        )


def _kept(
    fields: list[dict[str, Any]], values: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """`fields` showing the values just submitted."""
    if not values:
        return fields
    return [{**f, "value": values[f["name"]]} if f["name"] in values else f for f in fields]


def _install_path(said: str) -> str | None:
    """The workspace path in "安装技能 my_skill.py" / "install the skill tools/x.sh"."""
    found = _PATHLIKE.findall(said)
    if found:
        return found[-1]
    words = re.split(
        r"\s+", re.sub(r"(安装|技能|install|the|skill|skills)", " ", said, flags=re.I)
    )
    words = [w for w in words if w]
    return words[-1] if words else None
