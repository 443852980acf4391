"""The desktop's layout kept for its user in the state folder, through its routes.

`PUT /api/layout` keeps a whole layout in `<state_dir>/users/default/layout.json`
and `GET` answers it, to any page (a new browser's too); nothing is kept before a
first change (an empty layout); a body that is no layout is refused and changes
nothing; a damaged file is set aside and named, and the desktop starts from its own
look.
"""

from __future__ import annotations

import json
from pathlib import Path

from flask.testing import FlaskClient

from aios_runtime.files import state_problems
from controller.api.layout import layout_blueprint
from controller.layout_store import LayoutStore
from tests.controller.test_api import H, build

LAYOUT = {
    "changed": [
        ["desktop", {"change_color": "blue"}],
        ["btn_play_2", {"move": {"x": 20, "y": 20}}],
    ],
    "history": [
        {
            "before": [],
            "steps": [{"op": "change_color", "id": "desktop", "label": "桌面背景"}],
        },
        {
            "before": [["desktop", [["change_color", "blue"]]]],
            "steps": [{"op": "move", "id": "btn_play_2", "label": "播放"}],
        },
    ],
}


def client(tmp_path: Path) -> tuple[FlaskClient, LayoutStore]:
    store = LayoutStore(tmp_path / "state")
    app = build(tmp_path, blueprints=[layout_blueprint(store)])[0]
    return app.test_client(), store


def test_a_layout_put_is_kept_in_the_users_state_folder_and_read_back(
    tmp_path: Path,
) -> None:
    api, store = client(tmp_path)
    assert api.get("/api/layout", headers=H).get_json() == {"changed": [], "history": []}
    assert not store.path.exists()  # nothing written before a first change
    assert api.put("/api/layout", json=LAYOUT, headers=H).get_json() == {"status": "ok"}
    assert store.path == tmp_path / "state" / "users" / "default" / "layout.json"
    assert json.loads(store.path.read_text("utf-8")) == LAYOUT
    assert api.get("/api/layout", headers=H).get_json() == LAYOUT
    # another page of the same user (a new browser) reads the same
    assert client(tmp_path)[0].get("/api/layout", headers=H).get_json() == LAYOUT
    assert api.get("/api/layout").status_code == 403  # the token, as everywhere


def test_what_is_no_layout_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    api, store = client(tmp_path)
    api.put("/api/layout", json=LAYOUT, headers=H)
    for body in (
        {"changed": "blue"},
        {"history": [{"before": [], "steps": []}]},  # a step that changed nothing
        {"history": [LAYOUT["history"][0]] * 101},  # more than undo keeps
    ):
        refused = api.put("/api/layout", json=body, headers=H)
        assert refused.status_code == 400, body
        assert refused.get_json()["error"]["code"] == "invalid_request"
    assert json.loads(store.path.read_text("utf-8")) == LAYOUT


def test_a_damaged_layout_is_set_aside_and_the_desktop_starts_from_its_own_look(
    tmp_path: Path,
) -> None:
    store = LayoutStore(tmp_path / "state")
    store.path.parent.mkdir(parents=True)
    store.path.write_text('{"changed": [["desktop", {"change_co', "utf-8")
    api = client(tmp_path)[0]
    assert api.get("/api/layout", headers=H).get_json() == {"changed": [], "history": []}
    assert not store.path.exists()
    assert len(list(store.path.parent.glob("layout.json.corrupt-*"))) == 1
    assert [p for p in state_problems(tmp_path) if "a desktop layout" in p]
