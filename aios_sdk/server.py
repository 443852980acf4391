"""An app's HTTP service: `serve(agent)` / `create_app(agent)` (ARCHITECTURE "App
HTTP API").

A Flask app with the edge of `aios_runtime.edge` installed (loopback Host/Origin
guard, CORS for loopback origins, the app's own token from `AIOS_TOKEN`, strict JSON,
one error shape), served on waitress by `aios_runtime.serving.start_server`. Routes:
`GET /health` (public), `GET /manifest`, `POST /handle` (and the manifest's
`handle_endpoint`), `POST /tools/<name>` (run within the scope of the user this
process serves). Whatever `handle` does — raise, or return
something that is not an `AppReply` — the controller gets a well-formed reply: the
standard error view with code `app_error` or `bad_app_reply` (HTTP 200, status error),
the code's sentence in the user's language (`context["language"]`, from the strings
table of `aios_protocol.strings`) and the technical text as `detail`.
"""

from __future__ import annotations

import logging
import os
import secrets
from typing import Any

from flask import Flask, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aios_protocol.errors import AiosError, NotFound, ToolFailed
from aios_protocol.messages import (
    AppReply,
    HandleRequest,
    build_models,
    describe_validation_error,
)
from aios_protocol.strings import user_message
from aios_runtime.edge import create_service, public, read_json, token_matches
from aios_runtime.json_client import json_bytes
from aios_runtime.serving import start_server
from aios_runtime.users import OWNER
from aios_sdk.agent import AIOSAgent, CallScope, process_user, within_call

__all__ = ["DEFAULT_PORT", "create_app", "reply_of", "serve"]

log = logging.getLogger("aios.sdk.server")

DEFAULT_PORT = 5001


class ToolInvocation(BaseModel):
    """Body of `POST /tools/<name>` (sent by the executor to run a custom tool): the
    arguments. The tool serves the user this process serves (`process_user`)."""

    model_config = ConfigDict(extra="forbid")

    args: dict[str, Any] = Field(default_factory=dict)


def _failure_reply(code: str, app_name: str, detail: str, language: str) -> AppReply:
    """The error view `code` (`app_error`, `bad_app_reply`) of the app `app_name`: the
    code's sentence in `language` (the strings table), the technical text as `detail`."""
    message = user_message(code, language, app=app_name)
    return AppReply.error(code, message).model_copy(update={"detail": detail})


def reply_of(value: Any, app_name: str = "app", language: str = "zh-CN") -> AppReply:
    """`handle`'s return value as an `AppReply`, or the `bad_app_reply` error view."""
    if isinstance(value, AppReply):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_none=True)
    if not isinstance(value, dict):
        problem = (
            f"handle returned {type(value).__name__}; expected a dict with "
            "status, view_type and data"
        )
        return _failure_reply("bad_app_reply", app_name, problem, language)
    try:
        return AppReply.model_validate(value)
    except ValidationError as exc:
        problem = f"handle returned a bad reply: {describe_validation_error(exc)}"
        return _failure_reply("bad_app_reply", app_name, problem, language)


def _readable(exc: BaseException) -> str:
    if isinstance(exc, AiosError):
        return f"{exc.message} ({exc.code})"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _json_response(encoded: bytes) -> Response:
    return Response(encoded, mimetype="application/json")


def create_app(agent: AIOSAgent, token: str | None = None) -> Flask:
    """The Flask app serving `agent`; `token` defaults to `$AIOS_TOKEN`.

    Without either, a random token is made and logged: an app never runs token-less.
    """
    if not isinstance(agent, AIOSAgent):
        raise TypeError(f"serve an AIOSAgent instance, not {type(agent).__name__}")
    build_models(HandleRequest, AppReply)  # before the server's threads first use them
    token = _token(token)
    app = create_service(f"aios-app-{agent.app_id}", token_matches(token))
    app.config["AIOS_TOKEN"] = token

    @public
    def health() -> dict[str, Any]:
        return {"status": "ok", "app_id": agent.app_id, "name": agent.name}

    def manifest_route() -> dict[str, Any]:
        tools = [tool_def.spec().dump() for tool_def in agent.custom_tools().values()]
        return {"manifest": agent.manifest(), "tools": tools}

    app.add_url_rule("/health", "health", health, methods=["GET"])
    app.add_url_rule("/manifest", "manifest", manifest_route, methods=["GET"])
    _add_handle_routes(app, agent)
    _add_tool_routes(app, agent)
    return app


