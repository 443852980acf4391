"""The controller's HTTP API through Flask's test client, over the fake pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask import Blueprint, Flask, g

from aios_protocol.messages import AppInfo
from aios_runtime.settings import Settings, load_settings
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
    tmp_path: Path,
    desktop: Path | None = None,
    loaded: Settings | None = None,
    **extra: Any,
) -> tuple[Flask, dict[str, Any], EventBus]:
    pipeline, _, _, bus, _ = make_pipeline(tmp_path, {"a": lambda b: text_reply("home")})
    stored: dict[str, Any] = {}
    settings = SettingsStore(tmp_path / "settings.json", loaded or Settings())
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
        "config_problems": [],  # unknown keys and old names in the settings files
    }


def test_health_reports_the_unknown_and_old_keys_of_the_settings_files(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"deepseek_api_key": "", "tool_sandbox": {"shell_whitelst": ["ls"]}})
    )
    client = build(tmp_path, loaded=load_settings(config, env={}))[0].test_client()
    health = client.get("/api/health").get_json()
    assert health["config_problems"] == [
        f"{config}: deepseek_api_key is the old name of llm.api_key: it is still "
        "read, write llm.api_key",
        f"{config}: unknown key tool_sandbox.shell_whitelst "
        "(did you mean tool_sandbox.shell_whitelist?)",
    ]
    assert health["status"] == "ok"  # reported, and the system runs on


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
        "/api/settings", json={"llm": {"api_key": "sk-abcdefgh1234"}}, headers=H
    )
    assert put.get_json()["llm"]["api_key"] == "••••1234"
    assert put.get_json()["llm"]["model"] == "deepseek-chat"  # the rest of llm stays
    assert put.get_json()["restart_needed"] is False
    shown = client.get("/api/settings", headers=H).get_json()
    assert shown["llm"]["api_key"] == "••••1234"
    shown["tool_timeout"] = {"shell_exec": 5}
    shown["llm"]["model"] = "deepseek-reasoner"
    again = client.put("/api/settings", json=shown, headers=H).get_json()
    assert again["restart_needed"] is True
    # only what the user changed lands in the user's settings file (the key that
    # came back masked is kept)
    saved = json.loads((tmp_path / "settings.json").read_text())
    assert saved == {
        "llm": {"api_key": "sk-abcdefgh1234", "model": "deepseek-reasoner"},
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


def test_settings_put_reads_the_old_key_names(tmp_path: Path) -> None:
    """A page or client of an older version still sends `deepseek_api_key`."""
    client = build(tmp_path)[0].test_client()
    put = client.put(
        "/api/settings",
        json={"deepseek_api_key": "sk-abcdefgh5678", "llm_model": "m"},
        headers=H,
    ).get_json()
    assert put["llm"] == {
        "api_key": "••••5678",
        "base_url": "https://api.deepseek.com",
        "model": "m",
    }
    assert "deepseek_api_key" not in put
    saved = json.loads((tmp_path / "settings.json").read_text())
    assert saved == {"llm": {"api_key": "sk-abcdefgh5678", "model": "m"}}


def test_settings_put_refuses_an_unknown_key_naming_the_nearest(tmp_path: Path) -> None:
    client = build(tmp_path)[0].test_client()
    bad = client.put(
        "/api/settings", json={"tool_sandbox": {"shell_whitelst": ["ls"]}}, headers=H
    )
    assert bad.status_code == 400
    error = bad.get_json()["error"]
    assert "did you mean tool_sandbox.shell_whitelist?" in error["message"]
    assert list(error["detail"]["fields"]) == ["tool_sandbox.shell_whitelst"]
    assert not (tmp_path / "settings.json").exists()


def test_settings_put_keeps_unknown_keys_config_json_already_had(tmp_path: Path) -> None:
    """The desktop sends back all it was shown: a key config.json already held is
    reported at start, and does not stop the user from saving."""
    loaded = Settings.model_validate({"custom": {"a": 1}})
    client = build(tmp_path, loaded=loaded)[0].test_client()
    shown = client.get("/api/settings", headers=H).get_json()
    shown["voice_rate"] = 1.2
    put = client.put("/api/settings", json=shown, headers=H)
    assert put.status_code == 200 and put.get_json()["custom"] == {"a": 1}
    assert json.loads((tmp_path / "settings.json").read_text()) == {"voice_rate": 1.2}


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
