"""Each user's tool listing and system prompt name what that user may call (SECURITY.md U7).

Three users with a skill each: the owner's installed skills (`users/default/skills/`)
are the shared ones, alice's and bob's their own. The executor's `/tools` and the
system prompt an agent builds for bob (the SDK's listing, served over HTTP) name
bob's skill and the shared one, never alice's; an app's process lists for the user
it serves, and names no other.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from aios.compose import build_router
from aios_runtime.serving import ServerHandle, start_server
from aios_runtime.users import OWNER
from aios_sdk.agent import CallScope, within_call
from aios_sdk.runtime.flows import system_prompt
from aios_sdk.runtime.tools import ToolBox
from controller.api.tools import ToolListings
from controller.user_settings import serving_user
from tests.controller.test_router import app_ids, shipped_apps
from tests.executor.conftest import APP_TOKEN, MASTER, Harness, HarnessFactory
from tests.mcp.test_with_executor import _Agent
from tests.skills.conftest import PY_SKILL, listed, provider_of, wait_for, write_skill


def _skill(harness: Harness, user: str, name: str, summary: str) -> None:
    folder = harness.state_dir / "users" / user / "skills"
    write_skill(folder, name, PY_SKILL.format(name=name, summary=summary))


@pytest.fixture
def three(make_harness: HarnessFactory) -> Harness:
    """A harness whose owner, alice and bob each installed one skill."""
    harness = make_harness()
    _skill(harness, "default", "owner_shared", "converts for everyone")
    _skill(harness, "alice", "alice_private", "alice's own helper")
    _skill(harness, "bob", "bob_own", "bob's own helper")
    # the shared folder's watcher reads it within about a second
    skills = provider_of(harness)
    wait_for(lambda: "owner_shared" in listed(skills), 20, "the shared skill")
    return harness


def _listing(harness: Harness, token: str = MASTER, **query: str) -> tuple[int, Any]:
    if token == MASTER:
        query.setdefault("app_id", "app1")
    response = harness.client.get(
        "/tools", query_string=query, headers={"X-AIOS-Token": token}
    )
    return response.status_code, response.get_json()


def _skill_names(listing: dict[str, Any]) -> set[str]:
    return {s["name"] for s in listing["providers"]["skills"]["skills"]}


def test_tools_for_bob_list_his_skill_and_the_shared_ones_never_alices(
    three: Harness,
) -> None:
    status, bob = _listing(three, user_id="bob")
    assert status == 200, bob
    assert {"bob_own", "owner_shared"} <= _skill_names(bob)
    assert "alice_private" not in _skill_names(bob)
    assert "bob_own" in bob["prompt"] and "owner_shared" in bob["prompt"]
    assert "alice" not in str(bob)
    # the owner's listing is the shared folder's, without either user's own
    status, owner = _listing(three)
    assert status == 200
    assert "owner_shared" in _skill_names(owner)
    assert not {"bob_own", "alice_private"} & _skill_names(owner)
    assert "bob_own" not in owner["prompt"] and "alice_private" not in owner["prompt"]


BOB_TOKEN = "bob-app1-token-0123456789"


def _register_for_bob(harness: Harness) -> None:
    bobs = harness.state_dir / "users" / "bob" / "workspaces" / "app1"
    bobs.mkdir(parents=True, exist_ok=True)
    answer = harness.register("app1", bobs, BOB_TOKEN, user_id="bob")
    assert answer.status_code == 200, answer.get_json()


def test_an_app_process_lists_for_the_user_it_serves_and_no_other(
    three: Harness,
) -> None:
    status, refused = _listing(three, APP_TOKEN, user_id="bob")
    assert status == 403 and refused["error"]["code"] == "user_not_allowed"
    _register_for_bob(three)
    status, refused = _listing(three, BOB_TOKEN, user_id="alice")
    assert status == 403 and refused["error"]["code"] == "user_not_allowed"
    for query in ({}, {"user_id": "bob"}):
        status, bob = _listing(three, BOB_TOKEN, **query)
        assert status == 200, bob
        assert "bob_own" in bob["prompt"] and "alice_private" not in bob["prompt"]
    status, bad = _listing(three, user_id="../alice")
    assert status == 400 and bad["error"]["code"] == "invalid_request"
    assert not (three.state_dir / "alice" / "skills").exists()


def test_bob_may_run_the_shared_skill_his_listing_names(three: Harness) -> None:
    body = {
        "tool": "run_command",
        "args": {"command": "owner_shared -n 2"},
        "app_id": "app1",
        "user_id": "bob",
    }
    answer = three.client.post("/call", json=body, headers={"X-AIOS-Token": MASTER})
    result = answer.get_json()
    assert result["status"] == "ok", result
    assert result["result"]["stdout"].strip() == "got 2"
    body["args"] = {"command": "alice_private -n 2"}
    answer = three.client.post("/call", json=body, headers={"X-AIOS-Token": MASTER})
    assert answer.get_json()["code"] == "skill_not_found"


@pytest.fixture
def served(three: Harness) -> Iterator[tuple[Harness, ServerHandle]]:
    """`three`'s executor on a loopback port (the SDK speaks HTTP)."""
    handle = start_server(three.app, 0, threads=4)
    try:
        yield three, handle
    finally:
        handle.stop()


def test_a_system_prompt_built_for_bob_names_his_skill_not_alices(
    served: tuple[Harness, ServerHandle], monkeypatch: pytest.MonkeyPatch
) -> None:
    _harness, handle = served
    monkeypatch.setenv("AIOS_EXECUTOR_URL", handle.url)
    monkeypatch.setenv("AIOS_APP_ID", "app1")
    _register_for_bob(_harness)
    monkeypatch.setenv("AIOS_TOKEN", BOB_TOKEN)  # the app's process serving bob
    agent = _Agent()
    with within_call(CallScope()):
        box = ToolBox.from_agent(agent)
    prompt = system_prompt(agent.role_prompt, "", box.prompt)
    assert "bob_own" in prompt and "owner_shared" in prompt
    assert "alice_private" not in prompt
    monkeypatch.setenv("AIOS_TOKEN", APP_TOKEN)  # the owner's process
    with within_call(CallScope()):
        owners = ToolBox.from_agent(agent).prompt
    assert "owner_shared" in owners and "bob_own" not in owners


def test_bobs_instruction_is_routed_by_his_skills_and_the_shared_ones(
    three: Harness,
) -> None:
    """The controller's skill router reads the skills of the request's user: bob's
    own skill's words send his instruction to the skills app, alice's never do."""

    def fetch(app_id: str, user: str = OWNER) -> dict[str, Any]:
        query = {"app_id": app_id, "user_id": user}
        return three.client.get(
            "/tools", query_string=query, headers={"X-AIOS-Token": MASTER}
        ).get_json()

    core = SimpleNamespace(tools=ToolListings(fetch, ttl=0, fetch_for_user=fetch))
    unconfigured = SimpleNamespace(configured=False)  # no model: words only
    router = build_router(core, llm=unconfigured)  # type: ignore[arg-type]
    apps = shipped_apps()
    skills_app = next(p.app_id for p in apps if p.system_role == "skills")

    def routed(user: str, text: str) -> list[str]:
        with serving_user(user):
            return app_ids(router.route(text, apps))

    assert routed("bob", "bob_own 7") == [skills_app]
    assert routed("bob", "owner_shared 7") == [skills_app]
    assert skills_app not in routed("bob", "alice_private 7")
    assert routed("alice", "alice_private 7") == [skills_app]
    assert skills_app not in routed(OWNER, "bob_own 7")
