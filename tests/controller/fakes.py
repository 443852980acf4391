"""Fakes for the pipeline and API tests: apps as functions, a fixed router, an
executor that echoes each step's arguments as its result.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aios_protocol.errors import AppUnavailable, NotFound
from aios_runtime.settings import Settings
from controller.events import EventBus
from controller.permissions.confirmations import ConfirmationGate
from controller.permissions.policy import PermissionPolicy
from controller.pipeline.context import ContextBuilder
from controller.pipeline.run import AppTarget, Pipeline, PipelineLimits
from controller.routing.router import AppProfile, PlannedTask, RoutePlan
from controller.sessions import SessionStore

AppFn = Callable[[dict[str, Any]], dict[str, Any]]


def text_reply(content: str, **extra: Any) -> dict[str, Any]:
    return {"status": "ok", "view_type": "text", "data": {"content": content}, **extra}


class FakeApps:
    def __init__(self, apps: dict[str, AppFn], workdir: Path):
        self.apps = apps
        self.workdir = workdir
        self.calls: dict[str, list[dict[str, Any]]] = {k: [] for k in apps}
        self.unavailable: set[str] = set()

    def profiles(self) -> list[AppProfile]:
        return [
            AppProfile(app_id=a, name=a.upper(), description=f"does {a}") for a in self.apps
        ]

    def target(self, app_id: str, user_id: str = "default") -> AppTarget:
        if app_id not in self.apps:
            raise NotFound(f"no app {app_id}")
        if app_id in self.unavailable:
            raise AppUnavailable(f"app {app_id} is restarting")

        def call(body: dict[str, Any], timeout: float) -> dict[str, Any]:
            self.calls[app_id].append(body)
            return self.apps[app_id](body)

        return AppTarget(app_id, app_id.upper(), f"role of {app_id}", self.workdir, call)


class FixedRouter:
    def __init__(self, tasks: list[PlannedTask]):
        self.tasks = tasks

    def route(self, text: str, apps: Any) -> RoutePlan:
        return RoutePlan(tasks=list(self.tasks), confidence=1.0 if self.tasks else 0.0)


class FakeExecutor:
    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.runs.append(body)
        return {
            "tool_results": {
                f"step_{s['step_id']}": {
                    "tool": s["tool"],
                    "status": "ok",
                    "result": {"echo": s["args"]},
                }
                for s in body["steps"]
            }
        }


def make_pipeline(
    tmp_path: Path,
    apps: dict[str, AppFn],
    tasks: list[PlannedTask] | None = None,
    max_rounds: int = 3,
) -> tuple[Pipeline, FakeApps, FakeExecutor, EventBus, SessionStore]:
    workdir = tmp_path / "ws"
    workdir.mkdir(exist_ok=True)
    (workdir / "greeting.txt").write_text("你好")
    fake_apps = FakeApps(apps, workdir)
    executor = FakeExecutor()
    bus = EventBus()
    sessions = SessionStore(tmp_path / "sessions")
    pipeline = Pipeline(
        router=FixedRouter(tasks or []),
        apps=fake_apps,
        run_steps=executor,
        contexts=ContextBuilder(lambda app_id: ["file_read", "shell_exec"]),
        sessions=sessions,
        events=bus,
        limits=PipelineLimits(max_step_rounds=max_rounds),
    )
    return pipeline, fake_apps, executor, bus, sessions


STEP = {"step_id": 1, "tool": "http_request", "args": {"url": "https://api.example.com"}}


DROP_STEP = {
    "step_id": 1,
    "tool": "db_query",
    "args": {"dsn": "d.db", "sql": "DROP TABLE t"},
}


def asking_pipeline(
    tmp_path: Path,
) -> tuple[Pipeline, FakeApps, FakeExecutor, EventBus, SessionStore]:
    """A pipeline whose risky steps pause for the user's answer, routing to an app
    `db` that asks to drop a table (`DROP_STEP`), then answers "Not dropped"."""
    replies = iter(
        [
            {"status": "ok", "view_type": "loading", "data": {}, "steps": [DROP_STEP]},
            text_reply("refused", message="Not dropped"),
        ]
    )
    made = make_pipeline(
        tmp_path, {"db": lambda b: next(replies)}, [PlannedTask("t1", "db", "drop t")]
    )
    pipeline, _, _, bus, _ = made
    settings = Settings()
    pipeline._permissions = PermissionPolicy(
        tmp_path / "permissions.json", lambda: settings
    )
    pipeline._confirmations = ConfirmationGate(tmp_path / "confirmations", bus)
    return made
