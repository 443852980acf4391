"""Downloading a song into the workspace with `http_request` `save_to`.

"帮我下载周杰伦的七里香到本地" plans three steps: the catalogue search, an
`http_request` whose `url` is `{{step_1.result.results.0.previewUrl}}` and whose
`save_to` is `workspace/<title>.<ext>`, and a `file_list` of the workspace; the
answer is the text "已下载《七里香》到 workspace/…" with a `play_local` button.
A catalogue whose JSON arrives as text (labelled `text/plain`, say) leaves the
placeholder nothing to reach into: then one more round downloads the preview URL of
the best match read here. The file is named after the title alone, so what the
catalogue said of the song (its title, artist and album) goes into the
library's record of downloads (`library.DOWNLOADS_FILE`, through `file_read` and
`file_write`): played or found later, it is still 七里香 by 周杰伦. What the user reads
is in their language (`turn.tr`). No I/O of its own.
"""

from __future__ import annotations

import json
from typing import Any

from aios_sdk import ToolFailed, Turn
from aios_sdk.views import text_reply

from .catalogue import (
    Song,
    download_filename,
    parse_search_answer,
    search_request,
    song_from_dict,
)
from .intent import MusicIntent
from .library import DOWNLOADS_FILE, downloaded_entry
from .views import download_done_view, library_button

__all__ = ["DownloadFlow"]


class DownloadFlow:
    def __init__(self, agent: Any, api_base: str, ext: str, country: str | None = None):
        self.agent = agent
        self.api_base = api_base
        self.download_ext = ext
        self.country = country

    def by_name(self, intent: MusicIntent, turn: Turn) -> dict[str, Any]:
        filename = download_filename(intent.title, self.download_ext)
        shown_path = f"workspace/{filename}"
        title = intent.title
        downloading = turn.tr(f"正在下载《{title}》…", f'Downloading "{title}"…')
        if not turn.results:
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "http_request",
                        "args": search_request(
                            self.api_base, intent.query, 5, self.country
                        ),
                    },
                    {
                        "step_id": 2,
                        "tool": "http_request",
                        "args": {
                            "method": "GET",
                            "url": "{{step_1.result.results.0.previewUrl}}",
                            "save_to": shown_path,
                        },
                    },
                    {"step_id": 3, "tool": "file_list", "args": {"path": "workspace"}},
                ],
                downloading,
            )
        if "step_3" not in turn.results:
            # the second round of a fallback plan: [save_to, file_list]
            return self._downloaded(turn, title, shown_path, 1)
        ok, answer, error = turn.outcome(1)
        if not ok:
            return text_reply(
                turn.tr(
                    f"音乐目录暂时无法访问（请检查网络），没能下载《{title}》。本地曲库仍可使用。",
                    "The music catalogue cannot be reached right now (check the network), "
                    f'so "{title}" was not downloaded. Your local library still works.',
                ),
                actions=[library_button(turn)],
                status="error",
                detail=error or None,
            )
        try:
            found = parse_search_answer(answer)
        except ValueError:
            found = []
        if not found:
            return text_reply(
                turn.tr(
                    f"没有在音乐目录里找到《{title}》。",
                    f'"{title}" is not in the music catalogue.',
                ),
                actions=[library_button(turn)],
            )
        best = _best_match(found, title, intent.artist)
        saved, _, _ = turn.outcome(2)
        if not saved and best.url:
            # The answer came back as text, so the placeholder could not reach into
            # it: download the URL read here (what it is, kept now: the next round
            # no longer has the catalogue's answer).
            self._remember(best, shown_path)
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "http_request",
                        "args": {"method": "GET", "url": best.url, "save_to": shown_path},
                    },
                    {"step_id": 2, "tool": "file_list", "args": {"path": "workspace"}},
                ],
                downloading,
            )
        note = ""
        if best.title and title.lower() not in best.title.lower():
            note = turn.tr(
                f"（目录中的曲目：{best.display}）",
                f"(the catalogue's track: {best.display})",
            )
        return self._downloaded(turn, title, shown_path, 2, note, best)

    def _downloaded(
        self,
        turn: Turn,
        title: str,
        shown_path: str,
        step: int,
        note: str = "",
        song: Song | None = None,
    ) -> dict[str, Any]:
        saved, _, error = turn.outcome(step)
        if not saved:
            return text_reply(
                turn.tr(f"下载《{title}》失败", f'Could not download "{title}"'),
                actions=[library_button(turn)],
                status="error",
                detail=error or None,
            )
        if song is not None:
            self._remember(song, shown_path)
        return download_done_view(turn, title, shown_path, note)

    def _remember(self, song: Song, shown_path: str) -> None:
        """Keep what the catalogue said of `song`, saved at `shown_path`, in the
        library's record of downloads. The song is downloaded all the same when the
        record cannot be kept (it is then known by its file's name)."""
        relative = shown_path.removeprefix("workspace/")
        try:
            known = json.loads(self.agent.call_tool("file_read", path=DOWNLOADS_FILE))
        except (ToolFailed, TypeError, ValueError):
            known = {}  # none yet (or unreadable): a new record
        if not isinstance(known, dict):
            known = {}
        known[relative] = downloaded_entry(song)
        try:
            self.agent.call_tool(
                "file_write",
                path=DOWNLOADS_FILE,
                content=json.dumps(known, ensure_ascii=False, indent=1),
            )
        except ToolFailed as exc:
            log = getattr(self.agent, "log", None)
            if log is not None:
                log.warning("could not keep the record of downloads: %s", exc)

    def by_url(self, turn: Turn) -> dict[str, Any]:
        """下载 on the player: the preview URL is already known, one step saves it."""
        params = turn.params
        title = str(params.get("title") or "song")
        url = str(params.get("url") or "")
        if not url:
            return text_reply(
                turn.tr("这首歌没有可下载的地址。", "This song has no download address."),
                status="error",
            )
        shown_path = f"workspace/{download_filename(title, self.download_ext)}"
        song = song_from_dict({"id": params.get("song_id") or url, **params})
        if not turn.results:
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "http_request",
                        "args": {"method": "GET", "url": url, "save_to": shown_path},
                    },
                    {"step_id": 2, "tool": "file_list", "args": {"path": "workspace"}},
                ],
                turn.tr(f"正在下载《{title}》…", f'Downloading "{title}"…'),
            )
        return self._downloaded(turn, title, shown_path, 1, song=song)


def _best_match(songs: list[Song], title: str, artist: str) -> Song:
    """The song that is `title` (by `artist`), else the catalogue's first answer."""
    want_title, want_artist = title.strip().lower(), artist.strip().lower()

    def rank(song: Song) -> tuple[int, int]:
        name, by = song.title.lower(), song.artist.lower()
        title_rank = (
            2 if name == want_title else 1 if want_title and want_title in name else 0
        )
        artist_rank = 1 if want_artist and want_artist in by else 0
        return title_rank, artist_rank

    return max(songs, key=rank)
