"""Pure logic: workspace confinement (SECURITY.md P1–P3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aios_sdk.errors import PathOutsideWorkdir
from executor.paths import display_path, resolve_in_workdir


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
