"""Workdir containment: the one check of whether a path lies inside a folder, and tool paths.

`is_inside` compares resolved paths component by component — never by string
prefix, so `/x/app1_evil` is not inside `/x/app1` — and is what every caller uses
that decides whether a path lies inside a folder (SECURITY.md P1–P3).
`resolve_in_workdir` gives the real path a tool argument names inside an app's
workdir, or raises `PathOutsideWorkdir`: the design writes the sandbox root as
`workspace`, so `workspace/a.txt`, `a.txt`, `./a.txt` and the file's absolute path
all name the same file, and the answer is fully resolved (symlinks followed).
`display_path` names a file in results as `workspace/<relative path>`. Not closed:
a process inside the workspace could swap a directory for a symlink between the
check and the open; tools open the resolved path with `O_NOFOLLOW` on the last
component to narrow that window.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from aios_protocol.errors import InvalidRequest, PathOutsideWorkdir

__all__ = [
    "WORKSPACE_ALIAS",
    "display_path",
    "is_inside",
    "resolve_in_workdir",
]

WORKSPACE_ALIAS = "workspace"


def is_inside(path: Path, root: Path) -> bool:
    """True when resolved `path` equals `root` or lies below it (by components)."""
    return path == root or root in path.parents


def _strip_workspace_alias(user_path: str) -> str:
    """`workspace/a/b` → `a/b`, `workspace` → `` (the design's name for the root)."""
    trimmed = user_path
    while trimmed.startswith("./"):
        trimmed = trimmed[2:]
    if trimmed == WORKSPACE_ALIAS:
        return ""
    if trimmed.startswith(WORKSPACE_ALIAS + "/"):
        return trimmed[len(WORKSPACE_ALIAS) + 1 :]
    return trimmed


def resolve_in_workdir(workdir: Path, user_path: object, *, arg: str = "path") -> Path:
    """The real path `user_path` names inside `workdir`, or `PathOutsideWorkdir`.

    `workdir` must already be resolved (the registry stores it so). Relative paths
    are taken from the workdir; absolute ones must point inside it. The answer is
    fully resolved, so it never contains a symlink. A path below the workdir that
    meets no symlink and no `..` above it is resolved from the workdir, one `lstat`
    per component below it; any other path is resolved whole by `os.path.realpath`
    and then checked with `is_inside`. Resolving from the workdir is sound because
    no tool can rename the workdir or a folder above it (under bubblewrap tool
    processes write only inside the workdir; without it SECURITY.md X2 applies).
    """
    if not isinstance(user_path, str):
        raise InvalidRequest(f"{arg} must be a string")
    if "\x00" in user_path:
        raise PathOutsideWorkdir(f"{arg} contains a NUL byte")
    relative = _strip_workspace_alias(user_path.strip())
    root = str(workdir)
    if os.path.isabs(relative):
        candidate = relative
        below = _below(relative, root)
    else:
        candidate = os.path.join(root, relative)
        below = relative
    plain = _resolve_plain(root, below) if below is not None else None
    if plain is not None:
        return Path(plain)
    try:
        real = Path(os.path.realpath(candidate))
    except (OSError, ValueError) as exc:
        raise PathOutsideWorkdir(f"{arg} {user_path!r} cannot be resolved: {exc}") from exc
    if not is_inside(real, workdir):
        raise PathOutsideWorkdir(f"{arg} {user_path!r} is outside the app's workdir")
    return real


def _below(absolute: str, root: str) -> str | None:
    """The part of `absolute` after `root` (as written), or None when it does not start there.

    The `/` after `root` makes this a comparison of whole components (P2).
    """
    if absolute == root:
        return ""
    if absolute.startswith(root + "/"):
        return absolute[len(root) + 1 :]
    return None


def _resolve_plain(root: str, relative: str) -> str | None:
    """`root/relative` resolved as `os.path.realpath` would, when that is plain.

    Plain means no component below `root` is a symlink and no `..` climbs above
    `root`; the answer then lies inside `root` by construction. Otherwise None: the
    caller resolves the whole path. Missing components are kept as written (and a
    later `..` drops them), as `realpath` does.
    """
    path = root
    depth = 0
    for name in relative.split("/"):
        if not name or name == ".":
            continue
        if name == "..":
            if depth == 0:
                return None
            path = path[: path.rindex("/")]
            depth -= 1
            continue
        path = f"{path}/{name}"
        depth += 1
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return None
        except OSError:
            pass  # missing, or not a folder: kept as written
    return path


def display_path(real: Path, workdir: Path) -> str:
    """How results name a file: `workspace/<relative path>` (`workspace` for the root)."""
    if real == workdir:
        return WORKSPACE_ALIAS
    return f"{WORKSPACE_ALIAS}/{real.relative_to(workdir).as_posix()}"
