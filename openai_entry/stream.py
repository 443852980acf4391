"""A chat turn as OpenAI's stream: `chat.completion.chunk` Server-Sent Events.

`turn_stream(...)` yields the frames of one turn: the role chunk at once (before
any work), then, while the turn runs in a thread of its own, a `: ping` comment
every `heartbeat` seconds without news, the text an app streams (an event of the
turn's session whose data carries `text_delta`), and — only for a client that asked
with `X-AIOS-Events: 1` — the run events as named SSE events a plain client
would mistake for chunks: `run_state` (`running`, then `idle` or
`awaiting_permission`), `task_progress` (`task_started` / `task_done`),
`tool_result` (`step_done`), `awaiting_permission` (`confirm_request`), and every
other event of the session under its own type; an app's agent loop
(`agent_progress`) arrives as `tool_call`, `tool_result`, `awaiting_user_input` or
`task_progress` (its other steps), and a `heartbeat` event comes with each ping;
each `data:` is `{"type", "source", "seq", "app_id", "session_id", "data"}`. An
agent loop's text streams as chunks, its reasoning ahead of it as `<think>…</think>`
text (or as `reasoning_content` deltas with `reasoning_field`), each model attempt's
once the loop's next step shows it stands: an attempt the loop retries from the same
history (a `retry` step that says `discarded`) is never sent. Reasoning an app only
kept in its reply comes the same way at the end, when nothing was streamed. Then the
rest of the reply's Markdown, a chunk with `finish_reason: "stop"` and the views
(`triton`), the usage chunk when `stream_options.include_usage` asked for it, and
`data: [DONE]`. A failure of the whole turn is OpenAI's stream error, a `data:`
with `{"error": {...}}`, before `[DONE]`.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from aios_protocol.errors import AiosError
from controller.events import BusEvent, EventBus
from openai_entry.turn import ChatTurn, TurnAnswer
from openai_entry.wire import (
    ChatCompletionChunk,
    ChunkChoice,
    Delta,
    ErrorBody,
    error_detail,
)

__all__ = ["EVENTS_HEADER", "error_body", "turn_stream"]

log = logging.getLogger("aios.openai_entry")

EVENTS_HEADER = "X-AIOS-Events"
_RENAMED = {
    "task_started": "task_progress",
    "task_done": "task_progress",
    "step_done": "tool_result",
    "confirm_request": "awaiting_permission",
}
_NOT_FORWARDED = frozenset({"speak", "app_status"})  # spoken text; not about this turn


def _frame(payload: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload, ensure_ascii=False)}\n\n"


def error_body(exc: AiosError) -> dict[str, Any]:
    """OpenAI's error body for `exc`."""
    return ErrorBody(error=error_detail(exc)).dump()


_AGENT_EVENTS = {  # an agent loop's steps (`agent_progress` kinds) by their names
    "tool_call": "tool_call",
    "tool_result": "tool_result",
    "awaiting_user_input": "awaiting_user_input",
}
_AGENT_PIECES = frozenset({"text", "reasoning", "tool_call_delta"})  # chunks, or nothing


def _run_event(event: BusEvent) -> str | None:
    if event.type in _NOT_FORWARDED:
        return None
    name = _RENAMED.get(event.type, event.type)
    if event.type == "agent_progress":
        kind = str(event.data.get("kind") or "")
        if kind in _AGENT_PIECES:
            return None
        name = _AGENT_EVENTS.get(kind, "task_progress")
    data = dict(event.data)
    if event.type == "task_started":
        data["status"] = "running"
    data.pop("result", None)  # the final views come with the last chunk
    payload = {
        "type": name,
        "source": event.type,
        "seq": event.seq,
        "app_id": event.app_id,
        "session_id": event.session_id,
        "data": data,
    }
    return _frame(payload, name)


def is_loop_step(event: BusEvent) -> bool:
    """Whether `event` is a step of an app's agent loop itself (not a sub-agent's)."""
    return event.type == "agent_progress" and not event.data.get("agent")


def discards(step: dict[str, Any]) -> bool:
    """Whether a loop step throws away what the model's attempt streamed: a retry
    from the same history, or the loop giving up."""
    if step.get("kind") == "retry":
        return bool(step.get("discarded"))
    return step.get("kind") == "done" and step.get("status") == "error"


def turn_stream(
    run: Callable[[], TurnAnswer],
    turn: ChatTurn,
    *,
    events: EventBus,
    completion_id: str,
    created: int,
    include_usage: bool,
    run_events: bool,
    heartbeat: float,
    reasoning_field: bool = False,
) -> Iterator[str]:
    """The SSE frames of one turn (see the module docstring)."""
    frames = _Frames(
        turn,
        completion_id,
        created,
        run_events=run_events,
        reasoning_field=reasoning_field,
        seen=events.last_seq,
    )
    yield frames.chunk(Delta(role="assistant", content=""))
    news = _running(run, turn.session_id, events, frames.seen)
    if run_events:
        yield _frame({"type": "run_state", "state": "running"}, "run_state")
    while True:
        try:
            kind, item = news.get(timeout=heartbeat)
        except queue.Empty:
            yield ": ping\n\n"
            if run_events:
                yield _frame({"type": "heartbeat"}, "heartbeat")
            continue
        if kind == "event":
            yield from frames.forward(item)
            continue
        # the turn ended: what it published that the follower has not passed on yet
        for event in events.since(frames.seen):
            if event.session_id == turn.session_id:
                yield from frames.forward(event)
        if kind == "error":
            yield _frame(error_body(item))
        else:
            yield from frames.ending(item, include_usage=include_usage)
        yield "data: [DONE]\n\n"
        return


