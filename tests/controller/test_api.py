"""The controller's HTTP API through Flask's test client, over the fake pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask import Blueprint, Flask, g

from aios_protocol.messages import AppInfo
from aios_runtime.settings import Settings
from controller.api.desktop import ApiServices, create_app
from controller.apps.discovery import AppSpec
from controller.events import EventBus
from controller.settings_store import SettingsStore
from tests.controller.fakes import make_pipeline, text_reply

TOKEN = "test-controller-token"
H = {"X-AIOS-Token": TOKEN}


class FakeAppsView:
    def __init__(self, workdir: Path):
        self.workdir = workdir

    def app_infos(self) -> list[AppInfo]:
        return [AppInfo(id="a", name="A", status="running", port=1)]

    def spec(self, app_id: str) -> AppSpec:
        return AppSpec(app_id=app_id, folder=self.workdir.parent, workdir=self.workdir)


def build(
    tmp_path: Path, desktop: Path | None = None, **extra: Any
) -> tuple[Flask, dict[str, Any], EventBus]:
    pipeline, _, _, bus, _ = make_pipeline(tmp_path, {"a": lambda b: text_reply("home")})
    stored: dict[str, Any] = {}
    settings = SettingsStore(tmp_path / "settings.json", Settings())
    services = ApiServices(
        token=TOKEN,
        pipeline=pipeline,
        apps=FakeAppsView(tmp_path / "ws"),
        events=bus,
        settings=settings,
        store_ui_snapshot=lambda snap: stored.update(snap),
        desktop_dir=desktop or tmp_path / "no_desktop",
        **extra,
    )
    return create_app(services), stored, bus


def test_missing_desktop_is_said_plainly(tmp_path: Path) -> None:
    client = build(tmp_path)[0].test_client()
    page = client.get("/")
    assert page.status_code == 404 and b"desktop is not installed" in page.data
    assert client.get("/desktop/app.js").status_code == 404
    health = client.get("/api/health").get_json()
    assert health == {
        "status": "ok",
        "apps": 1,
        "running": 1,
        "executor": "running",
        "llm": "not_configured",
        "problems": [],  # state files set aside at start, none here
    }


def test_desktop_files_are_public_and_confined(tmp_path: Path) -> None:
    desktop = tmp_path / "web"
    desktop.mkdir()
    (desktop / "index.html").write_text("<!doctype html><title>Triton</title>")
    (desktop / "app.js").write_text("export {}")
    (tmp_path / "secret.txt").write_text("secret")
    client = build(tmp_path, desktop)[0].test_client()
    page = client.get("/?token=whatever")
    assert page.status_code == 200 and b"Triton" in page.data
    assert client.get("/desktop/app.js").data == b"export {}"
    assert client.get("/desktop/../secret.txt").status_code == 404
    assert client.get("/desktop/%2E%2E/secret.txt").status_code == 404


def test_open_with_an_empty_body_and_a_snapshot(tmp_path: Path) -> None:
    app, stored, _ = build(tmp_path)
    client = app.test_client()
    opened = client.post("/api/apps/a/open", headers=H)
    assert opened.status_code == 200
    assert opened.get_json()["data"] == {"content": "home"}
    assert opened.get_json()["session_id"].startswith("sess_")
    snap = {"elements": [{"id": "btn_play", "x": 1, "y": 2}]}
    assert client.post("/api/ui/snapshot", json=snap, headers=H).status_code == 200
    assert stored["elements"][0]["id"] == "btn_play"
    bad = client.post("/api/ui/snapshot", json={"elements": "nope"}, headers=H)
    assert bad.status_code == 400 and "elements" in bad.get_json()["error"]["message"]
    assert client.post("/api/apps/zzz/open", json={}, headers=H).status_code == 404


def test_settings_put_validates_masks_and_needs_json(tmp_path: Path) -> None:
    client = build(tmp_path)[0].test_client()
    put = client.put(
        "/api/settings", json={"deepseek_api_key": "sk-abcdefgh1234"}, headers=H
    )
    assert put.get_json()["deepseek_api_key"] == "••••1234"
    assert put.get_json()["restart_needed"] is False
    shown = client.get("/api/settings", headers=H).get_json()
    shown["tool_timeout"] = {"shell_exec": 5}
    again = client.put("/api/settings", json=shown, headers=H).get_json()
    assert again["restart_needed"] is True
    # only what the user changed lands in the user's settings file
    saved = json.loads((tmp_path / "settings.json").read_text())
    assert saved == {
        "deepseek_api_key": "sk-abcdefgh1234",
        "tool_timeout": {"shell_exec": 5},
    }
    wrong_type = client.put(
        "/api/settings", data="{}", headers={**H, "Content-Type": "text/plain"}
    )
    assert wrong_type.status_code == 415
    bad = client.put("/api/settings", json={"max_step_rounds": 0}, headers=H)
    assert (
        bad.status_code == 400 and "max_step_rounds" in bad.get_json()["error"]["message"]
    )


def test_sse_stream_replays_from_since(tmp_path: Path) -> None:
    app, _, bus = build(tmp_path)
    bus.publish("notify", {"title": "t1"})
    bus.publish("notify", {"title": "t2"})
    client = app.test_client()
    response = client.get(f"/api/events?since=1&limit=1&token={TOKEN}")
    assert response.mimetype == "text/event-stream"
    body = response.get_data(as_text=True)
    assert "retry: 1000" in body and "id: 2\n" in body
    event = json.loads(body.split("data: ", 1)[1].split("\n", 1)[0])
    assert event["type"] == "notify" and event["data"] == {"title": "t2"}
    resumed = client.get("/api/events?limit=1", headers={**H, "Last-Event-ID": "0"})
    assert '"title": "t1"' in resumed.get_data(as_text=True)


@pytest.mark.parametrize("path", ["/api/apps", "/api/settings", "/api/events"])
def test_every_api_route_but_health_needs_the_token(tmp_path: Path, path: str) -> None:
    client = build(tmp_path)[0].test_client()
    assert client.get(path).status_code == 403
    assert client.get(path, headers={"X-AIOS-Token": "wrong"}).status_code == 403


def test_extra_blueprints_and_authenticator_plug_in(tmp_path: Path) -> None:
    extra = Blueprint("extra", __name__)

    @extra.get("/api/extra/whoami")
    def whoami() -> dict[str, Any]:
        return {"identity": g.identity}

    def authenticate(presented: str) -> str | None:
        return {TOKEN: "controller", "app-token": "some_app"}.get(presented)

    app, _, _ = build(tmp_path, authenticate=authenticate, blueprints=[extra])
    client = app.test_client()
    answer = client.get("/api/extra/whoami", headers={"X-AIOS-Token": "app-token"})
    assert answer.get_json() == {"identity": "some_app"}
    assert client.get("/api/extra/whoami").status_code == 403
