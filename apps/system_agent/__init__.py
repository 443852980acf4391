"""系统控制: moves, resizes, recolours and hides desktop elements; windows; status.

`agent.SystemAgent` hands every call to `flows.SystemFlows`, which plans the UI
snapshot read and answers with `ui_commands`. What is asked is read by
`phrases`; which element and which commands, by `targets`; a phrasing the rules
cannot resolve goes to the LLM (`llm`). The computer's status is read by the
executor's `system_info` tool and shown by `status`.
"""

from .agent import SystemAgent

__all__ = ["SystemAgent"]
