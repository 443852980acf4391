"""An upgrade from the layout before the users' sandboxes: a real launch on a state
folder with `workspaces/<app_id>/` and `skills/` at its top keeps every file, moved
into the owner's sandbox, and the apps and skills find them there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.controller.system import build_apps_dir, launch

pytestmark = pytest.mark.slow


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_an_older_state_folder_keeps_every_file(tmp_path: Path) -> None:
    apps = build_apps_dir(tmp_path / "apps")
    state = tmp_path / "state"
    old = state / "workspaces"
    (old / "hello_app" / "notes").mkdir(parents=True)
    (old / "hello_app" / "greeting.txt").write_text("我的问候\n", encoding="utf-8")
    (old / "hello_app" / "notes" / "a.md").write_text("# kept\n", encoding="utf-8")
    (old / "echo_app").mkdir()
    (old / "echo_app" / "data.bin").write_bytes(bytes(range(256)))
    skills = state / "skills"
    skills.mkdir()
    (skills / "my_note.md").write_text("---\nname: my_note\n---\nsteps\n")
    workspaces_before, skills_before = _tree(old), _tree(skills)
    system = launch(tmp_path, apps, state_dir=state)
    try:
        owner = state / "users" / "default"
        assert not old.exists() and not skills.exists()
        assert _tree(owner / "workspaces") == workspaces_before
        moved = _tree(owner / "skills")
        assert {k: v for k, v in moved.items() if k in skills_before} == skills_before
        # the app's workspace is the moved one: its file is served from there
        served = system.get("/api/apps/hello_app/files/notes/a.md")
        assert served.status_code == 200 and served.text == "# kept\n"
        # the user's greeting was not overwritten by the shipped one
        assert (owner / "workspaces/hello_app/greeting.txt").read_text("utf-8") == (
            "我的问候\n"
        )
    finally:
        system.stop()
