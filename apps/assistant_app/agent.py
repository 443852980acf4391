"""AssistantAgent: 智能助手 as the system sees it; every call goes to `flows`."""

from __future__ import annotations

from aios_sdk import AIOSAgent, read_role

from .flows import AssistantFlows


class AssistantAgent(AIOSAgent, flows=AssistantFlows):
    name = "智能助手"
    description = "通用智能助手：用模型和工具完成多步骤任务"
    icon = "🧠"
    role_prompt = read_role(__file__)
