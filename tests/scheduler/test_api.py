"""The `/api/schedules` routes through Flask's test client, and the `schedule` tool
through a real socket: the executor's tool forwarding to the controller's route."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest
from werkzeug.serving import make_server

from aios_protocol.errors import AiosError
from aios_runtime.edge import create_service, token_matches
from scheduler.api import allow_app_tokens_for_schedule, schedules_blueprint

USER = "u" * 24
APP_TOKENS = {"a" * 24: "music_app", "b" * 24: "hello_app"}

JOB = {
    "name": "stretch",
    "execution_type": "agent",
    "schedule_type": "interval",
    "interval_s": 60,
    "app_id": "hello_app",
    "instruction": "remind me to stretch",
}


@pytest.fixture
def service(make_scheduler):
    scheduler = make_scheduler()
    app = create_service(
        "test-controller",
        allow_app_tokens_for_schedule(token_matches(USER), APP_TOKENS.get),
    )
    app.register_blueprint(schedules_blueprint(scheduler))
    return app, scheduler


@pytest.fixture
def client(service):
    return service[0].test_client()


def call(client, method, path, body=None, token=USER):
    headers = {"X-AIOS-Token": token, "Host": "127.0.0.1"}
    return client.open(path, method=method, json=body, headers=headers)


def test_crud_run_and_runs(client, service, clock):
    created = call(client, "POST", "/api/schedules", JOB)
    assert created.status_code == 201, created.json
    job_id = created.json["id"]
    assert created.json["next_run_at"]
    listing = call(client, "GET", "/api/schedules").json
    assert [j["id"] for j in listing["jobs"]] == [job_id] and listing["problems"] == []
    patched = call(client, "PATCH", f"/api/schedules/{job_id}", {"name": "stretch!"})
    assert patched.status_code == 200 and patched.json["name"] == "stretch!"
    started = call(client, "POST", f"/api/schedules/{job_id}/run")
    assert started.status_code == 202 and started.json["run_id"].startswith("run_")
    assert service[1].wait_idle()
    runs = call(client, "GET", f"/api/schedules/{job_id}/runs").json["runs"]
    assert [r["trigger"] for r in runs] == ["manual"] and runs[0]["status"] == "ok"
    assert call(client, "DELETE", f"/api/schedules/{job_id}").json == {"status": "ok"}
    assert call(client, "GET", f"/api/schedules/{job_id}/runs").status_code == 404


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"interval_s": 0.5}, "interval_s"),
        ({"execution_type": "shell"}, "execution_type"),
        ({"schedule_type": "once"}, "run_at"),
        ({"colour": "red"}, "colour"),
        ({"run_at": "not a time", "schedule_type": "once", "interval_s": None}, "run_at"),
        ({"instruction": None}, "instruction"),
        ({"schedule_type": "cron", "interval_s": None, "cron": "61 * * * * *"}, "cron"),
    ],
)
def test_a_malformed_job_is_a_400_naming_the_field(client, change, field):
    body = {k: v for k, v in {**JOB, **change}.items() if v is not None}
    answer = call(client, "POST", "/api/schedules", body)
    assert answer.status_code == 400, answer.json
    assert answer.json["error"]["code"] == "invalid_request"
    assert field in answer.json["error"]["message"]


def test_app_tokens_reach_only_the_tool_route(client):
    assert call(client, "GET", "/api/schedules", token="a" * 24).status_code == 403
    assert call(client, "POST", "/api/schedules", JOB, token="a" * 24).status_code == 403
    assert (
        call(client, "POST", "/api/tools/schedule", {"action": "list"}).status_code == 403
    )
    answer = call(client, "POST", "/api/tools/schedule", {"action": "list"}, token="a" * 24)
    assert answer.status_code == 200 and answer.json["result"] == {"jobs": []}


def test_tool_scopes_every_action_to_the_calling_app(client):
    mine = call(
        client,
        "POST",
        "/api/tools/schedule",
        {"action": "create", "job": JOB},
        token="a" * 24,
    ).json["result"]
    assert mine["app_id"] == "music_app"
    theirs = call(client, "POST", "/api/schedules", JOB).json
    for action in ("cancel", "update", "run", "runs"):
        body = {"action": action, "job_id": theirs["id"], "changes": {"enabled": False}}
        answer = call(client, "POST", "/api/tools/schedule", body, token="a" * 24)
        assert answer.status_code == 404, (action, answer.json)
    bad = call(
        client,
        "POST",
        "/api/tools/schedule",
        {"action": "create", "job": {**JOB, "interval_s": 0}},
        token="a" * 24,
    )
    assert bad.status_code == 400 and "interval_s" in bad.json["error"]["message"]
    gone = call(
        client,
        "POST",
        "/api/tools/schedule",
        {"action": "cancel", "job_id": mine["id"]},
        token="a" * 24,
    )
    assert gone.json["result"] == {"cancelled": mine["id"]}


@dataclass
class _App:
    token: str
    app_id: str = "music_app"
    user_id: str = "default"


@dataclass
class _Context:
    app: _App
    timeout: float = 5.0


def test_the_executor_tool_forwards_over_a_real_socket(service, monkeypatch):
    from executor.toolbox import ExecutorToolbox  # noqa: F401  (the tool is wired in the toolbox)
    from executor.tools.catalog import CONTROLLER_SCHEMAS, atomic_specs
    from executor.tools.schedule import schedule

    assert "schedule" in [spec.name for spec in atomic_specs()]
    CONTROLLER_SCHEMAS["schedule"].check({"action": "list"})
    server = make_server("127.0.0.1", 0, service[0], threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("AIOS_CONTROLLER_URL", f"http://127.0.0.1:{server.server_port}")
        ctx = _Context(_App("a" * 24))
        created = schedule(ctx, {"action": "create", "job": JOB})  # type: ignore[arg-type]
        assert created["app_id"] == "music_app"
        assert schedule(ctx, {"action": "list"})["jobs"][0]["id"] == created["id"]  # type: ignore[arg-type]
        with pytest.raises(AiosError) as failed:
            schedule(_Context(_App("x" * 24)), {"action": "list"})  # type: ignore[arg-type]
        assert failed.value.code == "forbidden"
        monkeypatch.delenv("AIOS_CONTROLLER_URL")
        with pytest.raises(AiosError) as unset:
            schedule(ctx, {"action": "list"})  # type: ignore[arg-type]
        assert unset.value.code == "controller_unreachable"
    finally:
        server.shutdown()
        thread.join(5)
