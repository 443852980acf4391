"""The services' state files: written so that a reader sees the old version or the new
one, never half; a full disk reported as `StorageFull` naming the file (the last good
version stays in place); and a file that cannot be read set aside as
`<name>.corrupt-<time>` and reported by name (`set_aside`, `state_problems`), so the
caller can go on with defaults without losing what was there.

`read_state(path, parse, what)` is the one rule every store of the state folder
reads its files by: a missing file is None; a file that cannot be parsed (cut off,
zero bytes, the wrong JSON type, invalid values: `parse` raises `ValueError`,
`TypeError` or `KeyError`) is set aside, named in the log and in `state_problems`,
and is None, so the store goes on with what it has; a file that cannot be read now
(permissions, I/O) is named too but left in place.
"""

from __future__ import annotations

import errno
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from aios_protocol.errors import AiosError

__all__ = [
    "StorageFull",
    "atomic_write_bytes",
    "atomic_write_text",
    "is_storage_full",
    "keep_unreadable",
    "read_state",
    "set_aside",
    "state_problems",
]

log = logging.getLogger("aios.files")

# errors that mean "the disk cannot take it now": retrying later may succeed
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
MAX_PROBLEMS = 50
_problems: list[tuple[Path, str]] = []  # (the file's resolved path, the note)
_problems_lock = threading.Lock()


class StorageFull(AiosError):
    """A file could not be written because the disk (or quota) is full.

    The file's last complete version is kept; a later write succeeds once space
    returns. `detail` names the file.
    """

    code = "storage_full"
    http_status = 507

    @classmethod
    def writing(cls, path: Path, exc: OSError) -> StorageFull:
        return cls(
            f"{path.name} was not saved: {exc.strerror or exc} "
            "(the last saved version is kept; free some disk space)",
            detail={"file": str(path)},
        )


def is_storage_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in _FULL


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write to a temp file beside `path`, fsync it, rename it over `path`.

    A full disk raises `StorageFull` (the temp file removed, `path` untouched).
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        if is_storage_full(exc):
            raise StorageFull.writing(path, exc) from exc
        raise
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if is_storage_full(exc):
            raise StorageFull.writing(path, exc) from exc  # type: ignore[arg-type]
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode)


T = TypeVar("T")


def read_state(path: Path, parse: Callable[[str], T], what: str) -> T | None:
    """`parse(text)` of the state file `path`, or None: missing, or damaged (then set
    aside and reported as not being `what`), or unreadable now (reported, kept)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        set_aside(path, f"not {what}: {exc}")
        return None
    except OSError as exc:  # permissions, I/O: the file may read again later
        keep_unreadable(path, exc)
        return None
    try:
        return parse(text)
    except (ValueError, TypeError, KeyError) as exc:  # pydantic's errors are ValueErrors
        set_aside(path, f"not {what}: {_brief(exc)}")
        return None


def keep_unreadable(path: Path, exc: OSError) -> str:
    """Report a state file that cannot be read now (permissions, I/O); it stays."""
    note = f"{path} cannot be read now ({exc.strerror or exc}); kept in place"
    _report(Path(path), note)
    return note


def _brief(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "…"


def _report(path: Path, note: str) -> None:
    log.warning("%s", note)
    with _problems_lock:
        _problems.append((path.resolve(), note))
        del _problems[:-MAX_PROBLEMS]


def set_aside(path: Path, reason: str, then: str = "defaults used") -> str:
    """Move an unreadable `path` to `<name>.corrupt-<time>` beside it and report it.

    Returns the note (file, reason, where it went, and `then`: what the reader does
    instead), also logged as a warning and kept for `state_problems`. When the move
    fails the file stays where it is. Never overwrites an earlier copy.
    """
    path = Path(path)
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
    if aside.exists():
        aside = aside.with_name(f"{aside.name}-{time.monotonic_ns()}")
    try:
        path.replace(aside)
        where = f"kept aside as {aside.name}"
    except OSError as exc:
        where = f"could not be moved aside ({exc.strerror or exc})"
    note = f"{path} is unreadable ({reason}); {where}; {then}"
    _report(path, note)
    return note


def state_problems(*under: Path) -> list[str]:
    """The notes of the files `set_aside` moved in this process, oldest first: those
    at or below one of the paths `under` (a state folder, a config file), or all."""
    roots = [Path(root).resolve() for root in under]
    with _problems_lock:
        kept = list(_problems)
    return [
        note
        for path, note in kept
        if not roots or any(path == root or path.is_relative_to(root) for root in roots)
    ]
