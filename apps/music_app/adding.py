"""Songs the user adds: files chosen with 添加歌曲, or dropped on the music window.

The desktop sends each file in pieces (`value` = {name, size, offset, data}). The
first piece is checked before anything is written: the declared size against
`max_song_mb` (`app_settings.music_app`, 100 by default), and the content's first
bytes against the audio formats the library plays (what a file is named says
nothing). The file then goes to `music/` in the user's own workspace through the
executor's `file_write` (the first piece written, the others appended) under the
name the user gave it ("周杰伦 - 晴天.mp3", from which the library reads artist and
title), made safe, and never replaces a song already there ("晴天 (2).mp3"). `state["adding"]` follows the
file until its last piece is in.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from aios_sdk import ToolFailed, Turn, audio_kind
from aios_sdk.views import button, text_reply

from .views import add_songs_button, library_button

__all__ = ["DEFAULT_MAX_SONG_MB", "MUSIC_FOLDER", "AddingFlow", "kept_name"]

DEFAULT_MAX_SONG_MB = 100
MUSIC_FOLDER = "music"
STATE_KEY = "adding"

# the first bytes of each format the library plays → the file name's ending
_SAME_FORMAT = {"ogg": {".ogg", ".opus", ".oga"}, "aiff": {".aiff", ".aif"}}


# what may not be in a file's name: path separators, characters some systems refuse,
# control characters
_UNSAFE = re.compile(r'[\\/:*?"<>|\x00-\x1f\x7f]+')
MAX_STEM = 80


def kept_name(stem: str, ext: str) -> str:
    """The user's own file name, safe in the workspace: never a path, never hidden,
    never empty ("周杰伦 - 晴天", "mp3" → "周杰伦 - 晴天.mp3")."""
    text = _UNSAFE.sub("_", unicodedata.normalize("NFKC", stem))
    text = re.sub(r"\s+", " ", text).strip(" .")
    return f"{text[:MAX_STEM].strip(' .') or 'song'}.{ext}"


def _megabytes(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB"


class AddingFlow:
    """The pieces of one added file at a time, over an agent with `call_tool`."""

    def __init__(self, agent: Any, max_mb: int = DEFAULT_MAX_SONG_MB):
        self.agent = agent
        self.max_bytes = max(1, int(max_mb)) << 20

    def piece(self, turn: Turn) -> dict[str, Any]:
        value = turn.value if isinstance(turn.value, Mapping) else {}
        name = PurePosixPath(str(value.get("name") or "")).name or "song"
        try:
            size, offset = int(value.get("size") or 0), int(value.get("offset") or 0)
            data = base64.b64decode(str(value.get("data") or ""), validate=True)
        except (TypeError, ValueError, binascii.Error):
            return self._refused(
                turn,
                turn.tr(
                    f"《{name}》没有传完整，请再试一次。",
                    f'"{name}" did not arrive whole; please try again.',
                ),
            )
        if offset == 0:
            return self._first(turn, name, size, data)
        return self._next(turn, name, size, offset, data)

    def _first(self, turn: Turn, name: str, size: int, data: bytes) -> dict[str, Any]:
        if size > self.max_bytes:
            return self._refused(
                turn,
                turn.tr(
                    f"《{name}》有 {_megabytes(size)}，超过了一首歌最多 {_megabytes(self.max_bytes)}，没有添加。",
                    f'"{name}" is {_megabytes(size)}, more than the {_megabytes(self.max_bytes)} '
                    "a song may be; it was not added.",
                ),
            )
        kind = audio_kind(data[:16])
        if kind is None or len(data) > size:
            return self._refused(
                turn,
                turn.tr(
                    f"《{name}》的内容不是音乐库能播放的音频（MP3、M4A、WAV、FLAC、OGG 等），没有添加。",
                    f'"{name}" does not hold audio the library plays (MP3, M4A, WAV, '
                    "FLAC, OGG, …); it was not added.",
                ),
            )
        path = self._free_path(name, kind)
        try:
            self.agent.call_tool(
                "file_write",
                path=path,
                content=base64.b64encode(data).decode("ascii"),
                encoding="base64",
            )
        except ToolFailed as exc:
            return self._failed(turn, name, exc)
        adding = {"name": name, "size": size, "path": path, "received": len(data)}
        return self._progress(turn, adding)

    def _next(
        self, turn: Turn, name: str, size: int, offset: int, data: bytes
    ) -> dict[str, Any]:
        adding = turn.state.get(STATE_KEY)
        if (
            not isinstance(adding, Mapping)
            or adding.get("name") != name
            or adding.get("size") != size
            or adding.get("received") != offset
            or offset + len(data) > size
        ):
            return self._refused(
                turn,
                turn.tr(
                    f"《{name}》没有传完整，请再试一次。",
                    f'"{name}" did not arrive whole; please try again.',
                ),
            )
        try:
            self.agent.call_tool(
                "file_write",
                path=str(adding["path"]),
                content=base64.b64encode(data).decode("ascii"),
                encoding="base64",
                mode="append",
            )
        except ToolFailed as exc:
            return self._failed(turn, name, exc)
        return self._progress(turn, {**adding, "received": offset + len(data)})

    def _progress(self, turn: Turn, adding: dict[str, Any]) -> dict[str, Any]:
        name, size, received = adding["name"], adding["size"], adding["received"]
        if received < size:  # more pieces to come: said in the window, not aloud
            shown = f"{_megabytes(received)} / {_megabytes(size)}"
            return text_reply(
                turn.tr(f"正在添加《{name}》：{shown}", f'Adding "{name}": {shown}'),
                message="",
                state={STATE_KEY: adding},
            )
        shown_path = f"workspace/{adding['path']}"  # what play_local finds it by
        return text_reply(
            turn.tr(f"已把《{name}》加入曲库。", f'Added "{name}" to your library.'),
            turn.tr("已添加歌曲", "Song added"),
            actions=[
                button(turn.tr("播放", "Play"), "play_local", path=shown_path),
                add_songs_button(turn),
                library_button(turn),
            ],
            state={STATE_KEY: None},
        )

    def _free_path(self, name: str, kind: str) -> str:
        """`music/<safe name>.<ext>`, numbered when a song of that name is there."""
        stem = PurePosixPath(name)
        keep = _SAME_FORMAT.get(kind, {f".{kind}"})
        ext = stem.suffix.lower()[1:] if stem.suffix.lower() in keep else kind
        first = kept_name(stem.stem, ext)
        try:
            listing = self.agent.call_tool("file_list", path=MUSIC_FOLDER)
        except ToolFailed:  # no folder yet: nothing to collide with
            listing = {}
        files = listing.get("files") if isinstance(listing, Mapping) else None
        taken = {str(f.get("name")) for f in files or [] if isinstance(f, Mapping)}
        candidate, number = first, 2
        while candidate in taken:
            base = PurePosixPath(first)
            candidate = f"{base.stem} ({number}){base.suffix}"
            number += 1
        return f"{MUSIC_FOLDER}/{candidate}"

    def _refused(self, turn: Turn, why: str) -> dict[str, Any]:
        return text_reply(
            why,
            turn.tr("没有添加", "Not added"),  # the view says why; once is enough
            actions=[add_songs_button(turn), library_button(turn)],
            status="error",
            state={STATE_KEY: None},
        )

    def _failed(self, turn: Turn, name: str, exc: ToolFailed) -> dict[str, Any]:
        reply = self._refused(
            turn,
            turn.tr(
                f"《{name}》没能存进曲库。", f'"{name}" could not be saved to your library.'
            ),
        )
        reply["detail"] = str(exc)
        return reply
