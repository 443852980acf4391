"""The runtime's message model: typed messages, display history apart from the context.

A conversation is a list of typed messages (`SystemMessage`, `UserMessage`,
`AssistantMessage`, `ToolMessage`) made of blocks: `TextBlock`, `ToolUseBlock` (a
call the model proposed, by its tool-use id) and `ToolResultBlock` (the result of
that call, joined to it by the same id). Every assistant message has an `id` of its
own (`msg_<hex>`), and every tool result says which message asked for it
(`asked_by`): a model may use one tool-use id in several turns, the pair names one
call. `Conversation` is what an app keeps in its session state: `messages`, the
display history (every user message, every answer with its calls, every result —
never compacted, kept as typed messages), and `model_messages`, the OpenAI-format
context the model reads, which compaction may shorten; both keep the ids, which
`for_model` leaves out of what the model is sent. A call waiting for the user has a
placeholder result in the model context (`PLACEHOLDER`) and its request in
`pending`, with the id of the message that asked; the real result replaces that
placeholder when it comes. State saved before messages had ids gets them on load.
`StreamEvent` is the one event type the loop reports its progress with.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "PLACEHOLDER",
    "AssistantMessage",
    "Conversation",
    "Message",
    "StreamEvent",
    "SystemMessage",
    "TextBlock",
    "ToolMessage",
    "ToolResultBlock",
    "ToolUseBlock",
    "UserMessage",
    "display_text",
    "for_model",
    "message_from_dict",
    "new_message_id",
]

PLACEHOLDER = "[waiting for the user's confirmation; this call has not run yet]"
DISPLAY_CHARS = 20_000  # one tool result as the display history keeps it
# the runtime's own keys of a model message: kept in state, never sent to the model
RUNTIME_KEYS = frozenset({"id", "asked_by"})


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def for_model(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`messages` as the model is sent them: without the runtime's own keys (an
    OpenAI-compatible server may refuse a message key it does not know)."""
    return [{k: v for k, v in m.items() if k not in RUNTIME_KEYS} for m in messages]


def display_text(text: str, limit: int = DISPLAY_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"…[{len(text) - limit} cut]"


# ---------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class TextBlock:
    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True)
class ToolUseBlock:
    """A call the model proposed: `arguments` is its raw JSON text (maybe broken)."""

    id: str
    name: str
    arguments: str = ""
    type: Literal["tool_use"] = "tool_use"


@dataclass(frozen=True)
class ToolResultBlock:
    """The result of the call `tool_use_id` (the id of its `ToolUseBlock`) that the
    assistant message `asked_by` proposed."""

    tool_use_id: str
    name: str
    content: str
    is_error: bool = False
    asked_by: str = ""
    type: Literal["tool_result"] = "tool_result"


# -------------------------------------------------------------------- messages


def _now() -> float:
    return round(time.time(), 3)


@dataclass
class SystemMessage:
    content: str
    role: Literal["system"] = "system"

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content}

    def to_openai(self) -> dict[str, Any]:
        return {"role": "system", "content": self.content}


@dataclass
class UserMessage:
    content: str
    time: float = field(default_factory=_now)
    role: Literal["user"] = "user"

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content, "time": self.time}

    def to_openai(self) -> dict[str, Any]:
        return {"role": "user", "content": self.content}


@dataclass
class AssistantMessage:
    """Text and the calls the model proposed; `reasoning` is its thinking, shown
    folded and never sent back to the model; `id` names it to the results of its
    calls."""

    blocks: list[TextBlock | ToolUseBlock] = field(default_factory=list)
    reasoning: str = ""
    time: float = field(default_factory=_now)
    id: str = field(default_factory=new_message_id)
    role: Literal["assistant"] = "assistant"

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.blocks if isinstance(b, ToolUseBlock)]

    def to_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "role": self.role,
            "id": self.id,
            "content": self.text,
            "time": self.time,
        }
        if self.tool_uses:
            shown["tool_calls"] = [
                {"id": b.id, "name": b.name, "arguments": b.arguments}
                for b in self.tool_uses
            ]
        if self.reasoning:
            shown["reasoning"] = self.reasoning
        return shown

    def to_openai(self) -> dict[str, Any]:
        model: dict[str, Any] = {
            "role": "assistant",
            "id": self.id,
            "content": self.text or None,
        }
        if self.tool_uses:
            model["tool_calls"] = [
                {
                    "id": b.id,
                    "type": "function",
                    "function": {"name": b.name, "arguments": b.arguments},
                }
                for b in self.tool_uses
            ]
        elif not self.text:
            model["content"] = ""
        return model


