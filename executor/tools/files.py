"""`file_read`, `file_write`, `file_list`: files of the app's workdir only.

Every path goes through `aios_runtime.workdir.resolve_in_workdir` (SECURITY.md
P1–P3). Files are opened with `O_NOFOLLOW` and only regular files are read (a FIFO
never blocks a worker). Overwrites are atomic (temp file, fsync, rename); sizes are
capped by `limits.file_size_bytes` (writes) and `limits.response_bytes` (reads);
listings by `limits.file_list_max`, without following symlinks (P5).
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aios_protocol.errors import AiosError
from aios_runtime.files import atomic_write_bytes
from aios_runtime.workdir import display_path, resolve_in_workdir
from executor.tools.catalog import InvalidArgs

if TYPE_CHECKING:
    from executor.toolbox import ToolContext

__all__ = ["content_bytes", "file_list", "file_read", "file_write"]

_SCAN_FACTOR = 20  # a recursive listing looks at most this many × file_list_max entries
_READ_CHUNK = 1 << 16  # file_read's reads after the first, if the file grew


def _not_found(args: dict[str, Any], key: str = "path") -> AiosError:
    return AiosError(f"{args[key]!r} does not exist", code="file_not_found")


def _read_capped(fd: int, size: int, cap: int) -> bytes:
    """At most `cap` bytes of `fd`, whose file stat said holds `size` bytes.

    The first read asks for `size` + 1 bytes (its buffer is allocated whole, so not
    `cap`); a shorter answer once `size` bytes are in is the file's end. The extra
    byte notices a file that grew since stat; reading then goes on in chunks, never
    past `cap`.
    """
    chunks: list[bytes] = []
    total = 0
    want = min(size + 1, cap)
    while total < cap:
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if len(chunk) < want and total >= size:
            break
        want = min(_READ_CHUNK, cap - total)
    return b"".join(chunks)


def file_read(ctx: ToolContext, args: dict[str, Any]) -> str:
    """The file's text (UTF-8, invalid bytes replaced) or, with `encoding=base64`, base64."""
    real = resolve_in_workdir(ctx.app.workdir, args["path"])
    try:
        info = os.stat(real)
    except FileNotFoundError:
        raise _not_found(args) from None
    if not stat.S_ISREG(info.st_mode):
        raise AiosError(f"{args['path']!r} is not a regular file", code="not_a_file")
    cap = ctx.settings.limits.response_bytes
    if info.st_size > cap:
        raise AiosError(
            f"{args['path']!r} is {info.st_size} bytes; file_read reads at most {cap}",
            code="file_too_large",
        )
    fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        data = _read_capped(fd, info.st_size, cap)
    finally:
        os.close(fd)
    if args.get("encoding") == "base64":
        return base64.b64encode(data).decode("ascii")
    return data.decode("utf-8", errors="replace")


def content_bytes(content: Any, encoding: str | None) -> bytes:
    """What `file_write` writes: text as UTF-8, base64 decoded, other JSON serialized."""
    if encoding == "base64":
        if not isinstance(content, str):
            raise InvalidArgs("base64 content must be a string")
        try:
            return base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidArgs(f"content is not valid base64: {exc}") from exc
    if isinstance(content, str):
        return content.encode("utf-8")
    return json.dumps(content, ensure_ascii=False, indent=2).encode("utf-8")


def file_write(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    workdir = ctx.app.workdir
    real = resolve_in_workdir(workdir, args["path"])
    if real.is_dir():
        raise AiosError(f"{args['path']!r} is a directory", code="is_a_directory")
    data = content_bytes(args.get("content"), args.get("encoding"))
    cap = ctx.settings.limits.file_size_bytes
    mode = args.get("mode") or "overwrite"
    existing = real.stat().st_size if mode == "append" and real.exists() else 0
    if existing + len(data) > cap:
        raise AiosError(f"the file would exceed {cap} bytes", code="file_too_large")
    real.parent.mkdir(parents=True, exist_ok=True)
    # mkdir went through no symlink (the path was resolved); check again anyway.
    real = resolve_in_workdir(workdir, str(real))
    if mode == "append":
        fd = os.open(real, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "ab") as handle:
            handle.write(data)
    else:
        atomic_write_bytes(real, data, mode=0o644)
    return {"path": display_path(real, workdir), "size": real.stat().st_size}


def _entry(path: Path, name: str) -> dict[str, Any]:
    info = os.lstat(path)
    return {
        "name": name,
        "size": info.st_size,
        "is_dir": stat.S_ISDIR(info.st_mode),
        **({"is_link": True} if stat.S_ISLNK(info.st_mode) else {}),
    }


def file_list(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Entries of a directory (names relative to it), sorted, at most `file_list_max`."""
    workdir = ctx.app.workdir
    user_path = args.get("path") or ""
    real = resolve_in_workdir(workdir, user_path)
    if not real.exists():
        raise AiosError(f"{user_path!r} does not exist", code="file_not_found")
    if not real.is_dir():
        raise AiosError(f"{user_path!r} is not a directory", code="not_a_directory")
    pattern = args.get("pattern") or "*"
    limit = ctx.settings.limits.file_list_max
    scan_budget = limit * _SCAN_FACTOR
    found: list[dict[str, Any]] = []
    truncated = False

    def matches(rel: str) -> bool:
        target = rel if "/" in pattern else rel.rsplit("/", 1)[-1]
        return fnmatch.fnmatch(target, pattern)

    if args.get("recursive"):
        for root, dirs, files in os.walk(real, followlinks=False):
            dirs.sort()
            for name in sorted(dirs) + sorted(files):
                scan_budget -= 1
                full = Path(root) / name
                rel = full.relative_to(real).as_posix()
                if matches(rel):
                    found.append(_entry(full, rel))
                if len(found) >= limit or scan_budget <= 0:
                    truncated = True
                    break
            if truncated:
                break
    else:
        with os.scandir(real) as scan:
            for item in scan:
                scan_budget -= 1
                if matches(item.name):
                    found.append(_entry(Path(item.path), item.name))
                if len(found) >= limit or scan_budget <= 0:
                    truncated = True
                    break
    found.sort(key=lambda entry: entry["name"])
    return {"path": display_path(real, workdir), "files": found, "truncated": truncated}
