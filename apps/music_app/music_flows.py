"""How the music app answers: which steps to plan, and what to show when they ran.

Each flow has two halves. The first call (no `tool_results`) plans steps for the
executor (S-51, S-74); the controller runs them and calls again with the same
instruction or action plus `context["tool_results"]`, and the second half turns the
results into a view. Only atomic tools and the app's own `music_library` tool touch
the disk or the network (S-05). Playback history (`recent.json`, `playlist.m3u`) is
written with `file_write` through `call_tool` once the song is known.

F-1: search → `http_request` + `cache_set` → `list` with 播放 buttons; 播放 →
`cache_get` → `media` with 暂停 / 下一首 / 上一首. F-2: search → `http_request`
with `save_to` from `{{step_1.result.results.0.previewUrl}}` → `file_list` → text
"已下载《七里香》到 workspace/…" with a `play_local` button. A free-form wish
("来点适合跑步的歌") is first turned into a search term by the LLM when one is
configured (`music_wish`), then searched the same way; the term is read back from
the cache in the second half, so the model is asked only once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from music_catalogue import (
    DEFAULT_API_BASE,
    DEFAULT_DOWNLOAD_EXT,
    SEARCH_LIMIT,
    Song,
    is_local_id,
    parse_search_answer,
    search_request,
    song_from_dict,
)
from music_download import DownloadFlow
from music_intent import MusicIntent, read_intent
from music_library import song_matches
from music_views import (
    QUALITIES,
    library_button,
    media_view,
    song_list_view,
    step_outcome,
    text_view,
)
from music_wish import Wish, interpret_wish

__all__ = ["LIBRARY_TOOL", "MusicFlows", "ToolPort"]

LIBRARY_TOOL = "music_library"
RESULTS_KEY = "last_results"
QUERY_KEY = "last_query"
CACHE_TTL = 24 * 3600
RECENT_FILE = "recent.json"


def _read_recent(step_id: int) -> dict[str, Any]:
    """The step that reads the play history."""
    return {"step_id": step_id, "tool": "file_read", "args": {"path": RECENT_FILE}}


PLAYLIST_FILE = "playlist.m3u"
RECENT_MAX = 50


class ToolPort(Protocol):
    """What the flows need from the agent (an `AIOSAgent` is one)."""

    app_id: str
    settings: dict[str, Any]

    def call_tool(self, tool_name: str, **args: Any) -> Any: ...

    def plan_steps(
        self, steps: list[dict[str, Any]], message: str = ...
    ) -> dict[str, Any]: ...


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


def _recent_entries(text: Any) -> list[dict[str, Any]]:
    if not isinstance(text, str) or not text.strip():
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


class MusicFlows:
    """The music app's behaviour, over an agent that can call and plan tools."""

    def __init__(self, agent: ToolPort):
        self.agent = agent
        settings = agent.settings or {}
        self.api_base = str(settings.get("api_base") or DEFAULT_API_BASE)
        self.download_ext = str(settings.get("download_ext") or DEFAULT_DOWNLOAD_EXT)
        self.country = settings.get("country") or None
        self.limit = int(settings.get("search_limit") or SEARCH_LIMIT)
        self.downloads = DownloadFlow(agent, self.api_base, self.download_ext, self.country)

    # ------------------------------------------------------------------ entry

    def handle(
        self,
        instruction: str | None,
        context: Mapping[str, Any] | None,
        action_request: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        context = context or {}
        results: Mapping[str, Any] = context.get("tool_results") or {}
        state: Mapping[str, Any] = context.get("cwd_state") or {}
        if action_request:
            return self.on_action(dict(action_request), results, state)
        return self.on_instruction(read_intent(instruction), results, state)

    def quality(self, state: Mapping[str, Any]) -> str:
        value = state.get("quality")
        return value if value in QUALITIES else QUALITIES[0]

    def on_instruction(
        self, intent: MusicIntent, results: Mapping[str, Any], state: Mapping[str, Any]
    ) -> dict[str, Any]:
        kind = intent.kind
        if kind == "search" and intent.free_form:
            return self.wish(intent, results, state)
        if kind == "search":
            return self.search(intent.query, intent.shown, results, state)
        if kind == "download":
            return self.downloads.by_name(intent, results)
        if kind in ("next", "prev"):
            current = song_from_dict(state.get("now_playing"))
            if current is None:
                return self.library(results, state, note="还没有正在播放的歌。")
            return self.play(
                current.id, current.source, results, state, offset=_OFFSET[kind]
            )
        if kind in ("pause", "resume"):
            current = song_from_dict(state.get("now_playing"))
            if current is None:
                return text_view("还没有正在播放的歌。", actions=[library_button()])
            return self.pause(current, resume=kind == "resume")
        if kind == "recent":
            return self.recent(results, state)
        return self.library(results, state)

    def on_action(
        self, request: dict[str, Any], results: Mapping[str, Any], state: Mapping[str, Any]
    ) -> dict[str, Any]:
        action = str(request.get("action_id") or "")
        params = request.get("params") or {}
        value = request.get("value")
        if action in ("play", "play_song", "next", "prev"):
            song_id = str(params.get("song_id") or "")
            if not song_id:
                return text_view("没有指定要播放的歌。", status="error")
            source = "local" if is_local_id(song_id) else str(params.get("source") or "")
            return self.play(song_id, source, results, state, offset=_OFFSET.get(action, 0))
        if action == "play_local":
            path = str(params.get("path") or "")
            return self.play_local(path, results, state)
        if action == "play_recent":
            return self.play_recent(int(params.get("index") or 0), results, state)
        if action in ("pause", "resume"):
            song = song_from_dict(params) or song_from_dict(state.get("now_playing"))
            if song is None:
                return text_view("还没有正在播放的歌。", actions=[library_button()])
            return self.pause(song, resume=action == "resume")
        if action == "search":
            term = str(value or params.get("keyword") or "").strip()
            if not term:
                return self.library(results, state)
            intent = read_intent(term)
            query = intent.query if intent.kind == "search" else term
            return self.search(
                query, intent.shown if intent.kind == "search" else term, results, state
            )
        if action == "download":
            return self.downloads.by_url(params, results)
        if action == "filter":
            return self.relist(results, state, filter_value=str(value or "").strip())
        if action == "set_quality":
            chosen = request.get("selected") or value
            return self.relist(results, state, quality=str(chosen or ""))
        if action == "back":
            return self.relist(results, state)
        if action == "recent":
            return self.recent(results, state)
        return self.library(results, state)

    # ------------------------------------------------------------------ search (F-1)

    def wish(
        self, intent: MusicIntent, results: Mapping[str, Any], state: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A free-form request: the model's search term (once), then F-1's search."""
        said = Wish(intent.query, intent.shown)
        if not results:
            wish = interpret_wish(getattr(self.agent, "llm", None), intent.request, said)
            return self.search(wish.query, wish.shown, results, state, note=wish.note)
        _, remembered, _ = step_outcome(results, 5)
        if isinstance(remembered, Mapping) and remembered.get("query"):
            said = Wish(
                str(remembered["query"]),
                str(remembered.get("shown") or remembered["query"]),
                str(remembered.get("note") or ""),
            )
        return self.search(said.query, said.shown, results, state, note=said.note)

    def search(
        self,
        query: str,
        shown: str,
        results: Mapping[str, Any],
        state: Mapping[str, Any],
        *,
        note: str | None = None,
    ) -> dict[str, Any]:
        """F-1's search; with `note` (a free-form wish) the query is also read back
        (step 5) and the note is said before the result."""
        if not results:
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
                ],
                f"正在搜索{shown}…",
            )
        ok, answer, error = step_outcome(results, 1)
        _, library_raw, _ = step_outcome(results, 4)
        library = _songs(library_raw)
        local = [s for s in library if song_matches(s, shown) or song_matches(s, query)]
        catalogue: list[Song] = []
        if ok:
            try:
                catalogue = parse_search_answer(answer)
            except ValueError as exc:
                ok, error = False, str(exc)
        quality = self.quality(state)
        if not ok:
            reply = self._catalogue_down(error, local or library, quality)
        else:
            songs = local + catalogue
            if not songs:
                message = f"没有找到{shown}的歌，换个关键词试试？"
            else:
                message = f"为你找到{shown}的 {len(songs)} 首歌"
            reply = song_list_view(f"{shown}的歌曲", songs, message, quality=quality)
        if note:
            reply["message"] = f"{note}{reply['message']}"
        return reply

    def _catalogue_down(
        self, error: str, songs: list[Song], quality: str
    ) -> dict[str, Any]:
        reason = f"音乐目录暂时无法访问（{error}）" if error else "音乐目录暂时无法访问"
        if songs:
            message = f"{reason}，已为你显示本地曲库中的 {len(songs)} 首歌"
        else:
            message = (
                f"{reason}，本地曲库也还没有歌曲（可以把音乐文件放进 workspace/music/）"
            )
        reply = song_list_view("本地曲库", songs, message, quality=quality)
        reply["data"]["offline"] = True
        return reply

    def relist(
        self,
        results: Mapping[str, Any],
        state: Mapping[str, Any],
        *,
        filter_value: str = "",
        quality: str = "",
    ) -> dict[str, Any]:
        """The last search again (from the cache), filtered or with a new quality."""
        if not results:
            return self.agent.plan_steps(
                [
                    {"step_id": 1, "tool": "cache_get", "args": {"key": RESULTS_KEY}},
                    {"step_id": 2, "tool": "cache_get", "args": {"key": QUERY_KEY}},
                    {"step_id": 3, "tool": LIBRARY_TOOL, "args": {}},
                ]
            )
        _, cached, _ = step_outcome(results, 1)
        _, query_raw, _ = step_outcome(results, 2)
        _, library_raw, _ = step_outcome(results, 3)
        library = _songs(library_raw)
        catalogue = _cached_catalogue(cached)
        query = query_raw if isinstance(query_raw, dict) else {}
        shown = str(query.get("shown") or query.get("query") or "")
        if catalogue and shown:
            local = [s for s in library if song_matches(s, shown)]
            songs, title = local + catalogue, f"{shown}的歌曲"
        else:
            songs, title = library, "我的音乐"
        new_state: dict[str, Any] = {}
        chosen = quality if quality in QUALITIES else self.quality(state)
        if quality:
            new_state["quality"] = chosen
        if filter_value:
            songs = [s for s in songs if song_matches(s, filter_value)]
            message = f"筛选“{filter_value}”：{len(songs)} 首歌"
            title = f"{title} · 筛选：{filter_value}"
        elif quality:
            message = f"音质已设为{chosen}" + (
                "（目录只提供试听片段，本地文件按原音质播放）"
                if chosen != QUALITIES[0]
                else ""
            )
        else:
            message = f"共 {len(songs)} 首歌"
        return song_list_view(
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
        results: Mapping[str, Any],
        state: Mapping[str, Any],
        *,
        offset: int = 0,
    ) -> dict[str, Any]:
        """Play `song_id` (offset 0) or its neighbour in the same list (±1)."""
        local = source == "local" or is_local_id(song_id)
        if not results:
            lookup = (
                {"step_id": 1, "tool": LIBRARY_TOOL, "args": {}}
                if local
                else {"step_id": 1, "tool": "cache_get", "args": {"key": RESULTS_KEY}}
            )
            return self.agent.plan_steps([lookup, _read_recent(2)])
        ok, raw, error = step_outcome(results, 1)
        queue = _songs(raw) if local else _cached_catalogue(raw)
        index = next((i for i, s in enumerate(queue) if s.id == song_id), None)
        if index is None:
            if not ok:
                note = f"读取播放列表失败（{error}）。"
            elif local:
                note = "这首歌已不在本地曲库中。"
            else:
                note = "搜索结果已过期，请重新搜索。"
            return text_view(note, actions=[library_button()], status="error")
        song = queue[(index + offset) % len(queue)]
        _, recent_text, _ = step_outcome(results, 2)
        return self._start(song, recent_text, state)

    def play_local(
        self, path: str, results: Mapping[str, Any], state: Mapping[str, Any]
    ) -> dict[str, Any]:
        relative = path.strip().removeprefix("workspace/").lstrip("/")
        if not results:
            return self.agent.plan_steps(
                [
                    {"step_id": 1, "tool": LIBRARY_TOOL, "args": {}},
                    _read_recent(2),
                ]
            )
        _, raw, _ = step_outcome(results, 1)
        song = next((s for s in _songs(raw) if s.path == relative), None)
        if song is None:
            return text_view(
                f"找不到文件 workspace/{relative}。",
                actions=[library_button()],
                status="error",
            )
        _, recent_text, _ = step_outcome(results, 2)
        return self._start(song, recent_text, state)

    def play_recent(
        self, index: int, results: Mapping[str, Any], state: Mapping[str, Any]
    ) -> dict[str, Any]:
        if not results:
            return self.agent.plan_steps([_read_recent(1)])
        _, text, _ = step_outcome(results, 1)
        entries = _recent_entries(text)
        song = song_from_dict(entries[index]) if 0 <= index < len(entries) else None
        if song is None:
            return text_view(
                "播放记录里没有这首歌。", actions=[library_button()], status="error"
            )
        return self._start(song, text, state)

    def pause(self, song: Song, *, resume: bool) -> dict[str, Any]:
        message = f"继续播放：{song.display}" if resume else f"已暂停：{song.display}"
        return media_view(song, message, playing=resume)

    def _start(
        self, song: Song, recent_text: Any, state: Mapping[str, Any]
    ) -> dict[str, Any]:
        self._record(song, recent_text)
        new_state = {"last_played": song.display, "now_playing": song.to_dict()}
        return media_view(song, f"正在播放：{song.display}", state=new_state)

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

    def library(
        self, results: Mapping[str, Any], state: Mapping[str, Any], note: str = ""
    ) -> dict[str, Any]:
        """The home view: the songs in the workspace, and the search controls."""
        if not results:
            return self.agent.plan_steps([{"step_id": 1, "tool": LIBRARY_TOOL, "args": {}}])
        ok, raw, error = step_outcome(results, 1)
        songs = _songs(raw)
        if not ok:
            message = f"读取本地曲库失败（{error}）"
        elif songs:
            message = f"本地曲库有 {len(songs)} 首歌"
        else:
            message = "本地曲库还没有歌曲。说“帮我播放周杰伦的歌”，或把音乐文件放进 workspace/music/"
        last = state.get("last_played")
        if last:
            message += f"，上次播放：{last}"
        return song_list_view(
            "我的音乐",
            songs,
            note + message,
            quality=self.quality(state),
            extra_actions=[{"type": "button", "label": "最近播放", "action_id": "recent"}],
        )

    def recent(
        self, results: Mapping[str, Any], state: Mapping[str, Any]
    ) -> dict[str, Any]:
        if not results:
            return self.agent.plan_steps([_read_recent(1)])
        _, text, _ = step_outcome(results, 1)
        entries = _recent_entries(text)
        songs = [s for s in (song_from_dict(e) for e in entries) if s is not None]
        items = [
            {
                "id": s.id,
                "title": s.title,
                "sub": " · ".join(p for p in (s.artist, e.get("played_at", "")) if p),
            }
            for s, e in zip(songs, entries, strict=False)
        ]
        actions = [
            {
                "type": "button",
                "label": "播放",
                "action_id": "play_recent",
                "params": {"index": i},
            }
            for i in range(len(items))
        ]
        actions.append(library_button())
        message = f"最近播放了 {len(items)} 首歌" if items else "还没有播放记录"
        return {
            "status": "ok",
            "view_type": "list",
            "data": {"title": "最近播放", "items": items},
            "actions": actions,
            "message": message,
        }


_OFFSET = {"next": 1, "prev": -1, "play": 0, "play_song": 0}
