"""The one tool source: providers declare their tools, every consumer sees
the same listing, and the runtime enforces each entry's metadata."""

from __future__ import annotations

import json
from typing import Any

from aios_protocol.errors import ToolFailed
from aios_protocol.messages import ATOMIC_TOOLS, ToolSpec
from aios_runtime.edge import create_service, token_matches
from aios_sdk.llm import LLMPlanRequest
from controller.api.tools import ToolListings, tools_blueprint
from controller.llm.planner import offered_tools
from controller.permissions.policy import PermissionPolicy
from controller.pipeline.context import ContextBuilder
from controller.sessions import Session
from executor.providers.base import ToolEntry
from tests.executor.conftest import APP_TOKEN, MASTER, Harness, settings_from
from tests.providers.conftest import TestProvider

ENTRY_FIELDS = set(ToolEntry.model_fields)
CUSTOM = [
    {
        "name": "greet",
        "description": "say hi",
        "parameters": {"type": "object", "properties": {"who": {"type": "string"}}},
    }
]


def _listing(h: Harness, token: str = MASTER) -> dict[str, Any]:
    query = "?app_id=app1" if token == MASTER else ""
    response = h.client.get(f"/tools{query}", headers={"X-AIOS-Token": token})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_every_entry_has_the_tool_entry_fields(make_harness) -> None:
    h = make_harness(custom_tools=CUSTOM, url="http://127.0.0.1:9")
    listing = _listing(h, APP_TOKEN)
    names = [t["name"] for t in listing["tools"]]
    skills = ["search_skills", "skill", "run_command", "install_skill", "reload_skills"]
    assert names == [*ATOMIC_TOOLS, "schedule", "greet", *skills]  # atomic, own, skills
    for tool in listing["tools"]:
        assert set(tool) | {"unavailable_reason"} >= ENTRY_FIELDS, tool
        assert tool["parameters"] == tool["input_schema"]
    by_name = {t["name"]: t for t in listing["tools"]}
    assert by_name["greet"]["provider"] == "app:app1" and by_name["greet"]["custom"] is True
    assert by_name["process_start"]["requires_confirmation"] is True
    assert by_name["http_request"]["concurrency_safe"] is True
    assert by_name["file_write"]["concurrency_safe"] is False
    assert listing["providers"]["atomic"]["state"] == "running"
    # app2 does not see app1's own tools
    other = h.client.get("/tools?app_id=app2", headers={"X-AIOS-Token": MASTER}).get_json()
    assert "greet" not in [t["name"] for t in other["tools"]]


def _consumers(h: Harness) -> dict[str, list[str]]:
    """The tool names each consumer sees for app1 right now."""

    def fetch(app_id: str) -> dict[str, Any]:
        query = f"?app_id={app_id}" if app_id else ""
        return h.client.get(f"/tools{query}", headers={"X-AIOS-Token": MASTER}).get_json()

    listings = ToolListings(fetch, ttl=0)
    contexts = ContextBuilder(listings.names, cache_tools=False)
    context = contexts.build(
        app_id="app1", role="", workdir=None, session=Session(session_id="sess_x")
    )
    request = LLMPlanRequest(
        instruction="x", tools=[ToolSpec(name=n) for n in context.available_tools]
    )
    planner = [t.name for t in offered_tools(request.tools, listings.entries("app1"))]
    planner_all = [t.name for t in listings.entries("app1")]
    api = create_service("t", token_matches("desk-token-0123456789"))
    api.register_blueprint(tools_blueprint(listings))
    window = (
        api.test_client()
        .get("/api/tools?app_id=app1", headers={"X-AIOS-Token": "desk-token-0123456789"})
        .get_json()
    )
    executor = [t["name"] for t in _listing(h)["tools"]]
    # the SDK checks names against the injected available_tools
    from aios_sdk import agent as sdk_agent

    sdk_agent._current.available_tools = frozenset(context.available_tools)
    try:
        sdk_ok = [n for n in executor if _sdk_accepts(sdk_agent, n)]
        assert not _sdk_accepts(sdk_agent, "no_such_tool")
    finally:
        sdk_agent._current.available_tools = None
    return {
        "executor": executor,
        "available_tools": list(context.available_tools),
        "planner": planner,
        "planner_listing": planner_all,
        "tools_window": [t["name"] for t in window["tools"]],
        "sdk": sdk_ok,
    }


def _sdk_accepts(sdk_agent: Any, name: str) -> bool:
    try:
        sdk_agent.check_tool_names([name])
    except ToolFailed:
        return False
    return True


def _same(views: dict[str, list[str]]) -> list[str]:
    first = views["executor"]
    for consumer, names in views.items():
        assert names == first, (consumer, names, first)
    return first


