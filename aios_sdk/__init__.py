"""Triton AIOS SDK: what app authors import.

    from aios_sdk import AIOSAgent, tool, serve

`AIOSAgent` is the base class of a "small AI" (S-70); `tool` registers a custom
tool (S-72); `serve(agent)` runs the agent's HTTP service on `APP_PORT` (S-75).
Names are imported lazily so that services using only the protocol stay light.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "AIOSAgent",
    "AiosError",
    "ToolFailed",
    "create_app",
    "read_role",
    "serve",
    "step_outcome",
    "tool",
]

_HOMES = {
    "AIOSAgent": "aios_sdk.agent",
    "tool": "aios_sdk.agent",
    "step_outcome": "aios_sdk.agent",
    "read_role": "aios_sdk.agent",
    "serve": "aios_sdk.server",
    "create_app": "aios_sdk.server",
    "AiosError": "aios_sdk.errors",
    "ToolFailed": "aios_sdk.errors",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'aios_sdk' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
