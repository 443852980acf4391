"""What an audio file is, by its content: the first bytes of each format the music
library plays, and the audio files of a folder found that way.

The music app checks a song the user adds with `audio_kind`; the executor's
`file_import` copies what `audio_files` finds, and the controller's permission
policy counts the same files to say what an import would copy. A file's name never
decides: a text file named `.mp3` is not audio, a song named `.txt` is.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SIGNATURE_BYTES", "AudioFile", "audio_files", "audio_kind", "folder_of"]

SIGNATURE_BYTES = 16  # how much of a file `audio_kind` reads
MAX_DEPTH = 3  # how deep `audio_files` looks below the folder


def audio_kind(head: bytes) -> str | None:
    """The audio format whose signature `head` (a file's first bytes) starts with:
    "mp3", "aac", "wav", "flac", "ogg", "m4a", "aiff", "wma"; None for anything else."""
    if head[:3] == b"ID3":
        return "mp3"
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        # an MPEG audio frame; its layer bits 00 are an AAC (ADTS) frame instead
        return "aac" if head[1] & 0x06 == 0 else "mp3"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head[:4] == b"fLaC":
        return "flac"
    if head[:4] == b"OggS":
        return "ogg"
    if head[4:8] == b"ftyp":
        return "m4a"
    if head[:4] == b"FORM" and head[8:12] in (b"AIFF", b"AIFC"):
        return "aiff"
    if head[:8] == b"\x30\x26\xb2\x75\x8e\x66\xcf\x11":
        return "wma"
    return None


@dataclass(frozen=True)
class AudioFile:
    path: Path
    relative: str  # below the folder, with "/"
    kind: str
    size: int


def folder_of(named: str) -> Path:
    """The folder a user named ("~/Music", an absolute path), `~` expanded."""
    return Path(os.path.expanduser(named.strip() or "~/Music"))


def _sniff(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return audio_kind(os.read(fd, SIGNATURE_BYTES))
    except OSError:
        return None
    finally:
        os.close(fd)


def audio_files(folder: Path, *, max_bytes: int, limit: int) -> tuple[list[AudioFile], int]:
    """The audio files under `folder` (hidden entries and symlinks left out, at most
    `MAX_DEPTH` levels down), sorted by path: at most `limit` of them, each no larger
    than `max_bytes`; and how many audio files were left out for their size."""
    found: list[AudioFile] = []
    too_large = 0
    root = folder.resolve()
    for current, dirs, files in os.walk(root, followlinks=False):
        here = Path(current)
        depth = len(here.relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and depth < MAX_DEPTH)
        for name in sorted(files):
            path = here / name
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if name.startswith(".") or not stat.S_ISREG(info.st_mode):
                continue
            kind = _sniff(path)
            if kind is None:
                continue
            if info.st_size > max_bytes:
                too_large += 1
                continue
            relative = path.relative_to(root).as_posix()
            found.append(AudioFile(path, relative, kind, info.st_size))
            if len(found) >= limit:
                return found, too_large
    return found, too_large
