"""Test doubles for the apps' pure tier: an agent without an executor, step results.

`PlanningAgent` offers what the apps' flows use of an `AIOSAgent` — the SDK's own
`plan_steps`, a recording `call_tool`, `settings`, `app_id`, `llm` — so the planning and
view logic can be tested without processes; `ok` / `failed` build entries of
`context["tool_results"]` as the controller passes them; `EN`, `CHINESE` and
`readable_texts` check that a reply in English has no Chinese left.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["CHINESE", "EN", "PlanningAgent", "failed", "ok", "readable_texts"]

EN = {"language": "en-US"}  # a context in English
CHINESE = re.compile(r"[\u4e00-\u9fff]")


def readable_texts(reply: dict[str, Any]) -> list[str]:
    """The labels, placeholders, form field labels and options the user reads under
    the view."""
    texts = []
    for action in reply["actions"]:
        texts += [action["label"], action.get("placeholder") or ""]
        texts += [f["label"] for f in action.get("fields", [])]
        texts += [o["label"] for o in action.get("options", []) if isinstance(o, dict)]
    return [t for t in texts if t]


class PlanningAgent:
    """The part of an `AIOSAgent` the apps' flows use, without an executor behind it.

    `plan_steps` is the SDK's own; `call_tool` records the call and answers from
    `answers` (or raises what `answers` holds), so a test sees every side effect;
    `llm` is the model double the flows see as `agent.llm` (None: no model).
    """

    app_id = "music_app"
    name = "测试应用"
    role_prompt = "你是一个测试小AI"

    def __init__(self, settings: dict[str, Any] | None = None, llm: Any = None):
        from aios_sdk.agent import AIOSAgent

        self.settings = settings or {}
        self.llm = llm
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answers: dict[str, Any] = {}
        self._plan = AIOSAgent.plan_steps

    def plan_steps(
        self, steps: list[dict[str, Any]], message: str = "正在处理..."
    ) -> dict[str, Any]:
        return self._plan(self, steps, message)

    def available_tools(self) -> list[dict[str, Any]]:
        """The tools an agent loop would be offered: none here."""
        return []

    def call_tool(self, tool_name: str, **args: Any) -> Any:
        self.calls.append((tool_name, args))
        answer = self.answers.get(tool_name, {"path": args.get("path"), "size": 0})
        if isinstance(answer, Exception):
            raise answer
        return answer


def ok(tool: str, result: Any) -> dict[str, Any]:
    """One entry of `context["tool_results"]` for a step that succeeded."""
    return {"tool": tool, "status": "ok", "result": result}


def failed(tool: str, error: str, code: str = "tool_failed") -> dict[str, Any]:
    return {"tool": tool, "status": "error", "result": None, "error": error, "code": code}
