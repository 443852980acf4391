"""The controller's HTTP API for the desktop and the CLI (docs/ARCHITECTURE.md).

`create_app(services)` builds it: one Flask app from `aios_runtime.edge.create_service`
(loopback Host, same-site Origin, `X-AIOS-Token` or `?token=` on GET, strict JSON).
Its error bodies carry the sentence the user reads (`user_message`) in the language
the request asks for (`Accept-Language`: the desktop sends its own), else the
settings' `ui_language`, else Chinese.
Routes are thin: the pipeline, the supervisor, the event bus and the settings store
do the work. The desktop page and its static files are public (the page reads the
token from its own `?token=`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from flask import (
    Blueprint,
    Flask,
    Response,
    jsonify,
    request,
    send_file,
    stream_with_context,
)
from pydantic import BaseModel, ConfigDict

from aios_protocol.errors import NotFound, PathOutsideWorkdir
from aios_protocol.messages import (
    ActionPost,
    AppInfo,
    ConfirmationDecision,
    InstructionRequest,
    OpenRequest,
    UISnapshot,
)
from aios_protocol.strings import LANGUAGES
from aios_runtime import shipped
from aios_runtime.edge import (
    Authenticator,
    create_service,
    public,
    read_json,
    token_matches,
)
from aios_runtime.users import OWNER
from aios_runtime.workdir import is_inside
from controller.apps.discovery import AppSpec
from controller.events import EventBus, sse_stream
from controller.permissions.confirmations import ConfirmationGate
from controller.pipeline.admission import Admission
from controller.pipeline.context import language_of
from controller.pipeline.run import Pipeline
from controller.settings_store import SettingsStore

__all__ = ["ApiServices", "create_app"]

DESKTOP_DIR = shipped.DESKTOP_WEB


class _JsonObject(BaseModel):
    """Any JSON object (the settings PUT body, validated by `Settings` afterwards)."""

    model_config = ConfigDict(extra="allow")


class AppsView(Protocol):
    def app_infos(self) -> Sequence[AppInfo]: ...

    def spec(self, app_id: str) -> AppSpec: ...


@dataclass
class ApiServices:
    token: str
    pipeline: Pipeline
    apps: AppsView
    events: EventBus
    settings: SettingsStore
    store_ui_snapshot: Callable[[dict[str, Any]], None]
    desktop_dir: Path = DESKTOP_DIR
    sse_keepalive: float = 15.0
    # None: exactly `token`; a wrapper may also accept app tokens on some routes
    authenticate: Authenticator | None = None
    blueprints: Sequence[Blueprint] = ()
    executor_status: Callable[[], str] = lambda: "running"
    llm_status: Callable[[], str] = lambda: "not_configured"
    # bounded concurrency: overflow is a 503 `overloaded`
    admission: Admission = field(default_factory=Admission)
    # pending confirmations of risky steps (None: nothing ever pauses)
    confirmations: ConfirmationGate | None = None
    # the notes of this launch's state files found unreadable and set aside
    state_problems: Callable[[], list[str]] = list


def _missing_desktop(desktop_dir: Path) -> Response:
    body = (
        "<!doctype html><meta charset='utf-8'><title>Triton AIOS</title>"
        "<p>The desktop is not installed: folder "
        f"<code>{desktop_dir}</code> is missing. The API under /api/ works.</p>"
    )
    return Response(body, status=404, mimetype="text/html")


def _workspace_file(spec: AppSpec, rel: str) -> Path:
    """`rel` inside the app's workspace, symlinks resolved; refused when outside."""
    if spec.workdir is None:
        raise NotFound(f"app {spec.app_id} has no workspace")
    if "\x00" in rel:
        raise PathOutsideWorkdir("path contains a NUL byte")
    workdir = spec.workdir.resolve()
    target = (workdir / rel).resolve()
    if not is_inside(target, workdir):
        raise PathOutsideWorkdir(f"{rel!r} is outside the workspace of {spec.app_id}")
    if not target.is_file():
        raise NotFound(f"no file {rel!r} in the workspace of {spec.app_id}")
    return target


def _reader_language(settings: SettingsStore) -> Callable[[], str]:
    """The language of the person behind the current request: the one its
    `Accept-Language` names among ours, else the settings' `ui_language`, else Chinese."""

    def language() -> str:
        asked = request.accept_languages.best_match(LANGUAGES)
        return language_of(None, asked or settings.get().ui_language)

    return language


