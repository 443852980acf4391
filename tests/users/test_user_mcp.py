"""MCP servers and users (SECURITY.md U8): the owner's alone unless shared, and a shared
one that touches files runs in each user's own sandbox with none of the owner's secrets.

Real MCP servers (`tests/users/servers/where.py`) in the executor service; the
controller's `/call` names the user, as it does for each user's requests.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from aios_protocol.strings import user_message
from aios_runtime.settings import McpServerSettings
from aios_runtime.users import Sandboxes
from controller.api.tools import ToolListings
from controller.pipeline.context import ContextBuilder
from controller.sessions import Session
from executor.providers.base import ToolCall
from executor.providers.mcp import McpRuntime, McpServerConfig
from executor.providers.mcp_users import McpUsers
from executor.registry import AppRecord
from mcp_server.stdio import McpBridge
from tests.executor.conftest import HAS_BWRAP, MASTER, Harness, HarnessFactory
from tests.mcp.conftest import server_entry
from tests.users.test_executor_users import _call as post_call

BOB_TOKEN = "bob-app1-token-0123456789"

pytestmark = pytest.mark.process

WHERE = str(Path(__file__).resolve().parent / "servers" / "where.py")
SECRET = "sk-owner-secret-0123"
_APP = AppRecord(app_id="app1", workdir=Path("/nonexistent"), token="t" * 16)


def _where(**extra: Any) -> dict[str, Any]:
    entry = server_entry("basic", trusted=True, env={"SECRET": SECRET}, **extra)
    entry["args"][0] = WHERE
    return entry


def _wait_running(harness: Harness, *names: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        providers = harness.client.get(
            "/tools?app_id=app1", headers={"X-AIOS-Token": MASTER}
        ).get_json()["providers"]
        states = {name: providers.get(f"mcp:{name}", {}).get("state") for name in names}
        if all(state == "running" for state in states.values()):
            return
        assert time.monotonic() < deadline, providers
        time.sleep(0.2)


@pytest.fixture
def servers(make_harness: HarnessFactory) -> Harness:
    harness = make_harness(
        {
            "mcp_servers": {
                "private": _where(),
                "per_user": _where(shared=True, user_env={"GREETING": "hello"}),
                "one_run": _where(shared=True, touches_files=False),
            }
        }
    )
    _wait_running(harness, "private", "per_user", "one_run")
    return harness


def _call(
    harness: Harness,
    tool: str,
    user: str | None,
    token: str = MASTER,
    **args: Any,
) -> dict[str, Any]:
    status, body = post_call(harness, tool, user, token=token, **args)
    assert status == 200, body
    return body


def _ok(harness: Harness, tool: str, user: str | None, **args: Any) -> Any:
    result = _call(harness, tool, user, **args)
    assert result["status"] == "ok", result
    return result["result"]["result"]  # the server's structured answer


def _listing(harness: Harness, user: str) -> dict[str, Any]:
    return harness.client.get(
        f"/tools?app_id=app1&user_id={user}", headers={"X-AIOS-Token": MASTER}
    ).get_json()


def test_an_owner_only_server_is_refused_for_bob_while_the_owner_calls_it(
    servers: Harness,
) -> None:
    assert _ok(servers, "mcp__private__getenv", None, name="SECRET") == SECRET
    refused = _call(servers, "mcp__private__getenv", "bob", name="SECRET")
    assert refused["status"] == "error" and refused["code"] == "tool_unavailable"
    assert "owner's" in refused["error"] and "shared" in refused["error"]
    assert SECRET not in str(refused)
    # the app's process serving bob is refused the same way
    bobs = servers.state_dir / "users" / "bob" / "workspaces" / "app1"
    bobs.mkdir(parents=True, exist_ok=True)
    registered = servers.register("app1", bobs, BOB_TOKEN, user_id="bob")
    assert registered.status_code == 200, registered.get_json()
    by_app = _call(servers, "mcp__private__where", None, token=BOB_TOKEN)
    assert by_app["code"] == "tool_unavailable", by_app
    # bob's listing and prompt do not name it; the owner's do
    bob = _listing(servers, "bob")
    assert not [t for t in bob["tools"] if t["name"].startswith("mcp__private__")]
    assert "mcp:private" not in bob["providers"] and "'private'" not in bob["prompt"]
    owner = _listing(servers, "default")
    assert any(t["name"] == "mcp__private__where" for t in owner["tools"])
    assert "'private'" in owner["prompt"]
    sentence = user_message("tool_unavailable.not_shared", "en-US", tool="x")
    assert "not shared" in sentence


def test_a_shared_server_runs_in_each_users_sandbox_without_the_owners_env(
    servers: Harness,
) -> None:
    users = servers.state_dir / "users"
    bob_folder = users / "bob" / "workspaces" / ".mcp" / "per_user"
    owner_folder = users / "default" / "workspaces" / ".mcp" / "per_user"
    assert _ok(servers, "mcp__per_user__where", "bob") == os.path.realpath(bob_folder)
    assert _ok(servers, "mcp__per_user__where", None) == os.path.realpath(owner_folder)
    _ok(servers, "mcp__per_user__write", "bob", name="note.txt", text="bob's")
    assert (bob_folder / "note.txt").read_text() == "bob's"
    assert not (owner_folder / "note.txt").exists()
    # the owner's secrets stay with the owner's run; a user's run gets `user_env`
    assert _ok(servers, "mcp__per_user__getenv", "bob", name="SECRET") == ""
    assert _ok(servers, "mcp__per_user__getenv", "bob", name="GREETING") == "hello"
    assert _ok(servers, "mcp__per_user__getenv", None, name="SECRET") == SECRET
    # bob's listing names the shared server, and of its users only him
    bob = _listing(servers, "bob")
    assert any(t["name"] == "mcp__per_user__where" for t in bob["tools"])
    assert bob["providers"]["mcp:per_user"]["users"] == ["bob"]
    assert "'per_user'" in bob["prompt"]


@pytest.mark.skipif(not HAS_BWRAP, reason="needs bubblewrap")
def test_a_users_run_of_a_shared_server_reaches_no_other_sandbox(
    servers: Harness,
) -> None:
    _ok(servers, "mcp__per_user__write", "alice", name="diary.txt", text="alice only")
    alice_file = servers.state_dir / "users/alice/workspaces/.mcp/per_user/diary.txt"
    assert alice_file.read_text() == "alice only"
    read = _ok(servers, "mcp__per_user__read", "bob", path=str(alice_file))
    assert read.startswith("error:"), read
    owners = _ok(servers, "mcp__per_user__write", None, name="owner.txt", text="mine")
    assert _ok(servers, "mcp__per_user__read", None, path=owners) == "mine"
    assert _ok(servers, "mcp__per_user__read", "bob", path=owners).startswith("error:")


def test_a_shared_server_that_touches_no_files_is_one_run_for_everyone(
    servers: Harness,
) -> None:
    where = _ok(servers, "mcp__one_run__where", "bob")
    assert where == _ok(servers, "mcp__one_run__where", None)
    assert where == os.path.dirname(WHERE)
    # its one run is the owner's choice alone, started with the owner's env
    assert _ok(servers, "mcp__one_run__getenv", None, name="SECRET") == SECRET


def _listings(harness: Harness) -> ToolListings:
    """The controller's cached listings over this executor, per user."""

    def fetch(app_id: str, user: str = "default") -> dict[str, Any]:
        query = {"app_id": app_id, "user_id": user}
        return harness.client.get(
            "/tools", query_string=query, headers={"X-AIOS-Token": MASTER}
        ).get_json()

    return ToolListings(fetch, ttl=0, fetch_for_user=fetch)


