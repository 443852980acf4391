"""A real Triton system for end-to-end tests: `aios start --headless` as a subprocess.

`build_apps_dir` assembles an apps folder from the shipped `hello_app`, the test
apps under `tests/controller/apps/` (and renamed copies of `echo_app`), and the
design's verbose template; `launch` starts the controller on free ports with a test
config, reads its one `ready <url>` line and returns a `RunningSystem`.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psutil
import requests

from tests.procs import PYTHON, ROOT, wait_for

HERE = Path(__file__).resolve().parent
TEST_APPS = HERE / "apps"
TEMPLATE_MAIN = ROOT / "tests" / "sdk" / "template_app" / "main.py"

# fast supervision so the failure tests stay short
TEST_CONFIG: dict[str, Any] = {
    "supervisor": {
        "health_interval": 0.3,
        "health_timeout": 0.5,
        "max_missed": 2,
        "backoff": [0.5, 1.0, 1.8],
        "max_restarts": 3,
        "stop_grace": 0.5,
        "stable_after": 30,
    },
    # the template plans a GET of api.example.com: refused before any connection
    "tool_sandbox": {"http_domain_whitelist": ["allowed.invalid"]},
    "app_settings": {"echo_app": {"flavour": "test"}},
    # these tests supervise apps from launch on; lazy start is tests/apps_at_scale/'s
    "apps": {"start_at_launch": True},
}

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


def copy_echo(apps: Path, app_id: str, name: str) -> None:
    """A renamed copy of the echo app that the router will not pick by accident."""
    shutil.copytree(TEST_APPS / "echo_app", apps / app_id, ignore=_IGNORE)
    manifest = json.loads((apps / app_id / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(name=name, keywords=[f"{name}专用词"], examples=[], description=name)
    (apps / app_id / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False), encoding="utf-8"
    )


def copy_shipped_apps(apps: Path, app_ids: tuple[str, ...]) -> Path:
    """Copies of shipped apps in `apps` (so tests never write into the repo's workspaces)."""
    apps.mkdir(parents=True, exist_ok=True)
    for app_id in app_ids:
        shutil.copytree(ROOT / "apps" / app_id, apps / app_id, ignore=_IGNORE)
    return apps


def build_apps_dir(apps: Path, *, test_apps: tuple[str, ...] = ("echo_app",)) -> Path:
    apps.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "apps" / "hello_app", apps / "hello_app", ignore=_IGNORE)
    for name in test_apps:
        shutil.copytree(TEST_APPS / name, apps / name, ignore=_IGNORE)
    return apps


def add_template_app(apps: Path) -> None:
    """The design's verbose `main.py` template, verbatim, as an app."""
    folder = apps / "template_app"
    folder.mkdir()
    shutil.copy(TEMPLATE_MAIN, folder / "main.py")
    manifest = {
        "name": "模板应用",
        "icon": "📦",
        "description": "设计文档里的 main.py 模板",
        "entry": "main.py",
        "role_prompt": "你是一个XXX小AI，负责...",
        "workdir": "workspace",
        "keywords": ["模板应用"],
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False))


@dataclass
class RunningSystem:
    proc: subprocess.Popen
    url: str  # http://127.0.0.1:<port>
    token: str
    state_dir: Path
    apps_dir: Path
    log_path: Path

    def workspace(self, app_id: str) -> Path:
        """The app's workdir: `<state_dir>/users/default/workspaces/<app_id>` (the apps folder stays
        as shipped)."""
        return self.state_dir / "users" / "default" / "workspaces" / app_id

    @property
    def headers(self) -> dict[str, str]:
        return {"X-AIOS-Token": self.token}

    def get(self, path: str, **kw: Any) -> requests.Response:
        kw.setdefault("timeout", 30)
        kw["headers"] = {**self.headers, **kw.get("headers", {})}
        return requests.get(self.url + path, **kw)

    def post(self, path: str, body: Any, **kw: Any) -> requests.Response:
        kw.setdefault("timeout", 60)
        kw["headers"] = {**self.headers, **kw.get("headers", {})}
        return requests.post(self.url + path, json=body, **kw)

    def say(self, text: str, session_id: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"text": text}
        if session_id:
            body["session_id"] = session_id
        response = self.post("/api/instruction", body)
        assert response.status_code == 200, response.text
        return response.json()

    def apps(self) -> dict[str, dict[str, Any]]:
        response = self.get("/api/apps")
        assert response.status_code == 200, response.text
        return {row["id"]: row for row in response.json()}

    def wait_for(
        self, check: Callable[[], Any], timeout: float = 30, what: str = "condition"
    ) -> Any:
        try:
            return wait_for(check, timeout, what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; log: {self.log_tail()}") from None

    def wait_app(self, app_id: str, status: str, timeout: float = 30) -> dict[str, Any]:
        def check() -> dict[str, Any] | None:
            row = self.apps().get(app_id)
            return row if row and row["status"] == status else None

        return self.wait_for(check, timeout, f"{app_id} to be {status}")

    def children(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM the controller (it stops its children), SIGKILL if it hangs."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def launch(
    root: Path,
    apps_dir: Path,
    *,
    state_dir: Path | None = None,
    ports: str = "auto",
    config: dict[str, Any] | str | None = None,
    timeout: float = 60,
) -> RunningSystem:
    """`python -m aios start --headless …`; returns once `ready` is printed."""
    state_dir = state_dir or root / "state"
    config_path = root / "config.json"
    # a str is written as it is (the fault tests start on a damaged config.json)
    raw = config if config is not None else TEST_CONFIG
    text = raw if isinstance(raw, str) else json.dumps(raw)
    config_path.write_text(text)
    log_path = root / f"controller-{time.monotonic_ns()}.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    env.pop("AIOS_STATE_DIR", None)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "aios",
                "start",
                "--headless",
                "--ports",
                ports,
                "--state-dir",
                str(state_dir),
                "--apps-dir",
                str(apps_dir),
                "--config",
                str(config_path),
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
        )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put(raw.decode("utf-8", "replace"))
        lines.put("")

    threading.Thread(target=read, daemon=True).start()
    try:
        line = lines.get(timeout=timeout)
    except queue.Empty:
        line = ""
    if not line.startswith("ready "):
        proc.kill()
        proc.wait(5)
        raise RuntimeError(
            f"controller did not print ready (got {line!r}): {log_path.read_text()[-3000:]}"
        )
    desktop_url = line.split(" ", 1)[1].strip()
    parts = urlsplit(desktop_url)
    token = parse_qs(parts.query)["token"][0]
    return RunningSystem(
        proc=proc,
        url=f"{parts.scheme}://{parts.netloc}",
        token=token,
        state_dir=state_dir,
        apps_dir=apps_dir,
        log_path=log_path,
    )


@contextmanager
def serving(
    root: Path, apps_dir: Path, app_ids: Iterable[str], **options: Any
) -> Iterator[RunningSystem]:
    """`launch(root, apps_dir, **options)`, once every app of `app_ids` runs; stopped
    when the block ends (a module fixture: `with serving(...) as running: yield running`)."""
    running = launch(root, apps_dir, **options)
    try:
        for app_id in app_ids:
            running.wait_app(app_id, "running")
        yield running
    finally:
        running.stop()
