"""MusicAgent: 音乐应用 as the system sees it, and the `music_library` tool.

Every call goes to `flows.MusicFlows` (`AgentFlows`, what they hand to the agent
loop). The custom tool lists the audio files
of the workspace with their tags (`library.scan_library`: the workspace of the user
this process serves); the executor runs it like an atomic tool, so a step plan can
read the library beside a catalogue search.
"""

from __future__ import annotations

from typing import Any

from aios_sdk import AIOSAgent, read_role, tool
from aios_sdk.runtime.flows import AgentFlows

from .flows import LIBRARY_TOOL, MusicFlows
from .library import scan_library


class MusicAgent(AIOSAgent, flows=MusicFlows):
    agent_flows = AgentFlows  # what the flows hand to the loop, with a model
    name = "音乐应用"
    description = "搜索、播放和下载音乐，管理本地曲库和播放列表"
    icon = "🎵"
    role_prompt = read_role(__file__)

    @tool(
        name=LIBRARY_TOOL, desc="列出工作区中的音乐文件并读取标签（标题、歌手、专辑、时长）"
    )
    def music_library(self) -> list[dict[str, Any]]:
        if self.workdir is None:
            return []
        return scan_library(self.workdir, self.app_id)
