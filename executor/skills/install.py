"""Putting skills into the shared skills folder: `install_skill`.

The format's deployment rule: an executable skill loses its extension (`my_skill.py`
→ `my_skill`) and gains the execute bit, and its `--help` must answer before it is
installed; a Markdown skill (`.md`) is copied as it is; a SKILL.md folder is copied
whole. Every install is staged under the shared folder's `.installing/` (ignored by
scans: its name starts with `.`), checked there with the same reading a scan does
(`catalog.read_entry`), and only then renamed into place, replacing a skill of the
same name; a source holding a symbolic link is refused (it could point anywhere).
The repository's example skills are copied the same way (`executor.skills.examples`).
"""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from pathlib import Path
from typing import Any

from aios_protocol.errors import ToolFailed
from executor.skills.catalog import (
    SKILL_FILE,
    HelpRunner,
    bad_name,
    ignored_name,
    read_entry,
)

__all__ = ["EXECUTABLE", "STAGING", "install_skill_from", "installed_name"]

STAGING = ".installing"
EXECUTABLE = stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH


def _refuse(message: str) -> ToolFailed:
    return ToolFailed(message, code="skill_install_failed")


def installed_name(source: Path) -> str:
    """The name `source` is installed under: a folder's or `.md` file's name as is,
    any other file's without its last extension."""
    if source.is_dir() or source.name.endswith(".md"):
        return source.name
    stem, _dot, _ext = source.name.rpartition(".")
    return stem if stem else source.name


def _has_link(folder: Path) -> bool:
    for root, dirs, files in os.walk(folder):
        for entry in (*dirs, *files):
            if os.path.islink(os.path.join(root, entry)):
                return True
    return False


def _stage(source: Path, shared: Path, name: str) -> Path:
    staging = shared / STAGING / uuid.uuid4().hex
    staging.mkdir(parents=True)
    target = staging / name
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copyfile(source, target)
        if not name.endswith(".md"):
            os.chmod(target, EXECUTABLE)
    return target


def _put_in_place(staged: Path, final: Path) -> bool:
    """Rename `staged` to `final`; True when a skill was there before (replaced)."""
    replaced = final.exists() or final.is_symlink()
    if staged.is_dir() and replaced:
        aside = final.parent / STAGING / f"{uuid.uuid4().hex}.old"
        os.replace(final, aside)
        os.replace(staged, final)
        if aside.is_dir() and not aside.is_symlink():
            shutil.rmtree(aside, ignore_errors=True)
        else:
            aside.unlink(missing_ok=True)
        return True
    if final.is_dir() and not final.is_symlink():
        shutil.rmtree(final)
    os.replace(staged, final)
    return replaced


def install_skill_from(source: Path, shared: Path, run_help: HelpRunner) -> dict[str, Any]:
    """Install `source` (a file or SKILL.md folder, already resolved) into `shared`.

    Answers `{name, kind, summary, path, replaced}`; `ToolFailed` (code
    `skill_install_failed`) when the source is no skill or its check fails, with
    nothing changed in `shared`.
    """
    if source.is_symlink() or (source.is_dir() and _has_link(source)):
        raise _refuse(f"{source.name} holds a symbolic link; copy the real files instead")
    if source.is_dir():
        if not (source / SKILL_FILE).is_file():
            raise _refuse(f"the folder {source.name} holds no {SKILL_FILE}")
    elif not source.is_file():
        raise _refuse(f"{source.name} is neither a file nor a folder")
    name = installed_name(source)
    plain = name[:-3] if name.endswith(".md") else name
    problem = bad_name(plain)
    if problem or ignored_name(plain):
        raise _refuse(
            problem or f"{plain!r} starts with '_' or '.', so it would be ignored"
        )
    shared.mkdir(parents=True, exist_ok=True)
    staged = _stage(source, shared, name)
    try:
        skill = read_entry(staged, "shared", staged.parent, run_help)
        if skill is None:
            raise _refuse(f"{source.name} is not a skill")
        if skill.error:
            raise _refuse(f"{source.name} cannot be installed: {skill.error}")
        replaced = _put_in_place(staged, shared / name)
    finally:
        shutil.rmtree(staged.parent, ignore_errors=True)
        try:
            (shared / STAGING).rmdir()  # left while another install is under way
        except OSError:
            pass
    return {
        "name": skill.name,
        "kind": skill.kind,
        "summary": skill.summary,
        "summaries": skill.listed()["summaries"],
        "path": str(shared / name),
        "replaced": replaced,
    }
