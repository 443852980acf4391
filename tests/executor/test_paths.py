"""Pure logic: workspace confinement (SECURITY.md P1–P3), and the callers of its one
containment check (app discovery, the permission policy) refusing what it refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aios_protocol.errors import PathOutsideWorkdir
from aios_runtime.workdir import display_path, is_inside, resolve_in_workdir
from controller.apps.discovery import load_app
from controller.permissions.policy import _in_workdir


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    root = tmp_path / "x" / "app1"
    (root / "sub").mkdir(parents=True)
    return root.resolve()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("a.txt", "a.txt"),
        ("./a.txt", "a.txt"),
        ("workspace/a.txt", "a.txt"),
        ("workspace/sub/b.txt", "sub/b.txt"),
        ("sub/../a.txt", "a.txt"),
        ("workspace", ""),
        ("", ""),
    ],
)
def test_relative_and_workspace_aliases_resolve_inside(
    workdir: Path, given: str, expected: str
) -> None:
    assert resolve_in_workdir(workdir, given) == (
        workdir / expected if expected else workdir
    )


def test_absolute_path_inside_is_accepted(workdir: Path) -> None:
    assert resolve_in_workdir(workdir, str(workdir / "sub" / "c")) == workdir / "sub" / "c"


@pytest.mark.parametrize(
    "given",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "a/../../x",
        "sub/../../app1_evil/f",
        "..",
        "bad\x00name",
    ],
)
def test_p1_escapes_and_nul_are_refused(workdir: Path, given: str) -> None:
    """P1: `..` escapes, absolute outside paths and NUL bytes are refused."""
    with pytest.raises(PathOutsideWorkdir) as caught:
        resolve_in_workdir(workdir, given)
    assert caught.value.code == "path_outside_workdir"


def test_p2_sibling_with_common_prefix_is_outside(workdir: Path) -> None:
    """P2: workdir /x/app1 — /x/app1_evil/f is refused (components, not string prefix)."""
    evil = workdir.parent / "app1_evil"
    evil.mkdir()
    with pytest.raises(PathOutsideWorkdir):
        resolve_in_workdir(workdir, str(evil / "f"))


def test_p3_symlink_pointing_outside_is_refused(workdir: Path, tmp_path: Path) -> None:
    """P3: a symlink inside the workspace pointing outside cannot be used."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    os.symlink(outside / "secret", workdir / "link")
    os.symlink(outside, workdir / "dirlink")
    for given in ("link", "dirlink/secret", "dirlink/new-file"):
        with pytest.raises(PathOutsideWorkdir):
            resolve_in_workdir(workdir, given)


def test_symlink_inside_pointing_inside_is_fine(workdir: Path) -> None:
    (workdir / "sub" / "real").write_text("r")
    os.symlink(workdir / "sub" / "real", workdir / "alias")
    assert resolve_in_workdir(workdir, "alias") == workdir / "sub" / "real"


def test_non_string_path_is_a_protocol_error(workdir: Path) -> None:
    with pytest.raises(Exception) as caught:
        resolve_in_workdir(workdir, 5)
    assert getattr(caught.value, "code", "") == "invalid_request"


def test_display_path(workdir: Path) -> None:
    assert display_path(workdir, workdir) == "workspace"
    assert display_path(workdir / "sub" / "b.txt", workdir) == "workspace/sub/b.txt"


def test_resolving_from_the_workdir_agrees_with_realpath(
    workdir: Path, tmp_path: Path
) -> None:
    """Paths are resolved from the workdir down, falling back to a whole
    `realpath` on a symlink or a `..` above the workdir: the answers are those of
    `realpath` of the whole path, for files that exist and files that do not."""
    (workdir / "sub" / "f.txt").write_text("f")
    (workdir / "file.txt").write_text("t")
    os.symlink("sub", workdir / "rel_link")  # relative symlink to a folder inside
    os.symlink(workdir / "sub" / "f.txt", workdir / "sub" / "abs_link")
    os.symlink("loop", workdir / "loop")
    cases = [
        "sub/f.txt",
        "sub//f.txt",
        "sub/./f.txt",
        "missing/../sub/f.txt",
        "missing/deeper/../x",
        "file.txt/../sub",
        "rel_link/f.txt",
        "rel_link/../file.txt",
        "sub/abs_link",
        "sub/../../app1/sub/f.txt",
        f"{workdir}/sub/../file.txt",
        f"{workdir}/../app1/file.txt",
        f"{workdir}/",
        "loop",
    ]
    for given in cases:
        expected = Path(os.path.realpath(os.path.join(workdir, given)))
        assert resolve_in_workdir(workdir, given) == expected, given


def test_p3_symlink_deeper_below_the_workdir_is_followed_and_checked(
    workdir: Path, tmp_path: Path
) -> None:
    """P3: a symlink several folders down, relative or absolute, is still followed."""
    deep = workdir / "a" / "b"
    deep.mkdir(parents=True)
    os.symlink("../../../..", deep / "up")  # climbs out of the workdir
    os.symlink(tmp_path, deep / "abs")
    for given in ("a/b/up/passwd", "a/b/abs", "a/b/abs/new-file", "a/./b/up"):
        with pytest.raises(PathOutsideWorkdir):
            resolve_in_workdir(workdir, given)
    # links that lead back inside are fine
    os.symlink("..", deep / "parent")
    assert resolve_in_workdir(workdir, "a/b/parent/b") == deep
    assert resolve_in_workdir(workdir, "a/b/abs/x/app1/sub") == workdir / "sub"


def test_is_inside_compares_components_not_prefixes(tmp_path: Path) -> None:
    root = tmp_path / "app1"
    assert is_inside(root, root) and is_inside(root / "a" / "b", root)
    assert not is_inside(tmp_path / "app1_evil" / "f", root)
    assert not is_inside(tmp_path, root)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("entry", "../app1_evil/main.py"),
        ("workdir", "../app1_evil"),
        ("entry", "link/main.py"),
        ("workdir", "/tmp"),
    ],
)
def test_discovery_keeps_entry_and_workdir_inside_the_app_folder(
    tmp_path: Path, field: str, value: str
) -> None:
    folder = tmp_path / "app1"
    evil = tmp_path / "app1_evil"
    for place in (folder, evil):
        place.mkdir()
        (place / "main.py").write_text("print('hi')\n")
    (folder / "link").symlink_to(evil)
    manifest = {"name": "A", "entry": "main.py", "role_prompt": "r", field: value}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    spec = load_app(folder)
    assert spec.error == f"manifest.json: {field}: {value!r} is outside the app folder"


def test_the_permission_policy_reads_paths_as_the_executor_does(workdir: Path) -> None:
    (workdir / "a.txt").write_text("a")
    assert _in_workdir(workdir, "workspace/a.txt") == (workdir / "a.txt", "a.txt")
    assert _in_workdir(workdir, str(workdir / "sub" / "new.txt")) == (
        workdir / "sub" / "new.txt",
        "sub/new.txt",
    )
    evil = workdir.parent / "app1_evil"
    evil.mkdir()
    (workdir / "out").symlink_to(evil)
    for given in (
        "../app1_evil/x",
        str(evil / "x"),
        "out/x",
        "workspace//etc/passwd",
        "a\x00b",
        "workspace",
        "",
    ):
        assert _in_workdir(workdir, given) is None, given
        if given not in ("workspace", ""):
            with pytest.raises(PathOutsideWorkdir):
                resolve_in_workdir(workdir, given)
