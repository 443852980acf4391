"""The controller's one connection to an OpenAI-compatible model.

`LLMClient` wraps the `openai` package, configured from config.json's `llm` section
(`api_key`, `base_url`, `model`; the environment overrides are applied by
`load_settings`). It works against DeepSeek, OpenAI, Ollama, vLLM or
llama.cpp alike. It owns:

- bounded waiting: one `timeout` per request and at most `max_retries` retries, only
  for rate limits, 5xx and refused connections, each after a short backoff (a server's
  `Retry-After` is honoured up to `max_backoff`); a timed-out request is not retried,
  since someone is waiting for the answer;
- JSON mode: `chat_json` asks with `response_format={"type": "json_object"}` and, if
  the server rejects that (HTTP 400/422), asks again without it and from then on never
  sends it; the content is parsed either way (code fences tolerated);
- error translation: every failure is one of `aios_protocol.llm`'s `LLMError` family
  (`llm_error`, `llm_timeout`, `llm_unauthorized`, `llm_rate_limited`,
  `llm_bad_reply`, `llm_not_configured`);
- usage: each completed call's tokens are told to `controller.llm.usage` (`note`),
  which counts them toward the requests they serve;
- `status()` for the desktop tray: "not_configured" | "ok" | "failing", from the
  outcome of the last request.

`openai` is imported on the first request: the controller's cold start stays fast.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal
from urllib.parse import urlsplit

from aios_protocol.llm import (
    LLMBadReply,
    LLMContextTooLong,
    LLMError,
    LLMNotConfigured,
    LLMRateLimited,
    LLMTimeout,
    LLMUnauthorized,
)
from aios_runtime.settings import LlmSettings, Settings
from controller.llm.usage import note as note_usage

__all__ = [
    "DEFAULT_BASE_URL",
    "Completion",
    "Delta",
    "LLMClient",
    "LLMStatus",
    "ModelToolCall",
    "parse_json_object",
]

log = logging.getLogger("aios.controller.llm")

DEFAULT_BASE_URL = LlmSettings().base_url
KEYED_HOSTS = frozenset({"api.deepseek.com", "api.openai.com"})  # no key, no model
LLMStatus = Literal["not_configured", "ok", "failing"]
Message = Mapping[str, Any]


@dataclass(frozen=True)
class ModelToolCall:
    """One function call the model asked for; `arguments` is its raw JSON text."""

    name: str
    arguments: str
    call_id: str = ""


@dataclass
class Completion:
    """The first choice: text, tool calls, why it ended (`stop`, `tool_calls`,
    `length`…) and the server's `usage` (`prompt_tokens`, `completion_tokens`)."""

    content: str
    tool_calls: list[ModelToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    usage: dict[str, int] = field(default_factory=dict)
    reasoning: str = ""  # the model's `reasoning_content`, when it sends one


# what `stream` hands its `on_delta` callback: ("text", text), ("reasoning", text)
# or ("tool_call", {"index", "id", "name", "arguments"}) — a piece as it arrives
Delta = tuple[str, Any]


_TOO_LONG = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "too many tokens",
    "prompt is too long",
    "reduce the length",
)


def _too_long(exc: Exception) -> bool:
    """Whether a refused request says its context is longer than the model's window
    (servers word it differently; OpenAI's code is `context_length_exceeded`)."""
    body = getattr(exc, "body", None)
    code = body.get("code") if isinstance(body, dict) else None
    text = f"{code} {exc}".lower()
    return any(words in text for words in _TOO_LONG)


