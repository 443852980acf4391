"""The music app's replies: the song list, the player, and the plain messages.

Every function returns a reply dict of the wire protocol: `view_type`,
`data` (opaque to the system), `actions` and a spoken `message`,
its labels in the user's language (`turn.tr(zh, en)`; song names are data and stay
as they are). The song list has (播放 buttons `play` with `params.song_id`,
each in its song's row by `item_id`, a 筛选 `input`, a 音质 `select`); a list shown
because something failed carries `notice="warning"`, the plain reason as `message`
(and as the empty list's text) and the technical text as `detail`; the player is a
`media` view (url, type "audio", title) with 暂停 / 上一首 / 下一首; with the list it
was started from (`player_view`), a dashboard of the player above that list, each
song's 播放 button in its row.
"""

from __future__ import annotations

from typing import Any

from aios_sdk import Turn
from aios_sdk.views import (
    button,
    dashboard_reply,
    file_picker,
    input_box,
    list_reply,
    media_reply,
    select,
    text_reply,
    widget,
)

from .catalogue import Song

__all__ = [
    "DEFAULT_IMPORT_FOLDER",
    "MAX_LISTED",
    "add_songs_button",
    "artist_name",
    "QUALITIES",
    "download_done_view",
    "import_folder_box",
    "library_button",
    "media_view",
    "not_playing",
    "player_view",
    "quality_name",
    "search_actions",
    "song_list_view",
    "songs_en",
]

QUALITIES = ["标准", "高品", "无损"]  # the values kept in `state`, whatever the language
QUALITY_NAMES_EN = {"标准": "Standard", "高品": "High", "无损": "Lossless"}
MAX_LISTED = 30


def songs_en(count: int) -> str:
    """ "1 song", "4 songs": the English of "4 首歌"."""
    return "1 song" if count == 1 else f"{count} songs"


def quality_name(turn: Turn, quality: str) -> str:
    """A quality as the user reads it ("无损", in English "Lossless")."""
    return turn.tr(quality, QUALITY_NAMES_EN.get(quality, quality))


def artist_name(turn: Turn, song: Song) -> str:
    """The song's artist as the user reads it: "未知歌手" when not known."""
    return song.artist or turn.tr("未知歌手", "Unknown artist")


def _item(turn: Turn, song: Song) -> dict[str, Any]:
    parts = [artist_name(turn, song), song.album, song.duration]
    if song.source == "local":
        parts.append(turn.tr("本地", "local"))
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


def search_actions(
    turn: Turn, quality: str, filter_value: str = ""
) -> list[dict[str, Any]]:
    """The controls under every song list: 筛选, 音质, 搜索."""
    options: list[Any] = QUALITIES
    if turn.language == "en-US":  # the same values, English labels
        options = [{"label": quality_name(turn, q), "value": q} for q in QUALITIES]
    return [
        input_box(
            turn.tr("筛选", "Filter"),
            "filter",
            turn.tr("按歌名、歌手或专辑筛选", "Filter by title, artist or album"),
            value=filter_value,
        ),
        select(
            turn.tr("音质", "Quality"),
            "set_quality",
            options,
            value=quality if quality in QUALITIES else QUALITIES[0],
        ),
        input_box(
            turn.tr("搜索", "Search"),
            "search",
            turn.tr("歌手或歌名，如：周杰伦", "Artist or song, e.g. Taylor Swift"),
        ),
    ]


