"""The user's own music: audio files in the app's workspace, with their tags read.

This is the body of the music app's `music_library` custom tool: the executor
calls the tool, the tool walks the workspace — never leaving it, never following a
symlink out of it — and reads each file's title, artist, album and duration with
tinytag. What the tags leave out is what the catalogue said of a song downloaded
from it (the record `DOWNLOADS_FILE` the download keeps: a downloaded preview may
have no tags, and its file is named after its title alone), else what the file's name
says: "周杰伦 - 晴天.mp3" is 晴天 by 周杰伦 (`name_parts`); a name without an artist
is the title alone. A song the library holds and the catalogue lists is one song
(`without_copies`). Results are bounded. A user
other than the owner is served by a process of the app whose workspace is theirs,
so the same walk lists their songs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from .catalogue import Song, local_file_url, local_id

__all__ = [
    "AUDIO_EXTENSIONS",
    "DOWNLOADS_FILE",
    "MAX_FILES",
    "downloaded_entry",
    "name_parts",
    "scan_library",
    "song_matches",
    "without_copies",
]

AUDIO_EXTENSIONS = frozenset(
    {".mp3", ".m4a", ".aac", ".wav", ".flac", ".ogg", ".opus", ".wma", ".aiff", ".aif"}
)
MAX_FILES = 500
MAX_DEPTH = 6
# the workspace file recording what the catalogue said of each song downloaded from
# it: {path relative to the workspace: {title, artist, album}}
DOWNLOADS_FILE = "downloads.json"
_DOWNLOADS_MAX_BYTES = 1 << 20


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except (ValueError, OSError):
        return False
    return True


def _tags(path: Path) -> dict[str, Any]:
    """The tags of the file at `path`; `{}` when unreadable."""
    try:
        from tinytag import TinyTag

        tag = TinyTag.get(str(path))
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
    known = _downloads(root)
    songs = []
    for path in sorted(found):
        relative = path.relative_to(root).as_posix()
        songs.append(_song(relative, _tags(path), app_id, known.get(relative, {})))
    return songs


def downloaded_entry(song: Song) -> dict[str, Any]:
    """What the record keeps of a song downloaded from the catalogue (not its length:
    what is saved may be a preview of it, whose own length the file tells)."""
    return {"title": song.title, "artist": song.artist, "album": song.album}


def _downloads(root: Path) -> dict[str, Mapping[str, Any]]:
    """The record of downloaded songs (`DOWNLOADS_FILE`); `{}` when there is none or
    it cannot be read."""
    path = root / DOWNLOADS_FILE
    try:
        if path.is_symlink() or path.stat().st_size > _DOWNLOADS_MAX_BYTES:
            return {}
        known = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {str(k): v for k, v in known.items() if isinstance(v, Mapping)}


# "artist - title": a hyphen with a space on either side, or a dash (– —)
_SEPARATOR = re.compile(r"\s+-\s*|\s*-\s+|\s*[\u2013\u2014]\s*")


def name_parts(stem: str) -> tuple[str, str]:
    """(artist, title) of a file name without its extension: "Adele - Hello" →
    ("Adele", "Hello"); "Hello" → ("", "Hello"). Underscores are read as spaces (the
    names songs were once added under), a leading track number is left out."""
    text = stem.replace("_", " ").strip() if " " not in stem else stem.strip()
    parts = [p.strip() for p in _SEPARATOR.split(text, maxsplit=1)]
    if len(parts) == 2 and parts[0].isdigit():  # "01 - Hello", "01 - Adele - Hello"
        return name_parts(parts[1])
    if len(parts) == 2 and parts[0] and parts[1]:
        return parts[0], parts[1]
    return "", text or stem


def _song(
    relative: str, tags: dict[str, Any], app_id: str, known: Mapping[str, Any]
) -> dict[str, Any]:
    """The song dict of the workspace file `relative` with its `tags` (what they lack
    from what the catalogue said of it, `known`, else from its name)."""
    artist, title = name_parts(PurePosixPath(relative).stem)
    if known.get("title"):  # a download: its name is its title, made safe
        title, artist = str(known["title"]), str(known.get("artist") or "")
    song = Song(
        id=local_id(relative),
        title=tags.get("title") or title,
        artist=tags.get("artist") or artist,
        album=tags.get("album") or str(known.get("album") or ""),
        duration_ms=int(tags.get("duration", 0.0) * 1000),
        url=local_file_url(app_id, relative),
        source="local",
        path=relative,
    )
    return song.to_dict()


def _same_song(song: Song) -> tuple[str, str]:
    return song.title.strip().casefold(), song.artist.strip().casefold()


def without_copies(catalogue: Iterable[Song], library: Iterable[Song]) -> list[Song]:
    """The catalogue's songs but those the library holds a copy of (the same title by
    the same artist): listed beside the library, each song once."""
    held = {_same_song(song) for song in library if song.artist.strip()}
    return [song for song in catalogue if _same_song(song) not in held]


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
