"""How the music app answers: which steps to plan, and what to show when they ran.

Each flow has two halves. The first call (no `tool_results`) plans steps for the
executor; the controller runs them and calls again with the same
instruction or action plus `context["tool_results"]`, and the second half turns the
results into a view. Only atomic tools and the app's own `music_library` tool touch
the disk or the network. Playback history (`recent.json`, `playlist.m3u`) is
written with `file_write` through `call_tool` once the song is known.

Search → `http_request` + `cache_set` → `list` with 播放 buttons; 播放 →
`cache_get` → `media` with 暂停 / 下一首 / 上一首. A request to hear something
("播放晴天", "play songs by Jay Chou") searches the same way and starts the song it
names, or the first match. The play queue (kept in `state["queue"]`, shown under the
player) that 下一首 and 上一首 step through, stopping at its ends, is the list the song
was picked from; for one song asked for by itself (by name, or as a file) it is the
library, from that song on. Download: search → `http_request`
with `save_to` from `{{step_1.result.results.0.previewUrl}}` → `file_list` → text
"已下载《七里香》到 workspace/…" with a `play_local` button. A free-form wish
("来点适合跑步的歌") is first turned into a search term by the LLM when one is
configured (`wish`), then searched the same way; the term is read back from
the cache in the second half, so the model is asked only once. A question or a chain of requests the rules would
only search for ("七里香是哪年发行的", `intent.asks_more`) goes, with a model, to the
SDK's agent loop with the app's tools. Every text the user
reads is in their language (`turn.tr(zh, en)`); the views get the `Turn` for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from aios_sdk import Flows, Turn, action
from aios_sdk.views import button, list_reply, text_reply

from .adding import DEFAULT_MAX_SONG_MB, MUSIC_FOLDER, AddingFlow
from .catalogue import (
    DEFAULT_API_BASE,
    DEFAULT_DOWNLOAD_EXT,
    SEARCH_LIMIT,
    Song,
    is_local_id,
    parse_search_answer,
    search_request,
    song_from_dict,
)
from .download import DownloadFlow
from .intent import MusicIntent, asks_more, read_intent
from .library import song_matches, without_copies
from .views import (
    DEFAULT_IMPORT_FOLDER,
    MAX_LISTED,
    QUALITIES,
    add_songs_button,
    artist_name,
    import_folder_box,
    library_button,
    not_playing,
    player_view,
    quality_name,
    song_list_view,
    songs_en,
)
from .wish import Wish, interpret_wish

__all__ = ["LIBRARY_TOOL", "MusicFlows"]

LIBRARY_TOOL = "music_library"
RESULTS_KEY = "last_results"
QUERY_KEY = "last_query"
CACHE_TTL = 24 * 3600
RECENT_FILE = "recent.json"
PLAYLIST_FILE = "playlist.m3u"
RECENT_MAX = 50
_OFFSET = {"next": 1, "prev": -1}


def _read_recent(step_id: int) -> dict[str, Any]:
    """The step that reads the play history."""
    return {"step_id": step_id, "tool": "file_read", "args": {"path": RECENT_FILE}}


def _songs(raw: Any) -> list[Song]:
    if not isinstance(raw, list):
        return []
    return [s for s in (song_from_dict(item) for item in raw) if s is not None]


def _cached_catalogue(raw: Any) -> list[Song]:
    if raw is None:
        return []
    try:
        return parse_search_answer(raw)
    except ValueError:
        return []


def _titled(songs: list[Song], wanted: str) -> Song | None:
    """The first song titled `wanted`, or None."""
    name = wanted.strip().lower()
    if not name:
        return None
    return next((s for s in songs if s.title.strip().lower() == name), None)


def _library_from(song: Song, library: list[Song]) -> list[Song]:
    """What plays after one song asked for by itself: the library, from that song on
    (then its songs before it); a song not in the library comes first, then all of it."""
    at = next((i for i, s in enumerate(library) if s.id == song.id), None)
    if at is None:
        return [song, *library]
    return library[at:] + library[:at]


def _how_to_add(turn: Turn) -> str:
    """What an empty library says: where its songs come from."""
    return turn.tr(
        "本地曲库还没有歌曲。点“添加歌曲”选择音乐文件，或把音乐文件拖到这个窗口里；"
        "也可以从文件夹导入（如 ~/Music）。",
        'Your local library has no songs yet. Choose music files with "Add songs", '
        "drop them onto this window, or import a folder (such as ~/Music).",
    )


def _recent_entries(text: Any) -> list[dict[str, Any]]:
    if not isinstance(text, str) or not text.strip():
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


class MusicFlows(Flows):
    """The music app's behaviour, over an agent that can call and plan tools
    (`call_tool`, `plan_steps`, `settings`, `app_id`, `llm`)."""

    def __init__(self, agent: Any):
        super().__init__(agent)
        settings = agent.settings or {}
        self.api_base = str(settings.get("api_base") or DEFAULT_API_BASE)
        self.download_ext = str(settings.get("download_ext") or DEFAULT_DOWNLOAD_EXT)
        self.country = settings.get("country") or None
        self.limit = int(settings.get("search_limit") or SEARCH_LIMIT)
        self.downloads = DownloadFlow(agent, self.api_base, self.download_ext, self.country)
        self.adding = AddingFlow(
            agent, int(settings.get("max_song_mb") or DEFAULT_MAX_SONG_MB)
        )

    def quality(self, state: Mapping[str, Any]) -> str:
        value = state.get("quality")
        return value if value in QUALITIES else QUALITIES[0]

    # ------------------------------------------------------------------ what was said

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        intent = read_intent(turn.instruction)
        kind = intent.kind
        if kind in ("play", "search") and not turn.results and asks_more(intent.query):
            answered = self.hand_to_loop(turn)  # with a model: the agent loop
            if answered:
                return answered
        if kind == "play" and intent.free_form:
            return self.wish(intent, turn, play=True)
        if kind == "play" and intent.query:
            wanted = intent.title or intent.query
            return self.search(intent.query, intent.shown, turn, play=wanted)
        if kind == "play":
            return self.play_anything(turn)
        if kind == "search" and intent.free_form:
            return self.wish(intent, turn)
        if kind == "search":
            return self.search(intent.query, intent.shown, turn)
        if kind == "download":
            return self.downloads.by_name(intent, turn)
        if kind in ("next", "prev"):
            current = song_from_dict(turn.state.get("now_playing"))
            if current is None:
                note = turn.tr("还没有正在播放的歌。", "Nothing is playing yet. ")
                return self.library(turn, note=note)
            return self.play(current.id, current.source, turn, offset=_OFFSET[kind])
        if kind in ("pause", "resume"):
            current = song_from_dict(turn.state.get("now_playing"))
            if current is None:  # the library stays, with its search and ways to add
                note = turn.tr("还没有正在播放的歌。", "Nothing is playing yet. ")
                return self.library(turn, note=note)
            return self.pause(turn, current, resume=kind == "resume")
        if kind == "recent":
            return self.recent(turn)
        return self.library(turn)

    # ------------------------------------------------------------------ the controls

    @action("play", "play_song", "next", "prev")
    def on_play(self, turn: Turn) -> dict[str, Any]:
        song_id = str(turn.params.get("song_id") or "")
        if not song_id:
            return text_reply(
                turn.tr("没有指定要播放的歌。", "No song was named to play."),
                status="error",
            )
        source = "local" if is_local_id(song_id) else str(turn.params.get("source") or "")
        offset = _OFFSET.get(turn.action_id, 0)
        return self.play(song_id, source, turn, offset=offset)

    @action("play_local")
    def on_play_local(self, turn: Turn) -> dict[str, Any]:
        path = str(turn.params.get("path") or "")
        return self.play_local(path, turn)

    @action("play_recent")
    def on_play_recent(self, turn: Turn) -> dict[str, Any]:
        index = int(turn.params.get("index") or 0)
        return self.play_recent(index, turn)

    @action("ended")
    def on_ended(self, turn: Turn) -> dict[str, Any]:
        """The player reached the end of the song: it plays no more, and says so."""
        song = song_from_dict(turn.params) or song_from_dict(turn.state.get("now_playing"))
        if song is None:
            return not_playing(turn)
        message = turn.tr(f"播放结束：{song.display}", f"Finished: {song.display}")
        return player_view(
            turn,
            song,
            self._queue_with(turn, song),
            message,
            playing=False,
            ended=True,
            state={"paused": True},
        )

    @action("pause", "resume")
    def on_pause(self, turn: Turn) -> dict[str, Any]:
        song = song_from_dict(turn.params) or song_from_dict(turn.state.get("now_playing"))
        if song is None:
            return not_playing(turn)
        return self.pause(turn, song, resume=turn.action_id == "resume")

    @action("search")
    def on_search(self, turn: Turn) -> dict[str, Any]:
        term = str(turn.value or turn.params.get("keyword") or "").strip()
        if not term:
            return self.library(turn)
        intent = read_intent(term)
        if intent.kind != "search":
            return self.search(term, term, turn)
        return self.search(intent.query, intent.shown, turn)

    @action("add_songs")
    def on_add_songs(self, turn: Turn) -> dict[str, Any]:
        """A piece of a file the user chose or dropped (see `adding`)."""
        return self.adding.piece(turn)

    @action("import_folder")
    def on_import_folder(self, turn: Turn) -> dict[str, Any]:
        """Copy the songs of a folder the user names into the library (the executor's
        `file_import`, which asks the user first), then show the library."""
        folder = str(turn.value or "").strip() or DEFAULT_IMPORT_FOLDER
        if not turn.results:
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "file_import",
                        "args": {"source": folder, "dest": MUSIC_FOLDER},
                    },
                    {"step_id": 2, "tool": LIBRARY_TOOL, "args": {}},
                ],
                turn.tr(f"正在从 {folder} 导入歌曲…", f"Importing songs from {folder}…"),
            )
        ok, result, _ = turn.outcome(1)
        code = str(turn.results.get("step_1", {}).get("code") or "")
        if ok and isinstance(result, Mapping):
            count = len(result.get("copied") or [])
            note = turn.tr(
                f"已从 {folder} 导入 {count} 首歌。",
                f"Imported {songs_en(count)} from {folder}. ",
            )
            if result.get("too_large"):
                note += turn.tr(
                    f"另有 {result['too_large']} 个文件太大，没有导入。",
                    f"{result['too_large']} more were too large and were left out. ",
                )
        elif code == "denied_by_user":
            note = turn.tr(f"没有导入 {folder}。", f"Nothing was imported from {folder}. ")
        elif code == "file_not_found":
            note = turn.tr(
                f"找不到文件夹 {folder}，没有导入。",
                f"There is no folder {folder}; nothing was imported. ",
            )
        else:
            note = turn.tr(
                f"没能从 {folder} 导入歌曲。",
                f"Songs could not be imported from {folder}. ",
            )
        return self.library(turn, note=note, step=2)

    @action("download")
    def on_download(self, turn: Turn) -> dict[str, Any]:
        return self.downloads.by_url(turn)

    @action("filter")
    def on_filter(self, turn: Turn) -> dict[str, Any]:
        value = str(turn.value or "").strip()
        return self.relist(turn, filter_value=value)

    @action("set_quality")
    def on_set_quality(self, turn: Turn) -> dict[str, Any]:
        chosen = turn.selected or turn.value
        return self.relist(turn, quality=str(chosen or ""))

    @action("back")
    def on_back(self, turn: Turn) -> dict[str, Any]:
        return self.relist(turn)

    @action("recent")
    def on_recent(self, turn: Turn) -> dict[str, Any]:
        return self.recent(turn)

    def on_unknown_action(self, turn: Turn) -> dict[str, Any]:
        """`library` and anything else: the home view."""
        return self.library(turn)

    # ------------------------------------------------------------------ search

    def wish(
        self, intent: MusicIntent, turn: Turn, *, play: bool = False
    ) -> dict[str, Any]:
        """A free-form request: the model's search term (once), then the search (and,
        with `play`, its first match starts)."""
        said = Wish(intent.query, intent.shown)
        wanted = "" if play else None
        if not turn.results:
            wish = interpret_wish(self.llm, intent.request, said, turn.language)
            return self.search(wish.query, wish.shown, turn, note=wish.note, play=wanted)
        _, remembered, _ = turn.outcome(5)
        if isinstance(remembered, Mapping) and remembered.get("query"):
            said = Wish(
                str(remembered["query"]),
                str(remembered.get("shown") or remembered["query"]),
                str(remembered.get("note") or ""),
            )
        return self.search(said.query, said.shown, turn, note=said.note, play=wanted)

    def search(
        self,
        query: str,
        shown: str,
        turn: Turn,
        *,
        note: str | None = None,
        play: str | None = None,
    ) -> dict[str, Any]:
        """The search; with `note` (a free-form wish) the query is also read back
        (step 5) and the note is said before the result. With `play` (a title, or ""
        for any) the song of that title, else the first match, starts (the play
        history is read in step 6)."""
        if not turn.results:
            remembered: dict[str, Any] = {"query": query, "shown": shown}
            read_back: list[dict[str, Any]] = []
            if note is not None:
                remembered["note"] = note
                read_back = [
                    {"step_id": 5, "tool": "cache_get", "args": {"key": QUERY_KEY}}
                ]
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "http_request",
                        "args": search_request(
                            self.api_base, query, self.limit, self.country
                        ),
                    },
                    {
                        "step_id": 2,
                        "tool": "cache_set",
                        "args": {
                            "key": RESULTS_KEY,
                            "value": "{{step_1.result}}",
                            "ttl": CACHE_TTL,
                        },
                    },
                    {
                        "step_id": 3,
                        "tool": "cache_set",
                        "args": {"key": QUERY_KEY, "value": remembered, "ttl": CACHE_TTL},
                    },
                    {"step_id": 4, "tool": LIBRARY_TOOL, "args": {}},
                    *read_back,
                    *([_read_recent(6)] if play is not None else []),
                ],
                turn.tr(f"正在搜索{shown}…", f"Searching for {shown}…"),
            )
        ok, answer, error = turn.outcome(1)
        _, library_raw, _ = turn.outcome(4)
        library = _songs(library_raw)
        local = [s for s in library if song_matches(s, shown) or song_matches(s, query)]
        catalogue: list[Song] = []
        if ok:
            try:
                catalogue = parse_search_answer(answer)
            except ValueError as exc:
                ok, error = False, str(exc)
        catalogue = without_copies(catalogue, local)  # a downloaded song is listed once
        quality = self.quality(turn.state)
        playable = local + catalogue
        if play is not None and playable:
            _, recent_text, _ = turn.outcome(6)
            # one song asked for by name (or the one match): the library goes on after
            # it; an artist or a mood: its matches, to the last of them
            named = _titled(playable, play or shown)
            if named is None and len(playable) == 1:
                named = playable[0]
            if named is not None:
                song, queue = named, _library_from(named, library)
            else:
                song, queue = playable[0], playable
            reply = self._start(turn, song, recent_text, queue)
            if not ok:  # played from the library: say why the catalogue's are missing
                reply["message"] = turn.tr(
                    "音乐目录暂时无法访问（请检查网络），先播放本地曲库里的歌。",
                    "The music catalogue cannot be reached right now (check the "
                    "network); playing from your local library. ",
                ) + str(reply["message"])
                reply.update(notice="info", detail=error or None)
        elif not ok:
            reply = self._catalogue_down(turn, error, local or library, quality)
        else:
            songs = local + catalogue
            if not songs:
                message = turn.tr(
                    f"没有找到{shown}的歌，换个关键词试试？",
                    f"No songs found for {shown}. Try other words?",
                )
            else:
                message = turn.tr(
                    f"为你找到{shown}的 {len(songs)} 首歌",
                    f"Found {songs_en(len(songs))} for {shown}",
                )
            title = turn.tr(f"{shown}的歌曲", f"Songs: {shown}")
            reply = song_list_view(turn, title, songs, message, quality=quality)
        if note:
            reply["message"] = f"{note}{reply['message']}"
        return reply

    def _catalogue_down(
        self, turn: Turn, error: str, songs: list[Song], quality: str
    ) -> dict[str, Any]:
        if songs:
            message = turn.tr(
                f"音乐目录暂时无法访问（请检查网络），先为你显示本地曲库中的 {len(songs)} 首歌",
                "The music catalogue cannot be reached right now (check the network); "
                f"here is your local library ({songs_en(len(songs))}) instead",
            )
        else:
            message = turn.tr(
                "音乐目录暂时无法访问（请检查网络），本地曲库也还没有歌曲",
                "The music catalogue cannot be reached right now (check the network), "
                "and your local library has no songs yet",
            )
        reply = song_list_view(
            turn,
            turn.tr("本地曲库", "Local library"),
            songs,
            message,
            quality=quality,
            # the notice says the whole of it; the empty list says only its own part
            empty=_how_to_add(turn),
            extra_actions=[add_songs_button(turn)],
            notice="warning",
            detail=error or None,
        )
        reply["data"]["offline"] = True
        return reply

    def relist(
        self,
        turn: Turn,
        *,
        filter_value: str = "",
        quality: str = "",
    ) -> dict[str, Any]:
        """The last search again (from the cache), filtered or with a new quality."""
        if not turn.results:
            return self.agent.plan_steps(
                [
                    {"step_id": 1, "tool": "cache_get", "args": {"key": RESULTS_KEY}},
                    {"step_id": 2, "tool": "cache_get", "args": {"key": QUERY_KEY}},
                    {"step_id": 3, "tool": LIBRARY_TOOL, "args": {}},
                ]
            )
        _, cached, _ = turn.outcome(1)
        _, query_raw, _ = turn.outcome(2)
        _, library_raw, _ = turn.outcome(3)
        library = _songs(library_raw)
        catalogue = _cached_catalogue(cached)
        query = query_raw if isinstance(query_raw, dict) else {}
        shown = str(query.get("shown") or query.get("query") or "")
        if catalogue and shown:
            local = [s for s in library if song_matches(s, shown)]
            songs = local + without_copies(catalogue, local)
            title = turn.tr(f"{shown}的歌曲", f"Songs: {shown}")
        else:
            songs, title = library, turn.tr("我的音乐", "My music")
        new_state: dict[str, Any] = {}
        chosen = quality if quality in QUALITIES else self.quality(turn.state)
        if quality:
            new_state["quality"] = chosen
        if filter_value:
            songs = [s for s in songs if song_matches(s, filter_value)]
            message = turn.tr(
                f"筛选“{filter_value}”：{len(songs)} 首歌",
                f'Filter "{filter_value}": {songs_en(len(songs))}',
            )
            title = turn.tr(
                f"{title} · 筛选：{filter_value}", f"{title} · filter: {filter_value}"
            )
        elif quality:
            message = turn.tr(
                f"音质已设为{chosen}", f"Quality set to {quality_name(turn, chosen)}"
            )
            if chosen != QUALITIES[0]:
                message += turn.tr(
                    "（目录只提供试听片段，本地文件按原音质播放）",
                    " (the catalogue offers previews only; local files play as they are)",
                )
        else:
            message = turn.tr(f"共 {len(songs)} 首歌", songs_en(len(songs)))
        return song_list_view(
            turn,
            title,
            songs,
            message,
            quality=chosen,
            filter_value=filter_value,
            state=new_state,
        )

    # ------------------------------------------------------------------ playing

    def play(
        self,
        song_id: str,
        source: str,
        turn: Turn,
        *,
        offset: int = 0,
    ) -> dict[str, Any]:
        """Play `song_id` (offset 0) or its neighbour in the list shown (±1); past
        either end of that list, say so and leave the player as it is."""
        local = source == "local" or is_local_id(song_id)
        if not turn.results:
            lookup = (
                {"step_id": 1, "tool": LIBRARY_TOOL, "args": {}}
                if local
                else {"step_id": 1, "tool": "cache_get", "args": {"key": RESULTS_KEY}}
            )
            return self.agent.plan_steps([lookup, _read_recent(2)])
        ok, raw, error = turn.outcome(1)
        queue = _songs(turn.state.get("queue"))
        index = next((i for i, s in enumerate(queue) if s.id == song_id), None)
        if index is None:  # not from the list shown: its own list
            queue = _songs(raw) if local else _cached_catalogue(raw)
            index = next((i for i, s in enumerate(queue) if s.id == song_id), None)
        if index is None:
            if not ok:
                note = turn.tr(
                    "播放列表暂时读不出来，请稍后再试。",
                    "The playlist cannot be read right now; please try again later.",
                )
            elif local:
                note = turn.tr(
                    "这首歌已不在本地曲库中。",
                    "This song is no longer in your local library.",
                )
            else:
                note = turn.tr(
                    "搜索结果已过期，请重新搜索。",
                    "The search results have expired; please search again.",
                )
            return text_reply(
                note,
                actions=[library_button(turn)],
                status="error",
                detail=error or None,
            )
        if not 0 <= index + offset < len(queue):
            return self._at_an_end(turn, queue[index], queue, last=offset > 0)
        _, recent_text, _ = turn.outcome(2)
        return self._start(turn, queue[index + offset], recent_text, queue)

    def _at_an_end(
        self, turn: Turn, song: Song, queue: list[Song], *, last: bool
    ) -> dict[str, Any]:
        if last:
            message = turn.tr(
                f"已经是列表里的最后一首了：{song.display}",
                f"This is the last song in the list: {song.display}",
            )
        else:
            message = turn.tr(
                f"已经是列表里的第一首了：{song.display}",
                f"This is the first song in the list: {song.display}",
            )
        playing = not turn.state.get("paused")
        return player_view(turn, song, queue, message, playing=playing)

    def play_anything(self, turn: Turn) -> dict[str, Any]:
        """ "播放" with nothing named: the song that was playing goes on, or the
        library starts from its first song (its empty view when it has none)."""
        current = song_from_dict(turn.state.get("now_playing"))
        if current is not None:
            return self.pause(turn, current, resume=True)
        if not turn.results:
            return self.agent.plan_steps(
                [{"step_id": 1, "tool": LIBRARY_TOOL, "args": {}}, _read_recent(2)]
            )
        _, raw, _ = turn.outcome(1)
        songs = _songs(raw)
        if not songs:
            return self.library(turn)
        _, recent_text, _ = turn.outcome(2)
        return self._start(turn, songs[0], recent_text, songs)

    def play_local(self, path: str, turn: Turn) -> dict[str, Any]:
        relative = path.strip().removeprefix("workspace/").lstrip("/")
        if not turn.results:
            return self.agent.plan_steps(
                [
                    {"step_id": 1, "tool": LIBRARY_TOOL, "args": {}},
                    _read_recent(2),
                ]
            )
        _, raw, _ = turn.outcome(1)
        song = next((s for s in _songs(raw) if s.path == relative), None)
        if song is None:
            return text_reply(
                turn.tr(
                    f"音乐库里没有 {relative}。",
                    f"{relative} is not in the music library.",
                ),
                actions=[library_button(turn)],
                status="error",
            )
        _, recent_text, _ = turn.outcome(2)
        return self._start(turn, song, recent_text, _library_from(song, _songs(raw)))

    def play_recent(self, index: int, turn: Turn) -> dict[str, Any]:
        if not turn.results:
            return self.agent.plan_steps([_read_recent(1)])
        _, text, _ = turn.outcome(1)
        entries = _recent_entries(text)
        song = song_from_dict(entries[index]) if 0 <= index < len(entries) else None
        if song is None:
            return text_reply(
                turn.tr("播放记录里没有这首歌。", "This song is not in the play history."),
                actions=[library_button(turn)],
                status="error",
            )
        return self._start(turn, song, text)

    def pause(self, turn: Turn, song: Song, *, resume: bool) -> dict[str, Any]:
        """Pause or go on: the player keeps its place (the desktop keeps the same
        player for a new view of the same song)."""
        if resume:
            message = turn.tr(f"继续播放：{song.display}", f"Resumed: {song.display}")
        else:
            message = turn.tr(f"已暂停：{song.display}", f"Paused: {song.display}")
        return player_view(
            turn,
            song,
            self._queue_with(turn, song),
            message,
            playing=resume,
            state={"paused": not resume},
        )

    def _queue_with(self, turn: Turn, song: Song) -> list[Song]:
        """The list shown when it holds `song`; else `song` alone."""
        queue = _songs(turn.state.get("queue"))
        return queue if any(s.id == song.id for s in queue) else [song]

    def _start(
        self, turn: Turn, song: Song, recent_text: Any, queue: list[Song] | None = None
    ) -> dict[str, Any]:
        """`song` starts; `queue` (the list it was picked from) is what 下一首 and
        上一首 step through (the list shown before, when not given)."""
        self._record(song, recent_text)
        if queue is None:
            queue = self._queue_with(turn, song)
        queue = queue[:MAX_LISTED] if any(s.id == song.id for s in queue) else [song]
        new_state = {
            "last_played": song.display,
            "now_playing": song.to_dict(),
            "paused": False,
            "queue": [s.to_dict() for s in queue],
        }
        message = turn.tr(f"正在播放：{song.display}", f"Now playing: {song.display}")
        return player_view(turn, song, queue, message, state=new_state)

    def _record(self, song: Song, recent_text: Any) -> None:
        """Keep `recent.json` and `playlist.m3u` in the workspace (via `file_write`)."""
        entries = [e for e in _recent_entries(recent_text) if e.get("id") != song.id]
        entry = song.to_dict()
        entry["played_at"] = datetime.now().isoformat(timespec="seconds")
        entries = [entry, *entries][:RECENT_MAX]
        lines = ["#EXTM3U"]
        for item in entries:
            played = song_from_dict(item)
            if played is None:
                continue
            seconds = max(-1, played.duration_ms // 1000) if played.duration_ms else -1
            lines.append(f"#EXTINF:{seconds},{played.display}")
            lines.append(played.path if played.source == "local" else played.url)
        try:
            self.agent.call_tool(
                "file_write",
                path=RECENT_FILE,
                content=json.dumps(entries, ensure_ascii=False, indent=1),
            )
            self.agent.call_tool(
                "file_write", path=PLAYLIST_FILE, content="\n".join(lines) + "\n"
            )
        except Exception as exc:  # history is a convenience: playing must not fail on it
            log = getattr(self.agent, "log", None)
            if log is not None:
                log.warning("could not record the play history: %s", exc)

    # ------------------------------------------------------------------ library

    def library(self, turn: Turn, note: str = "", step: int = 1) -> dict[str, Any]:
        """The home view: the songs in the workspace (read in step `step`), the search
        controls, and the ways to add songs."""
        if not turn.results:
            return self.agent.plan_steps([{"step_id": 1, "tool": LIBRARY_TOOL, "args": {}}])
        ok, raw, error = turn.outcome(step)
        songs = _songs(raw)
        failed: dict[str, Any] = {}
        if not ok:
            message = turn.tr(
                "本地曲库暂时读不出来，请稍后再试",
                "Your local library cannot be read right now; please try again later",
            )
            failed = {"notice": "warning", "detail": error, "empty": message}
        elif songs:
            message = turn.tr(
                f"本地曲库有 {len(songs)} 首歌",
                f"Your local library has {songs_en(len(songs))}",
            )
        else:
            message = turn.tr(
                "本地曲库还没有歌曲。说“帮我播放周杰伦的歌”，或添加你自己的音乐文件",
                'Your local library has no songs yet. Say "play songs by Taylor Swift", '
                "or add your own music files",
            )
            failed = {"empty": _how_to_add(turn)}
        last = turn.state.get("last_played")
        if last:
            message += turn.tr(f"，上次播放：{last}", f"; last played: {last}")
        return song_list_view(
            turn,
            turn.tr("我的音乐", "My music"),
            songs,
            note + message,
            quality=self.quality(turn.state),
            extra_actions=[
                add_songs_button(turn),
                import_folder_box(turn),
                button(turn.tr("最近播放", "Recently played"), "recent"),
            ],
            **failed,
        )

    def recent(self, turn: Turn) -> dict[str, Any]:
        if not turn.results:
            return self.agent.plan_steps([_read_recent(1)])
        _, text, _ = turn.outcome(1)
        entries = _recent_entries(text)
        songs = [s for s in (song_from_dict(e) for e in entries) if s is not None]
        items = [
            {
                "id": s.id,
                "title": s.title,
                "sub": " · ".join(
                    p for p in (artist_name(turn, s), e.get("played_at", "")) if p
                ),
            }
            for s, e in zip(songs, entries, strict=False)
        ]
        play = turn.tr("播放", "Play")
        actions = [
            button(play, "play_recent", index=i, item_id=item["id"])
            for i, item in enumerate(items)
        ]
        actions.append(library_button(turn))
        if items:
            message = turn.tr(
                f"最近播放了 {len(items)} 首歌", f"Recently played {songs_en(len(items))}"
            )
        else:
            message = turn.tr("还没有播放记录", "No play history yet")
        title = turn.tr("最近播放", "Recently played")
        return list_reply(items, title, actions=actions, message=message)
