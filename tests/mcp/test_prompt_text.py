"""A provider whose tools were dropped tells a model nothing about them: a failed MCP
server adds no prompt text to the listing's `prompt`, a running one does."""

from __future__ import annotations

from pathlib import Path

import pytest

from aios_runtime.settings import McpServerSettings
from executor.providers.mcp import McpProvider, McpRuntime, McpServerConfig
from executor.providers.registry import ToolSource
from tests.mcp.conftest import server_entry

pytestmark = pytest.mark.process


def _provider(tmp_path: Path, name: str, script: str) -> McpProvider:
    # declared tools: the listing holds them (unavailable) once the server failed
    entry = server_entry(
        script, tools=[{"name": "add", "description": "Add.", "input_schema": {}}]
    )
    return McpProvider(
        McpServerConfig(name, McpServerSettings.model_validate(entry)),
        McpRuntime(log_dir=tmp_path / "logs", backoff=()),
    )


def test_a_failed_mcp_server_adds_no_prompt_text(tmp_path: Path) -> None:
    source = ToolSource()
    dead = _provider(tmp_path, "dead", "dies_at_start")
    alive = _provider(tmp_path, "alive", "basic")
    try:
        source.add(dead)
        source.add(alive)
        assert dead.wait_ready(20) is False and dead.status()["state"] == "failed"
        assert alive.wait_ready(20) is True
        listed = {e.name: e for e in source.listing(None)}
        assert listed["mcp__dead__add"].available is False
        prompt = source.prompt_text(None)
        assert "'alive'" in prompt
        assert "dead" not in prompt, prompt
    finally:
        source.stop_all()
