"""Fixtures of the security tests (SECURITY.md, one module per threat group).

`shared_system` is one real Triton system for the whole security session: the
shipped hello_app, the controller tests' echo_app, the design's verbose template
(verbatim) and the misbehaving apps of `tests/security/apps/` (rogue_app for J2,
xss_app for Q2, slow_app for D2), with fast supervision, a 3 s app timeout and a
small admission limit. `start_test_executor` spawns a real executor with two
registered apps for the sandbox, path, SSRF, SQL and resource rows. `HAS_BWRAP`
tells rows that need bubblewrap to skip with that reason when it is missing.
"""

from __future__ import annotations

import copy
import json
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    add_template_app,
    build_apps_dir,
    serving,
)
from tests.procs import start_executor, stop
from tests.security.fake_web import serve_fake

HERE = Path(__file__).resolve().parent
SECURITY_APPS = HERE / "apps"
HAS_BWRAP = shutil.which("bwrap") is not None
NEEDS_BWRAP = "needs bubblewrap (bwrap is not installed): without it there is no file-system or network isolation"

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")

SHARED_APPS = ("rogue_app", "xss_app", "slow_app")
SHARED_CONFIG: dict[str, Any] = {
    **copy.deepcopy(TEST_CONFIG),
    "app_timeout": 3,
    "admission": {"max_instructions": 3, "max_app_calls": 2, "queue_wait": 0.2},
}


def add_security_apps(apps: Path, names: tuple[str, ...]) -> None:
    for name in names:
        shutil.copytree(SECURITY_APPS / name, apps / name, ignore=_IGNORE)


@pytest.fixture(scope="session")
def shared_system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("security_system")
    apps = build_apps_dir(root / "apps", test_apps=("echo_app",))
    add_template_app(apps)
    add_security_apps(apps, SHARED_APPS)
    with serving(
        root,
        apps,
        ("hello_app", "echo_app", "template_app", *SHARED_APPS),
        config=copy.deepcopy(SHARED_CONFIG),
    ) as running:
        yield running


# ------------------------------------------------------------------ executor

APP1_TOKEN = "security-app1-token-0123456789"
APP2_TOKEN = "security-app2-token-0123456789"


@dataclass
class RunningExecutor:
    """A real executor process with `app1` and `app2` registered."""

    proc: subprocess.Popen
    url: str
    token: str
    root: Path
    workdir: Path  # app1's
    other_workdir: Path  # app2's
    state_dir: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def _acting(self, token: str) -> dict[str, str]:
        """The controller names the app it acts for; an app is always itself."""
        return {"app_id": "app1"} if token == self.token else {}

    def call(self, tool: str, token: str | None = None, **args: Any) -> dict[str, Any]:
        """Call `tool` for app1 — as the controller by default (it reviewed the call),
        or as the app holding `token`."""
        token = token or self.token
        response = requests.post(
            f"{self.url}/call",
            json={
                "tool": tool,
                "args": args,
                "session_id": "sess_security",
                **self._acting(token),
            },
            headers={"X-AIOS-Token": token},
            timeout=120,
        )
        assert response.status_code == 200, response.text
        return response.json()

    def run(self, steps: list[dict[str, Any]], token: str | None = None) -> dict[str, Any]:
        token = token or self.token
        response = requests.post(
            f"{self.url}/run",
            json={"steps": steps, "session_id": "sess_security", **self._acting(token)},
            headers={"X-AIOS-Token": token},
            timeout=120,
        )
        assert response.status_code == 200, response.text
        return response.json()["tool_results"]

    def health(self) -> dict[str, Any]:
        return requests.get(f"{self.url}/health", timeout=5).json()

    def register(self, app_id: str, workdir: Path, token: str, **extra: Any) -> None:
        body = {"app_id": app_id, "workdir": str(workdir), "token": token, **extra}
        response = requests.put(
            f"{self.url}/apps/{app_id}",
            json=body,
            headers={"X-AIOS-Token": self.token},
            timeout=10,
        )
        assert response.status_code == 200, response.text


def start_test_executor(
    root: Path, config: dict[str, Any] | None = None
) -> RunningExecutor:
    """Spawn `python -m executor` with app1 (`root/x/app1`) and app2 registered."""
    root.mkdir(parents=True, exist_ok=True)
    workdir = root / "x" / "app1"
    other = root / "x" / "app2"
    workdir.mkdir(parents=True)
    other.mkdir(parents=True)
    (other / "secret.txt").write_text("app2 secret")
    proc, url, token = start_executor(root, config=config or {})
    home = root / "executor"
    running = RunningExecutor(proc, url, token, root, workdir, other, home / "state")
    try:
        running.register("app1", workdir, APP1_TOKEN)
        running.register("app2", other, APP2_TOKEN)
    except BaseException:
        stop(proc)
        raise
    return running


@contextmanager
def executors_in_both_modes(
    tmp_path_factory: pytest.TempPathFactory, config: dict[str, Any], name: str
) -> Iterator[dict[str, RunningExecutor]]:
    """One executor per sandbox mode — "bubblewrap" (when `bwrap` exists) and
    "rlimit" — with `config`; every one stopped afterwards."""
    started: dict[str, RunningExecutor] = {}
    try:
        if HAS_BWRAP:
            root = tmp_path_factory.mktemp(f"{name}_bwrap")
            started["bubblewrap"] = start_test_executor(root, config)
        rlimit = {
            **config,
            "tool_sandbox": {**config.get("tool_sandbox", {}), "use_bubblewrap": False},
        }
        started["rlimit"] = start_test_executor(
            tmp_path_factory.mktemp(f"{name}_rlimit"), rlimit
        )
        yield started
    finally:
        for running in started.values():
            stop(running.proc)


def pick_mode(executors: dict[str, RunningExecutor], mode: str) -> RunningExecutor:
    """The executor of `mode`; the test is skipped when bubblewrap is missing."""
    if mode not in executors:
        pytest.skip(NEEDS_BWRAP)
    running = executors[mode]
    assert running.health()["sandbox"] == mode
    return running


def write_config(path: Path, config: dict[str, Any]) -> None:
    path.write_text(json.dumps(config), encoding="utf-8")


@pytest.fixture()
def listener() -> Iterator[tuple[int, list[object]]]:
    """A TCP listener on 127.0.0.1 counting every connection it accepts."""
    accepted: list[object] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(conn)
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    done.set()
    thread.join(2)
    server.close()


@pytest.fixture(scope="module")
def fake() -> Iterator[str]:
    """The fake web server on 127.0.0.2 (tests/security/fake_web.py)."""
    with serve_fake() as url:
        yield url


# ------------------------------------------------------------------- browser


@dataclass
class DesktopPage:
    """One desktop tab; `errors` collects uncaught script errors, `dialogs` any alert."""

    page: Any
    errors: list[str]
    dialogs: list[str]


def open_desktop(
    browser: Any, system: RunningSystem, wait_for: str = "#task_hello_app"
) -> DesktopPage:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="zh-CN")
    page = context.new_page()
    page.set_default_timeout(15000)
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(f"{system.url}/?token={system.token}")
    page.wait_for_selector(wait_for)
    return DesktopPage(page, errors, dialogs)


def say_in_desktop(desktop: DesktopPage, text: str) -> None:
    """Type an instruction in the command bar and send it."""
    desktop.page.fill("#command_input", text)
    with desktop.page.expect_response(lambda r: r.url.endswith("/api/instruction")):
        desktop.page.press("#command_input", "Enter")
