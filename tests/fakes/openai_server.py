"""A fake OpenAI-compatible chat server: real HTTP on 127.0.0.1, scripted replies.

Drives the real `openai` client in tests without reaching any model:

    with FakeOpenAI() as fake:
        fake.script(json_reply({"tasks": []}), error_reply(429))
        client = LLMClient(Settings(deepseek_api_key="k", llm_base_url=fake.base_url))

Each POST to `/v1/chat/completions` (or `/chat/completions`) is recorded in
`fake.requests` and answered by the next scripted reply: text content, JSON content,
tool calls, malformed text, an HTTP error (401, 429, …), a cut-off answer
(`truncated_reply`, `finish_reason: length`), any of these with the `usage` it reports
(`NO_USAGE`: none), a dropped connection (`disconnect`) or
any of these after a delay. A request with `stream: true` gets the same reply as
`chat.completion.chunk` events: the role, the text in small pieces, each tool call's
id and name and then its arguments in pieces (a `reasoning_content` before all
that, in pieces too), the `finish_reason`, a usage chunk when
`stream_options.include_usage` is set, and `data: [DONE]`. With nothing scripted it answers HTTP 500 `no scripted reply`, so a test that
calls the model more often than it expects fails loudly. `reject_json_mode` makes it
answer 400 to any request carrying `response_format` (like servers without JSON mode).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "NO_USAGE",
    "FakeOpenAI",
    "RecordedRequest",
    "ScriptedReply",
    "delayed",
    "disconnect",
    "error_reply",
    "holding",
    "json_reply",
    "text_reply",
    "tool_calls_reply",
    "truncated_reply",
]

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
# how `controller.routing.llm_router.routing_prompt` begins
ROUTING_PROMPT_START = "You route a user's instruction"


@dataclass
class ScriptedReply:
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False  # close the connection without answering
    # streamed: once the second tool call has begun, wait (at most 20 s) until this
    # says yes, and record in `held` whether it did — what happened mid-stream
    hold: Any = None
    held: list[bool] = field(default_factory=list)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def is_routing(self) -> bool:
        """Whether this is the controller's routing request (`LLMRouter`)."""
        messages = self.messages
        first = str(messages[0].get("content", "")) if messages else ""
        return first.startswith(ROUTING_PROMPT_START)

    @property
    def prompt_text(self) -> str:
        """All message contents joined, for asserting what the model was told."""
        return "\n".join(str(m.get("content") or "") for m in self.messages)


NO_USAGE: dict[str, int] = {}  # as `usage`: the server says nothing of its usage


def _completion(
    message: dict[str, Any], finish_reason: str, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        if usage is None
        else usage,
    }
    if not body["usage"]:
        del body["usage"]
    return body


