"""`AgentFlows`: an app that answers with the agent loop — a request, a pause, the window.

Something said starts (or continues) the loop over the session's `Conversation`, with
the app's role prompt and its own tools (`AIOSAgent.available_tools()`: atomic, its
`@tool` methods, skills, MCP, as the manifest allows); the results of a step plan the
controller ran (after the user's yes, or at once when nothing needed asking) resume
the paused loop; a question the loop asked (`ask_user`) waits with its choices as
buttons and a box for a typed answer, and the answer — clicked, typed, or the next
thing said — continues the same loop; the window opening shows the conversation so
far; `clear` empties it. Without a model `offline(turn)` answers (a subclass says what the app can do
then). `answered(outcome, conversation, turn)` turns the loop's end into the reply;
a subclass may render it its own way. What the runtime itself says is in the user's
language; what the model writes is the model's. Every reply carries the
conversation as `state`.

An app gets it by setting `agent = True` (or `"agent": true` in its manifest); an
app with its own flows hands what they do not understand to the loop with
`Flows.hand_to_loop(turn)` (or starts it with its own wording, `start(turn, text)`)
and names `AgentFlows` (or its subclass) as the agent's `agent_flows`, which then
answers the loop's resumed calls and the answer to its question.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aios_sdk.errors import AiosError
from aios_sdk.flows import Flows, Turn, action
from aios_sdk.ports import AgentPort
from aios_sdk.runtime.hooks import StopHook, files_named_exist
from aios_sdk.runtime.loop import AgentLoop, LoopSettings, Outcome
from aios_sdk.runtime.messages import Conversation, StreamEvent, UserMessage
from aios_sdk.runtime.tools import ToolBox
from aios_sdk.views import button, input_box, link, text_reply

__all__ = ["MOVED_ON", "AgentFlows", "settings_link", "system_prompt"]

MOVED_ON = "not run: the user sent a new message instead of confirming this call"


def system_prompt(role: str, caller: str = "", tools: str = "") -> str:
    """The loop's system prompt (a sub-agent's too): the app's role, the runtime's
    rules, what the tools' providers say about their tools, and the system prompt of
    an OpenAI client's request when there is one."""
    prompt = (
        f"{role}\n\nFile paths are relative to your workspace. Tool results come back "
        "as tool messages; a result with an `error` means the call failed. Some calls "
        "wait for the user's confirmation before they run. Use the `task` tool for a "
        "self-contained sub-task and `ask_user` when only the user can answer."
    )
    parts = [prompt, tools.strip(), caller.strip()]
    return "\n\n".join(part for part in parts if part)


def settings_link(turn: Turn) -> dict[str, Any]:
    """打开设置 / Open Settings: the desktop's settings, where a model is set up."""
    return link(turn.tr("打开设置", "Open Settings"), "settings", "aios:settings")


