"""AssistantAgent: 智能助手 as the system sees it (its name, icon and role prompt are
the manifest's and role.md's); every call goes to `flows`."""

from __future__ import annotations

from aios_sdk import AIOSAgent

from .flows import AssistantFlows


class AssistantAgent(AIOSAgent, flows=AssistantFlows):
    pass
