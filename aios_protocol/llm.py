"""The model's routes, both ends' vocabulary: the request and reply models of the
controller's `POST /api/llm/chat`, `/api/llm/plan`, `/api/llm/turn` and
`/api/llm/progress`, and the `llm_*` errors with `error_from_body`, which turns an
error body back into its class.

The controller answers these routes and an app's `AgentLLM` (in `aios_sdk.llm`) asks
them; both import this module, so neither imports the other. Every failure is an
`AiosError` whose `code` is one of `llm_not_configured`, `llm_timeout`,
`llm_unauthorized`, `llm_rate_limited`, `llm_bad_reply`, `llm_context_too_long`,
`llm_error`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from aios_protocol.errors import AiosError
from aios_protocol.messages import Context, Step, ToolSpec

__all__ = [
    "AgentProgress",
    "ChatMessage",
    "EarlyStart",
    "LLMBadReply",
    "LLMChatReply",
    "LLMChatRequest",
    "LLMContextTooLong",
    "LLMError",
    "LLMNotConfigured",
    "LLMPlanReply",
    "LLMPlanRequest",
    "LLMRateLimited",
    "LLMTimeout",
    "LLMTurnReply",
    "LLMTurnRequest",
    "LLMUnauthorized",
    "LiveTarget",
    "TurnMessage",
    "TurnToolCall",
    "error_from_body",
]

# ------------------------------------------------------------------------- errors


class LLMError(AiosError):
    """The model could not be reached or answered with an error."""

    code = "llm_error"
    http_status = 502


class LLMTimeout(LLMError):
    code = "llm_timeout"
    http_status = 504


class LLMUnauthorized(LLMError):
    """The server refused the API key (HTTP 401/403)."""

    code = "llm_unauthorized"
    http_status = 502


class LLMRateLimited(LLMError):
    code = "llm_rate_limited"
    http_status = 503


class LLMBadReply(LLMError):
    """The model answered, but not in the shape asked for (bad JSON, unknown tool)."""

    code = "llm_bad_reply"
    http_status = 502


class LLMContextTooLong(LLMError):
    """The server refused the request because its context is longer than the model's
    window (an agent loop compacts it and asks again)."""

    code = "llm_context_too_long"
    http_status = 502


class LLMNotConfigured(LLMError):
    """No API key (and no local server) is configured: the system runs without an LLM."""

    code = "llm_not_configured"
    http_status = 503


# ---------------------------------------------------------------- wire models

_Text = Annotated[str, Field(max_length=200_000)]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class _ForUser(_Wire):
    """A model request: the controller asks the own model of the user the calling
    process serves (its token says which) when they set one; its tokens count toward
    the request running in `session_id` (the session the calling thread serves)."""

    session_id: Annotated[str, Field(max_length=200)] | None = None


class ChatMessage(_Wire):
    role: Literal["system", "user", "assistant"]
    content: _Text


class LLMChatRequest(_ForUser):
    """Body of `POST /api/llm/chat`; with `json` the reply's `content` is an object."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    messages: Annotated[list[ChatMessage], Field(min_length=1, max_length=100)]
    json_mode: bool = Field(default=False, alias="json")
    max_tokens: Annotated[int, Field(ge=1, le=8192)] | None = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None


class LLMChatReply(_Wire):
    content: str | dict[str, Any]


class LLMPlanRequest(_ForUser):
    """Body of `POST /api/llm/plan`: plan tool calls for `instruction` with `tools`."""

    instruction: Annotated[str, Field(min_length=1, max_length=8000)]
    context: Context = Field(default_factory=Context)
    tools: Annotated[list[ToolSpec], Field(min_length=1, max_length=128)]


class LLMPlanReply(_Wire):
    """Validated steps (maybe none) and the model's own words, if it said any."""

    steps: list[Step]
    message: str = ""


class TurnToolCall(_Wire):
    """One function call of the model; `arguments` is its raw JSON text (maybe broken)."""

    id: str = ""
    name: str = ""
    arguments: str = ""


class TurnMessage(_Wire):
    """One OpenAI chat message of an agent's model context."""

    role: Literal["system", "user", "assistant", "tool"]
    content: Annotated[str, Field(max_length=400_000)] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None


class LiveTarget(_Wire):
    """Where a turn's streamed text is published: the session (and task) it serves."""

    session_id: Annotated[str, Field(max_length=200)]
    turn: int = 0


class EarlyStart(_Wire):
    """The tools whose calls may start while the model still writes (the
    concurrency-safe ones the loop would run directly), for that session and turn."""

    tools: Annotated[list[str], Field(max_length=256)] = Field(default_factory=list)
    session_id: Annotated[str, Field(max_length=200)] | None = None
    turn_id: Annotated[str, Field(max_length=100)] | None = None


class LLMTurnRequest(_ForUser):
    """Body of `POST /api/llm/turn`: the model context and the tools it may call."""

    messages: Annotated[list[TurnMessage], Field(min_length=1, max_length=1000)]
    tools: Annotated[list[dict[str, Any]], Field(max_length=256)] = Field(
        default_factory=list
    )
    max_tokens: Annotated[int, Field(ge=1, le=65536)] | None = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    live: LiveTarget | None = None
    early: EarlyStart | None = None


class LLMTurnReply(_Wire):
    """The assembled assistant message of one turn; `reasoning` is the model's
    thinking (`reasoning_content`), for showing, never for the next request."""

    content: str = ""
    reasoning: str = ""
    tool_calls: list[TurnToolCall] = Field(default_factory=list)
    finish_reason: str = "stop"
    usage: dict[str, int] = Field(default_factory=dict)
    # the results of calls started while the model wrote (`EarlyStart`), by call id
    early_results: dict[str, dict[str, Any]] = Field(default_factory=dict)


class AgentProgress(_Wire):
    """Body of `POST /api/llm/progress`: one step of an app's agent loop for the desktop
    (`kind`: `turn`, `tool_call`, `tool_result`, `pause`, `done`, …)."""

    session_id: Annotated[str, Field(max_length=200)]
    kind: Annotated[str, Field(min_length=1, max_length=40)]
    data: dict[str, Any] = Field(default_factory=dict)


# ------------------------------------------------------- errors from a body


def error_from_body(status: int, payload: Any) -> AiosError:
    """The `AiosError` a controller error body stands for (class chosen by code)."""
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict) or not error.get("code"):
        return LLMError(f"controller answered HTTP {status}")
    code = str(error["code"])
    message = str(error.get("message") or code)
    fields = AiosError.fields_of(error)
    for cls in (
        LLMNotConfigured,
        LLMTimeout,
        LLMUnauthorized,
        LLMRateLimited,
        LLMBadReply,
        LLMContextTooLong,
        LLMError,
    ):
        if cls.code == code:
            return cls(message, **fields)
    return AiosError(message, code=code, **fields)