def text_reply(
    content: str, *, usage: dict[str, int] | None = None, reasoning: str | None = None
) -> ScriptedReply:
    """Plain assistant content (also how malformed JSON is scripted); `reasoning` is
    sent as `reasoning_content` (streamed in pieces before the content)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return ScriptedReply(body=_completion(message, "stop", usage))


def truncated_reply(content: str, *, usage: dict[str, int] | None = None) -> ScriptedReply:
    """An answer cut off by the output limit (`finish_reason: length`)."""
    return ScriptedReply(
        body=_completion({"role": "assistant", "content": content}, "length", usage)
    )


def disconnect() -> ScriptedReply:
    """The connection closes before any answer (a connection error for the client)."""
    return ScriptedReply(drop=True)


def json_reply(value: Any) -> ScriptedReply:
    return text_reply(json.dumps(value, ensure_ascii=False))


def tool_calls_reply(
    *calls: tuple[str, Any],
    content: str | None = None,
    usage: dict[str, int] | None = None,
    reasoning: str | None = None,
) -> ScriptedReply:
    """Tool calls `(name, args)`; args given as a str are sent verbatim (bad JSON)."""
    tool_calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for i, (name, args) in enumerate(calls, start=1)
    ]
    message = {"role": "assistant", "content": content, "tool_calls": tool_calls}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return ScriptedReply(body=_completion(message, "tool_calls", usage))


def error_reply(
    status: int, message: str = "", *, headers: dict[str, str] | None = None
) -> ScriptedReply:
    """An OpenAI-style error body; 429 defaults to `retry-after-ms: 10`."""
    default_headers = {"retry-after-ms": "10"} if status == 429 else {}
    kinds = {401: "invalid_request_error", 429: "rate_limit_error"}
    body = {
        "error": {
            "message": message or f"fake error {status}",
            "type": kinds.get(status, "api_error"),
            "code": None,
        }
    }
    return ScriptedReply(status=status, body=body, headers=headers or default_headers)


def delayed(seconds: float, reply: ScriptedReply) -> ScriptedReply:
    return ScriptedReply(
        reply.status, reply.body, reply.headers, delay=seconds, drop=reply.drop
    )


def holding(reply: ScriptedReply, until: Any) -> ScriptedReply:
    """`reply`, streamed with a pause after its second tool call began, until
    `until()` is true (see `ScriptedReply.hold`)."""
    reply.hold = until
    return reply


HOLD_MARK = "__hold__"  # an event of `stream_events` where the stream waits


def stream_events(body: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """A completion `body` as the `chat.completion.chunk` objects a server streams."""
    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    base = {
        "id": body.get("id", "chatcmpl-fake"),
        "object": "chat.completion.chunk",
        "created": body.get("created", 0),
        "model": body.get("model", "fake-model"),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""})]
    reasoning = message.get("reasoning_content") or ""
    for start in range(0, len(reasoning), 8):
        events.append(chunk({"reasoning_content": reasoning[start : start + 8]}))
    content = message.get("content") or ""
    for start in range(0, len(content), 8):
        events.append(chunk({"content": content[start : start + 8]}))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call.get("id"),
                            "type": "function",
                            "function": {"name": function.get("name"), "arguments": ""},
                        }
                    ]
                }
            )
        )
        if index == 1:  # the first call is whole now: a reader may act on it
            events.append({HOLD_MARK: True})
        arguments = function.get("arguments") or ""
        for start in range(0, len(arguments), 10):
            piece = {
                "index": index,
                "function": {"arguments": arguments[start : start + 10]},
            }
            events.append(chunk({"tool_calls": [piece]}))
    events.append(chunk({}, choice.get("finish_reason") or "stop"))
    if include_usage and "usage" in body:
        events.append({**base, "choices": [], "usage": body.get("usage")})
    return events


class FakeOpenAI:
    """The server; start it with `with FakeOpenAI() as fake:` or `start()`/`stop()`."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.reject_json_mode = False
        self._queue: deque[ScriptedReply] = deque()
        # user text → app id: routing requests for these texts are answered by rule
        # (one task to that app), whether or not the router asks, outside the queue
        self.routes: dict[str, str] = {}
        # marker → replies for the requests whose messages contain it (before the
        # queue): a background sub-agent's turns, whatever order they come in
        self._when: dict[str, deque[ScriptedReply]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-openai", daemon=True
        )

    # ------------------------------------------------------------------ control

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        """What to give the client as `base_url` (OpenAI's `/v1` layout)."""
        return f"{self.url}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes delayed replies
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *replies: ScriptedReply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def when(self, marker: str, *replies: ScriptedReply) -> None:
        """Answer the requests whose messages contain `marker` with `replies`, in
        order, ahead of the queue."""
        with self._lock:
            self._when.setdefault(marker, deque()).extend(replies)

    def reset(self) -> None:
        """Forget recorded requests, pending replies and `reject_json_mode`."""
        with self._lock:
            self._when.clear()
            self._queue.clear()
            self.requests.clear()
            self.routes.clear()
            self.reject_json_mode = False

    @property
    def pending(self) -> int:
        """Scripted replies not yet consumed."""
        return len(self._queue) + sum(len(r) for r in self._when.values())

    # ------------------------------------------------------------ server side

    def _answer(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> ScriptedReply:
        with self._lock:
            recorded = RecordedRequest(path, headers, body)
            self.requests.append(recorded)
            if recorded.is_routing and self.routes:
                text = str(recorded.messages[-1].get("content", ""))
                if text in self.routes:
                    task = {"id": "t1", "app_id": self.routes[text], "instruction": text}
                    return json_reply({"tasks": [{**task, "depends_on": []}]})
            for marker, replies in self._when.items():
                if replies and marker in recorded.prompt_text:
                    return replies.popleft()
            if self.reject_json_mode and "response_format" in body:
                return error_reply(400, "response_format is not supported")
            if self._queue:
                return self._queue.popleft()
        return error_reply(500, "no scripted reply")


def _wait_for(check: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())


class _FakeHandler(BaseHTTPRequestHandler):
    """One request to the fake server (`fake`, set by `_handler_for`)."""

    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet in tests
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.split("?", 1)[0] not in CHAT_PATHS:
            self._send(404, {"error": {"message": "not found", "type": "not_found"}})
            return
        try:
            body = json.loads(raw.decode("utf-8") or "{}")
        except ValueError:
            self._send(400, {"error": {"message": "bad JSON", "type": "invalid"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = self.fake._answer(self.path, headers, body)
        if reply.delay and self.fake._stopping.wait(reply.delay):
            return
        if reply.drop:
            self.close_connection = True
            self.connection.close()
            return
        if body.get("stream") and reply.status == 200:
            options = body.get("stream_options") or {}
            events = stream_events(reply.body, bool(options.get("include_usage")))
            self._stream(events, reply)
            return
        self._send(reply.status, reply.body, reply.headers)

    def _stream(self, events: list[dict[str, Any]], reply: ScriptedReply) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in events:
                if HOLD_MARK in event:
                    if reply.hold is not None:
                        reply.held.append(_wait_for(reply.hold, 20.0))
                    continue
                data = json.dumps(event, ensure_ascii=False)
                self.wfile.write(f"data: {data}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def _send(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_FakeHandler,), {"fake": fake})
