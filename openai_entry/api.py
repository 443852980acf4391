"""The OpenAI-compatible entry of the controller: `GET /v1/models`, `POST /v1/chat/completions`.

`openai_blueprint(chat, api_keys=…, heartbeat=…)` serves them for any OpenAI client
(the `openai` package, Open WebUI, LibreChat, Continue). The edge's loopback `Host`
and same-site `Origin` rules hold as on every route, but instead of `X-AIOS-Token`
these routes take `Authorization: Bearer <key>`: the desktop token or one of
config.json's `api_keys` (compared in constant time); a missing or wrong key is a
401. A key bound to users (`{"key", "user"}` / `{"key", "users"}`) acts for those
users only: a request naming another one (`user`, `X-AIOS-User-Id`) is a 403
`user_not_allowed`, and one naming none acts for the key's first user; a plain key
and the desktop token (the owner's own) may name any user. Every error under `/v1`
has OpenAI's shape `{"error": {"message", "type", "param", "code"}}`. The turn
itself is `openai_entry.turn`; `stream: true` answers with `openai_entry.stream`.
docs/OPENAI_API.md says how to point a client here.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable
from hmac import compare_digest
from pathlib import Path

from flask import Blueprint, Response, g, jsonify, request, stream_with_context
from pydantic import ValidationError
from werkzeug.exceptions import HTTPException

from aios_protocol.errors import (
    AiosError,
    InvalidRequest,
    PayloadTooLarge,
    UnsupportedMediaType,
    UserNotAllowed,
)
from aios_runtime.edge import loads_strict, public
from aios_runtime.settings import ApiKey, Settings
from aios_runtime.users import OWNER, check_user_id
from controller.user_settings import UserSettings
from openai_entry.limits import UserLimits
from openai_entry.sandbox import add_sandbox_routes
from openai_entry.stream import EVENTS_HEADER, turn_stream
from openai_entry.turn import USER_HEADER, ChatService, ChatTurn, TurnAnswer, read_turn
from openai_entry.wire import (
    ChatCompletion,
    ChatCompletionRequest,
    Choice,
    ErrorBody,
    ErrorDetail,
    ModelCard,
    ModelList,
    ReplyMessage,
    error_detail,
    first_problem,
)
from scheduler.scheduler import Scheduler

__all__ = ["acting_user", "openai_blueprint"]


def _openai_error(status: int, detail: ErrorDetail) -> Response:
    response = jsonify(ErrorBody(error=detail).dump())
    response.status_code = status
    return response


def _error_response(exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        err = AiosError(exc.description or exc.name, code="http_error")
        err.http_status = exc.code or 500
        exc = err
    if not isinstance(exc, AiosError):
        exc = AiosError(f"{type(exc).__name__}: {exc}")
    return _openai_error(exc.http_status, error_detail(exc))


def _read_body() -> ChatCompletionRequest:
    mimetype = request.mimetype or ""
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise UnsupportedMediaType("Content-Type must be application/json")
    limit = request.max_content_length
    raw = request.get_data(cache=True)
    if limit is not None and len(raw) > limit:
        raise PayloadTooLarge(f"body larger than {limit} bytes")
    payload = loads_strict(raw)
    if not isinstance(payload, dict):
        raise InvalidRequest("the body must be a JSON object", detail={"param": None})
    try:
        return ChatCompletionRequest.model_validate(payload)
    except ValidationError as exc:
        param, message = first_problem(exc)
        raise InvalidRequest(message, detail={"param": param}) from exc


def acting_user(named: str | None, field: str) -> str:
    """The user a `/v1` request acts for: `named` (checked, `field` in the error),
    else its key's own user; 403 `user_not_allowed` when the key may not act for it."""
    users: tuple[str, ...] | None = g.get("key_users")
    user = check_user_id(named, field=field) if named else (users[0] if users else OWNER)
    if users is not None and user not in users:
        raise UserNotAllowed(
            f"this API key may act for {', '.join(users)} only, not for {user!r}",
            detail={"param": field},
        )
    return user


def _bearer_check(
    api_keys: Callable[[], Iterable[tuple[str, tuple[str, ...] | None]]],
) -> Callable[[], Response | None]:
    """The check of a `/v1` request's `Authorization: Bearer <key>` against
    `api_keys()`: a 401 in OpenAI's shape, or None with the users the key may act
    for in `g.key_users`."""

    def check_bearer() -> Response | None:
        scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
        given = presented.strip().encode()
        accepted = False
        users: tuple[str, ...] | None = None
        if scheme.lower() == "bearer" and given:
            for key, allowed in api_keys():  # every key compared: the time says nothing
                match = bool(key) and compare_digest(given, key.encode())
                if match and not accepted:
                    users = allowed
                accepted |= match
        if accepted:
            g.key_users = users
            return None
        detail = ErrorDetail(
            message="Incorrect or missing API key: send Authorization: Bearer <key> with "
            "the desktop token (<state_dir>/token) or a key of config.json api_keys",
            type="invalid_request_error",
            code="invalid_api_key",
        )
        return _openai_error(401, detail)

    return check_bearer


