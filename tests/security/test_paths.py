"""SECURITY.md P1–P5: the file tools and `save_to` through a real executor process.

app1's workdir is `<root>/x/app1`; beside it lie `<root>/x/app1_evil` (P2) and
app2's workdir. Every refused call is followed by a look at the disk: nothing
outside the workdir was created or changed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.procs import stop
from tests.security.conftest import RunningExecutor, start_test_executor

pytestmark = pytest.mark.process

CONFIG = {
    "tool_timeout": {"http_request": 5, "shell_exec": 5, "file_read": 5},
    "tool_sandbox": {"http_allow_private_hosts": ["127.0.0.2"]},
    "limits": {"file_list_max": 300},
}


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningExecutor]:
    running = start_test_executor(tmp_path_factory.mktemp("paths"), CONFIG)
    yield running
    stop(running.proc)


def outside_tree(executor: RunningExecutor) -> dict[str, bytes]:
    """Every file outside app1's workdir under the test root (to prove nothing changed)."""
    found = {}
    for path in executor.root.rglob("*"):
        if (
            path.is_file()
            and executor.workdir not in path.parents
            and "executor" not in path.parts
        ):
            found[str(path)] = path.read_bytes()
    return found


def refused(result: dict, *codes: str) -> bool:
    return result["status"] == "error" and result["code"] in (
        codes or ("path_outside_workdir",)
    )


# ---------------------------------------------------------------------- P1


@pytest.mark.parametrize(
    "path",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "a/../../x",
        "workspace/../../x",
        "../app2/secret.txt",
        "a\x00b",
        "/proc/self/environ",
        "x/" + "../" * 8 + "etc/passwd",
    ],
)
def test_p1_escapes_and_nul_get_a_clear_error_and_touch_nothing(
    executor: RunningExecutor, path: str
) -> None:
    before = outside_tree(executor)
    read = executor.call("file_read", path=path)
    wrote = executor.call("file_write", path=path, content="pwned")
    listed = executor.call("file_list", path=path)
    for result in (read, wrote, listed):
        assert refused(result, "path_outside_workdir", "file_not_found", "invalid_args"), (
            result
        )
        assert result["error"]  # a readable reason
    assert refused(wrote), wrote  # a write outside is refused as such, never attempted
    assert "root:" not in str(read) and "app2 secret" not in str(read)
    assert outside_tree(executor) == before
    assert not (executor.root / "x").joinpath("x").exists()


# ---------------------------------------------------------------------- P2


def test_p2_a_sibling_folder_sharing_the_prefix_is_outside(
    executor: RunningExecutor,
) -> None:
    evil = executor.workdir.parent / "app1_evil"
    evil.mkdir(exist_ok=True)
    (evil / "f").write_text("evil original")
    for path in (str(evil / "f"), "../app1_evil/f", f"{executor.workdir}_evil/f"):
        assert refused(executor.call("file_read", path=path))
        assert refused(executor.call("file_write", path=path, content="pwned"))
    assert (evil / "f").read_text() == "evil original"


# ---------------------------------------------------------------------- P3


def test_p3_symlinks_pointing_outside_are_refused_for_read_write_and_list(
    executor: RunningExecutor,
) -> None:
    secret = executor.other_workdir / "secret.txt"
    links = {
        "to_secret": secret,
        "to_etc": Path("/etc"),
        "to_other": executor.other_workdir,
        "to_passwd": Path("/etc/passwd"),
    }
    for name, target in links.items():
        link = executor.workdir / name
        if not link.is_symlink():
            os.symlink(target, link)
    before = outside_tree(executor)
    for path in ("to_secret", "to_passwd", "to_other/secret.txt", "to_etc/hostname"):
        assert refused(executor.call("file_read", path=path)), path
        assert refused(executor.call("file_write", path=path, content="pwned")), path
    for path in ("to_etc", "to_other"):
        assert refused(executor.call("file_list", path=path)), path
    assert outside_tree(executor) == before
    assert secret.read_text() == "app2 secret"


# ---------------------------------------------------------------------- P4


@pytest.mark.parametrize(
    "save_to", ["../x.bin", "../../x.bin", "/tmp/aios-p4.bin", "a/../../x.bin"]
)
def test_p4_save_to_outside_is_refused(
    executor: RunningExecutor, fake: str, save_to: str
) -> None:
    before = outside_tree(executor)
    result = executor.call("http_request", url=f"{fake}/ok", save_to=save_to)
    assert refused(result), result
    assert outside_tree(executor) == before
    assert not Path("/tmp/aios-p4.bin").exists()


@pytest.mark.parametrize(
    "name", ["..%2F..%2Fevil.txt", "%2E%2E%2F%2E%2E%2Fevil.txt", "..", "...", ".%2E"]
)
def test_p4_a_server_sent_file_name_stays_inside(
    executor: RunningExecutor, fake: str, name: str
) -> None:
    (executor.workdir / "downloads").mkdir(exist_ok=True)
    before = outside_tree(executor)
    result = executor.call("http_request", url=f"{fake}/dl/{name}", save_to="downloads")
    if result["status"] == "ok":
        saved = result["result"]["path"]
        assert saved.startswith("workspace/downloads/"), saved
        real = Path(os.path.realpath(executor.workdir / saved.removeprefix("workspace/")))
        assert executor.workdir in real.parents
    else:
        assert result["code"] in ("path_outside_workdir", "invalid_args"), result
    assert outside_tree(executor) == before
    assert not (executor.root / "evil.txt").exists()
    assert not (executor.workdir.parent / "evil.txt").exists()


# ---------------------------------------------------------------------- P5


def test_p5_file_list_of_a_huge_tree_is_bounded(executor: RunningExecutor) -> None:
    tree = executor.workdir / "huge"
    for d in range(30):
        folder = tree / f"d{d:02}"
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(40):
            (folder / f"f{f:02}.txt").touch()
    flat = executor.call("file_list", path="huge/d00")
    assert flat["status"] == "ok" and len(flat["result"]["files"]) == 40
    deep = executor.call("file_list", path="huge", recursive=True)
    assert deep["status"] == "ok", deep
    assert deep["result"]["truncated"] is True
    assert len(deep["result"]["files"]) <= 300


def test_p5_a_symlink_loop_gives_a_bounded_answer(executor: RunningExecutor) -> None:
    loop = executor.workdir / "loop"
    loop.mkdir(exist_ok=True)
    for name, target in (("self", "."), ("up", ".."), ("a", "b"), ("b", "a")):
        if not (loop / name).is_symlink():
            os.symlink(target, loop / name)
    result = executor.call("file_list", path="loop", recursive=True)
    assert result["status"] == "ok", result
    assert len(result["result"]["files"]) <= 300
    read = executor.call("file_read", path="loop/a")
    assert read["status"] == "error"  # a→b→a never resolves to a file
