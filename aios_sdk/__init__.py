"""Triton AIOS SDK: what app authors import.

    from aios_sdk import AIOSAgent, tool, serve

`AIOSAgent` is the base class of a "small AI"; `tool` registers a custom
tool; `serve(agent)` runs the agent's HTTP service on `APP_PORT`, and
`serve_package(__file__)` does so from the `main.py` of an app package. `Flows`,
`Turn` and `action` split an app's answers into one method per case; `views` builds
replies, views and actions; `AgentLLM` is the app's way to the model (`self.llm`);
`AiosError`, `ToolFailed` and `LLMError` are the errors an app meets; `audio_kind`
tells an audio file by its first bytes; `testing` (`aios_sdk.testing`) tests an app
in-process with a scripted model. Names are imported lazily, so a process using only
the protocol stays light and an app's process, which never names `testing`, never
imports it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the lazy names below, as a type checker sees them
    from aios_runtime.audio import audio_kind
    from aios_sdk import testing, views
    from aios_sdk.agent import AIOSAgent, read_role, step_outcome, tool
    from aios_sdk.entry import serve_package
    from aios_sdk.errors import AiosError, ToolFailed
    from aios_sdk.flows import Flows, Turn, action
    from aios_sdk.llm import AgentLLM, LLMError
    from aios_sdk.server import create_app, serve

__all__ = [
    "AIOSAgent",
    "AgentLLM",
    "AiosError",
    "Flows",
    "LLMError",
    "ToolFailed",
    "Turn",
    "action",
    "audio_kind",
    "create_app",
    "read_role",
    "serve",
    "serve_package",
    "step_outcome",
    "testing",
    "tool",
    "views",
]

_HOMES = {
    "AIOSAgent": "aios_sdk.agent",
    "tool": "aios_sdk.agent",
    "step_outcome": "aios_sdk.agent",
    "read_role": "aios_sdk.agent",
    "Flows": "aios_sdk.flows",
    "Turn": "aios_sdk.flows",
    "action": "aios_sdk.flows",
    "serve": "aios_sdk.server",
    "create_app": "aios_sdk.server",
    "serve_package": "aios_sdk.entry",
    "AgentLLM": "aios_sdk.llm",
    "LLMError": "aios_sdk.llm",
    "AiosError": "aios_sdk.errors",
    "ToolFailed": "aios_sdk.errors",
    "audio_kind": "aios_runtime.audio",
}
_MODULES = {"testing", "views"}


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(f"aios_sdk.{name}")
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'aios_sdk' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
