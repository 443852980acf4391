"""file_read / file_write / file_list through the service (SECURITY.md P1–P3, P5)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from executor.tools.files import _read_capped
from tests.executor.conftest import Harness


def test_write_read_roundtrip_and_design_result_shape(harness: Harness) -> None:
    written = harness.call("file_write", path="workspace/recent.json", content='{"a": 1}')
    assert written["status"] == "ok"
    assert written["result"] == {"path": "workspace/recent.json", "size": 8}
    assert harness.call("file_read", path="recent.json")["result"] == '{"a": 1}'
    assert harness.call("file_read", path="workspace/recent.json")["result"] == '{"a": 1}'


def test_write_serializes_json_values_and_creates_folders(harness: Harness) -> None:
    result = harness.call(
        "file_write", path="deep/er/data.json", content={"歌": ["七里香"]}
    )
    assert result["result"]["path"] == "workspace/deep/er/data.json"
    assert '"七里香"' in (harness.workdir / "deep/er/data.json").read_text(encoding="utf-8")


def test_append_mode_and_overwrite_is_atomic(harness: Harness) -> None:
    harness.call("file_write", path="log.txt", content="a\n")
    result = harness.call("file_write", path="log.txt", content="b\n", mode="append")
    assert result["result"]["size"] == 4
    assert (harness.workdir / "log.txt").read_text() == "a\nb\n"
    harness.call("file_write", path="log.txt", content="new")
    assert (harness.workdir / "log.txt").read_text() == "new"
    assert [p.name for p in harness.workdir.iterdir() if p.name.endswith(".tmp")] == []


def test_base64_roundtrip_for_binary(harness: Harness) -> None:
    blob = bytes(range(256))
    harness.call(
        "file_write",
        path="b.bin",
        content=base64.b64encode(blob).decode(),
        encoding="base64",
    )
    assert (harness.workdir / "b.bin").read_bytes() == blob
    got = harness.call("file_read", path="b.bin", encoding="base64")["result"]
    assert base64.b64decode(got) == blob
    assert (
        harness.call("file_write", path="c.bin", content="@@@", encoding="base64")["code"]
        == "invalid_args"
    )


def test_read_failures(harness: Harness) -> None:
    assert harness.call("file_read", path="missing.txt")["code"] == "file_not_found"
    (harness.workdir / "dir").mkdir()
    assert harness.call("file_read", path="dir")["code"] == "not_a_file"
    os.mkfifo(harness.workdir / "fifo")
    assert harness.call("file_read", path="fifo")["code"] == "not_a_file"  # never blocks
    assert harness.call("file_write", path="dir", content="x")["code"] == "is_a_directory"


def test_size_caps(make_harness) -> None:
    harness = make_harness({"limits": {"file_size_bytes": 10, "response_bytes": 5}})
    assert (
        harness.call("file_write", path="a.txt", content="x" * 11)["code"]
        == "file_too_large"
    )
    assert not (harness.workdir / "a.txt").exists()
    (harness.workdir / "big.txt").write_text("123456")
    assert harness.call("file_read", path="big.txt")["code"] == "file_too_large"


@pytest.mark.parametrize(
    ("stat_size", "cap", "expected"),
    [(10, 100, 10), (3, 100, 10), (3, 8, 8), (0, 100, 10), (10, 10, 10), (10, 4, 4)],
)
def test_file_read_reads_past_a_stale_size_up_to_the_cap(
    tmp_path: Path, stat_size: int, cap: int, expected: int
) -> None:
    """The first read is sized from stat; a file that grew since is read on, never past the cap."""
    path = tmp_path / "growing.txt"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert _read_capped(fd, stat_size, cap) == b"0123456789"[:expected]
    finally:
        os.close(fd)


@pytest.mark.parametrize(
    "path", ["../../etc/passwd", "/etc/passwd", "a/../../x", "bad\x00name"]
)
def test_p1_outside_paths_refused_nothing_touched(harness: Harness, path: str) -> None:
    """P1: `../../etc/passwd`, `/etc/passwd`, `a/../../x`, NUL → clear error, nothing touched."""
    before = sorted(os.listdir(harness.workdir.parent))
    for tool, args in (
        ("file_read", {"path": path}),
        ("file_write", {"path": path, "content": "pwned"}),
        ("file_list", {"path": path}),
    ):
        result = harness.call(tool, **args)
        assert result["status"] == "error" and result["code"] == "path_outside_workdir", (
            result
        )
        assert "outside" in result["error"] or "NUL" in result["error"]
    assert sorted(os.listdir(harness.workdir.parent)) == before


def test_p2_sibling_folder_with_common_prefix(harness: Harness) -> None:
    """P2: workdir …/app1 — …/app1_evil/f is refused."""
    evil = harness.workdir.parent / "app1_evil"
    evil.mkdir()
    result = harness.call("file_write", path=str(evil / "f"), content="x")
    assert result["code"] == "path_outside_workdir"
    assert not (evil / "f").exists()
    assert (
        harness.call("file_read", path="../app2/secret.txt")["code"]
        == "path_outside_workdir"
    )


def test_p3_symlinks_pointing_outside_refused_for_read_and_write(harness: Harness) -> None:
    """P3: a symlink inside the workspace pointing outside — reads and writes refused."""
    target = harness.other_workdir / "secret.txt"
    os.symlink(target, harness.workdir / "link.txt")
    os.symlink(harness.other_workdir, harness.workdir / "linkdir")
    assert harness.call("file_read", path="link.txt")["code"] == "path_outside_workdir"
    assert (
        harness.call("file_write", path="link.txt", content="x")["code"]
        == "path_outside_workdir"
    )
    assert (
        harness.call("file_write", path="linkdir/new.txt", content="x")["code"]
        == "path_outside_workdir"
    )
    assert harness.call("file_list", path="linkdir")["code"] == "path_outside_workdir"
    assert target.read_text() == "app2 secret"
    assert not (harness.other_workdir / "new.txt").exists()


def test_file_list_pattern_sizes_and_dirs(harness: Harness) -> None:
    (harness.workdir / "music").mkdir()
    (harness.workdir / "music" / "a.mp3").write_bytes(b"12345")
    (harness.workdir / "b.mp3").write_bytes(b"1")
    (harness.workdir / "notes.txt").write_text("n")
    root = harness.call("file_list", path="workspace")["result"]
    assert root["path"] == "workspace"
    assert [(f["name"], f["is_dir"]) for f in root["files"]] == [
        ("b.mp3", False),
        ("music", True),
        ("notes.txt", False),
    ]
    mp3 = harness.call("file_list", pattern="*.mp3", recursive=True)["result"]["files"]
    assert [(f["name"], f["size"]) for f in mp3] == [("b.mp3", 1), ("music/a.mp3", 5)]
    sub = harness.call("file_list", path="music")["result"]
    assert sub["path"] == "workspace/music" and sub["files"][0]["name"] == "a.mp3"
    assert harness.call("file_list", path="nope")["code"] == "file_not_found"
    assert harness.call("file_list", path="notes.txt")["code"] == "not_a_directory"


def test_p5_file_list_is_bounded_and_survives_symlink_loops(make_harness) -> None:
    """P5: a huge tree or a symlink loop → bounded result."""
    harness = make_harness({"limits": {"file_list_max": 25}})
    for i in range(60):
        (harness.workdir / f"f{i:03}.txt").write_text("x")
    os.symlink(harness.workdir, harness.workdir / "loop")
    os.symlink("loop2", harness.workdir / "loop2")
    flat = harness.call("file_list")["result"]
    assert len(flat["files"]) == 25 and flat["truncated"] is True
    deep = harness.call("file_list", recursive=True)["result"]
    assert len(deep["files"]) <= 25 and deep["truncated"] is True
    links = harness.call("file_list", pattern="loop*")["result"]["files"]
    assert {f["name"] for f in links} == {"loop", "loop2"}
    assert all(f.get("is_link") for f in links)
