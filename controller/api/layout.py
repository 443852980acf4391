"""The desktop's layout routes (controller/layout_store.py).

`layout_blueprint(store)` serves `GET /api/layout` → the `DesktopLayout` saved for
the desktop's user (empty when none is), and `PUT /api/layout` with a whole
`DesktopLayout` → saved in place of the old one, answering `{"status": "ok"}`.
Token-protected by the controller's guard, like every route under /api/.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from aios_protocol.messages import DesktopLayout
from aios_runtime.edge import read_json
from controller.layout_store import LayoutStore

__all__ = ["layout_blueprint"]


def layout_blueprint(store: LayoutStore) -> Blueprint:
    routes = Blueprint("layout", __name__)

    @routes.get("/api/layout")
    def get_layout() -> Response:
        return jsonify(store.get().dump())

    @routes.put("/api/layout")
    def put_layout() -> Response:
        store.put(read_json(DesktopLayout))
        return jsonify({"status": "ok"})

    return routes
