"""系统控制: moves, resizes, recolours and hides desktop elements; windows; status.

The phrase resolution lives in `ui_phrases` (what is asked) and `ui_targets` (which
element, which commands); `system_flows` plans the snapshot read and answers with
S-82 `ui_commands`. Reading the machine's status is the app's custom tool
`system_status` (psutil), run by the executor like any tool (S-05, S-62).
"""

from __future__ import annotations

from typing import Any

from system_flows import STATUS_TOOL, SystemFlows
from system_status import collect

from aios_sdk import AIOSAgent, read_role, tool


class SystemAgent(AIOSAgent):
    name = "系统控制"
    description = "调整桌面界面元素、管理窗口、查看系统状态"
    icon = "⚙️"
    role_prompt = read_role(__file__)

    def handle(
        self,
        instruction: str | None,
        context: dict[str, Any],
        action_request: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return SystemFlows(self).handle(instruction, context, action_request)

    @tool(name=STATUS_TOOL, desc="读取 CPU、内存、磁盘占用和最忙的进程（psutil）")
    def system_status(self, top: int = 8) -> dict[str, Any]:
        return collect(top)


if __name__ == "__main__":
    from aios_sdk import serve

    serve(SystemAgent())
