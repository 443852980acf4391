"""The executor keeps each user's calls in that user's sandbox (SECURITY.md U1, U2).

A real executor service (Flask's test client over the real ExecutorToolbox and sandbox):
the controller names the user; an app process acts for the user it was registered to
serve (its token says which) and for no other.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.executor.conftest import APP_TOKEN, MASTER, Harness
from tests.skills.conftest import PY_SKILL, write_skill


def _call(
    harness: Harness,
    tool: str,
    user: str | None,
    *,
    token: str = MASTER,
    grant: str | None = None,  # a field an older SDK sent: never heard
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


ALICE_TOKEN = "alice-app1-token-0123456789"


def _register_for_alice(harness: Harness, **extra: Any) -> None:
    answer = harness.register(
        "app1", harness.workdir, ALICE_TOKEN, user_id="alice", **extra
    )
    assert answer.status_code == 200, answer.get_json()


def test_an_app_process_acts_only_for_the_user_its_token_was_issued_for(
    harness: Harness,
) -> None:
    """The app's own process acts for the owner alone: naming alice, with or without
    a grant of the old kind, is refused; the process registered for alice acts for
    her (in her sandbox, whatever workdir was registered), and for nobody else."""
    for grant in (None, "0" * 40):
        status, body = _call(
            harness,
            "file_write",
            "alice",
            token=APP_TOKEN,
            grant=grant,
            path="x",
            content="x",
        )
        assert status == 403 and body["error"]["code"] == "user_not_allowed", body
    _register_for_alice(harness)
    for user in ("bob", "default"):
        status, body = _call(
            harness, "file_write", user, token=ALICE_TOKEN, path="x", content="x"
        )
        assert status == 403 and body["error"]["code"] == "user_not_allowed", body
    for user in ("alice", None):
        status, body = _call(
            harness, "file_write", user, token=ALICE_TOKEN, path="x.txt", content="hers"
        )
        assert status == 200 and body["status"] == "ok", body
    alice_file = harness.state_dir / "users/alice/workspaces/app1/x.txt"
    assert alice_file.read_text() == "hers"
    assert not (harness.workdir / "x.txt").exists()
    # once unregistered, its token opens nothing
    gone = harness.client.delete(
        "/apps/app1?user_id=alice", headers={"X-AIOS-Token": MASTER}
    )
    assert gone.status_code == 200, gone.get_json()
    status, _ = _call(harness, "file_read", None, token=ALICE_TOKEN, path="x.txt")
    assert status == 403
    assert _ok(harness, "file_list", None, path=".") is not None  # the owner's remains


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


def test_an_apps_own_tools_for_a_user_go_to_the_process_serving_them(
    harness: Harness,
) -> None:
    spec = {"name": "my_library", "description": "lists", "parameters": {"type": "object"}}
    registered = harness.register("app1", harness.workdir, APP_TOKEN, custom_tools=[spec])
    assert registered.status_code == 200, registered.get_json()
    status, body = _call(harness, "my_library", "alice", token=APP_TOKEN, grant="0" * 40)
    assert status == 403 and body["error"]["code"] == "user_not_allowed", body
    # no process serves alice: the controller's call for her reaches none
    assert _failed(harness, "my_library", "alice") == "app_unavailable"
    _register_for_alice(harness, custom_tools=[spec], url="http://127.0.0.1:9")
    # now it goes to her process (which this test did not start), and the owner's to
    # the app's own
    assert _failed(harness, "my_library", "alice") == "app_unreachable"
    status, body = _call(harness, "my_library", None, token=ALICE_TOKEN)
    assert status == 200 and body["code"] == "app_unreachable", body
    assert _failed(harness, "my_library", None) == "app_unreachable"


def test_a_users_background_processes_are_their_process_of_the_apps_alone(
    harness: Harness,
) -> None:
    """Listed, stopped and ended with the app process that started them: the one
    serving alice neither sees nor stops the owner's, and its end ends only hers."""
    _register_for_alice(harness)
    for folder in (harness.workdir, harness.state_dir / "users/alice/workspaces/app1"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "wait.py").write_text("import time\ntime.sleep(60)\n")
    start = {"cmd": ["python3", "wait.py"], "background": True}
    owners = _ok(harness, "process_start", None, **start)["pid"]
    hers = _ok(harness, "process_start", "alice", **start)["pid"]

    def listed(token: str, query: str = "") -> set[int]:
        answer = harness.client.get(f"/processes{query}", headers={"X-AIOS-Token": token})
        return {p["pid"] for p in answer.get_json()["processes"] if p["running"]}

    assert listed(ALICE_TOKEN) == {hers}
    assert listed(APP_TOKEN) == {owners}
    assert listed(MASTER, "?app_id=app1") == {owners, hers}
    refused = harness.client.delete(
        f"/processes/{owners}", headers={"X-AIOS-Token": ALICE_TOKEN}
    )
    assert refused.status_code == 404
    gone = harness.client.delete(
        "/apps/app1?user_id=alice", headers={"X-AIOS-Token": MASTER}
    )
    assert gone.get_json()["stopped_processes"] == 1
    assert listed(APP_TOKEN) == {owners}  # the owner's goes on
    stopped = harness.client.delete(
        f"/processes/{owners}", headers={"X-AIOS-Token": MASTER}
    )
    assert stopped.status_code == 200
