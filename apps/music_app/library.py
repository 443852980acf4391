"""The user's own music: audio files in the app's workspace, with their tags read.

This is the body of the music app's `music_library` custom tool: the executor
calls the tool, the tool walks the workspace — never leaving it, never following a
symlink out of it — and reads each file's title, artist, album and duration with
tinytag. Files without tags are named after the file. Results are bounded.

For a user other than the owner the app's process cannot see the workspace (its
confinement shows the owner's only), so `scan_library_through` lists and reads that
user's files through the executor's `file_list` and `file_read`, which work in the
sandbox of the user the call serves.
"""

from __future__ import annotations

import base64
import io
import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from aios_sdk import ToolFailed

from .catalogue import Song, local_file_url, local_id

__all__ = [
    "AUDIO_EXTENSIONS",
    "MAX_FILES",
    "scan_library",
    "scan_library_through",
    "song_matches",
]

AUDIO_EXTENSIONS = frozenset(
    {".mp3", ".m4a", ".aac", ".wav", ".flac", ".ogg", ".opus", ".wma", ".aiff", ".aif"}
)
MAX_FILES = 500
MAX_DEPTH = 6


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except (ValueError, OSError):
        return False
    return True


def _tags(path: Path | None = None, data: BinaryIO | None = None) -> dict[str, Any]:
    """The tags of the file at `path`, or of its content `data`; `{}` when unreadable."""
    try:
        from tinytag import TinyTag

        tag = TinyTag.get(str(path)) if path is not None else TinyTag.get(file_obj=data)
    except Exception:  # unreadable or unknown format: fall back to the file name
        return {}
    return {
        "title": (tag.title or "").strip(),
        "artist": (tag.artist or tag.albumartist or "").strip(),
        "album": (tag.album or "").strip(),
        "duration": float(tag.duration or 0.0),
    }


def scan_library(workdir: str | os.PathLike[str], app_id: str) -> list[dict[str, Any]]:
    """Every audio file under `workdir` as a song dict, sorted by path.

    Paths are relative to the workspace (`music/a.mp3`); `url` is the controller URL
    that serves the file to the desktop.
    """
    root = Path(workdir).resolve()
    if not root.is_dir():
        return []
    found: list[Path] = []
    for current, dirs, files in os.walk(root, followlinks=False):
        here = Path(current)
        depth = len(here.relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and depth < MAX_DEPTH)
        for name in sorted(files):
            if name.startswith(".") or Path(name).suffix.lower() not in AUDIO_EXTENSIONS:
                continue
            path = here / name
            if path.is_symlink() or not _inside(root, path):
                continue
            found.append(path)
            if len(found) >= MAX_FILES:
                break
        if len(found) >= MAX_FILES:
            break
    return [
        _song(path.relative_to(root).as_posix(), _tags(path), app_id)
        for path in sorted(found)
    ]


def _song(relative: str, tags: dict[str, Any], app_id: str) -> dict[str, Any]:
    """The song dict of the workspace file `relative` with its `tags`."""
    song = Song(
        id=local_id(relative),
        title=tags.get("title") or PurePosixPath(relative).stem,
        artist=tags.get("artist", ""),
        album=tags.get("album", ""),
        duration_ms=int(tags.get("duration", 0.0) * 1000),
        url=local_file_url(app_id, relative),
        source="local",
        path=relative,
    )
    return song.to_dict()


def _listed_audio(entry: Any) -> str | None:
    """The relative path of a `file_list` entry that is an audio file to list."""
    if not isinstance(entry, dict) or entry.get("is_dir") or entry.get("is_link"):
        return None
    relative = PurePosixPath(str(entry.get("name") or ""))
    parts = relative.parts
    if not parts or len(parts) > MAX_DEPTH + 1 or any(p.startswith(".") for p in parts):
        return None
    return relative.as_posix() if relative.suffix.lower() in AUDIO_EXTENSIONS else None


def _read_tags(call_tool: Callable[..., Any], relative: str) -> dict[str, Any]:
    """The tags of a workspace file read through `file_read`; `{}` when it cannot be."""
    try:  # a file larger than file_read reads is named after the file
        content = call_tool("file_read", path=relative, encoding="base64")
        data = base64.b64decode(str(content), validate=True)
    except (ToolFailed, ValueError):
        return {}
    return _tags(data=io.BytesIO(data))


def scan_library_through(
    call_tool: Callable[..., Any], app_id: str
) -> list[dict[str, Any]]:
    """`scan_library` of the workspace the executor works in for this call, listed and
    read with `call_tool("file_list" | "file_read", …)`."""
    try:
        listing = call_tool("file_list", path="", recursive=True)
    except ToolFailed as exc:
        if exc.code == "file_not_found":  # nothing written there yet
            return []
        raise
    entries = listing.get("files") if isinstance(listing, dict) else None
    found = sorted(
        {path for path in map(_listed_audio, entries or []) if path is not None}
    )[:MAX_FILES]
    return [_song(relative, _read_tags(call_tool, relative), app_id) for relative in found]


def song_matches(song: Song, needle: str) -> bool:
    """Whether `needle` (any of its words) appears in the song's title, artist or album."""
    needle = (needle or "").strip().lower()
    if not needle:
        return True
    haystack = " ".join((song.title, song.artist, song.album, song.path)).lower()
    if needle in haystack:
        return True
    words = [w for w in needle.split() if w]
    return bool(words) and all(w in haystack for w in words)