def test_every_consumer_sees_the_same_list_as_a_provider_starts_and_stops(harness) -> None:
    source = harness.app.extensions["aios_toolbox"].tools
    before = _same(_consumers(harness))
    assert "echo" not in before
    provider = TestProvider()
    source.add(provider, start=False)  # not started: the declared (conservative) list
    declared = _same(_consumers(harness))
    assert declared[-5:] == ["echo", "big", "boom", "slow_echo", "ask"]
    provider.start()  # started: what it really offers (no `big`)
    started = _same(_consumers(harness))
    assert started[-4:] == ["echo", "boom", "slow_echo", "ask"]
    provider.stop()
    assert _same(_consumers(harness)) == declared
    source.remove("test")
    assert _same(_consumers(harness)) == before


def test_a_failed_provider_lists_its_tools_unavailable_with_the_reason(harness) -> None:
    source = harness.app.extensions["aios_toolbox"].tools
    source.add(TestProvider(fail_with="server exited with status 3"))
    listing = _listing(harness)
    echo = next(t for t in listing["tools"] if t["name"] == "echo")
    assert echo["available"] is False
    assert echo["unavailable_reason"] == "server exited with status 3"
    assert listing["providers"]["test"] == {
        "state": "failed",
        "error": "server exited with status 3",
    }
    result = harness.call("echo", text="hi")
    assert result["status"] == "error" and result["code"] == "tool_unavailable"
    assert "server exited with status 3" in result["error"]


def test_a_result_over_the_limit_is_cut_with_a_marker(harness) -> None:
    source = harness.app.extensions["aios_toolbox"].tools
    source.add(TestProvider(), start=False)  # `big` is offered before start
    fits = harness.call("big", size=1000)
    assert fits["status"] == "ok" and fits["result"] == "x" * 1000
    cut = harness.call("big", size=5000)
    assert cut["status"] == "ok"
    assert cut["result"].startswith("x" * 1000)
    assert cut["result"].endswith("…[cut 4000 of 5000 characters]")


def test_requires_confirmation_drives_the_pause_and_the_direct_refusal(
    harness, tmp_path
) -> None:
    source = harness.app.extensions["aios_toolbox"].tools
    source.add(TestProvider())
    direct = harness.call("ask", token=APP_TOKEN, text="x")
    assert direct["status"] == "error" and direct["code"] == "needs_confirmation"
    assert harness.call("ask", text="x")["status"] == "ok"  # the controller reviewed it

    def entries(app_id: str) -> list[Any]:
        return ToolListings(
            lambda a: harness.client.get(
                f"/tools?app_id={a}", headers={"X-AIOS-Token": MASTER}
            ).get_json()
        ).entries(app_id)

    settings = settings_from()
    policy = PermissionPolicy(
        tmp_path / "permissions.json", lambda: settings, tool_entries=entries
    )
    plan = [
        {"step_id": 1, "tool": "echo", "args": {"text": "a"}},
        {"step_id": 2, "tool": "ask", "args": {"text": "b"}},
        {"step_id": 3, "tool": "process_start", "args": {"cmd": ["ls"]}},
        {"step_id": 4, "tool": "db_query", "args": {"dsn": "d.db", "sql": "DELETE FROM t"}},
    ]
    review = policy.review("app1", harness.workdir, plan)
    kinds = {s.step_id: s.kind for s in review.risky}
    assert kinds == {2: "requires_confirmation", 3: "process_start", 4: "db_write"}
    # without a listing the atomic provider's declared entries stand in
    fallback = PermissionPolicy(
        tmp_path / "p2.json",
        lambda: settings,
        tool_entries=lambda a: (_ for _ in ()).throw(OSError("down")),
    )
    assert [s.step_id for s in fallback.review("app1", harness.workdir, plan).risky] == [
        3,
        4,
    ]


def test_consecutive_concurrency_safe_steps_run_side_by_side(
    harness, meeting_server
) -> None:
    """Steps 1 and 2 each wait at the server for the other: they meet only when they
    run at the same time (one after the other, each would wait alone for 10 s)."""
    url = f"{meeting_server.url}/meet"
    plan = [
        {"step_id": 1, "tool": "http_request", "args": {"url": url}},
        {"step_id": 2, "tool": "http_request", "args": {"url": url, "params": {"n": 2}}},
        {
            "step_id": 3,
            "tool": "cache_set",
            "args": {"key": "k", "value": "{{step_1.result.met}}"},
        },
        {"step_id": 4, "tool": "cache_get", "args": {"key": "k"}},
    ]
    results = harness.run(plan)
    assert list(results) == ["step_1", "step_2", "step_3", "step_4"]
    assert [r["status"] for r in results.values()] == ["ok"] * 4
    assert [results[f"step_{n}"]["result"] for n in (1, 2)] == [{"met": True}] * 2
    assert results["step_4"]["result"] is True  # templating saw step 1's result
    lines = (harness.state_dir / "tool_calls" / "sess_test.jsonl").read_text().splitlines()
    steps = [json.loads(line).get("step_id") for line in lines][-4:]
    assert steps == [1, 2, 3, 4]  # the log is in step order, whatever ran side by side


