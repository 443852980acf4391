"""How 技能 answers: find the skill an instruction asks for, show it, fill it, run it.

Opening the window, or asking for the list, shows every skill (`search_skills` with
an empty keyword). "重新加载技能" / "reload skills" calls `reload_skills`; "安装技能
<path>" / "install skill <path>", or the window's install input, plans an
`install_skill` step — the controller asks the user first — and shows the outcome.
Anything else is a request for a skill: the best `search_skills` match for the
instruction. An executable skill is shown with a form built from its `--help`
(`helpform`). When the instruction's words fill that form without doubt
(`autofill`: the one number said into the one numeric option, the choice named, the
file of the workspace named into the file option) it runs at once (`run_command`, as 运行 does) and its answer comes first; else, with a
model configured, the model fills the arguments in one round and it runs; else the
form is shown filled as far as the words go, saying what is left to fill in (a
file named that the workspace does not hold is said by its name, and nothing runs).
A Markdown or SKILL.md skill is shown with its steps; with a model the steps are
planned with the atomic tools (or exactly a SKILL.md's `allowed-tools`: an empty
list, or one naming no tool there is, allows none) and their
results shown. A request no skill matches goes, with a model, to the SDK's agent
loop with the app's tools; without one, the list of skills. Without a model
nothing here fails: the form and the steps are there.
Every answer is in the user's language (`turn.tr`); what failed is said plainly and
the technical text kept as the `detail`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from aios_sdk import Flows, Turn, action
from aios_sdk.errors import AiosError, ToolFailed, user_message
from aios_sdk.protocol import ATOMIC_TOOLS
from aios_sdk.views import error_reply, text_reply

from .autofill import Filling, fill_from_words
from .helpform import build_argv, form_fields, parse_help
from .views import (
    exit_meaning,
    help_text,
    output_text,
    skill_view,
    skills_window,
    summary,
)

__all__ = ["SkillsFlows"]

_LIST = re.compile(
    r"(哪些技能|技能列表|所有技能|列出.*技能|打开技能|^技能$|list.*skills?|show.*skills?|^skills?$"
    # a question about the skills themselves ("介绍一下技能", "tell me about my skills")
    r"|^(请|帮我|给我)?(介绍|说说|讲讲|谈谈|聊聊|总结|概括)(一下|下)?(我的|所有的?|已安装的)?技能"
    r"|^(please\s+)?(tell\s+(me|us)\s+about|describe|summari[sz]e|talk\s+about)\s+"
    r"(the\s+|my\s+|all\s+)?skills?\b"
    # the app itself asked for: "open the skills app", "open skills"
    r"|^(please\s+)?open\s+(the\s+|my\s+)?skills?(\s+(app|window))?\W*$)",
    re.I,
)
_RELOAD = re.compile(r"(重新加载|重载|刷新).*技能|技能.*(重新加载|重载|刷新)|reload", re.I)
_INSTALL = re.compile(r"安装|install", re.I)
_PATHLIKE = re.compile(r"[\w./-]*[\w-]\.[A-Za-z0-9]+|[\w.-]+/[\w./-]*")
_SAID_AT_MOST = 200  # characters of a run's output said as its message
_SAID_LINES = 4  # an output of at most this many short lines is said whole
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
            turn = Turn.read(instruction, context, action_request)
            plain = turn.tr(
                "技能暂时用不了，请稍后再试",
                "Skills are not available right now; try again later",
            )
            return error_reply(exc.code, plain, detail=exc.message)

    # ------------------------------------------------------------- reading

    def search(self, keyword: str = "") -> list[dict[str, Any]]:
        return list(self.agent.call_tool("search_skills", keyword=keyword)["skills"])

    def named(self, name: str) -> dict[str, Any] | None:
        return next((s for s in self.search(name) if s["name"] == name), None)

    def window(
        self, turn: Turn, note: str = "", *, notice: str | None = None, detail: str = ""
    ) -> dict[str, Any]:
        """The list of skills, `note` the spoken message (`notice`, `detail`: what failed)."""
        return skills_window(self.search(""), turn, note, notice=notice, detail=detail)

    # --------------------------------------------------------------- words

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        if turn.results:
            return self.after_plan(turn)
        said = turn.instruction.strip()
        if not said or _LIST.search(said):
            return self.window(turn)
        if _RELOAD.search(said):
            return self.reload(turn)
        if _INSTALL.search(said):
            path = _install_path(said)
            if path:
                return self.install(path, turn)
        found = [s for s in self.search(said) if not s.get("error")]
        if not found:  # the agent loop with a model, else the list of skills
            return self.hand_to_loop(turn) or self.window(
                turn,
                turn.tr(
                    f"没有找到与「{said}」相符的技能，这是已安装的技能",
                    f'No skill matches "{said}"; these are the installed skills',
                ),
            )
        return self.use(found[0], said, turn)

    def use(self, skill: Mapping[str, Any], said: str, turn: Turn) -> dict[str, Any]:
        """Show `skill` for `said`: run it at once when `said` fills its form without
        doubt (`autofill`) or, that failing, when a model fills it; else show the
        form filled as far as it is clear. A Markdown skill's steps are planned
        with a model, else shown."""
        name = skill["name"]
        if skill["kind"] == "executable":
            text = help_text(skill, turn)
            filling = fill_from_words(text, said, self.in_workspace(turn))
            fields = _kept(form_fields(text, turn), filling.values)
            if filling.missing:  # a file named that is not there: said, nothing run
                return skill_view(
                    skill,
                    fields,
                    turn,
                    note=user_message(
                        "file_not_found.in_workspace",
                        turn.language,
                        path=filling.missing[0],
                    ),
                    notice="error",
                )
            if filling.complete:
                argv = build_argv(name, parse_help(text), filling.values)
                return self.run_and_show(skill, argv, fields, turn)
            if not self.llm_available():
                return skill_view(
                    skill, fields, turn, note=_asking(name, filling, turn), notice="info"
                )  # a question, not a result
            try:
                args = self.fill(skill, said)
            except AiosError as exc:
                return skill_view(
                    skill,
                    fields,
                    turn,
                    note=turn.tr(
                        "模型没能填好参数，请手动填写后运行",
                        "The model could not fill in the fields; fill them in and press Run",
                    ),
                    notice="warning",
                    detail=f"{exc.code}: {exc.message}",
                )
            return self.run_and_show(skill, [name, *args], fields, turn)
        if not self.llm_available():
            steps = turn.tr(f"技能「{name}」的步骤如下", f'The steps of the skill "{name}"')
            return skill_view(skill, [], turn, note=steps)
        return self.follow(skill, said, turn)

    @staticmethod
    def in_workspace(turn: Turn) -> Callable[[str], bool] | None:
        """Whether a relative path names a file of the workspace a skill runs in (the
        one of the user asking, `context["workdir"]`); None when it is not known."""
        where = turn.context.get("workdir")
        if not where:
            return None
        root = Path(str(where)).resolve()

        def is_file(name: str) -> bool:
            target = (root / name).resolve()
            return target.is_relative_to(root) and target.is_file()

        return is_file

    def fill(self, skill: Mapping[str, Any], said: str) -> list[str]:
        """The arguments the model reads from `said` for the skill's `--help`."""
        assert self.llm is not None  # called only when llm_available()
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
        declared = skill.get("allowed_tools")  # None: the SKILL.md states no limit
        available = turn.context.get("available_tools") or list(ATOMIC_TOOLS)
        if isinstance(declared, list):  # empty, or naming no tool there is: none
            tools = [t for t in declared if t in available]
        else:
            tools = [t for t in ATOMIC_TOOLS if t in available]
        if not tools:
            return skill_view(
                skill,
                [],
                turn,
                note=turn.tr(
                    "这个技能不允许使用任何工具，步骤如下",
                    "This skill allows no tools; here are its steps",
                ),
            )
        name, steps = skill["name"], help_text(skill, turn)
        instruction = turn.tr(
            f"{said}\n\n按照技能「{name}」的步骤完成，用中文回答：\n{steps}",
            f'{said}\n\nFollow the steps of the skill "{name}", answering in English:'
            f"\n{steps}",
        )
        assert self.llm is not None  # called only when llm_available()
        try:
            planned = self.llm.plan_steps(
                instruction, {**dict(turn.context), "available_tools": tools}
            )
        except AiosError as exc:
            return skill_view(
                skill,
                [],
                turn,
                note=turn.tr(
                    "模型没能规划步骤，步骤如下",
                    "The model could not plan the steps; here they are",
                ),
                notice="warning",
                detail=f"{exc.code}: {exc.message}",
            )
        if not planned:
            return skill_view(
                skill,
                [],
                turn,
                note=turn.tr(
                    "这个技能不需要运行工具，步骤如下",
                    "This skill needs no tools; here are its steps",
                ),
            )
        return self.agent.plan_steps(
            planned, turn.tr(f"正在按技能「{name}」执行…", f'Following the skill "{name}"…')
        )

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
        return text_reply(
            "\n".join(lines) or turn.tr("没有步骤", "No steps"),
            message=turn.tr("已按技能的步骤执行完毕", "Done: the skill's steps have run"),
        )

    def install(self, path: str, turn: Turn) -> dict[str, Any]:
        return self.agent.plan_steps(
            [{"tool": "install_skill", "args": {"path": path}}],
            turn.tr(f"正在安装 {path}…", f"Installing {path}…"),
        )

    def installed(self, turn: Turn) -> dict[str, Any]:
        ok, result, reason = turn.outcome(1)
        if ok:
            name, said = result["name"], summary(result, turn)
            if result.get("replaced"):
                note = turn.tr(
                    f"已更新技能「{name}」：{said}",
                    f'Updated the skill "{name}": {said}',
                )
            else:
                note = turn.tr(
                    f"已安装技能「{name}」：{said}",
                    f'Installed the skill "{name}": {said}',
                )
            return self.window(turn, note)
        first = turn.results.get("step_1") or {}
        if first.get("code") == "denied_by_user":
            return self.window(turn, turn.tr("好的，没有安装", "OK, nothing was installed"))
        return self.window(
            turn,
            turn.tr("安装失败", "The skill was not installed"),
            notice="warning",
            detail=reason,
        )

    # -------------------------------------------------------------- clicks

    @action("refresh")
    def refresh(self, turn: Turn) -> dict[str, Any]:
        return self.window(turn)

    @action("reload")
    def reload(self, turn: Turn) -> dict[str, Any]:
        done = self.agent.call_tool("reload_skills")
        broken = len(done.get("broken") or [])
        count = done.get("skills", 0)
        plural = "" if count == 1 else "s"
        note = turn.tr(f"已重新加载：{count} 个技能", f"Reloaded: {count} skill{plural}")
        if broken:
            note += turn.tr(f"，{broken} 个有问题", f", {broken} with problems")
        return self.window(turn, note)

    @action("install")
    def install_clicked(self, turn: Turn) -> dict[str, Any]:
        if turn.results:
            return self.installed(turn)
        path = str(turn.value or "").strip()
        if not path:
            return self.window(
                turn,
                turn.tr(
                    "请输入工作区里技能文件的路径",
                    "Type the path of a skill file in the workspace",
                ),
            )
        return self.install(path, turn)

    @action("show")
    def show(self, turn: Turn) -> dict[str, Any]:
        skill = self.named(str(turn.params.get("name") or ""))
        if skill is None:
            return self.window(turn, _gone(turn))
        fields = (
            form_fields(help_text(skill, turn), turn)
            if skill["kind"] == "executable"
            else []
        )
        return skill_view(skill, fields, turn)

    @action("run")
    def run(self, turn: Turn) -> dict[str, Any]:
        skill = self.named(str(turn.state.get("skill") or ""))
        if skill is None:
            return self.window(turn, _gone(turn))
        fields = parse_help(help_text(skill, turn))
        argv = build_argv(skill["name"], fields, turn.form_values)
        return self.run_and_show(
            skill, argv, [f.to_field(turn) for f in fields], turn, turn.form_values
        )

    def run_and_show(
        self,
        skill: Mapping[str, Any],
        argv: list[str],
        fields: list[dict[str, Any]],
        turn: Turn,
        values: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Run `argv` and show the skill with its output (the form keeps `values`)."""
        try:
            result = self.agent.call_tool(
                "run_command", command=argv, language=turn.language
            )
        except ToolFailed as exc:
            detail = exc.detail if isinstance(exc.detail, dict) else {}
            text = (
                output_text({**detail, "meaning": exc.message}, turn)
                if detail
                else exc.message
            )
            return skill_view(
                skill,
                _kept(fields, values),
                turn,
                output=text,
                note=turn.tr("运行失败", "The skill did not run"),
                notice="warning",
                detail=exc.message,
            )
        code = result.get("returncode")
        if code != 0:  # not done: said so plainly, the exit code and stderr folded
            reason = {"reason": exit_meaning(code, turn)} if isinstance(code, int) else {}
            stderr = str(result.get("stderr") or "").strip()
            return skill_view(
                skill,
                _kept(fields, values),
                turn,
                output=output_text(result, turn),
                note=user_message(
                    "skill_run_failed", turn.language, skill=skill["name"], **reason
                ),
                notice="error",
                detail=f"exit code {code}" + (f"\nstderr:\n{stderr}" if stderr else ""),
            )
        return skill_view(  # what is said is the answer
            skill,
            _kept(fields, values),
            turn,
            output=output_text(result, turn),
            note=_answer(str(result.get("stdout") or ""), turn),
        )


def _answer(stdout: str, turn: Turn) -> str:
    """What is said of a run's output: a few short lines (one field per line, as
    the format asks) all of them, one after the other; else its first line."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    together = turn.tr("，", "; ").join(lines)
    if 1 < len(lines) <= _SAID_LINES and len(together) <= _SAID_AT_MOST:
        return together
    first = lines[0] if lines else ""
    return first[:_SAID_AT_MOST] or turn.tr("运行完成", "Done")


def _asking(name: str, filling: Filling, turn: Turn) -> str:
    """What to fill in before 运行, when the instruction did not say it all."""
    if filling.left:
        zh = "、".join(f"「{item.label(turn)}」" for item in filling.left)
        en = ", ".join(f'"{item.label(turn)}"' for item in filling.left)
        return turn.tr(
            f"找到技能「{name}」：请填写{zh}后点运行",
            f'Found the skill "{name}": fill in {en} and press Run',
        )
    numbers = ", ".join(f"{n:g}" for n in filling.unused)
    return turn.tr(
        f"找到技能「{name}」：它没有可以填入 {numbers} 的参数，请检查后点运行",
        f'Found the skill "{name}": it has no option for {numbers}; check it and press Run',
    )


def _gone(turn: Turn) -> str:
    return turn.tr("这个技能已经不在了", "This skill is no longer installed")


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
