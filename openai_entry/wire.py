"""OpenAI's Chat Completions shapes as the `/v1` entry reads and writes them.

Requests ignore fields Triton does not use (`temperature`, `tools`, `n`, …), so any
OpenAI client's body is taken; a field it does use with a wrong type or value is a
400 naming that field (`param`). Responses have OpenAI's shape (`chat.completion`,
`chat.completion.chunk`, the models list, the error body) plus `triton`: the views
behind the Markdown text, for clients that can render them. These models describe
OpenAI's protocol, not Triton's own wire (`aios_protocol.messages`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_serializer

from aios_protocol.errors import AiosError

__all__ = [
    "ChatCompletion",
    "ChatCompletionChunk",
    "ChatCompletionRequest",
    "ChatMessage",
    "Choice",
    "ChunkChoice",
    "ContentPart",
    "Delta",
    "ErrorBody",
    "ErrorDetail",
    "ModelCard",
    "ModelList",
    "ReplyMessage",
    "StreamOptions",
    "Usage",
    "error_detail",
    "first_problem",
]

# roles a client may send; `tool` / `function` results belong to client-side tools,
# which Triton does not run (its apps run their own tools through the executor)
Role = Literal["system", "developer", "user", "assistant"]


class _Request(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ContentPart(_Request):
    """One part of a message's content; only `text` parts are taken."""

    type: Annotated[str, Field(min_length=1, max_length=64)]
    text: str | None = None


class ChatMessage(_Request):
    role: Role
    content: str | list[ContentPart] | None = None
    name: Annotated[str, Field(max_length=256)] | None = None


class StreamOptions(_Request):
    include_usage: bool = False


class ChatCompletionRequest(_Request):
    """`POST /v1/chat/completions`: `model` is `triton` or `triton/<app_id>`."""

    model: Annotated[str, Field(min_length=1, max_length=200)]
    messages: Annotated[list[ChatMessage], Field(min_length=1, max_length=1000)]
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: Annotated[str, Field(max_length=256)] | None = None
    # OpenAI's request metadata (string values); `language` ("zh-CN" / "en-US", or any
    # zh… / en… tag) says which language the answer is in
    metadata: dict[str, Annotated[str, Field(max_length=512)]] | None = None
    # the model's reasoning as `reasoning_content` instead of <think>…</think> text
    include_reasoning: bool = False
    # the agent loop's turns for this request, within the app's own `max_turns`
    max_turns: Annotated[int, Field(ge=1, le=100)] | None = None


def first_problem(exc: ValidationError) -> tuple[str, str]:
    """(param, message) of a validation error's first problem, `param` written as
    OpenAI does (`messages[0].role`)."""
    err = exc.errors()[0]
    param = ""
    for part in err.get("loc", ()):
        param += f"[{part}]" if isinstance(part, int) else (f".{part}" if param else part)
    message = err.get("msg", "invalid value")
    if err.get("type") == "literal_error" and param.endswith(".role"):
        message = "role must be system, developer, user or assistant"
    return param or "(body)", f"{param or 'body'}: {message}"


# ---------------------------------------------------------------------- responses


class _Response(BaseModel):
    def dump(self) -> dict[str, Any]:
        """The JSON-ready body; unset optional fields (`triton`, `usage`) left out."""
        return self.model_dump(mode="json", exclude_none=True)


class Usage(_Response):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ReplyMessage(_Response):
    role: Literal["assistant"] = "assistant"
    content: str
    reasoning_content: str | None = None
    triton: dict[str, Any] | None = None


class Choice(_Response):
    index: int = 0
    message: ReplyMessage
    finish_reason: Literal["stop", "length"] = "stop"


class ChatCompletion(_Response):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage


class Delta(_Response):
    role: Literal["assistant"] | None = None
    content: str | None = None
    reasoning_content: str | None = None


class ChunkChoice(_Response):
    index: int = 0
    delta: Delta = Field(default_factory=Delta)
    finish_reason: Literal["stop", "length"] | None = None
    triton: dict[str, Any] | None = None

    @model_serializer(mode="wrap")
    def _finish_reason_always(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        data.setdefault("finish_reason", None)  # OpenAI sends null until the end
        return data


class ChatCompletionChunk(_Response):
    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: Usage | None = None


class ModelCard(_Response):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "triton"


class ModelList(_Response):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorBody(BaseModel):
    """OpenAI's error body: `{"error": {"message", "type", "param", "code"}}`."""

    error: ErrorDetail

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json")  # param and code stay, null or not


def error_detail(exc: AiosError) -> ErrorDetail:
    """OpenAI's error for one of ours: `type` from the HTTP status, `code` our stable
    code (`model_not_found` for an unknown model), `param` from `detail.param`."""
    status = exc.http_status
    kind = "server_error" if status >= 500 else "invalid_request_error"
    if status == 403:
        kind = "permission_error"
    detail = exc.detail if isinstance(exc.detail, dict) else {}
    param = detail.get("param")
    code = exc.code
    if status == 404 and param == "model":
        code = "model_not_found"
    return ErrorDetail(message=exc.message, type=kind, param=param, code=code)
