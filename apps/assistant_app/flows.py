"""AssistantFlows: how 智能助手 answers — a request, a replayed pause, the window.

Something said starts (or continues) the agent loop over the session's
`Conversation`; the results of a step plan the controller ran (after the user's yes,
or at once when nothing needed asking) resume the paused loop; the window opening
shows the conversation so far. Without a model the app says so plainly and names
the apps that work offline. Every reply carries the conversation as `state`.
"""

from __future__ import annotations

from typing import Any

from aios_sdk import Flows, Turn, action
from aios_sdk.views import button, reply, text_reply

from .hooks import files_named_exist
from .loop import AgentLoop, LoopSettings, Outcome
from .messages import Conversation
from .tools import ToolBox

__all__ = ["OFFLINE_APPS", "AssistantFlows"]

OFFLINE_APPS = ("音乐应用", "代码应用", "系统控制", "定时任务", "Hello小AI")
MOVED_ON = "not run: the user sent a new message instead of confirming this call"


class AssistantFlows(Flows):
    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        conversation = Conversation.from_state(turn.state)
        if turn.results:
            return self._resumed(conversation, turn)
        instruction = turn.instruction.strip()
        if not instruction:
            return self._history(conversation)
        if not self.llm_available():
            return self._offline()
        loop = self._loop(conversation, turn)
        loop.cancel_pending(MOVED_ON)
        conversation.plan_rounds = 0
        return self._answer(loop.start(instruction), conversation)

    @action("clear")
    def on_clear(self, turn: Turn) -> dict[str, Any]:
        emptied = Conversation().to_state()
        return text_reply("对话已清空。(The conversation is cleared.)",
                          message="对话已清空", state=emptied)  # fmt: skip

    # ------------------------------------------------------------------ cases

    def _resumed(self, conversation: Conversation, turn: Turn) -> dict[str, Any]:
        pending = conversation.pending or {}
        steps = pending.get("steps") or []
        if not steps or f"step_{steps[0]}" not in turn.results:
            text = (
                "之前请求确认的操作已处理，但对话已经继续了。"
                "(A call confirmed late has been handled; the conversation moved on.)"
            )
            return text_reply(text, message=text, state=conversation.to_state())
        loop = self._loop(conversation, turn)
        return self._answer(loop.resume(turn.results), conversation)

    def _history(self, conversation: Conversation) -> dict[str, Any]:
        shown = [m for m in conversation.messages if m.get("role") in ("user", "assistant")]
        if not shown:
            text = (
                "你好，我是智能助手：告诉我要做的事，我会用工具一步步完成。"
                "\nHi, I am the assistant: tell me what to do and I will work it out "
                "with the tools."
            )
            if not self.llm_available():
                text = _offline_text()
            return text_reply(text, message="")
        lines = [
            f"{'你' if m['role'] == 'user' else '助手'}：{m.get('content') or '(调用工具)'}"
            for m in shown[-20:]
        ]
        return text_reply(
            "\n\n".join(lines), message="", actions=[button("清空对话", "clear")]
        )

    def _offline(self) -> dict[str, Any]:
        text = _offline_text()
        return text_reply(text, message="智能助手需要配置模型", notice="warning",
                          status="ok")  # fmt: skip

    def _answer(self, outcome: Outcome, conversation: Conversation) -> dict[str, Any]:
        state = conversation.to_state()
        if outcome.kind == "plan":
            planned = self.agent.plan_steps(outcome.steps, "正在执行需要确认的操作…")
            planned["state"] = state
            return planned
        if outcome.kind == "error":
            return reply("text", {"content": outcome.text}, status="error",
                         message=outcome.text[:200], state=state)  # fmt: skip
        notice = "warning" if outcome.kind == "stopped" else None
        first_line = (outcome.text.strip().splitlines() or ["完成"])[0][:200]
        return text_reply(outcome.text or "(空回答)", message=first_line, notice=notice,
                          state=state, actions=[button("清空对话", "clear")])  # fmt: skip

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


def _offline_text() -> str:
    apps = "、".join(OFFLINE_APPS)
    return (
        "智能助手需要一个模型才能工作，但这台电脑还没有配置模型（在设置里填写 API Key 或本地模型地址）。"
        f"不用模型也能用的应用：{apps}。\n"
        "The assistant needs a model, and none is configured (set an API key or a local "
        f"model server in Settings). These apps work offline: {apps}."
    )