def test_the_context_an_app_gets_for_bob_names_no_owner_only_tool(
    servers: Harness,
) -> None:
    listings = _listings(servers)
    contexts = ContextBuilder(
        listings.names, cache_tools=False, list_user_tools=listings.names
    )
    contexts.sandboxes = Sandboxes(servers.state_dir)
    bob = Session(session_id="sess_bob", context={"user_id": "bob"})
    owner = Session(session_id="sess_owner")
    names = contexts.build(app_id="app1", role="", workdir=None, session=bob)
    assert "mcp__per_user__where" in names.available_tools
    assert not [n for n in names.available_tools if n.startswith("mcp__private__")]
    owners = contexts.build(app_id="app1", role="", workdir=None, session=owner)
    assert "mcp__private__where" in owners.available_tools


class _HarnessToolbox:
    """`aios mcp`'s toolbox over this executor (as the controller's routes give it)."""

    def __init__(self, harness: Harness) -> None:
        self.listings = _listings(harness)

    def listing(self, user_id: str = "default") -> dict[str, Any]:
        return self.listings.listing("app1", user_id).dump()

    def call(self, *args: Any) -> dict[str, Any]:
        raise AssertionError("not called")


def test_aios_mcp_for_bob_serves_no_owner_only_tool(servers: Harness) -> None:
    toolbox = _HarnessToolbox(servers)
    for_bob = {t.name for t in McpBridge(toolbox, "app1", "bob").mcp_tools()}
    assert "mcp__per_user__where" in for_bob and "file_read" in for_bob
    assert not [n for n in for_bob if n.startswith("mcp__private__")]
    for_owner = {t.name for t in McpBridge(toolbox, "app1").mcp_tools()}
    assert "mcp__private__where" in for_owner


def test_the_oldest_idle_users_run_stops_when_too_many_run(tmp_path: Path) -> None:
    """Over `max_runs` other users' runs, a newcomer's first call stops the run of
    the user idle the longest (never the owner's); that user's next call starts it
    again, their folder as they left it."""
    entry = McpServerSettings.model_validate(_where(shared=True))
    runtime = McpRuntime(log_dir=tmp_path / "logs", backoff=())
    server = McpUsers(McpServerConfig("per_user", entry), runtime, tmp_path, max_runs=1)

    def call(user: str, tool: str, **args: Any) -> Any:
        app = replace(_APP, user_id=user)
        name = f"mcp__per_user__{tool}"
        return server.call(ToolCall(app, name, args, timeout=20))["result"]

    try:
        server.start()
        call("alice", "write", name="kept.txt", text="alice's")
        alice = server.runs()["alice"]
        assert call("bob", "where").endswith("/users/bob/workspaces/.mcp/per_user")
        assert set(server.runs()) == {"default", "bob"}
        deadline = time.monotonic() + 20
        while alice.status()["state"] != "stopped":
            assert time.monotonic() < deadline, alice.status()
            time.sleep(0.1)
        assert call("alice", "read", path="kept.txt") == "alice's"
        assert set(server.runs()) == {"default", "alice"}
    finally:
        server.stop()
    assert server.runs()["default"].status()["state"] == "stopped"
