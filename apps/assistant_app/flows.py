"""AssistantFlows: 智能助手 is the SDK's agent loop with its own offline answer.

Everything the loop does — model turns, tools, pauses, compaction, stop hooks,
sub-agents — is `aios_sdk.runtime`; this app adds its greeting and what it says
without a model: that nothing was done because it needs one (with the way to the
settings, where one is set up), and which of the installed apps work without one,
by their names (`context["installed_apps"]`).
"""

from __future__ import annotations

from typing import Any

from aios_protocol.strings import user_message
from aios_sdk import Turn
from aios_sdk.runtime.flows import AgentFlows, settings_link
from aios_sdk.views import text_reply

__all__ = ["AssistantFlows", "offline_apps"]


def offline_apps(turn: Turn) -> list[str]:
    """The installed apps that answer without a model (all but this one)."""
    listed = turn.context.get("installed_apps")
    apps = listed if isinstance(listed, list) else []
    return [
        str(app["name"])
        for app in apps
        if isinstance(app, dict)
        and app.get("name")
        and app.get("system_role") != "catch_all"
    ]


class AssistantFlows(AgentFlows):
    def greeting(self, turn: Turn) -> str:
        return turn.tr(
            "你好，我是智能助手：告诉我要做的事，我会用工具一步步完成。",
            "Hi, I am the assistant: tell me what to do and I will work it out "
            "with the tools.",
        )

    def offline(self, turn: Turn) -> dict[str, Any]:
        apps = offline_apps(turn)
        joiner = "、" if turn.language == "zh-CN" else ", "
        app = turn.tr("智能助手", "The assistant")
        text = user_message(
            "llm_not_configured.agent",
            turn.language,
            app=app,
            **({"apps": joiner.join(apps)} if apps else {}),
        )
        return text_reply(
            text,
            # nothing was done, and why (`error`: the task did not do what was asked)
            message=turn.tr(
                "什么也没做：智能助手需要配置模型",
                "Nothing was done: the assistant needs a model",
            ),
            notice="error",
            status="ok",
            actions=[settings_link(turn)],
        )
