"""Installing and uninstalling apps: a folder or a `.zip` into the apps folder, and out.

`install_app` copies a folder, or extracts a zip, into a hidden staging folder
inside the apps folder (`.installing-…`, which discovery and the watcher ignore),
validates it there like discovery does (`load_app`), and only then renames it to
`<apps_dir>/<app_id>` in one step, so the watcher never sees half an app and a
refused install leaves nothing behind. A zip is checked whole before one byte is
written: absolute names, `..`, backslashes, drive letters, symlinks and other
non-regular entries, too many entries or too many bytes refuse it (`InstallRefused`,
naming the entry), and every file is written below the staging folder only. The app
id is the zip's (or folder's) single top folder, or else the zip's file name; an id
that is already installed is refused (`AppExists`), the installed app untouched.
`uninstall_app` renames the app folder away in one step (the watcher stops the
app) and removes it; the app's workspace is moved aside to
`<workspaces>/.removed/<app_id>-<time>/` unless the caller asks to delete it.
"""

from __future__ import annotations

import io
import os
import secrets
import shutil
import stat
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from aios_protocol.errors import InvalidRequest, NotFound
from aios_runtime.workdir import is_inside
from controller.apps.discovery import APP_ID_PATTERN, AppSpec, load_app

__all__ = [
    "AppExists",
    "InstallLimits",
    "InstallRefused",
    "install_app",
    "uninstall_app",
]

STAGING_PREFIX = ".installing-"
REMOVING_PREFIX = ".removing-"
_SKIPPED = {"__pycache__", ".git", ".DS_Store", "__MACOSX"}


class InstallRefused(InvalidRequest):
    """The folder or zip cannot be installed; the message says which entry and why."""

    code = "install_refused"


class AppExists(InstallRefused):
    code = "app_exists"
    http_status = 409


@dataclass(frozen=True)
class InstallLimits:
    max_entries: int = 5000
    max_bytes: int = 200 * 1024 * 1024  # uncompressed, counted as it is written


def install_app(
    source: Path | bytes | BinaryIO,
    apps_dir: Path,
    *,
    name: str | None = None,
    limits: InstallLimits = InstallLimits(),
) -> AppSpec:
    """Install a folder, a zip file or zip bytes into `apps_dir`; the validated spec.

    `name` is the zip's file name when `source` is bytes (for an app id from it).
    Raises InstallRefused (or AppExists) and leaves `apps_dir` as it was."""
    apps_dir = Path(apps_dir).resolve()
    apps_dir.mkdir(parents=True, exist_ok=True)
    staging = apps_dir / f"{STAGING_PREFIX}{secrets.token_hex(6)}"
    staging.mkdir()
    try:
        tree = staging / "tree"
        tree.mkdir()
        if isinstance(source, (bytes, bytearray)):
            _extract_zip(io.BytesIO(source), tree, limits)
            stem = Path(name or "app.zip").stem
        elif hasattr(source, "read"):
            _extract_zip(source, tree, limits)  # type: ignore[arg-type]
            stem = Path(name or "app.zip").stem
        else:
            path = Path(source).expanduser()
            if path.is_dir():
                _copy_folder(path.resolve(), tree, limits)
                stem = path.resolve().name
            elif path.is_file() and zipfile.is_zipfile(path):
                with open(path, "rb") as handle:
                    _extract_zip(handle, tree, limits)
                stem = path.stem
            elif path.exists():
                raise InstallRefused(
                    f"{path}: neither a folder nor a .zip file",
                    variant="not_an_app",
                    placeholders={"path": str(path)},
                )
            else:
                raise InstallRefused(
                    f"{path}: no such folder or file",
                    variant="not_found",
                    placeholders={"path": str(path)},
                )
        root, app_id = _app_root(tree, stem)
        if not APP_ID_PATTERN.match(app_id):
            raise InstallRefused(
                f"{app_id!r} is not a valid app id "
                "(letters, digits, '_', '-', '.'; at most 64; not starting with '.')"
            )
        final = apps_dir / app_id
        if final.exists():
            raise AppExists(f"an app with id {app_id!r} is already installed ({final})")
        candidate = staging / app_id
        root.rename(candidate)
        spec = load_app(candidate)  # no workspaces: a `workspace/` inside is fine
        if not spec.ok:
            raise InstallRefused(f"{app_id}: {spec.error}", detail={"app_id": app_id})
        if final.exists():  # installed meanwhile by someone else
            raise AppExists(f"an app with id {app_id!r} is already installed ({final})")
        candidate.rename(final)
        spec.folder = final
        return spec
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _app_root(tree: Path, stem: str) -> tuple[Path, str]:
    """The folder holding `manifest.json` and the app id it gives."""
    if (tree / "manifest.json").is_file():
        return tree, stem
    entries = [p for p in tree.iterdir() if p.name not in _SKIPPED]
    if (
        len(entries) == 1
        and entries[0].is_dir()
        and (entries[0] / "manifest.json").is_file()
    ):
        return entries[0], entries[0].name
    raise InstallRefused(
        "no manifest.json at the top (or in one single top folder) of what was given"
    )


