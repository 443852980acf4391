"""The MCP provider against real stdio MCP servers (tests/mcp/servers/): listing, calls,
a hanging tool, a 100 MB answer, a crash, a server that dies at start, a lying
listing, the sandbox, and stop leaving no process behind."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from aios_protocol.errors import ToolFailed, ToolTimeout
from aios_runtime.bubblewrap import bwrap_works, find_bwrap
from aios_runtime.settings import McpServerSettings
from executor.providers.base import ToolCall
from executor.providers.mcp import BACKOFF, McpProvider, McpRuntime, McpServerConfig
from tests.mcp.conftest import server_entry, tag_of
from tests.procs import held_port, processes_tagged

HAS_BWRAP = bool(find_bwrap()) and bwrap_works(find_bwrap() or "bwrap")


def _provider(
    tmp_path: Path, name: str, entry: dict, backoff: tuple[float, ...] = BACKOFF
) -> McpProvider:
    settings = McpServerSettings.model_validate(entry)
    return McpProvider(
        McpServerConfig(name, settings),
        McpRuntime(log_dir=tmp_path / "logs", backoff=backoff),
    )


def _call(provider: McpProvider, tool: str, **args):
    name = f"mcp__{provider.config.name}__{tool}"
    return provider.call(ToolCall(app=None, tool=name, args=args, timeout=30))  # type: ignore[arg-type]


@pytest.fixture
def basic(tmp_path: Path) -> Iterator[McpProvider]:
    provider = _provider(tmp_path, "basic", server_entry("basic", timeout=3))
    provider.start(wait=20)
    assert provider.status()["state"] == "running", provider.status()
    yield provider
    provider.stop()


def _wait_state(
    provider: McpProvider, state: str, timeout: float, restarts: int = 0
) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = provider.status()
        if status["state"] == state and status["restarts"] >= restarts:
            return status
        time.sleep(0.1)
    raise AssertionError(f"still {provider.status()} after {timeout} s")


@pytest.mark.process
def test_lists_the_servers_tools_with_config_risk(basic: McpProvider) -> None:
    entries = {e.name: e for e in basic.tools()}
    add = entries["mcp__basic__add"]
    assert add.provider == "mcp:basic" and add.description == "Add two integers."
    assert add.input_schema["required"] == ["a", "b"]
    assert (add.risk_level, add.requires_confirmation, add.concurrency_safe) == (
        "execute",
        True,
        False,
    )
    assert add.max_result_size_chars == 20000
    assert _call(basic, "add", a=2, b=3) == {"result": 5}
    assert _call(basic, "shout", text="hi") == {"result": "HI"}


def test_declared_tools_come_from_config_before_start(tmp_path: Path) -> None:
    entry = server_entry(
        "basic",
        trusted=True,
        risk_level="read",
        max_result_size_chars=50,
        tools=[{"name": "add", "description": "adds"}],
    )
    config = McpServerConfig("early", McpServerSettings.model_validate(entry))
    [declared] = McpProvider.declared_tools(config)
    assert declared.name == "mcp__early__add" and declared.risk_level == "read"
    assert declared.requires_confirmation is False and declared.max_result_size_chars == 50


@pytest.mark.process
def test_a_hanging_tool_times_out_and_the_server_stays_usable(basic: McpProvider) -> None:
    started = time.monotonic()
    with pytest.raises(ToolTimeout, match="within 3 s"):
        _call(basic, "wait", seconds=30)
    assert time.monotonic() - started < 6
    assert _call(basic, "add", a=1, b=1) == {"result": 2}


@pytest.mark.process
def test_a_100_mb_answer_is_a_clear_error_and_the_server_stays_usable(
    tmp_path: Path,
) -> None:
    # its own server with a per-call timeout far above the time a busy machine needs
    # to produce 100 MB: the cap, not the timeout, must be what refuses the answer
    provider = _provider(tmp_path, "big", server_entry("basic", timeout=60))
    provider.start(wait=20)
    try:
        with pytest.raises(ToolFailed, match="more than 10485760 bytes"):
            _call(provider, "huge", megabytes=100)
        assert _call(provider, "add", a=1, b=2) == {"result": 3}
        assert provider.status()["restarts"] == 0
    finally:
        provider.stop()


@pytest.mark.process
def test_a_crashed_server_is_restarted(basic: McpProvider) -> None:
    with pytest.raises(ToolFailed, match="exited during the call"):
        _call(basic, "crash")
    status = _wait_state(basic, "running", 15, restarts=1)
    assert status["restarts"] == 1
    assert _call(basic, "add", a=2, b=2) == {"result": 4}


@pytest.mark.process
def test_a_server_that_dies_at_start_fails_and_says_why(tmp_path: Path) -> None:
    # the shipped back-off's four steps, each a fifth as long
    quick = tuple(delay / 5 for delay in BACKOFF)
    provider = _provider(tmp_path, "dies", server_entry("dies_at_start"), quick)
    try:
        provider.start(wait=5)
        status = _wait_state(provider, "failed", 20)
        assert "gave up after 4 restarts" in status["error"]
        assert "missing API key" in status["error"]
        with pytest.raises(Exception, match="failed"):
            _call(provider, "anything")
    finally:
        provider.stop()


def test_a_missing_command_fails_with_its_name(tmp_path: Path) -> None:
    provider = _provider(tmp_path, "nothere", {"command": "no-such-mcp-server-xyz"})
    try:
        provider.start(wait=5)
        assert "no-such-mcp-server-xyz" in str(provider.status()["error"])
    finally:
        provider.stop()


@pytest.mark.process
def test_a_lying_listing_leaves_the_rest_usable(tmp_path: Path) -> None:
    provider = _provider(tmp_path, "lying", server_entry("lying"))
    try:
        provider.start(wait=20)
        entries = {e.name: e for e in provider.tools()}
        broken = entries["mcp__lying__broken_schema"]
        assert broken.available is False
        assert "not valid JSON Schema" in str(broken.unavailable_reason)
        assert "'bad name!': not a valid tool name" in provider.status()["skipped_tools"]
        with pytest.raises(ToolFailed, match="n must be an integer"):
            _call(provider, "wrong_schema", n="seven")
    finally:
        provider.stop()


@pytest.mark.process
@pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap does not work here")
def test_the_server_is_confined(basic: McpProvider, tmp_path: Path) -> None:
    assert basic.status()["sandbox"] == "bubblewrap"
    secret = Path("/root/.aios-mcp-test-secret")
    secret.write_text("secret")
    try:
        assert _call(basic, "probe_read", path=str(secret))["result"].startswith("error:")
    finally:
        secret.unlink()
    assert _call(basic, "probe_read", path="/etc/hostname")["result"].startswith("read:")
    assert _call(basic, "getenv", name="AIOS_TOKEN") == {"result": ""}
    with held_port() as port:
        assert _call(basic, "probe_connect", port=port)["result"].startswith("error:")


@pytest.mark.process
@pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap does not work here")
def test_network_true_shares_the_network(tmp_path: Path) -> None:
    provider = _provider(tmp_path, "net", server_entry("basic", network=True))
    try:
        provider.start(wait=20)
        with held_port() as port:
            assert _call(provider, "probe_connect", port=port) == {"result": "connected"}
    finally:
        provider.stop()


@pytest.mark.process
def test_stop_leaves_no_process_behind(tmp_path: Path) -> None:
    entry = server_entry("basic")
    provider = _provider(tmp_path, "basic", entry)
    provider.start(wait=20)
    assert processes_tagged(tag_of(entry))
    started = time.monotonic()
    provider.stop()
    assert time.monotonic() - started < 8
    assert processes_tagged(tag_of(entry)) == []
    assert provider.status()["state"] == "stopped"
