"""The assistant's message model: display history apart from the model's context.

`Conversation` is what the app keeps in its session state (the reply's `state`, given
back as `context["cwd_state"]`): `messages`, the display history (every user message,
every assistant answer with its tool calls, every tool result — never compacted), and
`model_messages`, the OpenAI-format context the model reads (system prompt, user,
assistant with `tool_calls`, `tool` results by `tool_call_id`), which compaction may
shorten. A tool call and its result are linked by the call id in both. A call waiting
for the user's yes has a placeholder result in the model context (`PLACEHOLDER`) and
its request in `pending`; the real result replaces the placeholder when it comes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PLACEHOLDER", "Conversation", "display_text"]

PLACEHOLDER = "[waiting for the user's confirmation; this call has not run yet]"
DISPLAY_CHARS = 20_000  # one tool result as the display history keeps it


def display_text(text: str, limit: int = DISPLAY_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"…[{len(text) - limit} cut]"


@dataclass
class Conversation:
    """The two histories, the pending request and the counters of one session."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    model_messages: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[str, Any] | None = None
    calibration: float = 1.0  # prompt_tokens / our estimate, from the API's usage
    last_prompt_tokens: int = 0
    compactions: int = 0
    plan_rounds: int = 0  # plans sent to the controller since the user last spoke

    # ----------------------------------------------------------------- state

    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None) -> Conversation:
        state = state or {}

        def listed(key: str) -> list[dict[str, Any]]:
            value = state.get(key)
            return (
                [dict(m) for m in value if isinstance(m, Mapping)]
                if isinstance(value, list)
                else []
            )

        pending = state.get("pending")
        return cls(
            messages=listed("messages"),
            model_messages=listed("model_messages"),
            pending=dict(pending) if isinstance(pending, Mapping) else None,
            calibration=float(state.get("calibration") or 1.0),
            last_prompt_tokens=int(state.get("last_prompt_tokens") or 0),
            compactions=int(state.get("compactions") or 0),
            plan_rounds=int(state.get("plan_rounds") or 0),
        )

    def to_state(self) -> dict[str, Any]:
        """The reply's `state` (a `None` value removes that key from the session)."""
        return {
            "messages": self.messages,
            "model_messages": self.model_messages,
            "pending": self.pending,
            "calibration": round(self.calibration, 4),
            "last_prompt_tokens": self.last_prompt_tokens,
            "compactions": self.compactions,
            "plan_rounds": self.plan_rounds,
        }

    # ------------------------------------------------------------ appending

    def ensure_system(self, prompt: str) -> None:
        if self.model_messages and self.model_messages[0].get("role") == "system":
            self.model_messages[0]["content"] = prompt
        else:
            self.model_messages.insert(0, {"role": "system", "content": prompt})

    def add_user(self, text: str, *, display: bool = True) -> None:
        self.model_messages.append({"role": "user", "content": text})
        if display:
            self.messages.append({"role": "user", "content": text, "time": _now()})

    def add_assistant(self, content: str, tool_calls: Sequence[Mapping[str, Any]]) -> None:
        """One assistant message; `tool_calls` as `{"id", "name", "arguments"}`."""
        model: dict[str, Any] = {"role": "assistant", "content": content or None}
        if tool_calls:
            model["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
                for call in tool_calls
            ]
        elif not content:
            model["content"] = ""
        self.model_messages.append(model)
        shown: dict[str, Any] = {"role": "assistant", "content": content, "time": _now()}
        if tool_calls:
            shown["tool_calls"] = [dict(call) for call in tool_calls]
        self.messages.append(shown)

    def add_tool_result(
        self, call_id: str, name: str, content: str, *, ok: bool, shown: bool = True
    ) -> None:
        self.model_messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": content}
        )
        if shown:
            self.messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "name": name,
                    "content": display_text(content),
                    "is_error": not ok,
                    "time": _now(),
                }
            )

    def replace_placeholder(
        self, call_id: str, name: str, content: str, *, ok: bool
    ) -> None:
        """The real result of a call that waited: in place of its placeholder."""
        for message in self.model_messages:
            if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
                message["content"] = content
                break
        else:  # compaction dropped the placeholder: the call's turn is gone too
            pass
        self.messages.append(
            {
                "role": "tool",
                "tool_call_id": call_id,
                "name": name,
                "content": display_text(content),
                "is_error": not ok,
                "time": _now(),
            }
        )

    def last_answer(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "assistant" and message.get("content"):
                return str(message["content"])
        return ""


def _now() -> float:
    return round(time.time(), 3)
