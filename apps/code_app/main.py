"""代码应用: write, show, edit, run and list the Python files of its workspace.

`code_flows.CodeFlows` plans the steps (`file_write`, `file_read`, `file_list`,
`shell_exec python3 FILE` — run inside the executor's sandbox) and renders `code`,
`form` and `list` views. Writing code from a description goes through the LLM when
one is configured (`code_writer`, the hook point), else through templates.
"""

from __future__ import annotations

from typing import Any

from code_flows import CodeFlows
from code_writer import agent_llm

from aios_sdk import AIOSAgent, read_role


class CodeAgent(AIOSAgent):
    name = "代码应用"
    description = "编写、查看、编辑和运行 Python 代码"
    icon = "💻"
    role_prompt = read_role(__file__)

    def handle(
        self,
        instruction: str | None,
        context: dict[str, Any],
        action_request: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return CodeFlows(self, lambda: agent_llm(self)).handle(
            instruction, context, action_request
        )


if __name__ == "__main__":
    from aios_sdk import serve

    serve(CodeAgent())