@dataclass
class ToolMessage:
    """One tool result (the display history keeps a shortened copy)."""

    result: ToolResultBlock
    time: float = field(default_factory=_now)
    role: Literal["tool"] = "tool"

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "tool_call_id": self.result.tool_use_id,
            "asked_by": self.result.asked_by,
            "name": self.result.name,
            "content": display_text(self.result.content),
            "is_error": self.result.is_error,
            "time": self.time,
        }

    def to_openai(self) -> dict[str, Any]:
        return {
            "role": "tool",
            "tool_call_id": self.result.tool_use_id,
            "asked_by": self.result.asked_by,
            "content": self.result.content,
        }


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage


def message_from_dict(data: Mapping[str, Any]) -> Message | None:
    """A message kept in state (`to_dict`) read back; None for an unknown role."""
    role = data.get("role")
    when = float(data.get("time") or 0.0)
    content = str(data.get("content") or "")
    if role == "system":
        return SystemMessage(content)
    if role == "user":
        return UserMessage(content, time=when)
    if role == "assistant":
        blocks: list[TextBlock | ToolUseBlock] = [TextBlock(content)] if content else []
        for call in data.get("tool_calls") or []:
            if isinstance(call, Mapping):
                blocks.append(
                    ToolUseBlock(
                        str(call.get("id") or ""),
                        str(call.get("name") or ""),
                        str(call.get("arguments") or ""),
                    )
                )
        reasoning = str(data.get("reasoning") or "")
        named = str(data.get("id") or "")
        if named:
            return AssistantMessage(blocks, reasoning, time=when, id=named)
        return AssistantMessage(blocks, reasoning, time=when)
    if role == "tool":
        block = ToolResultBlock(
            str(data.get("tool_call_id") or ""),
            str(data.get("name") or ""),
            content,
            bool(data.get("is_error")),
            str(data.get("asked_by") or ""),
        )
        return ToolMessage(block, time=when)
    return None


@dataclass(frozen=True)
class StreamEvent:
    """One event of a running loop: `kind` (`start`, `turn`, `tool_call`,
    `tool_result`, `pause`, `awaiting_user_input`, `compact`, `retry`, `stop_hook`,
    `done`, …) and its data."""

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)


# ------------------------------------------------------- state without ids


def _legacy_id(index: int, message: Mapping[str, Any]) -> str:
    """The id of a message of state saved before messages had ids: the same on every
    load of that state (made from its place and content)."""
    seen = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
    return f"msg_{hashlib.sha256(f'{index}:{seen}'.encode()).hexdigest()[:32]}"


def _with_ids(messages: list[dict[str, Any]]) -> None:
    """Ids for old state, in place: each assistant message without one gets one, and
    each tool result without its asker the latest message before it that proposed
    its call."""
    asker: dict[str, str] = {}  # call id → the latest message that proposed it
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            if not message.get("id"):
                message["id"] = _legacy_id(index, message)
            for call in message.get("tool_calls") or []:
                if isinstance(call, Mapping):
                    asker[str(call.get("id") or "")] = str(message["id"])
        elif role == "tool" and not message.get("asked_by"):
            message["asked_by"] = asker.get(str(message.get("tool_call_id") or ""), "")


def _asker_of(pending: dict[str, Any], model_messages: list[dict[str, Any]]) -> None:
    """Old state's waiting request without the id of the message that asked: the
    latest message that proposed its call (as it was found before there were ids)."""
    if pending.get("asked_by"):
        return
    calls = [c for c in pending.get("calls") or [] if isinstance(c, Mapping)]
    call_id = str(pending.get("call_id") or (calls[0].get("id") if calls else "") or "")
    for message in reversed(model_messages):
        if message.get("role") == "assistant" and any(
            isinstance(c, Mapping) and c.get("id") == call_id
            for c in message.get("tool_calls") or []
        ):
            pending["asked_by"] = str(message.get("id") or "")
            return


# ---------------------------------------------------------------- conversation


