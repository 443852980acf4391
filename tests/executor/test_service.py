"""The executor service through Flask's test client: tokens, routes, /call, /run, cache,
events, the tool-call log and overload."""

from __future__ import annotations

import json
import threading
import time

from aios_protocol.messages import ATOMIC_TOOLS, EventsPage, ToolsListing
from executor.service import create_app
from tests.executor.conftest import APP_TOKEN, MASTER, OTHER_TOKEN, Harness, settings_from

MASTER_H = {"X-AIOS-Token": MASTER}
APP_H = {"X-AIOS-Token": APP_TOKEN}


def test_health_is_public_and_reports_the_sandbox(harness: Harness) -> None:
    body = harness.client.get("/health").get_json()
    assert body["status"] == "ok"
    assert body["sandbox"] in ("bubblewrap", "rlimit")
    assert body["apps"] == 2


def test_w4_missing_or_wrong_token_is_403(harness: Harness) -> None:
    """W4: missing or wrong token → 403, nothing run."""
    call = {"tool": "file_write", "args": {"path": "x.txt", "content": "x"}}
    for headers in ({}, {"X-AIOS-Token": "wrong"}, {"X-AIOS-Token": APP_TOKEN + "x"}):
        response = harness.client.post("/call", json=call, headers=headers)
        assert response.status_code == 403
        assert response.get_json()["error"]["code"] == "forbidden"
    assert not (harness.workdir / "x.txt").exists()
    assert harness.client.get("/tools", headers={"X-AIOS-Token": "nope"}).status_code == 403


def test_app_token_cannot_use_master_only_routes(harness: Harness) -> None:
    """An app token cannot register apps, unregister, write the system cache or read events."""
    client = harness.client
    reg = {"app_id": "evil", "workdir": "/", "token": "e" * 20}
    assert client.put("/apps/evil", json=reg, headers=APP_H).status_code == 403
    assert client.delete("/apps/app2", headers=APP_H).status_code == 403
    assert (
        client.post(
            "/cache/system", json={"key": "k", "value": 1}, headers=APP_H
        ).status_code
        == 403
    )
    assert client.get("/events", headers=APP_H).status_code == 403
    assert (
        harness.call("file_list", token=OTHER_TOKEN)["status"] == "ok"
    )  # app2 still there


def test_w5_app_cannot_act_as_another_app(harness: Harness) -> None:
    """W5: an app's `app_id` in the body is ignored — it always acts as itself."""
    response = harness.client.post(
        "/call",
        json={
            "tool": "file_write",
            "app_id": "app2",
            "args": {"path": "mine.txt", "content": "1"},
        },
        headers=APP_H,
    )
    assert response.get_json()["result"]["path"] == "workspace/mine.txt"
    assert (harness.workdir / "mine.txt").exists()
    assert not (harness.other_workdir / "mine.txt").exists()


def test_controller_names_the_app(harness: Harness) -> None:
    response = harness.client.post(
        "/call",
        json={
            "tool": "file_write",
            "app_id": "app2",
            "args": {"path": "c.txt", "content": "1"},
        },
        headers=MASTER_H,
    )
    assert response.get_json()["status"] == "ok"
    assert (harness.other_workdir / "c.txt").read_text() == "1"
    missing = harness.client.post(
        "/call", json={"tool": "notify", "args": {}}, headers=MASTER_H
    )
    assert missing.status_code == 400
    unknown = harness.client.post(
        "/call", json={"tool": "notify", "app_id": "ghost", "args": {}}, headers=MASTER_H
    )
    assert unknown.status_code == 404


def test_registration_is_validated(harness: Harness) -> None:
    bad = [
        ({"app_id": "other", "workdir": "/tmp/x", "token": "t" * 20}, "a1"),  # URL ≠ body
        ({"app_id": "controller", "workdir": "/tmp/x", "token": "t" * 20}, "controller"),
        ({"app_id": "a1", "workdir": "relative/dir", "token": "t" * 20}, "a1"),
        ({"app_id": "a1", "workdir": "/tmp/x", "token": "short"}, "a1"),
        ({"app_id": "../x", "workdir": "/tmp/x", "token": "t" * 20}, "..%2Fx"),
    ]
    for body, url_id in bad:
        response = harness.client.put(f"/apps/{url_id}", json=body, headers=MASTER_H)
        assert response.status_code in (400, 404), body


def test_unregister_removes_the_token(harness: Harness) -> None:
    assert (
        harness.client.delete("/apps/app2", headers=MASTER_H).get_json()["status"] == "ok"
    )
    response = harness.client.post(
        "/call", json={"tool": "file_list"}, headers={"X-AIOS-Token": OTHER_TOKEN}
    )
    assert response.status_code == 403
    assert harness.client.delete("/apps/app2", headers=MASTER_H).status_code == 404


