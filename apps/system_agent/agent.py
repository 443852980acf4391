"""SystemAgent: 系统控制 as the system sees it.

`flows.SystemFlows` answers every call (`AgentFlows`, what they hand to the agent
loop). The computer's status comes from the
executor's read-only `system_info` tool: this app runs confined, in a sandbox of its
own, and reads nothing of the machine itself.
"""

from __future__ import annotations

from aios_sdk import AIOSAgent, read_role
from aios_sdk.runtime.flows import AgentFlows

from .flows import SystemFlows


class SystemAgent(AIOSAgent, flows=SystemFlows):
    agent_flows = AgentFlows  # what the flows hand to the loop, with a model
    name = "系统控制"
    description = "调整桌面界面元素、管理窗口、查看系统状态"
    icon = "🎛️"
    role_prompt = read_role(__file__)
