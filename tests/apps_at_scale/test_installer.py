"""The installer on real folders and zip files: what it installs, what it refuses, and
that a refused install writes nothing outside the apps folder's staging area."""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

import pytest

from aios_protocol.strings import user_message_of
from controller.apps.installer import (
    AppExists,
    InstallRefused,
    install_app,
    uninstall_app,
)
from tests.apps_at_scale.conftest import echo_copy


def _zip_of(folder: Path, top: str | None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                rel = path.relative_to(folder).as_posix()
                archive.write(path, f"{top}/{rel}" if top else rel)
    return buffer.getvalue()


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_folder_is_installed_and_validated(tmp_path: Path) -> None:
    source = echo_copy(tmp_path / "src", "notes_app", name="笔记")
    apps = tmp_path / "apps"
    spec = install_app(source, apps)
    assert spec.ok and spec.app_id == "notes_app" and spec.folder == apps / "notes_app"
    assert (apps / "notes_app" / "main.py").is_file()
    assert [p.name for p in apps.iterdir()] == ["notes_app"]  # no staging left


def test_a_zip_with_one_top_folder_or_flat_gets_its_id(tmp_path: Path) -> None:
    source = echo_copy(tmp_path / "src", "echo_x")
    apps = tmp_path / "apps"
    assert (
        install_app(_zip_of(source, "zipped_app"), apps, name="x.zip").app_id
        == "zipped_app"
    )
    flat = tmp_path / "flat_app.zip"
    flat.write_bytes(_zip_of(source, None))
    assert install_app(flat, apps).app_id == "flat_app"
    assert sorted(p.name for p in apps.iterdir()) == ["flat_app", "zipped_app"]


def test_the_same_id_twice_is_refused_and_the_installed_app_untouched(
    tmp_path: Path,
) -> None:
    apps = tmp_path / "apps"
    install_app(echo_copy(tmp_path / "one", "same_app", name="first"), apps)
    before = (apps / "same_app" / "manifest.json").read_text()
    with pytest.raises(AppExists, match="already installed"):
        install_app(echo_copy(tmp_path / "two", "same_app", name="second"), apps)
    assert (apps / "same_app" / "manifest.json").read_text() == before
    assert [p.name for p in apps.iterdir()] == ["same_app"]


def test_a_bad_manifest_is_refused_with_its_error(tmp_path: Path) -> None:
    source = echo_copy(tmp_path / "src", "bad_app")
    (source / "manifest.json").write_text('{"name": "x", "entry": "missing.py"}')
    apps = tmp_path / "apps"
    with pytest.raises(InstallRefused, match="entry: file 'missing.py' not found"):
        install_app(source, apps)
    (source / "manifest.json").write_text("{not json")
    with pytest.raises(InstallRefused, match="not valid JSON"):
        install_app(source, apps)
    assert list(apps.iterdir()) == []


@pytest.mark.parametrize(
    "name",
    ["../evil.py", "app/../../evil.py", "/tmp/evil.py", "app\\..\\evil.py", "C:/evil.py"],
)
def test_zip_paths_outside_are_refused_before_anything_is_written(
    tmp_path: Path, name: str
) -> None:
    source = echo_copy(tmp_path / "src", "z_app")
    buffer = io.BytesIO(_zip_of(source, "z_app"))
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr(name, "print('owned')\n")
    apps = tmp_path / "apps"
    outside = _listing(tmp_path)
    with pytest.raises(InstallRefused, match="zip entry"):
        install_app(buffer.getvalue(), apps, name="z.zip")
    assert list(apps.iterdir()) == []
    assert _listing(tmp_path) == sorted([*outside, "apps"])
    assert not Path("/tmp/evil.py").exists()


def test_a_zip_symlink_is_refused(tmp_path: Path) -> None:
    source = echo_copy(tmp_path / "src", "l_app")
    buffer = io.BytesIO(_zip_of(source, "l_app"))
    with zipfile.ZipFile(buffer, "a") as archive:
        link = zipfile.ZipInfo("l_app/passwd")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    apps = tmp_path / "apps"
    with pytest.raises(InstallRefused, match="symlinks"):
        install_app(buffer.getvalue(), apps, name="l.zip")
    assert list(apps.iterdir()) == []


def test_a_folder_with_a_symlink_is_refused(tmp_path: Path) -> None:
    source = echo_copy(tmp_path / "src", "s_app")
    os.symlink("/etc/passwd", source / "passwd")
    apps = tmp_path / "apps"
    with pytest.raises(InstallRefused, match="symlinks"):
        install_app(source, apps)
    assert list(apps.iterdir()) == []


def test_a_zip_bomb_is_stopped_by_the_byte_limit(tmp_path: Path) -> None:
    from controller.apps.installer import InstallLimits

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("big_app/manifest.json", '{"name": "b", "entry": "main.py"}')
        archive.writestr("big_app/blob.bin", b"\0" * (2 * 1024 * 1024))
    apps = tmp_path / "apps"
    with pytest.raises(InstallRefused, match="more than"):
        install_app(buffer.getvalue(), apps, limits=InstallLimits(max_bytes=1024 * 1024))
    assert list(apps.iterdir()) == []


def test_not_a_zip_and_no_manifest_are_refused(tmp_path: Path) -> None:
    apps = tmp_path / "apps"
    with pytest.raises(InstallRefused, match="not a valid zip"):
        install_app(b"PK\x03\x04 not really", apps, name="x.zip")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InstallRefused, match="no manifest.json"):
        install_app(empty, apps)
    with pytest.raises(InstallRefused, match="no such folder"):
        install_app(tmp_path / "nowhere", apps)


def test_uninstall_moves_the_workspace_aside_or_deletes_it(tmp_path: Path) -> None:
    apps = tmp_path / "apps"
    workspaces = tmp_path / "workspaces"
    for app_id in ("keep_app", "drop_app"):
        install_app(echo_copy(tmp_path / "src", app_id), apps)
        (workspaces / app_id).mkdir(parents=True)
        (workspaces / app_id / "note.txt").write_text("mine")
    aside = uninstall_app(apps, "keep_app", workspaces)
    assert aside is not None and (aside / "note.txt").read_text() == "mine"
    assert aside.parent == workspaces / ".removed"
    assert uninstall_app(apps, "drop_app", workspaces, keep_workspace=False) is None
    assert not (workspaces / "drop_app").exists()
    assert list(apps.iterdir()) == []
    from aios_protocol.errors import NotFound

    for bad in ("keep_app", "../apps", ".hidden"):
        with pytest.raises(NotFound):
            uninstall_app(apps, bad, workspaces)


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en-US", "Nothing was installed: there is no folder or file at "),
        ("zh-CN", "没有安装："),
    ],
)
def test_a_path_with_nothing_there_is_said_with_the_path(
    tmp_path: Path, language: str, said: str
) -> None:
    missing = tmp_path / "no_such_app"
    with pytest.raises(InstallRefused) as refused:
        install_app(missing, tmp_path / "apps")
    sentence = user_message_of(refused.value, language)
    assert sentence.startswith(said) and str(missing) in sentence, sentence
    other = tmp_path / "notes.txt"
    other.write_text("x")
    with pytest.raises(InstallRefused) as refused:
        install_app(other, tmp_path / "apps")
    assert ".zip" in user_message_of(refused.value, language)
