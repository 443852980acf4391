"""The executor keeps each user's calls in that user's sandbox (SECURITY.md U1, U2).

A real executor service (Flask's test client over the real Toolbox and sandbox):
the controller names the user; an app names one only with the controller's grant.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from aios_runtime.users import user_grant
from tests.executor.conftest import APP_TOKEN, MASTER, Harness
from tests.skills.conftest import PY_SKILL, write_skill


def _call(
    harness: Harness,
    tool: str,
    user: str | None,
    *,
    token: str = MASTER,
    grant: str | None = None,
    **args: Any,
) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {"tool": tool, "args": args, "session_id": "sess_u"}
    if token == MASTER:
        body["app_id"] = "app1"
    if user is not None:
        body["user_id"] = user
    if grant is not None:
        body["user_grant"] = grant
    response = harness.client.post("/call", json=body, headers={"X-AIOS-Token": token})
    return response.status_code, response.get_json()


def _ok(harness: Harness, tool: str, user: str | None, **args: Any) -> Any:
    status, body = _call(harness, tool, user, **args)
    assert status == 200 and body["status"] == "ok", body
    return body["result"]


def _failed(harness: Harness, tool: str, user: str | None, **args: Any) -> str:
    status, body = _call(harness, tool, user, **args)
    assert status == 200 and body["status"] == "error", body
    return str(body.get("code"))


def _names(harness: Harness, user: str | None) -> set[str]:
    listed = _ok(harness, "file_list", user, path=".")
    return {f["name"] for f in listed["files"]}


def test_files_of_one_user_are_invisible_to_the_other_and_to_the_owner(
    harness: Harness,
) -> None:
    _ok(harness, "file_write", "alice", path="notes/a.txt", content="alice's note")
    _ok(harness, "file_write", "bob", path="b.txt", content="bob's file")
    alice_dir = harness.state_dir / "users" / "alice" / "workspaces" / "app1"
    assert (alice_dir / "notes" / "a.txt").read_text() == "alice's note"
    assert _names(harness, "alice") == {"notes"}
    assert _names(harness, "bob") == {"b.txt"}
    assert "notes" not in _names(harness, None) and "b.txt" not in _names(harness, None)
    assert _failed(harness, "file_read", "bob", path="notes/a.txt") == "file_not_found"
    assert (
        _failed(harness, "file_read", "bob", path=str(alice_dir / "notes" / "a.txt"))
        == "path_outside_workdir"
    )
    # a symlink planted in bob's own sandbox, pointing at alice's file
    bob_dir = harness.state_dir / "users" / "bob" / "workspaces" / "app1"
    os.symlink(alice_dir / "notes" / "a.txt", bob_dir / "link.txt")
    assert _failed(harness, "file_read", "bob", path="link.txt") == "path_outside_workdir"
    assert (
        _failed(harness, "file_write", "bob", path="link.txt", content="x")
        == "path_outside_workdir"
    )
    assert (alice_dir / "notes" / "a.txt").read_text() == "alice's note"


def test_shell_exec_runs_in_the_callers_sandbox_only(harness: Harness) -> None:
    _ok(harness, "file_write", "alice", path="secret.txt", content="alice only")
    alice_file = harness.state_dir / "users/alice/workspaces/app1/secret.txt"
    listed = _ok(harness, "shell_exec", "bob", cmd=["ls", "-a"])
    assert "secret.txt" not in listed["stdout"]
    assert _failed(harness, "shell_exec", "bob", cmd=["cat", str(alice_file)]) in {
        "path_outside_workdir",
        "command_not_allowed",
    }
    mine = _ok(harness, "shell_exec", "alice", cmd=["cat", "secret.txt"])
    assert mine["stdout"] == "alice only"


def test_database_and_cache_are_per_user(harness: Harness) -> None:
    _ok(harness, "db_query", "alice", dsn="data.db", sql="CREATE TABLE t (x TEXT)")
    _ok(harness, "db_query", "alice", dsn="data.db", sql="INSERT INTO t VALUES ('a')")
    assert _failed(harness, "db_query", "bob", dsn="data.db", sql="SELECT x FROM t") in {
        "db_error",
        "sql_not_allowed",
    }
    _ok(harness, "cache_set", "alice", key="k", value="alice's")
    assert _ok(harness, "cache_get", "bob", key="k") is None
    assert _ok(harness, "cache_get", None, key="k") is None
    assert _ok(harness, "cache_get", "alice", key="k") == "alice's"


def test_an_app_acts_for_a_user_only_with_the_controllers_grant(harness: Harness) -> None:
    status, body = _call(
        harness, "file_write", "alice", token=APP_TOKEN, path="x.txt", content="x"
    )
    assert status == 403 and body["error"]["code"] == "user_not_allowed"
    grant = user_grant(MASTER, "app1", "alice")
    status, body = _call(
        harness, "file_write", "bob", token=APP_TOKEN, grant=grant, path="x", content="x"
    )
    assert status == 403 and body["error"]["code"] == "user_not_allowed"
    status, body = _call(
        harness,
        "file_write",
        "alice",
        token=APP_TOKEN,
        grant=grant,
        path="x.txt",
        content="from the app",
    )
    assert status == 200 and body["status"] == "ok", body
    alice_file = harness.state_dir / "users/alice/workspaces/app1/x.txt"
    assert alice_file.read_text() == "from the app"
    assert not (harness.workdir / "x.txt").exists()


@pytest.mark.parametrize(
    "bad", ["../escape", "a/b", ".hidden", "x" * 5000, "a\x00b", "system"]
)
def test_an_id_that_could_name_a_path_is_refused_and_makes_no_folder(
    harness: Harness, bad: str
) -> None:
    before = set(harness.state_dir.rglob("*"))
    status, body = _call(harness, "file_write", bad, path="x.txt", content="x")
    assert status == 400, body
    assert set(harness.state_dir.rglob("*")) - before <= {harness.state_dir / "tool_calls"}
    assert not (harness.state_dir.parent / "escape").exists()


def test_workspace_skills_installed_by_one_user_are_not_the_others(
    harness: Harness,
) -> None:
    alice_dir = harness.state_dir / "users/alice/workspaces/app1"
    _ok(harness, "file_list", "alice", path=".")  # the sandbox exists
    write_skill(alice_dir, "hello.py", PY_SKILL.format(name="hello", summary="says hi"))
    installed = _ok(harness, "install_skill", "alice", path="hello.py")
    assert (harness.state_dir / "users/alice/skills/hello").is_file(), installed
    assert not (harness.state_dir / "users" / "default" / "skills" / "hello").exists()
    ran = _ok(harness, "run_command", "alice", command="hello -n 3")
    assert ran["ok"] and "got 3" in ran["stdout"]
    assert _failed(harness, "run_command", "bob", command="hello -n 3") == "skill_not_found"
    assert _failed(harness, "run_command", None, command="hello -n 3") == "skill_not_found"
    found = _ok(harness, "search_skills", "bob", keyword="hello")
    assert all(s["name"] != "hello" for s in found["skills"])


def test_an_apps_own_tools_are_called_for_a_user_only_with_the_grant(
    harness: Harness,
) -> None:
    spec = {"name": "my_library", "description": "lists", "parameters": {"type": "object"}}
    registered = harness.register("app1", harness.workdir, APP_TOKEN, custom_tools=[spec])
    assert registered.status_code == 200, registered.get_json()
    for grant in (None, "0" * 40, user_grant(MASTER, "app1", "bob")):
        status, body = _call(harness, "my_library", "alice", token=APP_TOKEN, grant=grant)
        assert status == 403 and body["error"]["code"] == "user_not_allowed", body
    # granted (and the controller's) calls go to the app, which this test did not start
    grant = user_grant(MASTER, "app1", "alice")
    status, body = _call(harness, "my_library", "alice", token=APP_TOKEN, grant=grant)
    assert status == 200 and body["code"] == "app_unreachable", body
    assert _failed(harness, "my_library", "alice") == "app_unreachable"
    assert _failed(harness, "my_library", None) == "app_unreachable"
