"""SchedulerAgent: 定时任务 as the system sees it; every call goes to `flows.SchedulerFlows`,
and what they hand to the agent loop to `AgentFlows`."""

from __future__ import annotations

from aios_sdk import AIOSAgent, read_role
from aios_sdk.runtime.flows import AgentFlows

from .flows import SchedulerFlows


class SchedulerAgent(AIOSAgent, flows=SchedulerFlows):
    agent_flows = AgentFlows  # what the flows hand to the loop, with a model
    name = "定时任务"
    description = "定时任务与提醒"
    icon = "⏰"
    role_prompt = read_role(__file__)
