"""How the system-control app answers: plan a snapshot read, then command.

Moving a control: "把播放按钮移到左上角" → a `cache_get` step for the desktop's UI snapshot
(namespace `system`, key `ui_snapshot`) → the element and position are resolved
(`targets`) → a `text` view, the spoken message "已将播放按钮移到左上角" and
`ui_commands` [{"op": "move", "id": "btn_play", "x": 20, "y": 20}] that the desktop
performs. Window operations answer with `open_window` / `close_window` /
`focus_window` / `maximize_window` / `minimize_window`; status questions run the executor's read-only `system_info` tool, which reads
the computer (this app runs confined and would see only its own sandbox), and answer
with the number asked about ("现在内存占用多少" → a card with the memory figure), or a
dashboard, chart or table when the overview is asked for. A name that fits several
elements (the 播放 buttons of two songs) is answered with a question and one button
per element, which does it for that one (`choose`). A change can be taken back: the
desktop keeps the history of its layout (the snapshot's `undo`), and 撤销 / undo,
typed, sends it the `undo` command and says which change that took back; said
again, the one before. The 撤销 button of an answer that changed the layout takes
back that change, and only while it is still the latest. Every other answer of the
system window, while there is a change to take back, offers "撤销上一步界面改动（…）"
naming that change, never a bare 撤销 that would read as undoing the answer itself.
A phrasing the rules cannot
resolve, or a name that fits no element, goes, when an LLM is configured, to the
model with the snapshot (`llm`); its commands are validated there, and when it
fails the rules' own answer stands, with a short note. A request the model says is
no change to the desktop (or that comes with no desktop to read) goes to the SDK's
agent loop with the app's tools. Instructions may be Chinese or English; every answer is in the
user's language (`turn.language`: "Moved the play button to the top-left").
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from aios_sdk import Flows, Turn, action
from aios_sdk.protocol import WINDOW_OPS
from aios_sdk.views import button, text_reply, ui_command

from .llm import commands_from_llm
from .phrases import UiRequest, parse_request
from .status import status_view
from .targets import Outcome, plan_ui, plan_window, shown_name

__all__ = [
    "SNAPSHOT_KEY",
    "STATUS_TOOL",
    "SystemFlows",
    "status_question",
]

SNAPSHOT_KEY = "ui_snapshot"
_SNAPSHOT_STEP: dict[str, Any] = {
    "tool": "cache_get",
    "args": {"key": SNAPSHOT_KEY, "namespace": "system"},
}
STATUS_TOOL = "system_info"
# processes in the overview's busiest table, and in the process list
BUSIEST = 8
LISTED = 500


def _not_understood(turn: Turn) -> str:
    return turn.tr(
        "没听懂这条指令。我可以移动、缩放、隐藏桌面元素，管理窗口，查看系统状态",
        "I did not understand that. I can move, resize and hide desktop elements, "
        "manage windows and show the system status",
    )


def _not_done(turn: Turn, note: str = "") -> dict[str, Any]:
    """The answer to words the rules (and the model) could not read: what may be said
    instead, marked as not done (`warning`, as every app's help is), never a success."""
    return text_reply(_help(turn), f"{note}{_not_understood(turn)}", notice="warning")


def _help(turn: Turn) -> str:
    """What the user may say, in their language."""
    return turn.tr(
        "我可以调整桌面：\n"
        "· 把播放按钮移到左上角\n"
        "· 把搜索框变大一点\n"
        "· 把播放按钮改成红色 / 旋转45度 / 隐藏任务栏 / 把播放按钮的文字改成开始\n"
        "· 把背景换成蓝色 / 把背景换成蓝紫渐变\n"
        "· 撤销 / 撤回\n"
        "· 打开代码应用 / 关闭音乐窗口 / 切换到音乐应用 / 最大化音乐窗口 / 最小化音乐窗口\n"
        "· 查看系统状态 / CPU占用多少 / 列出进程",
        "I can change the desktop:\n"
        "· move the play button to the top-left\n"
        "· make the search box bigger\n"
        "· make the play button red / rotate the play button 45 degrees / hide the "
        "taskbar / rename the play button to Start\n"
        "· make the background blue / make the background a blue to purple gradient\n"
        "· undo\n"
        "· open the code app / close the music window / switch to the music app / "
        "maximise the music window / minimise the music window\n"
        "· show system status / cpu usage / list processes",
    )


def _snapshot_of(value: Any) -> dict[str, Any] | None:
    if isinstance(value, Mapping) and "value" in value and "elements" not in value:
        value = value["value"]  # a cache answer that wraps the value
    return dict(value) if isinstance(value, Mapping) else None


# what a change did, as the answer to an undo names it
_CHANGE_WORDS = {
    "move": ("移动", "moving"),
    "resize": ("调整大小：", "resizing"),
    "hide": ("隐藏", "hiding"),
    "show": ("显示", "showing"),
    "change_color": ("改颜色：", "recolouring"),
    "change_text": ("改文字：", "renaming"),
    "rotate": ("旋转", "rotating"),
    "restore": ("还原", "restoring"),
}


def undoable(snapshot: Mapping[str, Any] | None) -> list[list[dict[str, Any]]]:
    """The layout changes the desktop can take back, oldest first (its snapshot's)."""
    changes = (snapshot or {}).get("undo") or []
    return [list(c) for c in changes if isinstance(c, list) and c]


def describe_change(
    change: list[dict[str, Any]], snapshot: Mapping[str, Any] | None, turn: Turn
) -> str:
    """ "移动晴天的播放按钮", "moving the Play button of Evening Rain" (and how many more)."""
    elements = list((snapshot or {}).get("elements") or [])
    first = change[0]
    ident = str(first.get("id"))
    # no longer shown (another view): the label it had, never its id
    kept = str(first.get("label") or "") or turn.tr("一个控件", "a control")
    element = next(
        (e for e in elements if e.get("id") in (ident, f"win_{ident}")),
        {"id": ident, "label": kept},
    )
    zh, en = _CHANGE_WORDS.get(str(first.get("op")), ("改动", "changing"))
    name = shown_name(element, elements, turn)
    what = turn.tr(f"{zh}{name}", f"{en} {name}")
    more = len(change) - 1
    return what + (turn.tr(f"等 {more + 1} 处", f" and {more} more") if more else "")


def _undo_this(commands: list[Any], turn: Turn) -> dict[str, Any]:
    """撤销 on the answer that made `commands`: it takes back the change they made."""
    made = [
        {"op": str(c.get("op")), "id": str(c.get("id"))}
        for c in commands
        if c.get("op") not in WINDOW_OPS
    ]
    return button(turn.tr("撤销", "Undo"), "undo", change=made)


def _undo_last(snapshot: Mapping[str, Any] | None, turn: Turn) -> list[dict[str, Any]]:
    """On an answer that changed nothing: the way back from the latest change to the
    layout, saying which it is; none when there is nothing to take back."""
    changes = undoable(snapshot)
    if not changes:
        return []
    what = describe_change(changes[-1], snapshot, turn)
    label = turn.tr(
        f"撤销上一步界面改动（{what}）", f"Undo the last layout change ({what})"
    )
    return [button(label, "undo")]


def _bare(ident: str) -> str:
    return ident.removeprefix("win_")


def _is_change(change: list[dict[str, Any]], made: list[Mapping[str, Any]]) -> bool:
    """Whether `change` (a step of the desktop's history) is what the commands `made`
    changed: each of its steps is one of them (a command that changed nothing is no
    step)."""
    said = {(str(c.get("op")), _bare(str(c.get("id")))) for c in made}
    return all((str(s.get("op")), _bare(str(s.get("id")))) in said for s in change)


def status_question(view: str, topic: str) -> dict[str, Any]:
    """The `system_info` arguments that answer a status question: the process list
    for a table, the one figure a card or the per-core chart shows, else the overview."""
    if view == "table":
        return {"what": "processes", "limit": LISTED}
    if (view == "dashboard" and topic in ("cpu", "memory", "disk")) or (
        view == "chart" and topic == "cpu"
    ):
        return {"what": topic}
    return {"what": "overview", "limit": BUSIEST}


class SystemFlows(Flows):
    """The system agent's behaviour, over an agent that plans steps (and has an `llm`)."""

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        request = parse_request(turn.instruction)
        if request.op == "undo":
            return self.undo(turn)
        if request.op == "status":
            return self.status(request.status_view, request.status_topic, turn)
        if request.op == "unknown" and not turn.results and not self.llm_available():
            return _not_done(turn)
        return self.ui(turn.instruction.strip(), request, turn)

    @action("refresh")
    def on_refresh(self, turn: Turn) -> dict[str, Any]:
        view = str(turn.params.get("view") or "dashboard")
        return self.status(view, str(turn.params.get("topic") or ""), turn)

    @action("undo")
    def on_undo(self, turn: Turn) -> dict[str, Any]:
        return self.undo(turn)

    @action("choose")
    def on_choose(self, turn: Turn) -> dict[str, Any]:
        """One answer to "which one?": do what was asked to the element chosen."""
        commands = [c for c in turn.params.get("commands") or [] if isinstance(c, Mapping)]
        if not commands:
            return text_reply(turn.tr("没有可以执行的操作。", "Nothing to do."))
        return self._done(str(turn.params.get("message") or ""), commands, turn)

    def undo(self, turn: Turn) -> dict[str, Any]:
        """Take back the latest change to the layout, as the desktop's history has it;
        the 撤销 of an answer that changed it (its `change`), only that change."""
        if not turn.results:
            return self._read_snapshot(turn)
        _, value, _ = turn.outcome(1)
        snapshot = _snapshot_of(value)
        changes = undoable(snapshot)
        made = [c for c in turn.params.get("change") or [] if isinstance(c, Mapping)]
        if made and not (changes and _is_change(changes[-1], made)):
            return text_reply(
                turn.tr(
                    "这一步界面改动已经撤销过了，或者之后界面又改过：没有撤销任何改动。",
                    "That change to the layout was undone already, or the layout has "
                    "changed since: nothing was undone.",
                ),
                notice="info",
                actions=_undo_last(snapshot, turn),
            )
        if not changes:
            return text_reply(
                turn.tr(
                    "没有可以撤销的界面改动。", "There is no change to the layout to undo."
                ),
                notice="info",
            )
        what = describe_change(changes[-1], snapshot, turn)
        left = len(changes) - 1
        message = turn.tr(f"已撤销：{what}", f"Undone: {what}")
        if left:
            message += turn.tr(f"（还可以再撤销 {left} 步）", f" ({left} more to undo)")
        command = ui_command("undo", "layout", ref=uuid.uuid4().hex)
        before = {**(snapshot or {}), "undo": changes[:-1]}  # the next one back, named
        return text_reply(message, actions=_undo_last(before, turn), ui_commands=[command])

    @action("help")
    def on_help(self, turn: Turn) -> dict[str, Any]:
        return text_reply(_help(turn), turn.tr("这是我能做的事", "This is what I can do"))

    def on_unknown_action(self, turn: Turn) -> dict[str, Any]:
        """Anything else: the status dashboard."""
        return self.status("dashboard", "", turn)

    def status(self, view: str, topic: str, turn: Turn) -> dict[str, Any]:
        if not turn.results:  # the status, and the layout (is there a change to undo?)
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": STATUS_TOOL,
                        "args": status_question(view, topic),
                    },
                    _SNAPSHOT_STEP | {"step_id": 2},
                ],
                turn.tr("正在读取系统状态…", "Reading the system status…"),
            )
        ok, status, error = turn.outcome(1)
        if not ok or not isinstance(status, Mapping):
            return text_reply(
                turn.tr(
                    "暂时读不到系统状态，请稍后再试",
                    "Cannot read the system status right now; please try again later",
                ),
                status="error",
                detail=error,
            )
        reply = status_view(status, turn, view, topic)
        reply["actions"].append(button(turn.tr("帮助", "Help"), "help"))
        _, layout, _ = turn.outcome(2)
        reply["actions"] += _undo_last(_snapshot_of(layout), turn)
        return reply

    def _read_snapshot(self, turn: Turn) -> dict[str, Any]:
        return self.agent.plan_steps(
            [_SNAPSHOT_STEP | {"step_id": 1}],
            turn.tr("正在读取桌面布局…", "Reading the desktop layout…"),
        )

    def ui(self, instruction: str, request: UiRequest, turn: Turn) -> dict[str, Any]:
        if not turn.results:
            return self._read_snapshot(turn)
        _, value, _ = turn.outcome(1)
        snapshot = _snapshot_of(value)
        outcome: Outcome | None = None
        if request.op != "unknown":
            outcome = (
                plan_window(request, snapshot, turn)
                if request.op == "window"
                else plan_ui(request, snapshot, turn)
            )
        note = ""
        if outcome is None or (not outcome.ok and not outcome.choices):
            asked = commands_from_llm(
                self.llm, instruction, snapshot, english=turn.language == "en-US"
            )
            if asked.commands:
                outcome = Outcome(True, asked.message, asked.commands)
            elif request.op == "unknown" and (asked.declined or not asked.note):
                # no change to the desktop (or no desktop to change): the agent loop,
                # with a model, and the app's own tools
                answered = self.hand_to_loop(turn)
                if answered:
                    return answered
            note = asked.note
        if outcome is None:
            return _not_done(turn, note)
        if outcome.choices:
            return self._ask(outcome, snapshot, turn)
        if not outcome.ok and not (snapshot or {}).get("elements"):  # no desktop to read
            return text_reply(f"{note}{outcome.message}", status="error")
        if not outcome.ok:  # nothing done, and why: an answer, not a failure
            offered = [*outcome.offer, *_undo_last(snapshot, turn)]
            reply = text_reply(f"{note}{outcome.message}", notice="info", actions=offered)
            reply["data"]["candidates"] = outcome.candidates
            return reply
        return self._done(outcome.message, outcome.commands, turn)

    def _ask(
        self, outcome: Outcome, snapshot: Mapping[str, Any] | None, turn: Turn
    ) -> dict[str, Any]:
        """The question "which one?" with a button per element that does it there."""
        buttons = [
            button(
                choice.label,
                "choose",
                commands=choice.outcome.commands,
                message=choice.outcome.message,
            )
            for choice in outcome.choices
        ]
        reply = text_reply(outcome.message, actions=buttons, notice="info")
        reply["data"]["candidates"] = outcome.candidates
        return reply

    @staticmethod
    def _done(message: str, commands: list[Any], turn: Turn) -> dict[str, Any]:
        """The answer to a change made: its sentence, its commands, and 撤销 of that
        change when it changed the layout (opening a window is not a change to it)."""
        layout = any(c.get("op") not in WINDOW_OPS for c in commands)
        actions = [_undo_this(commands, turn)] if layout else []
        reply = text_reply(message, actions=actions, ui_commands=commands)
        reply["data"]["commands"] = commands
        return reply