def song_list_view(
    turn: Turn,
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
    """The song `list` view: a 播放 button in each song's row, then 筛选 / 音质 / 搜索.

    `empty` is what the window says when there is no song (why, if it failed)."""
    shown = songs[:MAX_LISTED]
    play = turn.tr("播放", "Play")
    # the list shown is what 下一首 / 上一首 step through once a song of it plays
    state = {**(state or {}), "queue": [s.to_dict() for s in shown]}
    return list_reply(
        [_item(turn, s) for s in shown],
        title,
        empty=empty or None,
        actions=[
            *(button(play, "play", song_id=s.id, item_id=s.id) for s in shown),
            *search_actions(turn, quality, filter_value),
            *(extra_actions or []),
        ],
        message=message,
        state=state,
        notice=notice,
        detail=detail,
    )


def media_view(
    turn: Turn,
    song: Song,
    message: str,
    *,
    playing: bool = True,
    ended: bool = False,
    state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The player: a `media` view of `song` with 暂停/继续, 上一首, 下一首 (and 下载)."""
    where = {"song_id": song.id, "source": song.source}
    actions = [
        button(turn.tr("暂停", "Pause"), "pause", **song.to_dict())
        if playing
        else button(
            turn.tr("再听一遍", "Play again") if ended else turn.tr("继续", "Resume"),
            "resume",
            **song.to_dict(),
        ),
        button(turn.tr("上一首", "Previous"), "prev", **where),
        button(turn.tr("下一首", "Next"), "next", **where),
    ]
    if song.source == "catalogue" and song.url:
        actions.append(
            button(
                turn.tr("下载", "Download"),
                "download",
                song_id=song.id,
                url=song.url,
                title=song.title,
                artist=song.artist,
                album=song.album,
            )
        )
    actions.append(button(turn.tr("返回列表", "Back to the list"), "back"))
    return media_reply(
        song.url,
        song.display,
        kind="audio",
        artist=artist_name(turn, song),
        autoplay=playing,
        on_end={"action_id": "ended", "params": song.to_dict()} if playing else None,
        on_pause={"action_id": "pause", "params": song.to_dict()},
        on_play={"action_id": "resume", "params": song.to_dict()},
        actions=actions,
        message=message,
        state=state,
        # the app's own, beside what the player shows
        extra_data={
            "album": song.album,
            "image": song.artwork or None,
            "song_id": song.id,
            "source": song.source,
            "paused": not playing,
        },
    )


def player_view(
    turn: Turn,
    song: Song,
    queue: list[Song],
    message: str,
    *,
    playing: bool = True,
    ended: bool = False,
    state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The player of `song`; above the rest of `queue` (the list it was started from)
    when that holds more than this one song."""
    player = media_view(turn, song, message, playing=playing, ended=ended, state=state)
    if len(queue) < 2:
        return player
    shown = queue[:MAX_LISTED]
    items = [_item(turn, s) for s in shown]
    for item in items:
        if item["id"] == song.id:
            item["icon"] = "🔊"
    play = turn.tr("播放", "Play")
    listed = list_reply(items, turn.tr("播放列表", "Playlist"))
    reply = dashboard_reply(
        [widget(player), widget(listed)],
        actions=[
            *player["actions"],
            *(
                button(play, "play", song_id=s.id, item_id=s.id)
                for s in shown
                if s.id != song.id
            ),
        ],
        message=message,
        state=state,
        extra_data={"song_id": song.id, "paused": not playing},
    )
    return reply


def download_done_view(
    turn: Turn, title: str, shown_path: str, note: str = ""
) -> dict[str, Any]:
    """The download's answer: "已下载《七里香》到 workspace/…" with a `play_local` button."""
    content = turn.tr(
        f"已下载《{title}》到 {shown_path}", f'Downloaded "{title}" to {shown_path}'
    )
    if note:
        content += f"\n{note}"
    return text_reply(
        content,
        turn.tr("下载完成", "Download complete"),
        actions=[
            button(turn.tr("播放", "Play"), "play_local", path=shown_path),
            library_button(turn),
        ],
        extra_data={"path": shown_path},
    )


def not_playing(turn: Turn) -> dict[str, Any]:
    """The answer to 暂停 / 下一首 when nothing plays."""
    return text_reply(
        turn.tr("还没有正在播放的歌。", "Nothing is playing yet."),
        actions=[library_button(turn)],
    )


def add_songs_button(turn: Turn) -> dict[str, Any]:
    """添加歌曲: choose audio files (or drop them on the window) for the library."""
    return file_picker(
        turn.tr("添加歌曲", "Add songs"), "add_songs", accept="audio/*", drop=True
    )


DEFAULT_IMPORT_FOLDER = "~/Music"


def import_folder_box(turn: Turn) -> dict[str, Any]:
    """从文件夹导入: the folder to copy songs from (asked about before anything is
    copied); left empty, `DEFAULT_IMPORT_FOLDER`. Not prefilled: a filled box counts as
    the user's typing, which the desktop keeps through a language switch."""
    return input_box(
        turn.tr("从文件夹导入", "Import a folder"),
        "import_folder",
        turn.tr(
            f"文件夹（不填就是 {DEFAULT_IMPORT_FOLDER}）",
            f"A folder ({DEFAULT_IMPORT_FOLDER} if left empty)",
        ),
    )


def library_button(turn: Turn) -> dict[str, Any]:
    return button(turn.tr("本地曲库", "Local library"), "library")
