"""SystemAgent: 系统控制 as the system sees it, with psutil behind a custom tool.

`flows.SystemFlows` answers every call. Reading the machine is a side effect, so
it is the `system_status` tool (`status.collect`), run by the executor.
"""

from __future__ import annotations

from typing import Any

from aios_sdk import AIOSAgent, read_role, tool

from .flows import STATUS_TOOL, SystemFlows
from .status import collect


class SystemAgent(AIOSAgent, flows=SystemFlows):
    name = "系统控制"
    description = "调整桌面界面元素、管理窗口、查看系统状态"
    icon = "🎛️"
    role_prompt = read_role(__file__)

    @tool(name=STATUS_TOOL, desc="读取 CPU、内存、磁盘占用和最忙的进程（psutil）")
    def system_status(self, top: int = 8) -> dict[str, Any]:
        return collect(top)