def _completion(
    answered: TurnAnswer,
    turn: ChatTurn,
    body: ChatCompletionRequest,
    completion_id: str,
    created: int,
) -> ChatCompletion:
    """The whole answer of a request without `stream` (its reasoning in
    `reasoning_content` when the client asked for it, else in <think>)."""
    return ChatCompletion(
        id=completion_id,
        created=created,
        model=turn.model,
        choices=[
            Choice(
                message=ReplyMessage(
                    content=answered.content
                    if body.include_reasoning
                    else answered.with_thinking(),
                    reasoning_content=(answered.reasoning or None)
                    if body.include_reasoning
                    else None,
                    triton=answered.triton(turn),
                )
            )
        ],
        usage=answered.usage(turn),
    )


def openai_blueprint(
    chat: ChatService,
    *,
    desktop_token: str,
    settings: Callable[[], Settings],
    scheduler: Scheduler | None = None,
    state_root: Path | None = None,
    user_settings: UserSettings | None = None,
) -> Blueprint:
    """The `/v1` routes over `chat`, and a user's own questions, (with
    `scheduler`) jobs and (with `user_settings`) settings under `/v1/sandbox/`
    (`openai_entry.sandbox`). Accepted keys:
    `desktop_token` and the current settings' `api_keys`; seconds between `: ping`s: config.json
    `openai_api.heartbeat_s` (default 10). With `state_root`, each user's limits
    (config.json `users`, `openai_entry.limits`) hold."""
    limits = UserLimits(settings, state_root) if state_root is not None else None

    def api_keys() -> Iterable[tuple[str, tuple[str, ...] | None]]:
        """Each accepted key and the users it may act for (None: any)."""
        yield desktop_token, None
        for entry in settings().api_keys:
            if isinstance(entry, ApiKey):
                yield entry.key, entry.allowed()
            else:
                yield entry, None

    def heartbeat() -> float:
        return settings().openai_api.heartbeat_s

    routes = Blueprint("openai", __name__, url_prefix="/v1")
    routes.register_error_handler(Exception, _error_response)
    routes.before_request(_bearer_check(api_keys))

    @routes.get("/models")
    @public
    def models() -> Response:
        cards = [ModelCard(id=name, created=chat.created) for name in chat.models()]
        return jsonify(ModelList(data=cards).dump())

    @routes.post("/chat/completions")
    @public
    def chat_completions() -> Response:
        body = _read_body()
        named = body.user or request.headers.get(USER_HEADER) or None
        user = acting_user(named, "user" if body.user else USER_HEADER)
        turn = read_turn(body, request.headers, default_user=user)
        chat.check_model(turn)
        base_url = request.host_url
        # one more instruction of this user, or a 429 before anything starts
        slot = limits.take(turn.user) if limits is not None else None

        def answer() -> TurnAnswer:
            try:
                return chat.answer(turn, base_url)
            finally:
                if slot is not None:
                    slot.release()

        completion_id = f"chatcmpl-{secrets.token_hex(12)}"
        created = int(time.time())
        if body.stream:
            frames = turn_stream(
                answer,
                turn,
                events=chat.events,
                completion_id=completion_id,
                created=created,
                include_usage=bool(
                    body.stream_options and body.stream_options.include_usage
                ),
                run_events=request.headers.get(EVENTS_HEADER, "") == "1",
                heartbeat=heartbeat(),
                reasoning_field=body.include_reasoning,
            )
            response = Response(stream_with_context(frames), mimetype="text/event-stream")
            response.headers["Cache-Control"] = "no-cache"
            response.headers["X-Accel-Buffering"] = "no"
            response.headers["X-AIOS-Session-Id"] = turn.session_id
            if slot is not None:  # a stream closed before its answer ran
                response.call_on_close(slot.release)
            return response
        completion = _completion(answer(), turn, body, completion_id, created)
        response = jsonify(completion.dump())
        response.headers["X-AIOS-Session-Id"] = turn.session_id
        return response

    add_sandbox_routes(
        routes,
        scheduler,
        chat.instructions,
        acting_user,
        user_settings=user_settings,
        state_root=state_root,
    )

    @routes.route("/<path:rest>", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
    @public
    def unknown(rest: str) -> Response:
        detail = ErrorDetail(
            message=f"Triton serves /v1/models and /v1/chat/completions, not /v1/{rest}",
            type="invalid_request_error",
            code="not_found",
        )
        return _openai_error(404, detail)

    return routes
