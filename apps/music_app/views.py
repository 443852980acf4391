"""The music app's replies: the song list, the player, and the plain messages.

Every function returns a reply dict of the wire protocol (S-50): `view_type`,
`data` (opaque to the system, S-06), `actions` (S-53/S-54) and a spoken `message`.
The song list follows F-1 (播放 buttons `play` with `params.song_id`, each in its
song's row by `item_id`, a 筛选 `input`, a 音质 `select`); a list shown because
something failed carries `notice="warning"`, the plain reason as `message` (and as
the empty list's text) and the technical text as `detail`; the player is a `media` view (url, type "audio", title)
with 暂停 / 上一首 / 下一首.
"""

from __future__ import annotations

from typing import Any

from aios_sdk.views import button, input_box, reply, select, text_reply

from .catalogue import Song

__all__ = [
    "MAX_LISTED",
    "QUALITIES",
    "download_done_view",
    "library_button",
    "media_view",
    "not_playing",
    "search_actions",
    "song_list_view",
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
        input_box("筛选", "filter", "按歌名、歌手或专辑筛选", value=filter_value),
        select(
            "音质",
            "set_quality",
            QUALITIES,
            value=quality if quality in QUALITIES else QUALITIES[0],
        ),
        input_box("搜索", "search", "歌手或歌名，如：周杰伦"),
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
    empty: str | None = None,
    notice: str | None = None,
    detail: str | None = None,
) -> dict[str, Any]:
    """F-1's `list` view: a 播放 button in each song's row, then 筛选 / 音质 / 搜索.

    `empty` is what the window says when there is no song (why, if it failed)."""
    shown = songs[:MAX_LISTED]
    data: dict[str, Any] = {"title": title, "items": [_item(s) for s in shown]}
    if empty:
        data["empty"] = empty
    return reply(
        "list",
        data,
        actions=[
            *(button("播放", "play", song_id=s.id, item_id=s.id) for s in shown),
            *search_actions(quality, filter_value),
            *(extra_actions or []),
        ],
        message=message,
        state=state,
        notice=notice,
        detail=detail,
    )


def media_view(
    song: Song, message: str, *, playing: bool = True, state: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The player: a `media` view of `song` with 暂停/继续, 上一首, 下一首 (and 下载)."""
    where = {"song_id": song.id, "source": song.source}
    actions = [
        button("暂停", "pause", **song.to_dict())
        if playing
        else button("继续", "resume", **song.to_dict()),
        button("上一首", "prev", **where),
        button("下一首", "next", **where),
    ]
    if song.source == "catalogue" and song.url:
        actions.append(
            button(
                "下载",
                "download",
                song_id=song.id,
                url=song.url,
                title=song.title,
                artist=song.artist,
            )
        )
    actions.append(button("返回列表", "back"))
    data = {
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
    }
    return reply("media", data, actions=actions, message=message, state=state)


def download_done_view(title: str, shown_path: str, note: str = "") -> dict[str, Any]:
    """F-2's answer: "已下载《七里香》到 workspace/…" with a `play_local` button."""
    content = f"已下载《{title}》到 {shown_path}"
    if note:
        content += f"\n{note}"
    return reply(
        "text",
        {"content": content, "path": shown_path},
        actions=[button("播放", "play_local", path=shown_path), library_button()],
        message="下载完成",
    )


def not_playing() -> dict[str, Any]:
    """The answer to 暂停 / 下一首 when nothing plays."""
    return text_reply("还没有正在播放的歌。", actions=[library_button()])


def library_button() -> dict[str, Any]:
    return button("本地曲库", "library")