def test_a_step_using_a_neighbours_result_waits_for_it(harness) -> None:
    source = harness.app.extensions["aios_toolbox"].tools
    provider = TestProvider()
    source.add(provider)
    plan = [
        {"step_id": 1, "tool": "slow_echo", "args": {"text": "a"}},
        {"step_id": 2, "tool": "slow_echo", "args": {"text": "{{step_1.result.text}}b"}},
    ]
    results = harness.run(plan)
    assert results["step_2"]["result"]["text"] == "ab"
    (_, _, end_1), (_, start_2, _) = provider.calls
    assert start_2 >= end_1  # not side by side: step 2 uses step 1's result


def test_bad_input_fails_only_its_own_step(harness) -> None:
    harness.app.extensions["aios_toolbox"].tools.add(TestProvider())
    plan = [
        {"step_id": 1, "tool": "no_such_tool", "args": {}},
        {"step_id": 2, "tool": "echo", "args": {"text": 5}},
        {"step_id": 3, "tool": "boom", "args": {}},
        {"step_id": 4, "tool": "echo", "args": {"text": "fine"}},
        {"step_id": 5, "tool": "echo", "args": {"text": "fine too"}},
    ]
    results = harness.run(plan)
    codes = [results[f"step_{i}"].get("code") for i in range(1, 6)]
    assert codes == ["unknown_tool", "invalid_args", "provider_broke", None, None]
    assert results["step_2"]["error"] == "echo: argument 'text' must be string, got integer"
    assert results["step_5"]["result"]["text"] == "fine too"


def test_process_tools_unavailable_when_required_bubblewrap_cannot_run(
    make_harness,
) -> None:
    h = make_harness({"tool_sandbox": {"require_bubblewrap": True}})
    toolbox = h.app.extensions["aios_toolbox"]
    listing = {t["name"]: t for t in _listing(h)["tools"]}
    if toolbox.sandbox.kind == "bubblewrap":
        assert listing["shell_exec"]["available"] is True
        return
    for name in ("shell_exec", "process_start"):
        assert listing[name]["available"] is False
        assert "bubblewrap" in listing[name]["unavailable_reason"]
    assert listing["file_read"]["available"] is True
    result = h.call("shell_exec", cmd=["ls"])
    assert result["code"] == "tool_unavailable"


def test_a_registration_answers_the_apps_listing_and_its_consumers_keep_it(
    make_harness,
) -> None:
    """The executor answers a registration with the app's listing, the same as
    `/tools?app_id=` gives; the controller keeps it, so the app's first call asks
    the executor nothing more."""
    h = make_harness()
    answer = h.register(
        "app1", h.workdir, APP_TOKEN, custom_tools=CUSTOM, url="http://127.0.0.1:9"
    )
    assert answer.status_code == 200
    registered = answer.get_json()["tools"]
    assert registered == _listing(h)
    assert "greet" in [t["name"] for t in registered["tools"]]
    fetched: list[str] = []

    def fetch(app_id: str) -> dict[str, Any]:
        fetched.append(app_id)
        return _listing(h)

    listings = ToolListings(fetch)
    listings.registered("app1", registered)
    assert "greet" in listings.names("app1") and fetched == []
    listings.registered("app1", {"not": "a listing"})  # forgotten, fetched on next use
    assert "greet" in listings.names("app1") and fetched == ["app1"]
    listings.registered("*")  # the executor restarted: every listing goes
    listings.names("app1")
    assert fetched == ["app1", "app1"]


def test_the_warm_up_compiles_each_atomic_tools_check_before_its_first_call(
    harness,
) -> None:
    toolbox = harness.app.extensions["aios_toolbox"]
    toolbox.warm_up()
    compiled = {tool for provider, tool in toolbox.tools._schemas if provider == "atomic"}
    assert compiled >= set(ATOMIC_TOOLS)
    for (provider, _), (_, schema) in toolbox.tools._schemas.items():
        if provider == "atomic":
            assert "_passes" in vars(schema)  # the fast check too, not only the schema
