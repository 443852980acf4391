"""音乐应用: search a public catalogue, play, download, and keep a local library.

The agent is thin: `music_flows.MusicFlows` plans the steps and builds the views;
`music_library.scan_library` is the body of the app's one custom tool,
`music_library`, which reads the tags of the audio files in the workspace (the
executor calls it like any tool, S-62). Settings (`config.json`
`app_settings.music_app`): `api_base` (an iTunes-Search-shaped catalogue, default
Apple's), `download_ext`, `country`, `search_limit`.
"""

from __future__ import annotations

from typing import Any

from music_flows import LIBRARY_TOOL, MusicFlows
from music_library import scan_library

from aios_sdk import AIOSAgent, read_role, tool


class MusicAgent(AIOSAgent):
    name = "音乐应用"
    description = "搜索、播放和下载音乐，管理本地曲库和播放列表"
    icon = "🎵"
    role_prompt = read_role(__file__)

    def handle(
        self,
        instruction: str | None,
        context: dict[str, Any],
        action_request: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return MusicFlows(self).handle(instruction, context, action_request)

    @tool(
        name=LIBRARY_TOOL, desc="列出工作区中的音乐文件并读取标签（标题、歌手、专辑、时长）"
    )
    def music_library(self) -> list[dict[str, Any]]:
        if self.workdir is None:
            return []
        return scan_library(self.workdir, self.app_id)


if __name__ == "__main__":
    from aios_sdk import serve

    serve(MusicAgent())
