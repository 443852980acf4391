"""SkillsAgent: 技能 as the system sees it; every call goes to `flows.SkillsFlows`,
and what they hand to the agent loop to `AgentFlows`."""

from __future__ import annotations

from aios_sdk import AIOSAgent, read_role
from aios_sdk.runtime.flows import AgentFlows

from .flows import SkillsFlows


class SkillsAgent(AIOSAgent, flows=SkillsFlows):
    agent_flows = AgentFlows  # what the flows hand to the loop, with a model
    name = "技能"
    description = "列出、运行、安装和重新加载技能"
    icon = "🧩"
    role_prompt = read_role(__file__)
