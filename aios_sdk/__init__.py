"""Triton AIOS SDK: what app authors import.

    from aios_sdk import AIOSAgent, tool, serve

`AIOSAgent` is the base class of a "small AI" (S-70); `tool` registers a custom
tool (S-72); `serve(agent)` runs the agent's HTTP service on `APP_PORT` (S-75).
"""

from aios_sdk.agent import AIOSAgent, tool
from aios_sdk.errors import AiosError, ToolFailed
from aios_sdk.server import create_app, serve

__all__ = ["AIOSAgent", "AiosError", "ToolFailed", "create_app", "serve", "tool"]
