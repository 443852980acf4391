"""CodeAgent: 代码应用 as the system sees it (its name, icon and role prompt are the
manifest's and role.md's); `flows.CodeFlows` answers every call, and a program
written from a description is the agent loop's (`writing.CodeWriting`)."""

from __future__ import annotations

from aios_sdk import AIOSAgent

from .flows import CodeFlows
from .writing import CodeWriting


class CodeAgent(AIOSAgent, flows=CodeFlows):
    agent_flows = CodeWriting
