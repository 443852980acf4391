"""Fixtures of the executor tests: a service behind Flask's test client, one app registered."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from aios_runtime.settings import Settings
from executor.service import create_app

MASTER = "master-token-for-executor-tests"
APP_TOKEN = "app1-token-0123456789abcdef"
OTHER_TOKEN = "app2-token-0123456789abcdef"
HAS_BWRAP = shutil.which("bwrap") is not None


def settings_from(overrides: dict[str, Any] | None = None) -> Settings:
    """Test settings: 127.0.0.1 allowed for http_request, short timeouts."""
    raw: dict[str, Any] = {
        "tool_timeout": {"http_request": 10, "shell_exec": 20, "file_read": 5},
        "tool_sandbox": {"http_allow_private_hosts": ["127.0.0.1"]},
    }
    for key, value in (overrides or {}).items():
        if isinstance(value, dict) and isinstance(raw.get(key), dict):
            raw[key] = {**raw[key], **value}
        else:
            raw[key] = value
    return Settings.model_validate(raw)


def _for_app1(token: str) -> dict[str, str]:
    """The controller names the app it acts for; an app is always itself."""
    return {"app_id": "app1"} if token == MASTER else {}


@dataclass
class Harness:
    """An executor service with `app1` (and `app2`) registered."""

    app: Flask
    client: FlaskClient
    workdir: Path
    other_workdir: Path
    state_dir: Path

    def call(self, tool: str, token: str = MASTER, **args: Any) -> dict[str, Any]:
        """Call `tool` for app1 — as the controller by default (it reviewed the call),
        or as the app holding `token`."""
        response = self.client.post(
            "/call",
            json={
                "tool": tool,
                "args": args,
                "session_id": "sess_test",
                **_for_app1(token),
            },
            headers={"X-AIOS-Token": token},
        )
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def run(self, steps: list[dict[str, Any]], token: str = MASTER) -> dict[str, Any]:
        response = self.client.post(
            "/run",
            json={"steps": steps, "session_id": "sess_test", **_for_app1(token)},
            headers={"X-AIOS-Token": token},
        )
        assert response.status_code == 200, response.get_json()
        return response.get_json()["tool_results"]

    def register(self, app_id: str, workdir: Path, token: str, **extra: Any) -> Any:
        return self.client.put(
            f"/apps/{app_id}",
            json={"app_id": app_id, "workdir": str(workdir), "token": token, **extra},
            headers={"X-AIOS-Token": MASTER},
        )


HarnessFactory = Callable[..., Harness]


@pytest.fixture
def make_harness(tmp_path: Path) -> Iterator[HarnessFactory]:
    """`make_harness(config, **app1_extra)` builds a harness; its shared skills folder
    starts empty (the skills provider copies its examples only into a folder that does
    not exist yet, then runs each one's `--help`), unless `example_skills=True`."""
    built: list[Harness] = []

    def build(
        config: dict[str, Any] | None = None,
        *,
        example_skills: bool = False,
        **app1_extra: Any,
    ) -> Harness:
        root = tmp_path / f"h{len(built)}"
        workdir = root / "apps" / "app1"
        other = root / "apps" / "app2"
        other.mkdir(parents=True)
        (other / "secret.txt").write_text("app2 secret")
        workdir.mkdir(parents=True)
        if not example_skills:
            (root / "state" / "users" / "default" / "skills").mkdir(parents=True)
        app = create_app(settings_from(config), token=MASTER, state_dir=root / "state")
        harness = Harness(app, app.test_client(), workdir, other, root / "state")
        assert harness.register("app1", workdir, APP_TOKEN, **app1_extra).status_code == 200
        assert harness.register("app2", other, OTHER_TOKEN).status_code == 200
        built.append(harness)
        return harness

    yield build
    for harness in built:
        harness.app.extensions["aios_toolbox"].shutdown()


@pytest.fixture
def harness(make_harness: HarnessFactory) -> Harness:
    return make_harness()