def _reasoning_of(delta: Any) -> str:
    """A streamed delta's `reasoning_content` (a field OpenAI's types do not name)."""
    if delta is None:
        return ""
    value = getattr(delta, "reasoning_content", None)
    if value is None:
        value = (getattr(delta, "model_extra", None) or {}).get("reasoning_content")
    return value if isinstance(value, str) else ""


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model's `text` (bare, fenced in ``` or with chatter around).

    Raises `ValueError` saying what is wrong, for the repair prompt.
    """
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0].strip()
    try:
        value = json.loads(stripped)
    except ValueError:
        start, end = stripped.find("{"), stripped.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("the reply holds no JSON object") from None
        try:
            value = json.loads(stripped[start : end + 1])
        except ValueError as exc:
            raise ValueError(f"the reply is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"the reply is a JSON {type(value).__name__}, not an object")
    return value


@lru_cache(maxsize=8)
def _own_server(base_url: str) -> bool:
    """`base_url` names a server that needs no key (asked after every instruction)."""
    host = (urlsplit(base_url).hostname or "").lower()
    return bool(host) and host not in KEYED_HOSTS


class LLMClient:
    """A thread-safe, lazily built `openai.OpenAI` client plus the rules above."""

    def __init__(
        self,
        settings: Settings,
        *,
        timeout: float = 20.0,
        max_retries: int = 1,
        max_backoff: float = 2.0,
    ):
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_backoff = max_backoff
        self._lock = threading.Lock()
        self._openai_client: Any = None
        self._json_mode_supported = True
        self._last_ok: bool | None = None
        self._last_error: str = ""
        self.reconfigure(settings)

    # ------------------------------------------------------------- configuration

    def reconfigure(self, settings: Settings) -> None:
        """Take new settings (after `PUT /api/settings`); the next call uses them."""
        with self._lock:
            self.api_key = settings.llm.api_key.strip()
            self.base_url = settings.llm.base_url.rstrip("/")
            self.model = settings.llm.model
            self._openai_client = None
            self._json_mode_supported = True
            self._last_ok = None
            self._last_error = ""

    def warm_up(self) -> None:
        """Build the client now when a model is configured: importing `openai` takes
        1–3 s here, which the first question after a start would wait for."""
        if self.configured:
            self._client()

    @property
    def configured(self) -> bool:
        """A key is set, or the base URL points at a server of the user's own.

        Local servers (Ollama, llama.cpp, vLLM) usually need no key; DeepSeek's and
        OpenAI's APIs always do.
        """
        return bool(self.api_key) or _own_server(self.base_url)

    def status(self) -> LLMStatus:
        """For the tray: not configured, ok (or not tried yet), or failing."""
        if not self.configured:
            return "not_configured"
        return "failing" if self._last_ok is False else "ok"

    def describe(self) -> dict[str, Any]:
        """Status plus model, server and the last error (never the key)."""
        return {
            "status": self.status(),
            "model": self.model,
            "base_url": self.base_url,
            "last_error": self._last_error or None,
        }

    # ------------------------------------------------------------------- calls

    def chat(self, messages: Sequence[Message], **kw: Any) -> str:
        """The model's text answer to `messages`."""
        return self.complete(messages, **kw).content

    def chat_json(self, messages: Sequence[Message], **kw: Any) -> dict[str, Any]:
        """The JSON object the model answers (JSON mode where the server has it).

        `LLMBadReply` (with the raw text in `detail["content"]`) when the answer
        holds no JSON object.
        """
        messages = list(messages)
        if not any("json" in str(m.get("content") or "").lower() for m in messages):
            # JSON mode (DeepSeek, OpenAI) requires the prompt to mention JSON.
            messages.append({"role": "system", "content": "Answer with a JSON object."})
        completion = self.complete(messages, json_mode=True, **kw)
        try:
            return parse_json_object(completion.content)
        except ValueError as exc:
            raise LLMBadReply(
                str(exc), detail={"content": completion.content[:4000]}
            ) from exc

    def complete(
        self,
        messages: Sequence[Message],
        *,
        json_mode: bool = False,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        """One chat completion: content and tool calls of the first choice."""
        if not self.configured:
            raise LLMNotConfigured(
                "no LLM is configured: set llm.api_key in config.json "
                "(or AIOS_LLM_API_KEY), or llm.base_url to a local server"
            )
        params: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if tools:
            params["tools"] = list(tools)
            if tool_choice:
                params["tool_choice"] = tool_choice
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        if temperature is not None:
            params["temperature"] = temperature
        if json_mode and self._json_mode_supported:
            try:
                completion = self._create(
                    {**params, "response_format": {"type": "json_object"}}
                )
            except _JsonModeRejected:
                log.info("%s rejects JSON mode; asking for plain content", self.base_url)
                completion = self._create(params)
                self._json_mode_supported = False
        else:
            completion = self._create(params)
        note_usage(completion.usage, params["messages"], completion.content)
        return completion

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        on_delta: Callable[[Delta], None] | None = None,
    ) -> Completion:
        """One streamed completion, assembled: `on_delta` sees each text piece and each
        tool-call piece as it arrives; the answer is the whole message with
        `finish_reason` and `usage` (asked for with `stream_options.include_usage`).

        Only the request is retried (as `complete`); a stream broken after its first
        chunk raises `LLMError`, so the caller decides whether to ask again.
        """
        if not self.configured:
            raise LLMNotConfigured("no LLM is configured")
        params: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            params["tools"] = list(tools)
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        if temperature is not None:
            params["temperature"] = temperature
        chunks = self._create(params, answer=lambda response: response)
        completion = self._assemble(chunks, on_delta or (lambda delta: None))
        note_usage(completion.usage, params["messages"], completion.content)
        return completion

    def _assemble(self, chunks: Any, on_delta: Callable[[Delta], None]) -> Completion:
        import openai

        text: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish_reason = "stop"
        usage: dict[str, int] = {}
        try:
            for chunk in chunks:
                if getattr(chunk, "usage", None) is not None:
                    usage = _usage_of(chunk.usage)
                for choice in getattr(chunk, "choices", None) or []:
                    delta = choice.delta
                    thought = _reasoning_of(delta)
                    if thought:
                        reasoning.append(thought)
                        on_delta(("reasoning", thought))
                    if delta is not None and delta.content:
                        text.append(delta.content)
                        on_delta(("text", delta.content))
                    for piece in (delta.tool_calls if delta is not None else None) or []:
                        call = calls.setdefault(
                            piece.index, {"id": "", "name": "", "arguments": []}
                        )
                        function = piece.function
                        name = (function.name if function else None) or ""
                        arguments = (function.arguments if function else None) or ""
                        call["id"] = call["id"] or (piece.id or "")
                        call["name"] += name
                        call["arguments"].append(arguments)
                        on_delta(
                            (
                                "tool_call",
                                {
                                    "index": piece.index,
                                    "id": piece.id or "",
                                    "name": name,
                                    "arguments": arguments,
                                },
                            )
                        )
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
        except openai.OpenAIError as exc:
            raise self._failed(
                LLMError(f"{self.base_url}: the stream broke: {_brief(exc)}")
            ) from exc
        self._last_ok = True
        self._last_error = ""
        tool_calls = [
            ModelToolCall(
                name=call["name"], arguments="".join(call["arguments"]), call_id=call["id"]
            )
            for _, call in sorted(calls.items())
        ]
        return Completion(
            "".join(text), tool_calls, finish_reason, usage, "".join(reasoning)
        )

    # ---------------------------------------------------------------- plumbing

    def _client(self) -> Any:
        if self._openai_client is None:
            with self._lock:
                if self._openai_client is None:
                    import openai

                    self._openai_client = openai.OpenAI(
                        api_key=self.api_key or "not-needed",
                        base_url=self.base_url,
                        timeout=self.timeout,
                        max_retries=0,  # retries are ours, bounded below
                    )
        return self._openai_client

    def _create(
        self, params: dict[str, Any], answer: Callable[[Any], Any] | None = None
    ) -> Any:
        """The server's response through `answer` (default: a `Completion`)."""
        import openai

        client = self._client()
        attempt = 0
        while True:
            try:
                response = client.chat.completions.create(**params)
            except openai.APITimeoutError as exc:
                raise self._failed(
                    LLMTimeout(f"{self.base_url}: no answer within {self.timeout:g} s")
                ) from exc
            except openai.AuthenticationError as exc:
                raise self._failed(
                    LLMUnauthorized(f"{self.base_url} refused the API key (HTTP 401)")
                ) from exc
            except openai.PermissionDeniedError as exc:
                raise self._failed(
                    LLMUnauthorized(f"{self.base_url} refused the API key (HTTP 403)")
                ) from exc
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if "response_format" in params:
                    raise _JsonModeRejected() from exc
                if _too_long(exc):
                    raise self._failed(
                        LLMContextTooLong(
                            f"{self.base_url}: the context is too long: {_brief(exc)}"
                        )
                    ) from exc
                raise self._failed(
                    LLMError(f"{self.base_url} refused the request: {_brief(exc)}")
                ) from exc
            except (
                openai.RateLimitError,
                openai.InternalServerError,
                openai.APIConnectionError,
            ) as exc:
                if attempt < self.max_retries:
                    time.sleep(self._backoff(exc, attempt))
                    attempt += 1
                    continue
                if isinstance(exc, openai.RateLimitError):
                    failure: LLMError = LLMRateLimited(
                        f"{self.base_url} is rate limiting (HTTP 429) after "
                        f"{attempt + 1} attempt(s)"
                    )
                elif isinstance(exc, openai.APIConnectionError):
                    failure = LLMError(
                        f"{self.base_url} unreachable: {_brief(exc)}",
                        variant="unreachable",
                        placeholders={"url": self.base_url},
                    )
                else:
                    failure = LLMError(f"{self.base_url} failed: {_brief(exc)}")
                raise self._failed(failure) from exc
            except openai.OpenAIError as exc:
                raise self._failed(LLMError(f"{self.base_url}: {_brief(exc)}")) from exc
            return (answer or self._succeeded)(response)

    def _backoff(self, exc: Exception, attempt: int) -> float:
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
            try:
                value = float(headers.get(name, "")) / divisor
            except (TypeError, ValueError):
                continue
            return max(0.0, min(value, self.max_backoff))
        return min(0.25 * (2**attempt), self.max_backoff)

    def _failed(self, error: LLMError) -> LLMError:
        self._last_ok = False
        self._last_error = error.code
        log.warning("LLM call failed: %s", error)
        return error

    def _succeeded(self, response: Any) -> Completion:
        self._last_ok = True
        self._last_error = ""
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise LLMBadReply(f"{self.base_url} answered without choices")
        message = choices[0].message
        calls = []
        for call in getattr(message, "tool_calls", None) or []:
            function = getattr(call, "function", None)
            if function is None:
                continue
            calls.append(
                ModelToolCall(
                    name=str(getattr(function, "name", "") or ""),
                    arguments=str(getattr(function, "arguments", "") or ""),
                    call_id=str(getattr(call, "id", "") or ""),
                )
            )
        return Completion(
            content=message.content or "",
            tool_calls=calls,
            finish_reason=str(getattr(choices[0], "finish_reason", None) or "stop"),
            usage=_usage_of(getattr(response, "usage", None)),
        )


def _usage_of(usage: Any) -> dict[str, int]:
    """`prompt_tokens` / `completion_tokens` of a server's `usage`, when it sent them."""
    found: dict[str, int] = {}
    for name in ("prompt_tokens", "completion_tokens"):
        value = getattr(usage, name, None)
        if isinstance(value, int):
            found[name] = value
    return found


class _JsonModeRejected(Exception):
    """The server refused `response_format`; ask again without it."""


def _brief(exc: Exception) -> str:
    text = str(getattr(exc, "message", None) or exc)
    return text if len(text) <= 300 else text[:297] + "..."