@dataclass
class Conversation:
    """The two histories, the pending request and the counters of one session."""

    messages: list[Message] = field(default_factory=list)
    model_messages: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[str, Any] | None = None
    calibration: float = 1.0  # prompt_tokens / our estimate, from the API's usage
    last_prompt_tokens: int = 0
    compactions: int = 0
    plan_rounds: int = 0  # plans sent to the controller since the user last spoke
    turn_id: str = ""  # names the request the loop works on (its tool calls say so)
    allowed_tools: list[str] | None = None  # a skill's, for the rest of that request
    background: list[str] = field(default_factory=list)  # sub-agents started, latest last

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

        kept = listed("messages")
        model_messages = listed("model_messages")
        _with_ids(kept)
        _with_ids(model_messages)
        shown = [message_from_dict(m) for m in kept]
        pending = (
            dict(found) if isinstance(found := state.get("pending"), Mapping) else None
        )
        if pending is not None:
            _asker_of(pending, model_messages)
        return cls(
            messages=[m for m in shown if m is not None],
            model_messages=model_messages,
            pending=pending,
            calibration=float(state.get("calibration") or 1.0),
            last_prompt_tokens=int(state.get("last_prompt_tokens") or 0),
            compactions=int(state.get("compactions") or 0),
            plan_rounds=int(state.get("plan_rounds") or 0),
            turn_id=str(state.get("turn_id") or ""),
            background=[str(t) for t in state.get("background") or []][-10:],
            allowed_tools=[str(t) for t in allowed]
            if isinstance(allowed := state.get("allowed_tools"), list)
            else None,
        )

    def to_state(self) -> dict[str, Any]:
        """The reply's `state` (a `None` value removes that key from the session)."""
        return {
            "messages": [m.to_dict() for m in self.messages],
            "model_messages": self.model_messages,
            "pending": self.pending,
            "calibration": round(self.calibration, 4),
            "last_prompt_tokens": self.last_prompt_tokens,
            "compactions": self.compactions,
            "plan_rounds": self.plan_rounds,
            "turn_id": self.turn_id,
            "allowed_tools": self.allowed_tools,
            "background": self.background,
        }

    # ------------------------------------------------------------ appending

    def ensure_system(self, prompt: str) -> None:
        system = SystemMessage(prompt).to_openai()
        if self.model_messages and self.model_messages[0].get("role") == "system":
            self.model_messages[0] = system
        else:
            self.model_messages.insert(0, system)

    def add_user(self, text: str, *, display: bool = True, model: bool = True) -> None:
        """A user message; an answer to `ask_user` is shown only (the model reads it
        as that call's result)."""
        message = UserMessage(text)
        if model:
            self.model_messages.append(message.to_openai())
        if display:
            self.messages.append(message)

    def add_question(self, question: str, choices: Sequence[str]) -> None:
        """The question the loop asks the user (`ask_user`), for the display history."""
        shown = question + ("".join(f"\n- {c}" for c in choices) if choices else "")
        self.messages.append(AssistantMessage([TextBlock(shown)]))

    def add_assistant(
        self,
        content: str,
        tool_calls: Sequence[Mapping[str, Any]],
        *,
        reasoning: str = "",
        display: bool = True,
    ) -> AssistantMessage:
        """One assistant message; `tool_calls` as `{"id", "name", "arguments"}`. Its
        reasoning is kept for the display history only."""
        blocks: list[TextBlock | ToolUseBlock] = [TextBlock(content)] if content else []
        blocks += [
            ToolUseBlock(str(c["id"]), str(c["name"]), str(c["arguments"]))
            for c in tool_calls
        ]
        message = AssistantMessage(blocks, reasoning)
        self.model_messages.append(message.to_openai())
        if display:
            self.messages.append(message)
        return message

    def add_tool_result(
        self,
        call_id: str,
        name: str,
        content: str,
        *,
        ok: bool,
        asked_by: str,
        shown: bool = True,
    ) -> None:
        """The result of the call `call_id` of the assistant message `asked_by`."""
        message = ToolMessage(ToolResultBlock(call_id, name, content, not ok, asked_by))
        self.model_messages.append(message.to_openai())
        if shown:
            self.messages.append(message)

    def add_placeholder(self, call_id: str, *, asked_by: str) -> None:
        """The model context's result of a call that waits (the display shows the
        real result when it comes)."""
        self.model_messages.append(
            {
                "role": "tool",
                "tool_call_id": call_id,
                "asked_by": asked_by,
                "content": PLACEHOLDER,
            }
        )

    def replace_placeholder(
        self, call_id: str, name: str, content: str, *, ok: bool, asked_by: str
    ) -> None:
        """The real result of a call that waited, in place of the placeholder of that
        call of the message `asked_by` — never another message's, though a model may
        use one call id in several turns (when compaction dropped the placeholder,
        the call's turn is gone too, and the display history alone gets it)."""
        message = ToolMessage(ToolResultBlock(call_id, name, content, not ok, asked_by))
        found = [
            index
            for index, kept in enumerate(self.model_messages)
            if kept.get("role") == "tool"
            and kept.get("tool_call_id") == call_id
            and kept.get("asked_by") == asked_by
        ]
        waiting = [i for i in found if self.model_messages[i].get("content") == PLACEHOLDER]
        if waiting or found:  # one call id twice in one message: the first that waits
            self.model_messages[(waiting or found)[0]] = message.to_openai()
        self.messages.append(message)

    def last_answer(self) -> str:
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage) and message.text:
                return message.text
        return ""

    def reasoning_since_user(self) -> str:
        """The model's reasoning since the user last spoke (for showing, folded)."""
        thoughts: list[str] = []
        for message in reversed(self.messages):
            if isinstance(message, UserMessage):
                break
            if isinstance(message, AssistantMessage) and message.reasoning:
                thoughts.append(message.reasoning)
        return "\n\n".join(reversed(thoughts))

    def shown(self) -> list[UserMessage | AssistantMessage]:
        """What a person said and was answered, in order (no tool results)."""
        return [m for m in self.messages if isinstance(m, UserMessage | AssistantMessage)]
