"""The users' sandboxes on disk: checked ids, the layout, and the upgrade from the
layout before them (SECURITY.md U2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aios_protocol.errors import InvalidRequest
from aios_runtime.users import (
    OWNER,
    Sandboxes,
    check_user_id,
    user_app_workdir,
    user_skills_dir,
)
from controller.state_dir import StateDir


@pytest.mark.parametrize(
    "good", ["default", "alice", "bob.smith", "a@b.example", "u_1-2", "x" * 64]
)
def test_plain_ids_are_users(good: str) -> None:
    assert check_user_id(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "..",
        ".",
        ".hidden",
        "a/b",
        "../x",
        "a\x00b",
        "x" * 65,
        "x" * 5000,
        "a b",
        "名字",
        "users",
        "SYSTEM",
        7,
        None,
    ],
)
def test_ids_that_could_name_a_path_or_a_reserved_name_are_refused(bad: object) -> None:
    with pytest.raises(InvalidRequest):
        check_user_id(bad)


def test_a_user_sandbox_lies_below_users(tmp_path: Path) -> None:
    assert user_app_workdir(tmp_path, "alice", "code_app") == (
        tmp_path / "users" / "alice" / "workspaces" / "code_app"
    )
    assert user_skills_dir(tmp_path, "alice") == tmp_path / "users" / "alice" / "skills"
    assert user_skills_dir(tmp_path, OWNER) == tmp_path / "users" / "default" / "skills"
    with pytest.raises(InvalidRequest):
        user_app_workdir(tmp_path, "../../etc", "code_app")


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_the_upgrade_moves_every_workspace_file_into_the_owners_sandbox(
    tmp_path: Path,
) -> None:
    old = tmp_path / "workspaces"
    (old / "code_app" / "src").mkdir(parents=True)
    (old / "code_app" / "src" / "main.py").write_text("print('hi')\n")
    (old / "code_app" / "skills").mkdir()
    (old / "code_app" / "skills" / "mine.md").write_text("# mine\n")
    (old / "music_app").mkdir()
    (old / "music_app" / "song.mp3").write_bytes(b"\x00\x01" * 100)
    (old / ".removed" / "x-1").mkdir(parents=True)
    (old / ".removed" / "x-1" / "kept.txt").write_text("kept")
    skills = tmp_path / "skills"
    (skills / ".installing").mkdir(parents=True)
    (skills / "mine").write_text("#!/bin/sh\necho mine\n")
    (skills / "notes.md").write_text("# notes\n")
    before, skills_before = _tree(old), _tree(skills)
    state = StateDir(tmp_path)
    state.create()
    assert not old.exists() and not skills.exists()
    assert _tree(state.workspaces_dir) == before
    assert _tree(state.skills_dir) == skills_before
    state.create()  # the next start: nothing more to move, nothing lost
    assert _tree(state.workspaces_dir) == before
    assert _tree(state.skills_dir) == skills_before


def test_an_upgrade_interrupted_halfway_finishes_without_overwriting(
    tmp_path: Path,
) -> None:
    state = StateDir(tmp_path)
    (state.workspaces_dir / "code_app").mkdir(parents=True)
    (state.workspaces_dir / "code_app" / "new.txt").write_text("new")
    old = tmp_path / "workspaces"
    (old / "code_app").mkdir(parents=True)
    (old / "code_app" / "old.txt").write_text("old")
    (old / "hello_app").mkdir()
    (old / "hello_app" / "greeting.txt").write_text("你好")
    left = state.migrate_layout()
    assert (state.workspaces_dir / "hello_app" / "greeting.txt").read_text() == "你好"
    assert (state.workspaces_dir / "code_app" / "new.txt").read_text() == "new"
    assert (old / "code_app" / "old.txt").read_text() == "old"  # kept, and named
    assert len(left) == 1 and "code_app" in left[0]


def test_an_apps_context_names_the_user_and_their_sandbox(tmp_path: Path) -> None:
    from controller.pipeline.context import ContextBuilder
    from controller.sessions import Session

    builder = ContextBuilder(lambda app_id: ["file_read"])
    builder.sandboxes = Sandboxes(tmp_path)
    owner_dir = tmp_path / "users" / "default" / "workspaces" / "code_app"
    mine = Session(session_id="sess_a", context={"user_id": "alice"})
    context = builder.build(app_id="code_app", role="", workdir=owner_dir, session=mine)
    assert context.user_id == "alice"
    assert "user_grant" not in context.dump()  # no proof travels in a call
    assert context.workdir == str(user_app_workdir(tmp_path, "alice", "code_app"))
    owners = Session(session_id="sess_o")
    context = builder.build(app_id="code_app", role="", workdir=owner_dir, session=owners)
    assert context.user_id is None
    assert context.workdir == str(owner_dir)