def test_tools_listing_has_the_ten_tools_and_custom_ones(make_harness) -> None:
    harness = make_harness(
        url="http://127.0.0.1:9",
        custom_tools=[
            {
                "name": "my_custom_tool",
                "description": "自定义工具",
                "parameters": {
                    "type": "object",
                    "properties": {"arg1": {"type": "string"}},
                },
            }
        ],
    )
    listing = ToolsListing.model_validate(
        harness.client.get("/tools", headers=APP_H).get_json()
    )
    names = [tool.name for tool in listing.tools]
    assert listing.app_id == "app1"
    assert names[: len(ATOMIC_TOOLS)] == list(ATOMIC_TOOLS)
    assert all(tool.parameters.get("type") == "object" for tool in listing.tools)
    custom = [tool for tool in listing.tools if tool.name == "my_custom_tool"]
    assert custom and custom[0].custom is True
    other = harness.client.get("/tools?app_id=app1", headers={"X-AIOS-Token": OTHER_TOKEN})
    assert "my_custom_tool" not in [t["name"] for t in other.get_json()["tools"]]  # its own
    as_controller = harness.client.get("/tools?app_id=app1", headers=MASTER_H).get_json()
    assert "my_custom_tool" in [t["name"] for t in as_controller["tools"]]


def test_unknown_tool_and_bad_args_are_data_but_a_malformed_body_is_400(
    harness: Harness,
) -> None:
    assert harness.call("no_such_tool")["code"] == "unknown_tool"
    bad = harness.call("file_write", path="x.txt")
    assert (
        bad["status"] == "error"
        and bad["code"] == "invalid_args"
        and "content" in bad["error"]
    )
    typo = harness.call("file_write", path="x.txt", content="a", contents="b")
    assert typo["code"] == "invalid_args"
    wrong_type = harness.call("shell_exec", cmd=5)
    assert wrong_type["code"] == "invalid_args"
    for body in ({"args": {}}, {"tool": ""}, {"tool": "notify", "args": []}):
        assert harness.client.post("/call", json=body, headers=APP_H).status_code == 400
    raw = harness.client.post(
        "/call", data="{", headers={**APP_H, "Content-Type": "application/json"}
    )
    assert raw.status_code == 400


def test_run_steps_in_order_with_templating_and_independent_failures(
    harness: Harness,
) -> None:
    results = harness.run(
        [
            {
                "step_id": 1,
                "tool": "cache_set",
                "args": {
                    "key": "songs",
                    "value": {"songs": [{"id": "s_001", "name": "七里香"}]},
                },
            },
            {"step_id": 2, "tool": "cache_get", "args": {"key": "songs"}},
            {
                "step_id": 3,
                "tool": "file_write",
                "args": {"path": "workspace/recent.json", "content": "{{step_2.result}}"},
            },
            {"step_id": 4, "tool": "file_read", "args": {"path": "../../etc/passwd"}},
            {
                "step_id": 5,
                "tool": "file_write",
                "args": {"path": "x.txt", "content": "{{step_4.result}}"},
            },
            {
                "step_id": 6,
                "tool": "file_write",
                "args": {
                    "path": "title.txt",
                    "content": "first: {{step_2.result.songs.0.name}} ({{step_4.status}})",
                },
            },
        ]
    )
    assert list(results) == [f"step_{i}" for i in range(1, 7)]
    assert results["step_3"]["result"] == {
        "path": "workspace/recent.json",
        "size": (harness.workdir / "recent.json").stat().st_size,
    }
    assert (
        json.loads((harness.workdir / "recent.json").read_text())["songs"][0]["id"]
        == "s_001"
    )
    assert results["step_4"]["code"] == "path_outside_workdir"
    assert results["step_5"]["code"] == "template_error"
    assert not (harness.workdir / "x.txt").exists()
    assert results["step_6"]["status"] == "ok"  # independent of the failure
    assert (harness.workdir / "title.txt").read_text() == "first: 七里香 (error)"
    for result in results.values():
        assert {"tool", "status", "duration_ms"} <= set(result)


def test_run_rejects_duplicate_step_ids(harness: Harness) -> None:
    steps = [{"step_id": 1, "tool": "notify", "args": {"title": "a"}}] * 2
    response = harness.client.post("/run", json={"steps": steps}, headers=APP_H)
    assert response.status_code == 400


