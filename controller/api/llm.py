"""The controller's LLM routes for apps: the API key never leaves the controller.

`llm_blueprint(client)` serves

- `POST /api/llm/chat`  `LLMChatRequest` → `{"content": str}` (or, with `"json":
  true`, `{"content": {...}}` — a JSON object);
- `POST /api/llm/plan`  `LLMPlanRequest` → `LLMPlanReply` (`{"steps": [Step…],
  "message": str}`), see `controller.llm.planner`;
- `POST /api/llm/turn`  `LLMTurnRequest` → `LLMTurnReply`: one turn of an agent loop,
  streamed from the model; with `live` its text, reasoning and tool-call pieces are
  published as `agent_progress` events (kind `text` / `reasoning` /
  `tool_call_delta`) for that session;
- `POST /api/llm/progress`  `AgentProgress` → `{"status": "ok"}`: the app's own loop
  steps, published as `agent_progress` events under the caller's app id;

A request naming a `session_id` counts its model's tokens toward the request running
in that session (`controller.llm.usage.UsageMeter`, the `/v1` answer's usage). All
answer 503 `llm_not_configured` without a model, 503 `overloaded` when more than
`max_concurrent` model calls are already waiting. Register it on the controller's
`create_service` app; the routes are token-protected by its guard.

Apps present their OWN token (`AIOS_TOKEN`), not the master token, so the
controller's authenticator must accept app tokens on these four routes, and only
these: `allow_app_tokens_for_llm(master, app_for_token)` wraps it that way. The
token also says which user the app process serves (`user_for_token`): the model of
that user answers, and the calls started early work in their sandbox. An app's call
of these routes counts as use of the process that made it (`own_call`), so one whose
background sub-agent is still working is not stopped as idle.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, g, request

from aios_protocol.errors import Overloaded
from aios_protocol.llm import (
    AgentProgress,
    EarlyStart,
    LLMChatReply,
    LLMChatRequest,
    LLMNotConfigured,
    LLMPlanRequest,
    LLMTurnReply,
    LLMTurnRequest,
    TurnToolCall,
)
from aios_protocol.messages import ToolInfo, ToolsListing, ToolSpec
from aios_runtime.edge import TOKEN_HEADER, Authenticator, read_json
from aios_runtime.users import OWNER
from controller.api.early_calls import EarlyCalls, RunSteps
from controller.events import EventBus
from controller.llm.client import Delta, LLMClient
from controller.llm.planner import plan_with_tools
from controller.llm.usage import UsageMeter
from controller.user_settings import model_for

__all__ = ["LLM_APP_ROUTES", "allow_app_tokens_for_llm", "llm_blueprint"]

log = logging.getLogger("aios.controller.llm_api")

LLM_APP_ROUTES = frozenset(
    {"/api/llm/chat", "/api/llm/plan", "/api/llm/turn", "/api/llm/progress"}
)
LIVE_FLUSH_S = 0.05  # streamed pieces are published at most this often


def allow_app_tokens_for_llm(
    master: Authenticator, app_for_token: Callable[[str], str | None]
) -> Authenticator:
    """`master`, plus app tokens (identity = the app id) on `LLM_APP_ROUTES` only.

    `app_for_token(token)` returns the app id owning `token` (compared in constant
    time) or None. Runs inside the request (it reads `flask.request.path`).
    """

    def authenticate(presented: str) -> str | None:
        identity = master(presented)
        if identity is not None:
            return identity
        if request.method == "POST" and request.path in LLM_APP_ROUTES:
            return app_for_token(presented)
        return None

    return authenticate


def llm_blueprint(
    client: LLMClient,
    *,
    max_concurrent: int = 4,
    events: EventBus | None = None,
    tool_listing: Callable[[str, str], Sequence[ToolSpec]] | None = None,
    plan_listing: Callable[[str, str], ToolsListing] | None = None,
    run_steps: RunSteps | None = None,
    user_for_token: Callable[[str], str] | None = None,
    client_for_user: Callable[[str], LLMClient | None] | None = None,
    meter: UsageMeter | None = None,
    own_call: Callable[[str], AbstractContextManager[None]] | None = None,
) -> Blueprint:
    """The routes over `client`; at most `max_concurrent` model calls at once.
    Without `events` nothing is published live (the turn still answers whole).
    A request of an app process serving a user other than the owner (its token
    says which, `user_for_token`) goes to `client_for_user(user)` when that gives
    one (the user's own model settings), else to `client`. `/api/llm/plan` offers
    the tools of `plan_listing(app_id, user_id)` and their providers' prompt parts.
    A request naming its session counts its model's tokens toward that session's
    request open in `meter` (the `/v1` answer's usage). An app's request runs
    within `own_call(its token)`: the supervisor counts it as use of its process."""
    blueprint = Blueprint("llm", __name__)
    models = _Models(
        client,
        threading.BoundedSemaphore(max_concurrent),
        user_for_token=user_for_token,
        client_for_user=client_for_user,
        meter=meter,
        own_call=own_call,
        tool_listing=tool_listing,
    )
    _add_chat_routes(blueprint, models, plan_listing)
    _add_turn_route(blueprint, models, events, run_steps)
    _add_progress_route(blueprint, models, events)
    return blueprint


@dataclass
class _Models:
    """What the routes share: the model (the owner's, or the served user's), the
    slots for calls at once, the usage meter and the caller's process use."""

    client: LLMClient
    slots: threading.BoundedSemaphore
    user_for_token: Callable[[str], str] | None = None
    client_for_user: Callable[[str], LLMClient | None] | None = None
    meter: UsageMeter | None = None
    own_call: Callable[[str], AbstractContextManager[None]] | None = None
    tool_listing: Callable[[str, str], Sequence[ToolSpec]] | None = None

    def counted(self, view: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
        """`view`, run as a use of the calling app's process."""
        own_call = self.own_call

        @functools.wraps(view)
        def run() -> dict[str, Any]:
            if own_call is None or g.get("identity") == "controller":
                return view()
            with own_call(request.headers.get(TOKEN_HEADER, "")):
                return view()

        return run

    def served_user(self) -> str:
        """The user the calling app process serves (the desktop's token: the owner),
        looked up once per request."""
        if self.user_for_token is None or g.get("identity") == "controller":
            return OWNER
        if "served_user" not in g:
            g.served_user = self.user_for_token(request.headers.get(TOKEN_HEADER, ""))
        return str(g.served_user)

    def model(self) -> LLMClient:
        """The model of the user the caller serves."""
        return model_for(self.served_user(), self.client, self.client_for_user)

    def with_slot(
        self, work: Callable[[], Any], model: LLMClient, session_id: str | None = None
    ) -> Any:
        if not model.configured:
            raise LLMNotConfigured(
                "no LLM is configured on this computer (config.json llm.api_key "
                "or llm.base_url)"
            )
        if not self.slots.acquire(timeout=model.timeout):
            raise Overloaded("too many LLM requests at once; try again")
        try:
            if self.meter is None:
                return work()
            with self.meter.counting_for(session_id):
                return work()
        finally:
            self.slots.release()

    def early_tools(self, early: EarlyStart | None, app_id: str) -> frozenset[str]:
        """Of the tools a loop names for an early start, those that may start before
        anyone reviewed the call: read-only, concurrency-safe, asking nobody, as the
        executor lists them for the app."""
        if early is None or not early.tools or self.tool_listing is None:
            return frozenset()
        try:
            listed = self.tool_listing(app_id, self.served_user())
        except Exception as exc:
            log.warning("no tool listing for %s (%s): nothing starts early", app_id, exc)
            return frozenset()
        safe = {
            info.name
            for info in listed
            if isinstance(info, ToolInfo)
            and info.available
            and info.concurrency_safe
            and info.risk_level == "read"
            and not info.requires_confirmation
        }
        return frozenset(early.tools) & safe


def _caller_app(named: str | None = None) -> str:
    """The app calling (the controller itself may name one)."""
    identity = str(g.get("identity") or "")
    return (named or identity) if identity == "controller" else identity


def _add_chat_routes(
    blueprint: Blueprint,
    models: _Models,
    plan_listing: Callable[[str, str], ToolsListing] | None,
) -> None:
    """`/api/llm/chat` and `/api/llm/plan`: one answer of the model, whole."""

    @blueprint.post("/api/llm/chat")
    @models.counted
    def llm_chat() -> dict[str, Any]:
        body = read_json(LLMChatRequest)
        messages = [m.dump() for m in body.messages]
        options = {"max_tokens": body.max_tokens, "temperature": body.temperature}
        log.info("LLM chat for %s (%d messages)", g.get("identity"), len(messages))
        model = models.model()
        if body.json_mode:
            content: Any = models.with_slot(
                lambda: model.chat_json(messages, **options), model, body.session_id
            )
        else:
            content = models.with_slot(
                lambda: model.chat(messages, **options), model, body.session_id
            )
        return LLMChatReply(content=content).dump()

    @blueprint.post("/api/llm/plan")
    @models.counted
    def llm_plan() -> dict[str, Any]:
        body = read_json(LLMPlanRequest)
        log.info("LLM plan for %s (%d tools)", g.get("identity"), len(body.tools))
        caller = str(g.get("identity") or "")
        listing = None
        if plan_listing is not None and caller != "controller":
            try:  # the tools offered come from the executor's listing (one source)
                listing = plan_listing(caller, models.served_user())
            except Exception as exc:
                log.warning(
                    "no tool listing for %s (%s): its own specs are used", caller, exc
                )
        model = models.model()
        reply = models.with_slot(
            lambda: plan_with_tools(
                model,
                body,
                listing=None if listing is None else listing.tools,
                prompts=None if listing is None else listing.prompts,
            ),
            model,
            body.session_id,
        )
        return reply.dump()


def _add_turn_route(
    blueprint: Blueprint,
    models: _Models,
    events: EventBus | None,
    run_steps: RunSteps | None,
) -> None:
    """`/api/llm/turn`: one turn of an agent loop, streamed from the model (its pieces
    published live, the calls that may start early started)."""

    def early_calls(body: LLMTurnRequest) -> EarlyCalls | None:
        if run_steps is None or body.early is None:
            return None
        early_tools = models.early_tools(body.early, _caller_app())
        if not early_tools:
            return None
        return EarlyCalls(
            run_steps,
            _caller_app(),
            early_tools,
            body.early.session_id,
            body.early.turn_id,
            user_id=models.served_user(),
        )

    @blueprint.post("/api/llm/turn")
    @models.counted
    def llm_turn() -> dict[str, Any]:
        body = read_json(LLMTurnRequest)
        messages = [m.dump() for m in body.messages]
        live = _LivePieces(events, _caller_app(), body.live) if body.live else None
        early = early_calls(body)

        def on_delta(delta: Delta) -> None:
            if live is not None:
                live.add(delta)
            kind, piece = delta
            if early is not None and kind == "tool_call":
                early.piece(
                    int(piece["index"]), piece["id"], piece["name"], piece["arguments"]
                )

        log.info(
            "LLM turn for %s (%d messages, %d tools)",
            g.get("identity"),
            len(messages),
            len(body.tools),
        )
        model = models.model()
        completion = models.with_slot(
            lambda: model.stream(
                messages,
                tools=body.tools or None,
                max_tokens=body.max_tokens,
                temperature=body.temperature,
                on_delta=on_delta,
            ),
            model,
            body.session_id,
        )
        if live:
            live.flush()
        return LLMTurnReply(
            content=completion.content,
            tool_calls=[
                TurnToolCall(id=c.call_id, name=c.name, arguments=c.arguments)
                for c in completion.tool_calls
            ],
            finish_reason=completion.finish_reason,
            usage=completion.usage,
            reasoning=completion.reasoning,
            early_results=early.results() if early is not None else {},
        ).dump()


def _add_progress_route(
    blueprint: Blueprint, models: _Models, events: EventBus | None
) -> None:
    """`/api/llm/progress`: an app's own loop steps, published live."""

    @blueprint.post("/api/llm/progress")
    @models.counted
    def llm_progress() -> dict[str, Any]:
        body = read_json(AgentProgress)
        if events is not None:
            events.publish(
                "agent_progress",
                {"kind": body.kind, **body.data},
                app_id=_caller_app(str(request.args.get("app_id") or "") or None),
                session_id=body.session_id,
            )
        return {"status": "ok"}


class _LivePieces:
    """Streamed pieces of one turn, published together at most every LIVE_FLUSH_S."""

    def __init__(self, events: EventBus | None, app_id: str, target: Any):
        self._events = events
        self._app_id = app_id
        self._session_id = target.session_id
        self._turn = target.turn
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._last = time.monotonic()

    def add(self, delta: Delta) -> None:
        kind, piece = delta
        if kind == "text":
            self._text.append(str(piece))
        elif kind == "reasoning":
            self._reasoning.append(str(piece))
        else:
            call = self._calls.setdefault(
                int(piece["index"]),
                {"index": piece["index"], "id": "", "name": "", "arguments": ""},
            )
            call["id"] = call["id"] or piece["id"]
            call["name"] += piece["name"]
            call["arguments"] += piece["arguments"]
        if time.monotonic() - self._last >= LIVE_FLUSH_S:
            self.flush()

    def flush(self) -> None:
        self._last = time.monotonic()
        if self._events is None:
            return
        if self._reasoning:  # the thinking before the text it leads to
            joined = "".join(self._reasoning)
            self._publish({"kind": "reasoning", "turn": self._turn, "text": joined})
            self._reasoning = []
        if self._text:
            self._publish({"kind": "text", "turn": self._turn, "text": "".join(self._text)})
            self._text = []
        for call in self._calls.values():
            self._publish({"kind": "tool_call_delta", "turn": self._turn, **call})
        self._calls = {}

    def _publish(self, data: dict[str, Any]) -> None:
        assert self._events is not None
        self._events.publish(
            "agent_progress", data, app_id=self._app_id, session_id=self._session_id
        )
