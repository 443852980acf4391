"""What the desktop's About box shows: `GET /api/version` → `{"name", "version"}`.

The version is the installed distribution's (`pyproject.toml`), or "unknown" when
the project runs from a checkout that was never installed.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from flask import Blueprint, Response, jsonify

__all__ = ["about_blueprint", "installed_version"]

DISTRIBUTION = "triton-aios"


def installed_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


def about_blueprint() -> Blueprint:
    routes = Blueprint("about", __name__)

    @routes.get("/api/version")
    def about() -> Response:
        return jsonify({"name": "Triton AIOS", "version": installed_version()})

    return routes
