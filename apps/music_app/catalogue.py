"""The music catalogue as the music app sees it: requests to plan and answers to read.

The catalogue is any server shaped like Apple's iTunes Search API (no key needed):
`GET <api_base>/search?term=…&media=music&entity=song&limit=N` answers
`{"resultCount": n, "results": [{"trackId", "trackName", "artistName",
"collectionName", "trackTimeMillis", "previewUrl", "artworkUrl100"}, …]}`.
This module builds the `http_request` step arguments for a search, turns an answer
(JSON or the text of it) into `Song`s, and names downloaded files safely. It does no
I/O: the executor makes the request.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote

__all__ = [
    "DEFAULT_API_BASE",
    "DEFAULT_DOWNLOAD_EXT",
    "SEARCH_LIMIT",
    "Song",
    "download_filename",
    "format_duration",
    "is_local_id",
    "local_file_url",
    "local_id",
    "parse_search_answer",
    "search_request",
    "song_from_dict",
]

DEFAULT_API_BASE = "https://itunes.apple.com"
# iTunes previews are AAC in an M4A container; a catalogue serving other audio
# sets `download_ext` in `app_settings.music_app`.
DEFAULT_DOWNLOAD_EXT = "m4a"
SEARCH_LIMIT = 20
LOCAL_PREFIX = "local:"


@dataclass
class Song:
    """One playable song, from the catalogue (`source="catalogue"`) or the workspace."""

    id: str
    title: str
    artist: str = ""
    album: str = ""
    duration_ms: int = 0
    url: str = ""  # a preview URL, or (local) the controller URL of the file
    artwork: str = ""
    source: str = "catalogue"  # "catalogue" | "local"
    path: str = ""  # local songs: path relative to the workspace
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def display(self) -> str:
        """ "周杰伦 - 七里香", the form `last_played` takes (the design's example)."""
        return f"{self.artist} - {self.title}" if self.artist else self.title

    @property
    def duration(self) -> str:
        return format_duration(self.duration_ms)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("extra", None)
        return data


def song_from_dict(raw: Any) -> Song | None:
    """A `Song` from its `to_dict()` form (as kept in state or action params)."""
    if not isinstance(raw, dict) or not raw.get("id"):
        return None
    return Song(
        id=str(raw["id"]),
        title=str(raw.get("title") or ""),
        artist=str(raw.get("artist") or ""),
        album=str(raw.get("album") or ""),
        duration_ms=_as_int(raw.get("duration_ms")),
        url=str(raw.get("url") or ""),
        artwork=str(raw.get("artwork") or ""),
        source=str(raw.get("source") or "catalogue"),
        path=str(raw.get("path") or ""),
    )


def format_duration(ms: int) -> str:
    """4:59 for 299 000 ms; "" when unknown."""
    if not ms or ms <= 0:
        return ""
    seconds = int(round(ms / 1000))
    return f"{seconds // 60}:{seconds % 60:02d}"


def _as_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def search_request(
    api_base: str, term: str, limit: int = SEARCH_LIMIT, country: str | None = None
) -> dict[str, Any]:
    """The `http_request` arguments of a catalogue search for `term`."""
    params: dict[str, Any] = {
        "term": term,
        "media": "music",
        "entity": "song",
        "limit": limit,
    }
    if country:
        params["country"] = country
    return {
        "method": "GET",
        "url": f"{(api_base or DEFAULT_API_BASE).rstrip('/')}/search",
        "params": params,
    }


def parse_search_answer(answer: Any) -> list[Song]:
    """The songs of a catalogue answer; `ValueError` if it is not one.

    The executor parses JSON answers (also iTunes' JSON labelled `text/javascript`);
    a catalogue labelling its JSON otherwise gives text (or a `raw` {status_code, body}).
    """
    if isinstance(answer, dict) and "body" in answer and "results" not in answer:
        answer = answer["body"]
    if isinstance(answer, bytes):
        answer = answer.decode("utf-8", "replace")
    if isinstance(answer, str):
        try:
            answer = json.loads(answer)
        except ValueError as exc:
            raise ValueError("the catalogue did not answer with JSON") from exc
    if not isinstance(answer, dict) or not isinstance(answer.get("results"), list):
        raise ValueError("the catalogue's answer has no results list")
    songs: list[Song] = []
    seen: set[str] = set()
    for item in answer["results"]:
        if not isinstance(item, dict):
            continue
        track_id = item.get("trackId")
        title = item.get("trackName")
        if track_id is None or not title:
            continue
        song_id = str(track_id)
        if song_id in seen:
            continue
        seen.add(song_id)
        songs.append(
            Song(
                id=song_id,
                title=str(title),
                artist=str(item.get("artistName") or ""),
                album=str(item.get("collectionName") or ""),
                duration_ms=_as_int(item.get("trackTimeMillis")),
                url=str(item.get("previewUrl") or ""),
                artwork=str(item.get("artworkUrl100") or ""),
            )
        )
    return songs


_UNSAFE = re.compile(r'[\\/:*?"<>|\x00-\x1f\x7f]+')


def download_filename(title: str, ext: str = DEFAULT_DOWNLOAD_EXT) -> str:
    """A file name for a downloaded song, safe inside the workspace.

    ASCII titles become a lower-case slug ("Yesterday" → "yesterday.m4a"); other
    titles keep their own letters ("七里香" → "七里香.m4a"). Never a path, never
    hidden, never empty.
    """
    ext = re.sub(r"[^a-z0-9]", "", (ext or DEFAULT_DOWNLOAD_EXT).lower())[:8]
    ext = ext or DEFAULT_DOWNLOAD_EXT
    text = unicodedata.normalize("NFKC", title or "").strip()
    if text.isascii():
        stem = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    else:
        stem = _UNSAFE.sub("_", text)
        stem = re.sub(r"\s+", "_", stem).strip("._ ")
    stem = stem[:60].strip("._ ") or "song"
    return f"{stem}.{ext}"


def local_file_url(app_id: str, relative_path: str) -> str:
    """The controller URL serving a workspace file to the desktop (token added there)."""
    return f"/api/apps/{quote(app_id)}/files/{quote(relative_path)}"


def is_local_id(song_id: str) -> bool:
    return str(song_id).startswith(LOCAL_PREFIX)


def local_id(relative_path: str) -> str:
    return f"{LOCAL_PREFIX}{relative_path}"
