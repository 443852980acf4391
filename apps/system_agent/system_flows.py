"""How the system-control app answers (S-80): plan a snapshot read, then command.

F-3: "把播放按钮移到左上角" → a `cache_get` step for the desktop's UI snapshot
(namespace `system`, key `ui_snapshot`) → the element and position are resolved
(`ui_targets`) → a `text` view, the spoken message "已将播放按钮移到左上角" and
`ui_commands` [{"op": "move", "id": "btn_play", "x": 20, "y": 20}] that the desktop
performs. Window operations answer with `open_window` / `close_window` /
`focus_window`; status questions run the app's `system_status` tool and answer with
a dashboard, chart or table. Every UI change offers 撤销 (undo) when the snapshot
says what the element looked like before. A phrasing the rules cannot resolve
goes, when an LLM is configured, to the model with the snapshot (`ui_llm`); its
commands are validated there, and when it fails the rules' own answer stands,
with a short note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from system_status import status_view
from ui_llm import commands_from_llm
from ui_phrases import UiRequest, parse_request
from ui_targets import Outcome, plan_ui, plan_window, resolve_element

from aios_sdk import step_outcome

__all__ = ["SNAPSHOT_KEY", "STATUS_TOOL", "SystemFlows", "undo_commands"]

SNAPSHOT_KEY = "ui_snapshot"
STATUS_TOOL = "system_status"

NOT_UNDERSTOOD = "我可以移动、缩放、隐藏桌面元素，管理窗口，查看系统状态"
HELP = (
    "我可以调整桌面：\n"
    "· 把播放按钮移到左上角 / move the play button to the top-right\n"
    "· 把搜索框变大一点 / make the search box smaller\n"
    "· 把播放按钮改成红色 / 旋转45度 / 隐藏任务栏 / 把播放按钮的文字改成开始\n"
    "· 打开代码应用 / 关闭音乐窗口 / 切换到音乐应用\n"
    "· 查看系统状态 / CPU占用多少 / 列出进程"
)


class AgentPort(Protocol):
    def plan_steps(
        self, steps: list[dict[str, Any]], message: str = ...
    ) -> dict[str, Any]: ...


def _snapshot_of(value: Any) -> dict[str, Any] | None:
    if isinstance(value, Mapping) and "value" in value and "elements" not in value:
        value = value["value"]  # a cache answer that wraps the value
    return dict(value) if isinstance(value, Mapping) else None


def undo_commands(
    command: Mapping[str, Any], element: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The commands that put `element` back as the snapshot showed it."""
    ident = element.get("id")
    op = command.get("op")
    if op == "move":
        return [
            {"op": "move", "id": ident, "x": element.get("x", 0), "y": element.get("y", 0)}
        ]
    if op == "resize":
        return [
            {
                "op": "resize",
                "id": ident,
                "width": element.get("width", 0),
                "height": element.get("height", 0),
            }
        ]
    if op == "hide":
        return [{"op": "show", "id": ident}] if element.get("visible", True) else []
    if op == "show":
        return [] if element.get("visible", True) else [{"op": "hide", "id": ident}]
    if op == "rotate":
        return [{"op": "rotate", "id": ident, "degrees": 0}]
    if op == "change_text" and element.get("label"):
        return [{"op": "change_text", "id": ident, "text": element["label"]}]
    return []


class SystemFlows:
    def __init__(self, agent: AgentPort):
        self.agent = agent
        self.instruction = ""

    @property
    def llm(self) -> Any | None:
        return getattr(self.agent, "llm", None)

    def llm_available(self) -> bool:
        try:
            return bool(self.llm is not None and self.llm.available)
        except Exception:
            return False

    def handle(
        self,
        instruction: str | None,
        context: Mapping[str, Any] | None,
        action_request: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        context = context or {}
        results: Mapping[str, Any] = context.get("tool_results") or {}
        if action_request:
            return self.on_action(dict(action_request), results)
        self.instruction = (instruction or "").strip()
        request = parse_request(instruction)
        if request.op == "status":
            return self.status(request.status_view, request.status_topic, results)
        if request.op == "unknown" and not results and not self.llm_available():
            return _text(HELP, NOT_UNDERSTOOD)
        return self.ui(request, results)

    def on_action(
        self, request: dict[str, Any], results: Mapping[str, Any]
    ) -> dict[str, Any]:
        action = request.get("action_id")
        params = request.get("params") or {}
        if action == "refresh":
            return self.status(
                str(params.get("view") or "dashboard"),
                str(params.get("topic") or ""),
                results,
            )
        if action == "undo":
            commands = [c for c in params.get("commands") or [] if isinstance(c, Mapping)]
            if not commands:
                return _text("没有可以撤销的操作。")
            return {**_text("已撤销"), "ui_commands": commands}
        if action == "help":
            return _text(HELP, "这是我能做的事")
        return self.status("dashboard", "", results)

    def status(self, view: str, topic: str, results: Mapping[str, Any]) -> dict[str, Any]:
        if not results:
            return self.agent.plan_steps(
                [{"step_id": 1, "tool": STATUS_TOOL, "args": {"top": 8}}],
                "正在读取系统状态…",
            )
        ok, status, error = step_outcome(results, 1)
        if not ok or not isinstance(status, Mapping):
            return _text(f"读取系统状态失败：{error}", status="error")
        reply = status_view(status, view, topic)
        reply["actions"].append({"type": "button", "label": "帮助", "action_id": "help"})
        return reply

    def ui(self, request: UiRequest, results: Mapping[str, Any]) -> dict[str, Any]:
        if not results:
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "cache_get",
                        "args": {"key": SNAPSHOT_KEY, "namespace": "system"},
                    }
                ],
                "正在读取桌面布局…",
            )
        _, value, _ = step_outcome(results, 1)
        snapshot = _snapshot_of(value)
        outcome: Outcome | None = None
        if request.op != "unknown":
            outcome = (
                plan_window(request, snapshot)
                if request.op == "window"
                else plan_ui(request, snapshot)
            )
        note = ""
        if outcome is None or not outcome.ok:
            asked = commands_from_llm(
                self.llm, self.instruction, snapshot, english=request.english
            )
            if asked.commands:
                outcome = Outcome(True, asked.message, asked.commands)
            note = asked.note
        if outcome is None:
            return _text(HELP, f"{note}{NOT_UNDERSTOOD}")
        if not outcome.ok:
            reply = _text(f"{note}{outcome.message}", status="error")
            reply["data"]["candidates"] = outcome.candidates
            return reply
        reply = _text(outcome.message)
        reply["ui_commands"] = outcome.commands
        reply["data"]["commands"] = outcome.commands
        undo = self._undo(outcome, snapshot)
        if undo:
            reply["actions"] = [
                {
                    "type": "button",
                    "label": "撤销",
                    "action_id": "undo",
                    "params": {"commands": undo},
                }
            ]
        return reply

    @staticmethod
    def _undo(outcome: Outcome, snapshot: Mapping[str, Any] | None) -> list[dict[str, Any]]:
        elements = list((snapshot or {}).get("elements") or [])
        undo: list[dict[str, Any]] = []
        for command in outcome.commands:
            element = next((e for e in elements if e.get("id") == command.get("id")), None)
            if element is None:
                element, _ = resolve_element(str(command.get("id")), elements)
                element = element.element if element else None
            if element is not None:
                undo += undo_commands(command, element)
        return undo


def _text(
    content: str, message: str | None = None, *, status: str = "ok"
) -> dict[str, Any]:
    return {
        "status": status,
        "view_type": "text",
        "data": {"content": content},
        "actions": [],
        "message": message if message is not None else content,
    }
