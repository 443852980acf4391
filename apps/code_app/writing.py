"""A program from a description, written by the model with the SDK's agent loop.

With a model configured, "写一个…" starts `CodeWriting` (an `AgentFlows`): the model
writes the program with `file_write`, may run it with `shell_exec` to check it, and
answers; the program it wrote is then shown like any other (`code` view, 运行 /
编辑). Each request is a fresh conversation. When the model fails, the request falls
back to the template flow (with a note that the model did not answer); when it
answers without writing a program, the templates are offered. `CodeAgent` names
this class as its `agent_flows`, so the loop's paused calls come back here.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from aios_sdk import Turn
from aios_sdk.runtime.flows import AgentFlows
from aios_sdk.runtime.loop import Outcome
from aios_sdk.runtime.messages import AssistantMessage, Conversation, ToolMessage

from .intent import read_intent
from .saving import code_view
from .writer import failure_note, program_filename

__all__ = ["CodeWriting", "written_program"]


def written_program(conversation: Conversation) -> tuple[str, str] | None:
    """`(path, code)` of the last `.py` file the loop wrote successfully. A result is
    matched to its call by the message that asked and the call's id: a model may use
    one call id in several turns."""
    proposed: dict[tuple[str, str], tuple[str, str]] = {}  # (asker, call id) → file
    written: tuple[str, str] | None = None
    for message in conversation.messages:
        if isinstance(message, AssistantMessage):
            for use in message.tool_uses:
                program = _program_of(use.name, use.arguments)
                if program is not None:
                    proposed[(message.id, use.id)] = program
        elif isinstance(message, ToolMessage) and not message.result.is_error:
            asked = (message.result.asked_by, message.result.tool_use_id)
            written = proposed.get(asked, written)
    return written


def _program_of(tool: str, arguments: str) -> tuple[str, str] | None:
    """`(path, code)` of a `file_write` call that writes a `.py` file, else None."""
    if tool != "file_write":
        return None
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    path = posixpath.normpath(str(args.get("path") or "")).removeprefix("workspace/")
    if path.endswith(".py") and isinstance(args.get("content"), str):
        return path, args["content"]
    return None


class CodeWriting(AgentFlows):
    def begin(self, turn: Turn, description: str) -> dict[str, Any]:
        taken = {str(name) for name in turn.state.get("files") or []}
        name = program_filename(description, taken)
        task = (
            f"Write a Python program: {description}\n\nSave it with file_write as "
            f'{name} (or another free .py name), run it with shell_exec ["python3", '
            f'"{name}"] to check it works, and fix it if it fails. Then say in one '
            "sentence, in the user's language, what the program does."
        )
        return self.start(turn, task, Conversation())

    def answered(
        self, outcome: Outcome, conversation: Conversation, turn: Turn
    ) -> dict[str, Any]:
        from .flows import CodeFlows

        if outcome.kind == "plan":
            return super().answered(outcome, conversation, turn)
        description = read_intent(turn.instruction).description or turn.instruction
        flows = CodeFlows(self.agent)
        if outcome.kind == "error":
            return flows.write(turn, description, use_model=False)
        program = written_program(conversation)
        if program is None:
            why = failure_note("llm_bad_reply", turn.language) + turn.tr(
                "先从模板开始吧。", "start from a template."
            )
            return flows.templates_view(
                turn, turn.tr(f"没有写出程序。{why}", f"No program was written. {why}")
            )
        path, code = program
        message = turn.tr(
            f"已根据描述写好 {path}，可以运行或编辑",
            f"Wrote {path} from your description; you can run or edit it",
        )
        reply = code_view(turn, path, code, message)
        reply["state"] = {**conversation.to_state(), **reply.get("state", {})}
        return reply
