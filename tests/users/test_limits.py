"""Each user's limits: the disk quota of their sandbox and the instructions they run
at once (SECURITY.md U4): a clear refusal, nothing of theirs lost, others unaffected."""

from __future__ import annotations

from pathlib import Path

import pytest

from aios_protocol.errors import UserLimitReached
from aios_runtime.settings import Settings
from openai_entry.limits import UserLimits, folder_bytes


def _limits(tmp_path: Path, **users: int) -> UserLimits:
    settings = Settings.model_validate({"users": users})
    return UserLimits(lambda: settings, tmp_path)


def test_a_user_runs_at_most_max_running_instructions_at_once(tmp_path: Path) -> None:
    limits = _limits(tmp_path, max_running=2)
    first, second = limits.take("alice"), limits.take("alice")
    with pytest.raises(UserLimitReached) as refused:
        limits.take("alice")
    assert refused.value.http_status == 429
    assert refused.value.detail["limit"] == "max_running"
    bobs = limits.take("bob")  # another user is not held
    first.release()
    first.release()  # once only
    third = limits.take("alice")
    with pytest.raises(UserLimitReached):
        limits.take("alice")
    for slot in (second, third, bobs):
        slot.release()
    limits.take("alice")


def test_a_user_over_their_disk_quota_is_refused_and_keeps_every_file(
    tmp_path: Path,
) -> None:
    limits = _limits(tmp_path, disk_quota_mb=1)
    sandbox = tmp_path / "users" / "alice" / "workspaces" / "code_app"
    sandbox.mkdir(parents=True)
    big = sandbox / "big.bin"
    big.write_bytes(b"\0" * (1024 * 1024 + 1))
    with pytest.raises(UserLimitReached) as refused:
        limits.take("alice")
    assert refused.value.detail["limit"] == "disk_quota_mb"
    assert big.stat().st_size == 1024 * 1024 + 1  # nothing deleted
    limits.take("bob").release()  # another user is not held
    big.unlink()
    limits.take("alice").release()


def test_the_size_of_a_sandbox_does_not_follow_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"x" * 5000)
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_bytes(b"x" * 10)
    (root / "link").symlink_to(outside)
    (root / "loop").symlink_to(root)
    assert folder_bytes(root) == 10