def _copy_folder(source: Path, target: Path, limits: InstallLimits) -> None:
    """Copy regular files and folders; a symlink or special file refuses the install."""
    entries = 0
    total = 0
    for top, dirs, files in os.walk(source, followlinks=False):
        dirs[:] = [d for d in dirs if d not in _SKIPPED]
        here = Path(top)
        rel_dir = here.relative_to(source)
        for name in [*dirs, *files]:
            if name in _SKIPPED:
                continue
            path = here / name
            info = path.lstat()
            rel = rel_dir / name
            if stat.S_ISLNK(info.st_mode):
                raise InstallRefused(f"{rel}: symlinks are not installed")
            if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                raise InstallRefused(f"{rel}: not a regular file or folder")
            entries += 1
            if entries > limits.max_entries:
                raise InstallRefused(f"more than {limits.max_entries} files and folders")
            if stat.S_ISDIR(info.st_mode):
                (target / rel).mkdir()
            else:
                total += info.st_size
                if total > limits.max_bytes:
                    raise InstallRefused(f"larger than {limits.max_bytes} bytes")
                shutil.copyfile(path, target / rel, follow_symlinks=False)


def _zip_member_path(info: zipfile.ZipInfo) -> PurePosixPath | None:
    """The entry's safe relative path (None for a skipped one); refuses a bad one."""
    name = info.filename
    if "\\" in name:
        raise InstallRefused(f"zip entry {name!r}: backslashes in names are refused")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise InstallRefused(f"zip entry {name!r}: absolute paths are refused")
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if ".." in parts:
        raise InstallRefused(f"zip entry {name!r}: '..' in paths is refused")
    if "\x00" in name:
        raise InstallRefused(f"zip entry {name!r}: NUL in names is refused")
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if stat.S_ISLNK(mode):
        raise InstallRefused(f"zip entry {name!r}: symlinks are refused")
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        raise InstallRefused(f"zip entry {name!r}: not a regular file or folder")
    if not parts or any(p in _SKIPPED for p in parts):
        return None
    return PurePosixPath(*parts)


def _extract_zip(handle: BinaryIO, target: Path, limits: InstallLimits) -> None:
    """Check every entry first, then write the files below `target` only."""
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InstallRefused(f"not a valid zip file ({exc})") from exc
    with archive:
        members = archive.infolist()
        if len(members) > limits.max_entries:
            raise InstallRefused(f"more than {limits.max_entries} entries in the zip")
        planned: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
        declared = 0
        for info in members:
            rel = _zip_member_path(info)
            if rel is None:
                continue
            declared += info.file_size
            if declared > limits.max_bytes:
                raise InstallRefused(
                    f"the zip unpacks to more than {limits.max_bytes} bytes"
                )
            planned.append((info, rel))
        root = target.resolve()
        written = 0
        for info, rel in planned:
            path = root / rel  # below `root` by its parts; no symlink exists there
            if info.is_dir():
                path.mkdir(parents=True, exist_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if not is_inside(path.parent.resolve(), root):
                raise InstallRefused(f"zip entry {info.filename!r}: outside the app folder")
            try:
                with archive.open(info) as src, open(path, "xb") as dst:
                    while chunk := src.read(1 << 16):
                        written += len(chunk)
                        if written > limits.max_bytes:  # sizes in the zip may lie
                            raise InstallRefused(
                                f"the zip unpacks to more than {limits.max_bytes} bytes"
                            )
                        dst.write(chunk)
            except FileExistsError as exc:
                raise InstallRefused(f"zip entry {info.filename!r}: given twice") from exc
            except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError) as exc:
                raise InstallRefused(f"zip entry {info.filename!r}: {exc}") from exc


def uninstall_app(
    apps_dir: Path, app_id: str, workspaces: Path | None, *, keep_workspace: bool = True
) -> Path | None:
    """Remove `<apps_dir>/<app_id>`; its workspace moved aside (where to is returned)
    or, with `keep_workspace=False`, deleted. NotFound when no such app folder."""
    if not APP_ID_PATTERN.match(app_id) or app_id.startswith("."):
        raise NotFound(f"no app {app_id!r}")
    apps_dir = Path(apps_dir).resolve()
    folder = apps_dir / app_id
    if (
        not folder.is_dir()
        or folder.is_symlink()
        or not is_inside(folder.resolve(), apps_dir)
    ):
        raise NotFound(f"no app {app_id!r} in {apps_dir}")
    leaving = apps_dir / f"{REMOVING_PREFIX}{app_id}-{secrets.token_hex(4)}"
    folder.rename(leaving)  # one step: the watcher sees the app gone, never half of it
    shutil.rmtree(leaving, ignore_errors=True)
    if workspaces is None:
        return None
    workspace = Path(workspaces) / app_id
    if not workspace.is_dir() or workspace.is_symlink():
        return None
    if not keep_workspace:
        shutil.rmtree(workspace, ignore_errors=True)
        return None
    aside = Path(workspaces) / ".removed" / f"{app_id}-{time.strftime('%Y%m%d-%H%M%S')}"
    aside.parent.mkdir(parents=True, exist_ok=True)
    while aside.exists():
        aside = aside.with_name(f"{aside.name}-{secrets.token_hex(2)}")
    workspace.rename(aside)
    return aside
