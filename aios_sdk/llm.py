"""The LLM as apps see it: `self.llm` of an agent, talking through the controller.

The API key never leaves the controller (SECURITY.md X5): an app reaches the
model with its own token through the controller routes `POST /api/llm/chat`,
`POST /api/llm/plan` and `POST /api/llm/turn` (one turn of an agent loop: OpenAI
messages and tools in, the assembled message with `finish_reason` and `usage` out,
its text streamed to the desktop as `agent_progress` events), and reports its loop's
progress with `POST /api/llm/progress`. This module is the app-side client `AgentLLM`;
the routes' request and reply models and the `llm_*` errors, which the controller
shares, live in `aios_protocol.llm` and are re-exported here:

    if self.llm.available:
        steps = self.llm.plan_steps(instruction, context)   # validated Step dicts
        text = self.llm.chat("用一句话介绍 Python")

Every failure is an `AiosError` whose `code` is one of `llm_not_configured`,
`llm_timeout`, `llm_unauthorized`, `llm_rate_limited`, `llm_bad_reply`,
`llm_context_too_long`, `llm_error`.
The routes are reached through `aios_runtime.json_client`, the pooled client of every
hop.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from aios_protocol.errors import AiosError
from aios_protocol.llm import (
    AgentProgress,
    ChatMessage,
    EarlyStart,
    LiveTarget,
    LLMBadReply,
    LLMChatReply,
    LLMChatRequest,
    LLMContextTooLong,
    LLMError,
    LLMNotConfigured,
    LLMPlanReply,
    LLMPlanRequest,
    LLMRateLimited,
    LLMTimeout,
    LLMTurnReply,
    LLMTurnRequest,
    LLMUnauthorized,
    TurnMessage,
    TurnToolCall,
    error_from_body,
)
from aios_protocol.messages import Context, ToolSpec
from aios_runtime.json_client import PeerTimeout, request_json
from aios_sdk.agent import current_call

__all__ = [
    "AgentLLM",
    "ChatMessage",
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
    "LLMUnauthorized",
    "LLMTurnReply",
    "LLMTurnRequest",
    "AgentProgress",
    "EarlyStart",
    "LiveTarget",
    "TurnMessage",
    "TurnToolCall",
    "ENV_CONTROLLER_URL",
]

ENV_CONTROLLER_URL = "AIOS_CONTROLLER_URL"
ENV_EXECUTOR_URL = "AIOS_EXECUTOR_URL"
ENV_TOKEN = "AIOS_TOKEN"
ENV_APP_ID = "AIOS_APP_ID"

# the routes' vocabulary and errors live in aios_protocol.llm (re-exported above)


# -------------------------------------------------------------------- the client


class AgentLLM:
    """An app's door to the model: every call goes through the controller.

    Reads `$AIOS_CONTROLLER_URL`, `$AIOS_TOKEN` (the app's own token),
    `$AIOS_EXECUTOR_URL` and `$AIOS_APP_ID` when first used, unless given.
    """

    HEALTH_TTL = 5.0  # seconds `available` trusts the last health answer

    def __init__(
        self,
        controller_url: str | None = None,
        token: str | None = None,
        *,
        executor_url: str | None = None,
        app_id: str | None = None,
        timeout: float = 120.0,
        env: Mapping[str, str] | None = None,
    ):
        env = os.environ if env is None else env
        self.controller_url = (controller_url or env.get(ENV_CONTROLLER_URL, "")).rstrip(
            "/"
        )
        self.token = token or env.get(ENV_TOKEN, "")
        self.executor_url = (executor_url or env.get(ENV_EXECUTOR_URL, "")).rstrip("/")
        self.app_id = app_id or env.get(ENV_APP_ID, "")
        self.timeout = timeout
        self._health: tuple[float, bool] | None = None
        self._tools: list[ToolSpec] | None = None

    # ----------------------------------------------------------------- public

    @property
    def available(self) -> bool:
        """Whether the controller has a model configured (its `/api/health` `llm`)."""
        if not self.controller_url:
            return False
        now = time.monotonic()
        if self._health is not None and now - self._health[0] < self.HEALTH_TTL:
            return self._health[1]
        try:
            answer = request_json(
                "GET", f"{self.controller_url}/api/health", token=self.token, timeout=5
            )
        except AiosError:
            llm = None
        else:
            health = answer.body if answer.status == 200 else None
            llm = health.get("llm") if isinstance(health, dict) else None
        if isinstance(llm, dict):
            llm = llm.get("status")
        ok = isinstance(llm, str) and llm not in ("", "not_configured")
        self._health = (now, ok)
        return ok

    def chat(
        self,
        messages_or_prompt: str | Sequence[Mapping[str, str]],
        json: bool = False,
        *,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> str | dict[str, Any]:
        """The model's answer: text, or (with `json=True`) a JSON object as a dict."""
        if isinstance(messages_or_prompt, str):
            messages: list[dict[str, str]] = [
                {"role": "user", "content": messages_or_prompt}
            ]
        else:
            messages = [dict(m) for m in messages_or_prompt]
        if system:
            messages.insert(0, {"role": "system", "content": system})
        body = LLMChatRequest.model_validate(
            {
                "messages": messages,
                "json": json,
                "max_tokens": max_tokens,
                "temperature": temperature,
            }
        ).model_dump(mode="json", by_alias=True, exclude_none=True)
        payload = self._post("/api/llm/chat", body)
        return LLMChatReply.model_validate(payload).content

    def plan_steps(
        self,
        instruction: str,
        context: Mapping[str, Any] | Context | None = None,
        *,
        tools: Sequence[Mapping[str, Any] | ToolSpec] | None = None,
    ) -> list[dict[str, Any]]:
        """Steps (`{"step_id", "tool", "args"}` dicts) the model plans for `instruction`.

        `tools` defaults to this app's tools as the executor lists them (with their
        argument schemas), narrowed to `context["available_tools"]` when that is set.
        The controller has already checked every step's tool and arguments.
        """
        ctx = (
            context
            if isinstance(context, Context)
            else Context.model_validate(dict(context or {}))
        )
        specs = (
            [ToolSpec.model_validate(t) for t in tools]
            if tools is not None
            else self._tool_specs(ctx.available_tools)
        )
        if not specs:
            raise LLMBadReply("no tools to plan with (context has no available_tools)")
        body = LLMPlanRequest(instruction=instruction, context=ctx, tools=specs).dump()
        payload = self._post("/api/llm/plan", body)
        reply = LLMPlanReply.model_validate(payload)
        return [step.dump() for step in reply.steps]

    def turn(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] = (),
        max_tokens: int | None = None,
        temperature: float | None = None,
        live_session: str | None = None,
        turn: int = 0,
        early: Mapping[str, Any] | None = None,
    ) -> LLMTurnReply:
        """One model turn over OpenAI `messages` and function `tools`; with
        `live_session` the controller streams its text to the desktop as it comes;
        with `early` (`EarlyStart`) it starts those tools' calls as they complete."""
        body = LLMTurnRequest.model_validate(
            {
                "messages": list(messages),
                "tools": list(tools),
                "max_tokens": max_tokens,
                "temperature": temperature,
                "live": {"session_id": live_session, "turn": turn}
                if live_session
                else None,
                "early": dict(early) if early else None,
            }
        ).dump()
        return LLMTurnReply.model_validate(self._post("/api/llm/turn", body))

    def progress(self, session_id: str, kind: str, data: Mapping[str, Any]) -> None:
        """Publish one step of the agent loop to the desktop; never raises."""
        if not self.controller_url or not self.token or not session_id:
            return
        body = AgentProgress(session_id=session_id, kind=kind, data=dict(data)).dump()
        try:
            request_json(
                "POST",
                f"{self.controller_url}/api/llm/progress",
                body,
                token=self.token,
                timeout=5,
                what="the controller",
            )
        except AiosError:
            pass  # the desktop misses one live line; the reply still carries it all

    def close(self) -> None:
        """Nothing to release: connections belong to the process's pools
        (`aios_runtime.json_client`)."""

    # -------------------------------------------------------------- plumbing

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        if not self.controller_url or not self.token:
            raise LLMNotConfigured(
                "no LLM: this app is not connected to a controller "
                f"({ENV_CONTROLLER_URL} and {ENV_TOKEN} are not set)"
            )
        session_id = current_call().session_id
        if session_id and not body.get("session_id"):
            body = {**body, "session_id": session_id}
        try:
            answer = request_json(
                "POST",
                f"{self.controller_url}{path}",
                body,
                token=self.token,
                timeout=self.timeout,
                what="the controller",
            )
        except PeerTimeout as exc:
            raise LLMTimeout(
                f"no answer from the controller within {self.timeout:g} s"
            ) from exc
        except AiosError as exc:  # unreachable, or an answer too large
            raise LLMError(exc.message) from exc
        payload = answer.body
        if payload is None:
            raise LLMError(f"controller answered HTTP {answer.status} without JSON")
        if answer.status != 200:
            raise error_from_body(answer.status, payload)
        self._health = (time.monotonic(), True)
        return payload

    def _tool_specs(self, available: Sequence[str]) -> list[ToolSpec]:
        """This app's tools with schemas from the executor (cached); names as a fallback."""
        if self._tools is None and self.executor_url and self.token:
            try:
                answer = request_json(
                    "GET",
                    f"{self.executor_url}/tools?app_id={quote(self.app_id, safe='')}",
                    token=self.token,
                    timeout=10,
                )
                if answer.status == 200:
                    listing = answer.body.get("tools", [])
                    self._tools = [ToolSpec.model_validate(t) for t in listing]
            except (AiosError, ValueError, AttributeError):
                self._tools = None
        known = list(self._tools or [])
        if available:
            wanted = set(available)
            known = [t for t in known if t.name in wanted]
            missing = [n for n in available if n not in {t.name for t in known}]
            known += [ToolSpec(name=n) for n in missing]
        return known
