"""AssistantFlows: how 智能助手 answers — a request, a replayed pause, the window.

Something said starts (or continues) the agent loop over the session's
`Conversation`; the results of a step plan the controller ran (after the user's yes,
or at once when nothing needed asking) resume the paused loop; the window opening
shows the conversation so far. Without a model the app says so plainly and names
the apps that work offline. What the app itself says is in the user's language
(`turn.tr`; what the model writes is the model's). Every reply carries the
conversation as `state`.
"""

from __future__ import annotations

from typing import Any

from aios_sdk import Flows, Turn, action
from aios_sdk.views import button, text_reply

from .hooks import files_named_exist
from .loop import AgentLoop, LoopSettings, Outcome
from .messages import Conversation
from .tools import ToolBox

__all__ = ["OFFLINE_APPS", "AssistantFlows"]

OFFLINE_APPS = (  # (Chinese name, English name)
    ("音乐应用", "Music"),
    ("代码应用", "Code"),
    ("系统控制", "System Control"),
    ("定时任务", "Scheduled Tasks"),
    ("Hello小AI", "Hello AI"),
)
MOVED_ON = "not run: the user sent a new message instead of confirming this call"


class AssistantFlows(Flows):
    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        conversation = Conversation.from_state(turn.state)
        if turn.results:
            return self._resumed(conversation, turn)
        instruction = turn.instruction.strip()
        if not instruction:
            return self._history(conversation, turn)
        if not self.llm_available():
            return self._offline(turn)
        loop = self._loop(conversation, turn)
        loop.cancel_pending(MOVED_ON)
        conversation.plan_rounds = 0
        return self._answer(loop.start(instruction), conversation, turn)

    @action("clear")
    def on_clear(self, turn: Turn) -> dict[str, Any]:
        emptied = Conversation().to_state()
        return text_reply(
            turn.tr("对话已清空。", "The conversation is cleared."),
            message=turn.tr("对话已清空", "The conversation is cleared"),
            state=emptied,
        )

    # ------------------------------------------------------------------ cases

    def _resumed(self, conversation: Conversation, turn: Turn) -> dict[str, Any]:
        pending = conversation.pending or {}
        steps = pending.get("steps") or []
        if not steps or f"step_{steps[0]}" not in turn.results:
            text = turn.tr(
                "之前请求确认的操作已处理，但对话已经继续了。",
                "A call confirmed late has been handled; the conversation moved on.",
            )
            return text_reply(text, message=text, state=conversation.to_state())
        loop = self._loop(conversation, turn)
        return self._answer(loop.resume(turn.results), conversation, turn)

    def _history(self, conversation: Conversation, turn: Turn) -> dict[str, Any]:
        shown = [m for m in conversation.messages if m.get("role") in ("user", "assistant")]
        if not shown:
            text = turn.tr(
                "你好，我是智能助手：告诉我要做的事，我会用工具一步步完成。",
                "Hi, I am the assistant: tell me what to do and I will work it out "
                "with the tools.",
            )
            if not self.llm_available():
                text = _offline_text(turn)
            return text_reply(text, message="")

        def line(message: dict[str, Any]) -> str:
            you = message["role"] == "user"
            who = turn.tr("你", "You") if you else turn.tr("助手", "Assistant")
            said = message.get("content") or turn.tr("(调用工具)", "(using tools)")
            return turn.tr(f"{who}：{said}", f"{who}: {said}")

        lines = [line(m) for m in shown[-20:]]
        return text_reply("\n\n".join(lines), message="", actions=[_clear_button(turn)])

    def _offline(self, turn: Turn) -> dict[str, Any]:
        return text_reply(
            _offline_text(turn),
            message=turn.tr("智能助手需要配置模型", "The assistant needs a model"),
            notice="warning",
            status="ok",
        )

    def _answer(
        self, outcome: Outcome, conversation: Conversation, turn: Turn
    ) -> dict[str, Any]:
        state = conversation.to_state()
        if outcome.kind == "plan":
            planned = self.agent.plan_steps(
                outcome.steps,
                turn.tr("正在执行需要确认的操作…", "Running what needs your confirmation…"),
            )
            planned["state"] = state
            return planned
        if outcome.kind == "error":
            return text_reply(
                outcome.text,
                status="error",
                message=outcome.text[:200],
                detail=outcome.detail or None,
                state=state,
            )
        notice = "warning" if outcome.kind == "stopped" else None
        done = turn.tr("完成", "Done")
        first_line = (outcome.text.strip().splitlines() or [done])[0][:200]
        return text_reply(
            outcome.text or turn.tr("(空回答)", "(empty answer)"),
            message=first_line,
            notice=notice,
            state=state,
            actions=[_clear_button(turn)],
        )

    # --------------------------------------------------------------- building

    def _loop(self, conversation: Conversation, turn: Turn) -> AgentLoop:
        agent = self.agent
        session_id = str(turn.context.get("session_id") or "")
        llm = agent.llm

        def progress(kind: str, data: dict[str, Any]) -> None:
            llm.progress(session_id, kind, data)

        def list_dir(folder: str) -> list[str]:
            listing = agent.call_tool("file_list", path=folder)
            return [str(f.get("name")) for f in (listing or {}).get("files", [])]

        def write_output(path: str, text: str) -> str:
            agent.call_tool("file_write", path=path, content=text)
            return path

        return AgentLoop(
            llm=llm,
            tools=ToolBox.from_executor(agent.call_tool),
            conversation=conversation,
            system_prompt=_system_prompt(agent.role_prompt),
            tr=turn.tr,
            language=turn.language,
            session_id=session_id,
            settings=LoopSettings.from_settings(agent.settings),
            progress=progress,
            stop_hooks=[files_named_exist(list_dir)],
            write_output=write_output,
        )


def _system_prompt(role: str) -> str:
    return (
        f"{role}\n\nFile paths are relative to your workspace. Tool results come back "
        "as tool messages; a result with an `error` means the call failed. Some calls "
        "wait for the user's confirmation before they run. Use the `task` tool for a "
        "self-contained sub-task."
    )


def _clear_button(turn: Turn) -> dict[str, Any]:
    return button(turn.tr("清空对话", "Clear the conversation"), "clear")


def _offline_text(turn: Turn) -> str:
    return turn.tr(
        "智能助手需要一个模型才能工作，但这台电脑还没有配置模型（在设置里填写 API Key 或本地模型地址）。"
        f"不用模型也能用的应用：{'、'.join(zh for zh, _ in OFFLINE_APPS)}。",
        "The assistant needs a model, and none is configured (set an API key or a local "
        f"model server in Settings). These apps work offline: "
        f"{', '.join(en for _, en in OFFLINE_APPS)}.",
    )