def _token(token: str | None) -> str:
    """`token`, else `$AIOS_TOKEN`, else a random one for this run (logged)."""
    token = token or os.environ.get("AIOS_TOKEN", "").strip()
    if not token:
        token = secrets.token_urlsafe(24)
        log.warning(
            "AIOS_TOKEN is not set; this app's token for this run is %s "
            "(send it in the X-AIOS-Token header)",
            token,
        )
    return token


def _add_handle_routes(app: Flask, agent: AIOSAgent) -> None:
    """`/handle` (and the manifest's `handle_endpoint`): the agent's reply to one
    request, an error view when it failed or answered outside the protocol."""
    app_log = agent.log

    def handle_route() -> Response:
        request = read_json(HandleRequest)
        context = request.context.dump()
        action = request.action_request.dump() if request.action_request else None
        language = request.context.language
        try:
            value = agent.handle(request.instruction, context, action)
        except Exception as exc:
            app_log.exception("handle failed")
            reply = _failure_reply("app_error", agent.name, _readable(exc), language)
        else:
            reply = reply_of(value, agent.name, language)
        try:
            body = reply.dump()
            encoded = json_bytes(body)
        except (TypeError, ValueError) as exc:  # pydantic's serialisation error too
            problem = f"handle returned data that is not JSON: {exc}"
            body = _failure_reply("bad_app_reply", agent.name, problem, language).dump()
            encoded = json_bytes(body)
        if body.get("view_type") == "error" and body.get("data", {}).get("code") == (
            "bad_app_reply"
        ):
            app_log.error("%s", body.get("detail"))
        return _json_response(encoded)

    endpoints = {"/handle", agent.manifest().get("handle_endpoint") or "/handle"}
    for endpoint in sorted(endpoints):
        if isinstance(endpoint, str) and endpoint.startswith("/"):
            app.add_url_rule(endpoint, f"handle:{endpoint}", handle_route, methods=["POST"])


def _add_tool_routes(app: Flask, agent: AIOSAgent) -> None:
    """`/tools/<name>`: one of the agent's `@tool` methods, run for the executor."""
    app_log = agent.log

    def tool_route(name: str) -> Response:
        if name not in agent.custom_tools():
            raise NotFound(f"{agent.app_id} has no custom tool {name!r}")
        invocation = read_json(ToolInvocation)
        # the tool serves this process's user: its tool calls work in their sandbox
        user = process_user()
        scope = CallScope(user_id=None if user == OWNER else user)
        try:
            with within_call(scope):
                result = agent.run_custom_tool(name, invocation.args)
        except AiosError:
            raise
        except Exception as exc:
            app_log.exception("custom tool %s failed", name)
            raise ToolFailed(f"{name}: {_readable(exc)}") from exc
        try:
            return _json_response(json_bytes({"status": "ok", "result": result}))
        except (TypeError, ValueError) as exc:
            raise ToolFailed(
                f"{name}: result is not JSON ({type(result).__name__})"
            ) from exc

    app.add_url_rule("/tools/<name>", "tool", tool_route, methods=["POST"])


def serve(agent: AIOSAgent, port: int | None = None) -> None:
    """Serve `agent` on 127.0.0.1:`port` (default `$APP_PORT`, else 5001); blocks."""
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=os.environ.get("AIOS_LOG_LEVEL", "INFO").upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    if port is None:
        port = int(os.environ.get("APP_PORT") or DEFAULT_PORT)
    app = create_app(agent)
    log.info("%s (%s) listening on 127.0.0.1:%d", agent.name, agent.app_id, port)
    start_server(app, port, background=False)
