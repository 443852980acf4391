"""The controller's LLM routes for apps: the API key never leaves the controller.

`llm_blueprint(client)` serves

- `POST /api/llm/chat`  `LLMChatRequest` → `{"content": str}` (or, with `"json":
  true`, `{"content": {...}}` — a JSON object);
- `POST /api/llm/plan`  `LLMPlanRequest` → `LLMPlanReply` (`{"steps": [Step…],
  "message": str}`), see `controller.llm.planner`;

both 503 `llm_not_configured` without a model, 503 `overloaded` when more than
`max_concurrent` model calls are already waiting. Register it on the controller's
`create_service` app; the routes are token-protected by its guard.

Apps present their OWN token (`AIOS_TOKEN`), not the master token, so the
controller's authenticator must accept app tokens on these two routes, and only
these: `allow_app_tokens_for_llm(master, app_for_token)` wraps it that way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from flask import Blueprint, g, request

from aios_runtime.edge import Authenticator, read_json
from aios_sdk.errors import Overloaded
from aios_sdk.llm import LLMChatReply, LLMChatRequest, LLMNotConfigured, LLMPlanRequest
from controller.llm.client import LLMClient
from controller.llm.planner import plan_with_tools

__all__ = ["LLM_APP_ROUTES", "allow_app_tokens_for_llm", "llm_blueprint"]

log = logging.getLogger("aios.controller.llm_api")

LLM_APP_ROUTES = frozenset({"/api/llm/chat", "/api/llm/plan"})


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


def llm_blueprint(client: LLMClient, *, max_concurrent: int = 4) -> Blueprint:
    """The two routes over `client`; at most `max_concurrent` model calls at once."""
    blueprint = Blueprint("llm", __name__)
    slots = threading.BoundedSemaphore(max_concurrent)

    def _with_slot(work: Callable[[], Any]) -> Any:
        if not client.configured:
            raise LLMNotConfigured(
                "no LLM is configured on this computer (config.json deepseek_api_key "
                "or llm_base_url)"
            )
        if not slots.acquire(timeout=client.timeout):
            raise Overloaded("too many LLM requests at once; try again")
        try:
            return work()
        finally:
            slots.release()

    @blueprint.post("/api/llm/chat")
    def llm_chat() -> dict[str, Any]:
        body = read_json(LLMChatRequest)
        messages = [m.dump() for m in body.messages]
        options = {"max_tokens": body.max_tokens, "temperature": body.temperature}
        log.info("LLM chat for %s (%d messages)", g.get("identity"), len(messages))
        if body.json_mode:
            content: Any = _with_slot(lambda: client.chat_json(messages, **options))
        else:
            content = _with_slot(lambda: client.chat(messages, **options))
        return LLMChatReply(content=content).dump()

    @blueprint.post("/api/llm/plan")
    def llm_plan() -> dict[str, Any]:
        body = read_json(LLMPlanRequest)
        log.info("LLM plan for %s (%d tools)", g.get("identity"), len(body.tools))
        reply = _with_slot(lambda: plan_with_tools(client, body))
        return reply.dump()

    return blueprint