def create_app(services: ApiServices) -> Flask:
    """The controller's API, the desktop page and its files, and the blueprints."""
    app = create_service(
        "aios-controller",
        services.authenticate or token_matches(services.token),
        token_in_query=True,
        language=_reader_language(services.settings),
    )
    for blueprint in services.blueprints:
        app.register_blueprint(blueprint)
    desktop_dir = Path(services.desktop_dir)

    _add_desktop_routes(app, desktop_dir)

    # ---------------------------------------------------------------- api

    @app.post("/api/instruction")
    def instruction() -> Response:
        body = read_json(InstructionRequest)
        with services.admission.instruction():
            return jsonify(services.pipeline.instruction(body).dump())

    @app.post("/api/apps/<app_id>/open")
    def open_app(app_id: str) -> Response:
        body = read_json(OpenRequest) if request.get_data(cache=True) else OpenRequest()
        with services.admission.app(app_id):
            reply, session_id = services.pipeline.open_app(
                app_id, body.session_id, body.language
            )
        return jsonify({**reply.dump(), "session_id": session_id})

    @app.post("/api/apps/<app_id>/action")
    def action(app_id: str) -> Response:
        body = read_json(ActionPost)
        with services.admission.app(app_id):
            reply, session_id = services.pipeline.action(app_id, body)
        return jsonify({**reply.dump(), "session_id": session_id})

    @app.get("/api/health")
    @public
    def health() -> Response:
        infos = services.apps.app_infos()
        return jsonify(
            {
                "status": "ok",
                "apps": len(infos),
                "running": sum(1 for i in infos if i.status == "running"),
                "executor": services.executor_status(),
                "llm": services.llm_status(),
                # state files found unreadable and set aside at this launch
                "problems": services.state_problems(),
                # old key names and unknown keys of config.json / settings.json
                "config_problems": services.settings.config_problems(),
            }
        )

    @app.get("/api/apps")
    def apps() -> Response:
        return jsonify([info.dump() for info in services.apps.app_infos()])

    _add_confirmation_routes(app, services)

    @app.get("/api/apps/<app_id>/files/<path:path>")
    def app_file(app_id: str, path: str) -> Response:
        target = _workspace_file(services.apps.spec(app_id), path)
        return send_file(target, conditional=True, max_age=0)

    @app.post("/api/ui/snapshot")
    def ui_snapshot() -> Response:
        snapshot = read_json(UISnapshot)
        services.store_ui_snapshot(snapshot.dump())
        return jsonify({"status": "ok", "elements": len(snapshot.elements)})

    _add_event_routes(app, services)

    @app.get("/api/settings")
    def get_settings() -> Response:
        return jsonify(services.settings.masked())

    @app.put("/api/settings")
    def put_settings() -> Response:
        changes = read_json(_JsonObject).model_dump()
        return jsonify(services.settings.update(changes))

    return app


def _add_desktop_routes(app: Flask, desktop_dir: Path) -> None:
    """The desktop page and its files (public: the page reads the token from its own
    `?token=`)."""

    @app.get("/")
    @public
    def index() -> Response:
        page = desktop_dir / "index.html"
        if not page.is_file():
            return _missing_desktop(desktop_dir)
        response = send_file(page, mimetype="text/html", max_age=0)
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.get("/desktop/<path:path>")
    @public
    def desktop_file(path: str) -> Response:
        if not desktop_dir.is_dir():
            return _missing_desktop(desktop_dir)
        root = desktop_dir.resolve()
        target = (root / path).resolve()
        if not is_inside(target, root) or not target.is_file():
            raise NotFound(f"no desktop file {path!r}")
        response = send_file(target, max_age=0)
        response.headers["Cache-Control"] = "no-cache"
        return response


def _add_confirmation_routes(app: Flask, services: ApiServices) -> None:
    """What waits for the owner's yes, and their answer."""

    @app.get("/api/confirmations")
    def confirmations() -> Response:
        gate = services.confirmations
        # the desktop's person is the owner: other users answer their own (/v1)
        pending = gate.pending(user=OWNER) if gate is not None else []
        return jsonify({"confirmations": [p.public() for p in pending]})

    @app.post("/api/confirmations/<confirmation_id>")
    def decide(confirmation_id: str) -> Response:
        body = read_json(ConfirmationDecision)
        if services.confirmations is None:
            raise NotFound(f"no pending confirmation {confirmation_id!r}")
        asked = services.confirmations.get(confirmation_id)
        if asked.user_id != OWNER:
            raise NotFound(f"no pending confirmation {confirmation_id!r}")
        app_id = asked.app_id
        with services.admission.app(app_id):
            reply, app_id, session_id = services.pipeline.resume(
                confirmation_id, body.decision
            )
        return jsonify({**reply.dump(), "app_id": app_id, "session_id": session_id})


def _add_event_routes(app: Flask, services: ApiServices) -> None:
    """The event stream the desktop follows (SSE, from `Last-Event-ID` or `?since=`)."""

    @app.get("/api/events")
    def events() -> Response:
        since = request.headers.get("Last-Event-ID") or request.args.get("since")
        try:
            cursor = int(since) if since is not None else services.events.last_seq
        except ValueError:
            cursor = services.events.last_seq
        limit = request.args.get("limit", type=int)
        stream = sse_stream(
            services.events, cursor, keepalive=services.sse_keepalive, limit=limit
        )
        response = Response(stream_with_context(stream), mimetype="text/event-stream")
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Accel-Buffering"] = "no"
        return response