class AgentFlows(Flows):
    """The loop as an app's flows; see the module docstring."""

    @classmethod
    def owns(
        cls,
        agent: AgentPort,
        instruction: str | None,
        context: Mapping[str, Any] | None,
        action_request: Mapping[str, Any] | None = None,
        *,
        said: bool = True,
    ) -> bool:
        """Whether this call is the loop's: the results of its paused plan, one of its
        actions, or (with a model) something said — anything when `said`, else only
        the answer to the loop's question."""
        turn = Turn.read(instruction, context, action_request)
        if turn.results:
            return cls.resumes(turn)
        if turn.action:
            return turn.action_id in cls.actions
        if not turn.instruction.strip() or not (said or cls.asking(turn)):
            return False
        return cls(agent).llm_available()

    @staticmethod
    def resumes(turn: Turn) -> bool:
        """Whether `turn` carries the results of the loop's paused plan."""
        pending = turn.state.get("pending")
        steps = pending.get("steps") if isinstance(pending, Mapping) else None
        return (
            isinstance(steps, list) and bool(steps) and f"step_{steps[0]}" in turn.results
        )

    # ---------------------------------------------------------------- answers

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        conversation = Conversation.from_state(turn.state)
        if turn.results:
            return self._resumed(conversation, turn)
        instruction = turn.instruction.strip()
        if not instruction:
            return self.history(conversation, turn)
        if not self.llm_available():
            return self.offline(turn)
        if self.asking(turn):  # the next message answers the loop's question
            return self.on_answer(turn)
        return self.start(turn, instruction, conversation)

    @staticmethod
    def asking(turn: Turn) -> bool:
        """Whether the loop waits for the user's answer to its question."""
        pending = turn.state.get("pending")
        return isinstance(pending, Mapping) and pending.get("kind") == "question"

    @action("answer")
    def on_answer(self, turn: Turn) -> dict[str, Any]:
        """The user's answer (clicked, typed in the question's box, or said)."""
        conversation = Conversation.from_state(turn.state)
        text = str(
            turn.params.get("answer") or turn.value or turn.instruction or ""
        ).strip()
        if not self.asking(turn) or not text:
            return self.history(conversation, turn)
        loop = self.loop(conversation, turn)
        conversation.plan_rounds = 0
        return self.answered(loop.answer(text), conversation, turn)

    @action("clear")
    def on_clear(self, turn: Turn) -> dict[str, Any]:
        return text_reply(
            turn.tr("对话已清空。", "The conversation is cleared."),
            message=turn.tr("对话已清空", "The conversation is cleared"),
            state=Conversation().to_state(),
        )

    def start(
        self, turn: Turn, instruction: str, conversation: Conversation | None = None
    ) -> dict[str, Any]:
        """Run the loop on `instruction` (a flow may call this with its own wording)."""
        conversation = conversation or Conversation.from_state(turn.state)
        loop = self.loop(conversation, turn)
        loop.cancel_pending(MOVED_ON)
        conversation.plan_rounds = 0
        return self.answered(loop.start(instruction), conversation, turn)

    def offline(self, turn: Turn) -> dict[str, Any]:
        """The answer without a model: nothing was done (`notice` `error`), and why,
        with the way to the settings where a model is set up."""
        text = turn.tr(
            "这个应用需要一个模型才能回答，但还没有配置模型（在设置里填写 API Key 或 API 地址）。",
            "This app needs a model to answer, and none is configured (set an API key "
            "or an API address in Settings).",
        )
        said = turn.tr(
            "什么也没做：这个应用需要一个模型才能回答（在设置里填写 API Key 或 API 地址）",
            "Nothing was done: this app needs a model to answer (set an API key or an "
            "API address in Settings)",
        )
        return text_reply(
            text,
            message=said,
            notice="error",
            status="ok",
            actions=[settings_link(turn)],
        )

    def greeting(self, turn: Turn) -> str:
        return turn.tr(
            f"你好，我是{self.agent.name}：告诉我要做的事。",
            f"Hi, I am {self.agent.name}: tell me what to do.",
        )

    def history(self, conversation: Conversation, turn: Turn) -> dict[str, Any]:
        shown = conversation.shown()
        if not shown:
            if not self.llm_available():  # opened: nothing was asked of it yet
                return self.offline(turn) | {"message": "", "notice": "warning"}
            return text_reply(self.greeting(turn), message="")

        def line(message: Any) -> str:
            you = isinstance(message, UserMessage)
            who = turn.tr("你", "You") if you else turn.tr("助手", "Assistant")
            said = message.text if not you else message.content
            said = said or turn.tr("(调用工具)", "(using tools)")
            return turn.tr(f"{who}：{said}", f"{who}: {said}")

        lines = [line(m) for m in shown[-20:]]
        return text_reply("\n\n".join(lines), message="", actions=[self.clear_button(turn)])

    def answered(
        self, outcome: Outcome, conversation: Conversation, turn: Turn
    ) -> dict[str, Any]:
        """The reply for the loop's `outcome` (a plan for the controller, an error, or
        the answer)."""
        state = conversation.to_state()
        if outcome.kind == "plan":
            planned: dict[str, Any] = self.agent.plan_steps(
                outcome.steps,
                turn.tr("正在执行需要确认的操作…", "Running what needs your confirmation…"),
            )
            planned["state"] = state
            return planned
        if outcome.kind == "question":
            return self.question(outcome, state, turn)
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
        reply = text_reply(
            outcome.text or turn.tr("(空回答)", "(empty answer)"),
            message=first_line,
            notice=notice,
            state=state,
            actions=[self.clear_button(turn)],
        )
        reasoning = conversation.reasoning_since_user()
        if reasoning:  # shown folded (思考过程), sent to /v1 clients as <think>
            reply["reasoning"] = reasoning
        return reply

    def question(
        self, outcome: Outcome, state: dict[str, Any], turn: Turn
    ) -> dict[str, Any]:
        """The loop's question: its choices as buttons, and a box for any answer."""
        choices = [button(choice, "answer", answer=choice) for choice in outcome.choices]
        typed = input_box(
            turn.tr("你的回答", "Your answer"),
            "answer",
            turn.tr("输入回答后按回车", "Type your answer and press Enter"),
        )
        reply = text_reply(
            outcome.text, message=outcome.text[:200], state=state, actions=[*choices, typed]
        )
        reply["awaiting_user_input"] = {
            "question": outcome.text,
            "choices": outcome.choices,
        }
        return reply

    def clear_button(self, turn: Turn) -> dict[str, Any]:
        return button(turn.tr("清空对话", "Clear the conversation"), "clear")

    # --------------------------------------------------------------- building

    def _resumed(self, conversation: Conversation, turn: Turn) -> dict[str, Any]:
        if not self.resumes(turn):
            text = turn.tr(
                "之前请求确认的操作已处理，但对话已经继续了。",
                "A call confirmed late has been handled; the conversation moved on.",
            )
            return text_reply(text, message=text, state=conversation.to_state())
        loop = self.loop(conversation, turn)
        return self.answered(loop.resume(turn.results), conversation, turn)

    def stop_hooks(self) -> list[StopHook]:
        """Checks of an answer before the loop may finish: by default, that every
        workspace file it names exists."""
        agent = self.agent

        def list_dir(folder: str) -> list[str]:
            listing = agent.call_tool("file_list", path=folder)
            return [str(f.get("name")) for f in (listing or {}).get("files", [])]

        return [files_named_exist(list_dir)]

    def loop(self, conversation: Conversation, turn: Turn) -> AgentLoop:
        agent = self.agent
        session_id = str(turn.context.get("session_id") or "")
        llm = agent.llm

        def progress(event: StreamEvent) -> None:
            llm.progress(session_id, event.kind, dict(event.data))

        def write_output(path: str, text: str) -> str:
            agent.call_tool("file_write", path=path, content=text)
            return path

        def read_output(path: str) -> str | None:
            try:
                return str(agent.call_tool("file_read", path=path))
            except AiosError:
                return None  # not there (or not readable): nothing kept

        caller = str(turn.context.get("caller_system_prompt") or "")
        tools = ToolBox.from_agent(agent)
        return AgentLoop(
            llm=llm,
            tools=tools,
            conversation=conversation,
            system_prompt=system_prompt(agent.role_prompt, caller, tools.prompt),
            tr=turn.tr,
            language=turn.language,
            session_id=session_id,
            settings=LoopSettings.from_settings(agent.settings).within(
                turn.context.get("caller_max_turns")
            ),
            progress=progress,
            stop_hooks=self.stop_hooks(),
            write_output=write_output,
            read_output=read_output,
        )
