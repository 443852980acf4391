"""The music app's replies: the song list, the player, and the plain messages.

Every function returns a reply dict of the wire protocol (S-50): `view_type`,
`data` (opaque to the system, S-06), `actions` (S-53/S-54) and a spoken `message`.
The song list follows F-1 (播放 buttons `play` with `params.song_id`, a 筛选
`input`, a 音质 `select`); the player is a `media` view (url, type "audio", title)
with 暂停 / 上一首 / 下一首.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from music_catalogue import Song

__all__ = [
    "MAX_LISTED",
    "library_button",
    "step_outcome",
    "QUALITIES",
    "download_done_view",
    "media_view",
    "song_list_view",
    "text_view",
]

QUALITIES = ["标准", "高品", "无损"]
MAX_LISTED = 30


def _item(song: Song) -> dict[str, Any]:
    parts = [song.artist, song.album, song.duration]
    if song.source == "local":
        parts.append("本地")
    return {
        "id": song.id,
        "title": song.title,
        "sub": " · ".join(p for p in parts if p),
        "artist": song.artist,
        "album": song.album,
        "duration": song.duration,
        "image": song.artwork or None,
        "source": song.source,
    }


def search_actions(quality: str, filter_value: str = "") -> list[dict[str, Any]]:
    """The controls under every song list: 筛选, 音质, 搜索."""
    return [
        {
            "type": "input",
            "label": "筛选",
            "action_id": "filter",
            "placeholder": "按歌名、歌手或专辑筛选",
            "value": filter_value,
        },
        {
            "type": "select",
            "label": "音质",
            "action_id": "set_quality",
            "options": list(QUALITIES),
            "value": quality if quality in QUALITIES else QUALITIES[0],
        },
        {
            "type": "input",
            "label": "搜索",
            "action_id": "search",
            "placeholder": "歌手或歌名，如：周杰伦",
        },
    ]


def song_list_view(
    title: str,
    songs: list[Song],
    message: str,
    *,
    quality: str = QUALITIES[0],
    filter_value: str = "",
    extra_actions: list[dict[str, Any]] | None = None,
    state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """F-1's `list` view: one 播放 button per song, then 筛选 / 音质 / 搜索."""
    shown = songs[:MAX_LISTED]
    actions: list[dict[str, Any]] = [
        {
            "type": "button",
            "label": "播放",
            "action_id": "play",
            "params": {"song_id": s.id},
        }
        for s in shown
    ]
    actions += search_actions(quality, filter_value)
    actions += extra_actions or []
    reply: dict[str, Any] = {
        "status": "ok",
        "view_type": "list",
        "data": {"title": title, "items": [_item(s) for s in shown]},
        "actions": actions,
        "message": message,
    }
    if state:
        reply["state"] = state
    return reply


def media_view(
    song: Song, message: str, *, playing: bool = True, state: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The player: a `media` view of `song` with 暂停/继续, 上一首, 下一首 (and 下载)."""
    where = {"song_id": song.id, "source": song.source}
    toggle = (
        {"type": "button", "label": "暂停", "action_id": "pause", "params": song.to_dict()}
        if playing
        else {
            "type": "button",
            "label": "继续",
            "action_id": "resume",
            "params": song.to_dict(),
        }
    )
    actions: list[dict[str, Any]] = [
        toggle,
        {"type": "button", "label": "上一首", "action_id": "prev", "params": dict(where)},
        {"type": "button", "label": "下一首", "action_id": "next", "params": dict(where)},
    ]
    if song.source == "catalogue" and song.url:
        actions.append(
            {
                "type": "button",
                "label": "下载",
                "action_id": "download",
                "params": {
                    "song_id": song.id,
                    "url": song.url,
                    "title": song.title,
                    "artist": song.artist,
                },
            }
        )
    actions.append({"type": "button", "label": "返回列表", "action_id": "back"})
    reply: dict[str, Any] = {
        "status": "ok",
        "view_type": "media",
        "data": {
            "url": song.url,
            "type": "audio",
            "title": song.display,
            "artist": song.artist,
            "album": song.album,
            "image": song.artwork or None,
            "song_id": song.id,
            "source": song.source,
            "autoplay": playing,
            "paused": not playing,
        },
        "actions": actions,
        "message": message,
    }
    if state:
        reply["state"] = state
    return reply


def download_done_view(title: str, shown_path: str, note: str = "") -> dict[str, Any]:
    """F-2's answer: "已下载《七里香》到 workspace/…" with a `play_local` button."""
    content = f"已下载《{title}》到 {shown_path}"
    if note:
        content += f"\n{note}"
    return {
        "status": "ok",
        "view_type": "text",
        "data": {"content": content, "path": shown_path},
        "actions": [
            {
                "type": "button",
                "label": "播放",
                "action_id": "play_local",
                "params": {"path": shown_path},
            },
            {"type": "button", "label": "本地曲库", "action_id": "library"},
        ],
        "message": "下载完成",
    }


def text_view(
    content: str,
    message: str | None = None,
    *,
    actions: list[dict[str, Any]] | None = None,
    status: str = "ok",
) -> dict[str, Any]:
    return {
        "status": status,
        "view_type": "text",
        "data": {"content": content},
        "actions": actions or [],
        "message": message if message is not None else content,
    }


def step_outcome(results: Mapping[str, Any], n: int) -> tuple[bool, Any, str]:
    """(ok, result, error text) of step `n` in `context["tool_results"]`."""
    entry = results.get(f"step_{n}") or {}
    if entry.get("status") == "ok":
        return True, entry.get("result"), ""
    return False, None, str(entry.get("error") or entry.get("code") or "没有执行")


def library_button() -> dict[str, Any]:
    return {"type": "button", "label": "本地曲库", "action_id": "library"}
