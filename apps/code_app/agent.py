"""CodeAgent: 代码应用 as the system sees it; `flows.CodeFlows` answers every call."""

from __future__ import annotations

from aios_sdk import AIOSAgent, read_role

from .flows import CodeFlows


class CodeAgent(AIOSAgent, flows=CodeFlows):
    name = "代码应用"
    description = "编写、查看、编辑和运行 Python 代码"
    icon = "💻"
    role_prompt = read_role(__file__)
