"""The permission review judges a user's steps in that user's sandbox: a file is
"the app's own" (overwritten without asking) only for the user it was made for."""

from __future__ import annotations

from pathlib import Path

from aios_runtime.settings import Settings
from controller.permissions.policy import PermissionPolicy


def _write(step_id: int, path: str) -> dict:
    return {
        "step_id": step_id,
        "tool": "file_write",
        "args": {"path": path, "content": "x"},
    }


def test_own_files_are_per_user(tmp_path: Path) -> None:
    settings = Settings()
    policy = PermissionPolicy(
        tmp_path / "permissions.json", lambda: settings, lambda a: None
    )
    owner_dir, alice_dir = tmp_path / "owner", tmp_path / "alice"
    owner_dir.mkdir()
    alice_dir.mkdir()
    # alice's app makes b.txt in her sandbox: hers to overwrite from now on
    made = policy.review("code_app", alice_dir, [_write(1, "b.txt")], user="alice")
    assert made.new_files == {1: "b.txt"} and not made.risky
    (alice_dir / "b.txt").write_text("x")
    policy.record_created(
        "code_app", made.new_files, {"step_1": {"status": "ok"}}, user="alice"
    )
    again = policy.review("code_app", alice_dir, [_write(1, "b.txt")], user="alice")
    assert not again.risky
    # the owner's b.txt, which the app never made, still asks before it is overwritten
    (owner_dir / "b.txt").write_text("the owner's")
    owners = policy.review("code_app", owner_dir, [_write(1, "b.txt")])
    assert [r.kind for r in owners.risky] == ["file_overwrite"]
    # and bob's too
    bob_dir = tmp_path / "bob"
    bob_dir.mkdir()
    (bob_dir / "b.txt").write_text("bob's")
    bobs = policy.review("code_app", bob_dir, [_write(1, "b.txt")], user="bob")
    assert [r.kind for r in bobs.risky] == ["file_overwrite"]
