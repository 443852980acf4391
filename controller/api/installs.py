"""Installing and removing apps over the controller's API (the desktop, `aios install`).

    POST /api/apps/install              {"path": "/some/folder-or.zip"}, or the bytes
                                        of a .zip (Content-Type application/zip,
                                        `?name=my_app.zip`)
    POST /api/apps/<app_id>/uninstall   {"keep_workspace": true}

Both answer once the running system knows: an install answers the new app's row
(`AppInfo`, idle until first use) after the watcher registered it; a refused one is
a 400 `install_refused` (409 `app_exists`) naming what was wrong, with nothing
written outside the apps folder's staging area. An uninstall stops the app, takes
it off the desktop and answers where its workspace was moved aside (or that it was
deleted). The work itself is `controller.apps.installer`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from flask import Blueprint, Response, jsonify, request
from pydantic import BaseModel, ConfigDict

from aios_protocol.errors import InvalidRequest, NotFound
from aios_protocol.messages import AppInfo
from aios_runtime.edge import read_json
from controller.apps.installer import install_app, uninstall_app

__all__ = ["AppInstalls", "installs_blueprint"]

_ZIP_TYPES = {"application/zip", "application/x-zip-compressed", "application/octet-stream"}


class _InstallBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str


class _UninstallBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    keep_workspace: bool = True


@dataclass
class AppInstalls:
    """What the routes need of the running system."""

    apps_dir: Path
    workspaces: Path | None
    rescan: Callable[[Iterable[str]], dict[str, str]]
    app_infos: Callable[[], Sequence[AppInfo]]


def installs_blueprint(installs: AppInstalls) -> Blueprint:
    routes = Blueprint("installs", __name__)

    def row(app_id: str) -> dict:
        for info in installs.app_infos():
            if info.id == app_id:
                return info.dump()
        raise NotFound(f"app {app_id!r} was installed but is not listed")

    @routes.post("/api/apps/install")
    def install() -> Response:
        mimetype = request.mimetype or ""
        if mimetype in _ZIP_TYPES:
            data = request.get_data(cache=False)
            if not data:
                raise InvalidRequest("an empty body: send the bytes of a .zip file")
            name = request.args.get("name") or "app.zip"
            spec = install_app(data, installs.apps_dir, name=Path(name).name)
        else:
            body = read_json(_InstallBody)
            spec = install_app(Path(body.path), installs.apps_dir)
        done = installs.rescan([spec.app_id]).get(spec.app_id, "added")
        return jsonify({"installed": spec.app_id, "done": done, "app": row(spec.app_id)})

    @routes.post("/api/apps/<app_id>/uninstall")
    def uninstall(app_id: str) -> Response:
        body = (
            read_json(_UninstallBody) if request.get_data(cache=True) else _UninstallBody()
        )
        aside = uninstall_app(
            installs.apps_dir,
            app_id,
            installs.workspaces,
            keep_workspace=body.keep_workspace,
        )
        installs.rescan([app_id])
        return jsonify(
            {
                "removed": app_id,
                "workspace": str(aside) if aside else None,
                "workspace_deleted": not body.keep_workspace,
            }
        )

    return routes