def _running(
    run: Callable[[], TurnAnswer], session_id: str, events: EventBus, start_seq: int
) -> queue.SimpleQueue[tuple[str, Any]]:
    """Run the turn in a thread of its own, and follow the session's events in
    another, from `start_seq`: the news of both, as `("event", BusEvent)` and at the
    end `("answer", TurnAnswer)` or `("error", AiosError)`."""
    news: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    finished = threading.Event()

    def follow() -> None:  # this session's events, while the turn runs
        seq = start_seq
        while not finished.is_set() and not events.closed:
            for event in events.wait_since(seq, 1.0):
                seq = event.seq
                if event.session_id == session_id:
                    news.put(("event", event))

    def work() -> None:
        try:
            news.put(("answer", run()))
        except AiosError as exc:
            news.put(("error", exc))
        except Exception as exc:  # the stream must still end in OpenAI's shape
            log.exception("chat turn failed")
            news.put(("error", AiosError(f"{type(exc).__name__}: {exc}")))
        finally:
            finished.set()

    threading.Thread(target=follow, name="chat-events", daemon=True).start()
    threading.Thread(target=work, name="chat-turn", daemon=True).start()
    return news


def _loop_piece(event: BusEvent) -> str | None:
    """The text or reasoning an app's agent loop streamed (not a sub-agent's)."""
    data = event.data
    if not is_loop_step(event) or data.get("kind") not in ("text", "reasoning"):
        return None
    piece = data.get("text")
    return piece if isinstance(piece, str) and piece else None


class _Frames:
    """The frames of one turn's stream, and what they have sent so far: the text
    (`streamed`), whether reasoning was sent and a <think> block is open, and the
    pieces of the model's attempt held until the loop's next step shows it stands."""

    def __init__(
        self,
        turn: ChatTurn,
        completion_id: str,
        created: int,
        *,
        run_events: bool,
        reasoning_field: bool,
        seen: int,
    ) -> None:
        self.turn = turn
        self.completion_id = completion_id
        self.created = created
        self.run_events = run_events
        self.reasoning_field = reasoning_field
        self.seen = seen  # the last event passed on
        self.streamed = ""
        self.held: list[tuple[str, str]] = []  # (text | reasoning, piece)
        self.thinking = False  # a <think> block is open
        self.thought = False  # some reasoning was sent

    def chunk(self, delta: Delta | None = None, **choice: Any) -> str:
        body = ChatCompletionChunk(
            id=self.completion_id,
            created=self.created,
            model=self.turn.model,
            choices=[ChunkChoice(delta=delta or Delta(), **choice)],
        )
        return _frame(body.dump())

    def think(self, piece: str) -> Iterator[str]:
        self.thought = True
        if self.reasoning_field:
            yield self.chunk(Delta(reasoning_content=piece))
            return
        if not self.thinking:
            self.thinking = True
            yield self.chunk(Delta(content="<think>\n"))
        yield self.chunk(Delta(content=piece))

    def end_thinking(self) -> Iterator[str]:
        if self.thinking:
            self.thinking = False
            yield self.chunk(Delta(content="\n</think>\n\n"))

    def text(self, piece: str) -> Iterator[str]:
        yield from self.end_thinking()
        self.streamed += piece
        yield self.chunk(Delta(content=piece))

    def release(self) -> Iterator[str]:
        """The held pieces of the model's attempt, which stands."""
        for kind, piece in self.held:
            if kind == "reasoning":
                yield from self.think(piece)
            else:
                yield from self.text(piece)
        self.held.clear()

    def forward(self, event: BusEvent) -> Iterator[str]:
        """What the stream says of one event of the turn's session."""
        if event.seq <= self.seen:
            return
        self.seen = event.seq
        piece = _loop_piece(event)
        if piece is not None:  # held until the attempt is known to stand
            self.held.append((str(event.data.get("kind")), piece))
            return
        if is_loop_step(event) and event.data.get("kind") not in _AGENT_PIECES:
            if discards(event.data):
                self.held.clear()
            else:
                yield from self.release()
        delta = event.data.get("text_delta")
        if isinstance(delta, str) and delta:
            yield from self.text(delta)
        elif self.run_events:
            frame = _run_event(event)
            if frame:
                yield frame

    def ending(self, answer: TurnAnswer, *, include_usage: bool) -> Iterator[str]:
        """The end of a turn that answered: the rest of its reply, the run's state,
        the `stop` chunk with the views and the usage chunk when asked for."""
        yield from self.release()  # the turn's last attempt stood
        if answer.reasoning and not self.thought and not self.streamed:
            yield from self.think(answer.reasoning)
        yield from self.end_thinking()
        rest = answer.content
        if self.streamed:
            rest = rest[len(self.streamed) :] if rest.startswith(self.streamed) else ""
        if rest:
            yield self.chunk(Delta(content=rest))
        if self.run_events:
            state = "awaiting_permission" if answer.awaiting_confirmation else "idle"
            if answer.awaiting_user_input:
                state = "awaiting_user_input"
            yield _frame({"type": "run_state", "state": state}, "run_state")
        yield self.chunk(finish_reason="stop", triton=answer.triton(self.turn))
        if include_usage:
            usage = ChatCompletionChunk(
                id=self.completion_id,
                created=self.created,
                model=self.turn.model,
                choices=[],
                usage=answer.usage(self.turn),
            )
            yield _frame(usage.dump())