def test_cache_namespaces_ttl_and_system_writes(harness: Harness) -> None:
    missing = harness.call("cache_get", key="nothing")
    assert missing["status"] == "ok" and "result" in missing and missing["result"] is None
    assert harness.call("cache_set", key="k", value=[1, 2])["status"] == "ok"
    assert harness.call("cache_get", key="k")["result"] == [1, 2]
    assert (
        harness.call("cache_get", key="k", token=OTHER_TOKEN)["result"] is None
    )  # own space
    refused = harness.call("cache_set", key="ui_snapshot", value={}, namespace="system")
    assert refused["status"] == "error" and refused["code"] == "forbidden"
    snapshot = {"elements": [{"id": "btn_play", "x": 100, "y": 200}]}
    ok = harness.client.post(
        "/cache/system", json={"key": "ui_snapshot", "value": snapshot}, headers=MASTER_H
    )
    assert ok.status_code == 200
    got = harness.call(
        "cache_get", key="ui_snapshot", namespace="system", token=OTHER_TOKEN
    )
    assert got["result"] == snapshot
    harness.call("cache_set", key="brief", value="x", ttl=0.2)
    assert harness.call("cache_get", key="brief")["result"] == "x"
    time.sleep(0.3)
    assert harness.call("cache_get", key="brief")["result"] is None
    assert harness.call("cache_set", key="k", value=1, ttl=-1)["code"] == "invalid_args"


def test_notify_events_long_poll(harness: Harness) -> None:
    first = harness.call(
        "notify", title="下载完成", body="<img src=x onerror=alert(1)>", level="success"
    )
    assert first["status"] == "ok"
    page = EventsPage.model_validate(
        harness.client.get("/events?since=0", headers=MASTER_H).get_json()
    )
    assert [e.type for e in page.events] == ["notify"]
    event = page.events[0]
    assert event.app_id == "app1" and event.session_id == "sess_test"
    assert event.data == {
        "title": "下载完成",
        "body": "<img src=x onerror=alert(1)>",
        "level": "success",
    }
    assert harness.call("notify", title="x", level="loud")["code"] == "invalid_args"

    later = threading.Timer(0.2, lambda: harness.call("notify", title="later"))
    later.start()
    waited = harness.client.get(
        f"/events?since={page.next}&wait=5", headers=MASTER_H
    ).get_json()
    later.join()
    assert [e["data"]["title"] for e in waited["events"]] == ["later"]
    empty = harness.client.get(
        f"/events?since={waited['next']}&wait=0", headers=MASTER_H
    ).get_json()
    assert empty["events"] == [] and empty["next"] == waited["next"]


def test_every_call_is_logged_per_session_without_contents(harness: Harness) -> None:
    secret_text = "very long file body " * 50
    harness.call("file_write", path="big.txt", content=secret_text)
    harness.run([{"step_id": 7, "tool": "file_read", "args": {"path": "nope.txt"}}])
    harness.client.post(
        "/call",
        json={"tool": "notify", "args": {"title": "t"}, "session_id": "../../etc/evil"},
        headers=APP_H,
    )
    harness.client.post(
        "/call", json={"tool": "notify", "args": {"title": "t"}}, headers=APP_H
    )
    log_dir = harness.state_dir / "tool_calls"
    lines = [
        json.loads(line) for line in (log_dir / "sess_test.jsonl").read_text().splitlines()
    ]
    assert [(e["tool"], e["status"]) for e in lines] == [
        ("file_write", "ok"),
        ("file_read", "error"),
    ]
    assert lines[0]["app_id"] == "app1" and "duration_ms" in lines[0] and "time" in lines[0]
    assert secret_text not in json.dumps(lines[0])
    assert lines[1]["step_id"] == 7 and lines[1]["code"] == "file_not_found"
    names = sorted(p.name for p in log_dir.iterdir())
    assert "no_session.jsonl" in names
    assert all("/" not in n and not n.startswith(".") for n in names)
    assert len(names) == 3


def test_d2_saturated_executor_answers_503_quickly(tmp_path) -> None:
    """D2: when every slot is busy a call is answered 503 `overloaded`, not queued."""
    app = create_app(
        settings_from(), token=MASTER, state_dir=tmp_path / "state", max_concurrent=1
    )
    client = app.test_client()
    workdir = tmp_path / "w"
    client.put(
        "/apps/a",
        json={"app_id": "a", "workdir": str(workdir), "token": APP_TOKEN},
        headers=MASTER_H,
    )
    (workdir / "slow.py").write_text("import time\ntime.sleep(1.5)\n")
    slow = threading.Thread(
        target=lambda: app.test_client().post(
            "/call",
            json={
                "tool": "shell_exec",
                "args": {"cmd": ["python3", "slow.py"], "timeout": 2},
            },
            headers=APP_H,
        )
    )
    slow.start()
    try:
        time.sleep(0.5)
        busy = client.post(
            "/call", json={"tool": "notify", "args": {"title": "x"}}, headers=APP_H
        )
        assert busy.status_code == 503
        assert busy.get_json()["error"]["code"] == "overloaded"
        assert client.get("/health").status_code == 200
    finally:
        slow.join()
        app.extensions["aios_toolbox"].shutdown()
    assert (
        client.post(
            "/call", json={"tool": "notify", "args": {"title": "x"}}, headers=APP_H
        ).status_code
        == 200
    )
