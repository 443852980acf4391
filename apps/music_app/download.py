"""F-2: downloading a song into the workspace with `http_request` `save_to`.

"帮我下载周杰伦的七里香到本地" plans three steps: the catalogue search, an
`http_request` whose `url` is `{{step_1.result.results.0.previewUrl}}` and whose
`save_to` is `workspace/<title>.<ext>`, and a `file_list` of the workspace; the
answer is the text "已下载《七里香》到 workspace/…" with a `play_local` button.
A catalogue whose JSON arrives as text (labelled `text/plain`, say) leaves the
placeholder nothing to reach into: then one more round downloads the preview URL of
the best match read here. No I/O of its own (S-05).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aios_sdk import step_outcome
from aios_sdk.views import text_reply

from .catalogue import Song, download_filename, parse_search_answer, search_request
from .intent import MusicIntent
from .views import download_done_view, library_button

__all__ = ["DownloadFlow"]


class DownloadFlow:
    def __init__(self, agent: Any, api_base: str, ext: str, country: str | None = None):
        self.agent = agent
        self.api_base = api_base
        self.download_ext = ext
        self.country = country

    def by_name(self, intent: MusicIntent, results: Mapping[str, Any]) -> dict[str, Any]:
        filename = download_filename(intent.title, self.download_ext)
        shown_path = f"workspace/{filename}"
        if not results:
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
                f"正在下载《{intent.title}》…",
            )
        if "step_3" not in results:
            # the second round of a fallback plan: [save_to, file_list]
            return self._downloaded(intent.title, shown_path, results, 1)
        ok, answer, error = step_outcome(results, 1)
        if not ok:
            return text_reply(
                f"音乐目录暂时无法访问（请检查网络），没能下载《{intent.title}》。本地曲库仍可使用。",
                actions=[library_button()],
                status="error",
                detail=error or None,
            )
        try:
            found = parse_search_answer(answer)
        except ValueError:
            found = []
        if not found:
            return text_reply(
                f"没有在音乐目录里找到《{intent.title}》。", actions=[library_button()]
            )
        best = _best_match(found, intent.title, intent.artist)
        saved, _, _ = step_outcome(results, 2)
        if not saved and best.url:
            # The answer came back as text, so the placeholder could not reach into
            # it: download the URL read here.
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "http_request",
                        "args": {"method": "GET", "url": best.url, "save_to": shown_path},
                    },
                    {"step_id": 2, "tool": "file_list", "args": {"path": "workspace"}},
                ],
                f"正在下载《{intent.title}》…",
            )
        note = ""
        if best.title and intent.title.lower() not in best.title.lower():
            note = f"（目录中的曲目：{best.display}）"
        return self._downloaded(intent.title, shown_path, results, 2, note)

    def _downloaded(
        self,
        title: str,
        shown_path: str,
        results: Mapping[str, Any],
        step: int,
        note: str = "",
    ) -> dict[str, Any]:
        saved, _, error = step_outcome(results, step)
        if not saved:
            return text_reply(
                f"下载《{title}》失败",
                actions=[library_button()],
                status="error",
                detail=error or None,
            )
        return download_done_view(title, shown_path, note)

    def by_url(
        self, params: Mapping[str, Any], results: Mapping[str, Any]
    ) -> dict[str, Any]:
        """下载 on the player: the preview URL is already known, one step saves it."""
        title = str(params.get("title") or "song")
        url = str(params.get("url") or "")
        if not url:
            return text_reply("这首歌没有可下载的地址。", status="error")
        shown_path = f"workspace/{download_filename(title, self.download_ext)}"
        if not results:
            return self.agent.plan_steps(
                [
                    {
                        "step_id": 1,
                        "tool": "http_request",
                        "args": {"method": "GET", "url": url, "save_to": shown_path},
                    },
                    {"step_id": 2, "tool": "file_list", "args": {"path": "workspace"}},
                ],
                f"正在下载《{title}》…",
            )
        return self._downloaded(title, shown_path, results, 1)


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
