"""One chat request as one Triton turn: which session, which app, what instruction.

`read_turn(body, headers)` reads a `ChatCompletionRequest`: the instruction is the
last message, which must be the user's; the caller's system prompt (every `system`
/ `developer` message) is kept for the apps as `context.caller_system_prompt`; only
text content is taken (an image or audio part is a 400 naming it). The user is the
body's `user`, else `X-AIOS-User-Id`, else the key's own user (the owner, `default`,
for a key bound to none), checked by `aios_runtime.users.check_user_id`; the session
belongs to that user (its context's `user_id`), so its work runs in their sandbox;
the conversation is
`X-AIOS-Conversation-Id`, else derived from the first user message (the same
opening line starts the same conversation); the pair names one session,
`sess_oa<hash>`, restored from disk like any other (`controller.sessions`).
The answer's language is the caller's, never guessed from the text: the body's
`metadata.language`, else the request's `Accept-Language` (its first zh… or en…
tag), else the one the conversation had (a session keeps its language), else the
settings' `ui_language` (`language_for`).

`ChatService.answer(turn)` runs it. When the session has a question waiting for the
user's yes (a paused risky step, `controller.permissions`) and the instruction is
an answer word (确认 / 好的 / yes → allow once, 总是允许 / always → allow always,
取消 / 不要 / no → deny), that question is answered and its paused work resumed;
otherwise the instruction goes through the pipeline, to the app the model names
(`triton/<app_id>`, through `AddressedRouter`) or routed as typed (`triton`). The
pipeline is reached only through `controller.instructions.Instructions`. The answer's
usage sums what the model said of every call made for the turn: the router's, and
the apps' `/api/llm/*` calls for its session, their sub-agents' included
(`controller.llm.usage`); it is an estimate from the text only where the model said
nothing, and `triton.usage_estimated` says which.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from aios_protocol.errors import InvalidRequest, NotFound
from aios_protocol.messages import AppReply, InstructionRequest, Language
from aios_runtime.users import OWNER, check_user_id
from controller.events import EventBus
from controller.instructions import Instructions
from controller.llm.usage import Tally, UsageMeter, estimate_tokens
from controller.pipeline.context import USER_KEY
from controller.routing.router import AppProfile, PlannedTask, RoutePlan, Router
from openai_entry.markdown import reply_markdown
from openai_entry.wire import ChatCompletionRequest, ChatMessage, Usage

__all__ = [
    "BASE_MODEL",
    "AddressedRouter",
    "ChatService",
    "ChatTurn",
    "TurnAnswer",
    "confirmation_decision",
    "estimate_tokens",
    "read_turn",
    "session_id_for",
]

BASE_MODEL = "triton"
SYSTEM_PROMPT_KEY = "caller_system_prompt"  # in session.context, injected into Context
MAX_TURNS_KEY = "caller_max_turns"  # the request's max_turns, likewise
ASKING_KEY = "awaiting_user_input"  # the app whose question the next message answers
USER_HEADER = "X-AIOS-User-Id"
CONVERSATION_HEADER = "X-AIOS-Conversation-Id"
MAX_INSTRUCTION = 4000  # InstructionRequest.text
_ID_TEXT = re.compile(r"^[\w.@:+-]{1,200}$")


# ------------------------------------------------------------ addressed routing

_addressed: ContextVar[str | None] = ContextVar("addressed_app", default=None)


@contextmanager
def addressed_to(app_id: str | None) -> Iterator[None]:
    """Within the block, `AddressedRouter` sends instructions to `app_id` (None: route)."""
    token = _addressed.set(app_id)
    try:
        yield
    finally:
        _addressed.reset(token)


class AddressedRouter:
    """`inner`, except for an instruction a caller addressed to one app (`addressed_to`):
    that one is one task for that app, without routing."""

    def __init__(self, inner: Router):
        self.inner = inner

    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan:
        app_id = _addressed.get()
        if app_id is None:
            return self.inner.route(text, apps)
        return RoutePlan(
            tasks=[PlannedTask(task_id="t1", app_id=app_id, instruction=text)],
            confidence=1.0,
            reason=f"addressed to {app_id}",
        )


# ------------------------------------------------------------------- the request


def _bad(message: str, param: str | None) -> InvalidRequest:
    return InvalidRequest(message, detail={"param": param})


def _content_text(message: ChatMessage, index: int) -> str:
    content = message.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part_no, part in enumerate(content):
        if part.type != "text":
            raise _bad(
                f"messages[{index}].content[{part_no}]: content parts of type "
                f"{part.type!r} are not supported; Triton takes text only",
                f"messages[{index}].content[{part_no}].type",
            )
        texts.append(part.text or "")
    return "\n".join(texts)


def session_id_for(user: str, conversation: str) -> str:
    """The session of one user's conversation: stable across requests and restarts."""
    digest = hashlib.sha256(f"{user}\n{conversation}".encode()).hexdigest()[:32]
    return f"sess_oa{digest}"


@dataclass
class ChatTurn:
    model: str
    app_id: str | None  # None: routed as typed
    instruction: str
    system_prompt: str
    user: str
    conversation_id: str
    session_id: str
    prompt_tokens: int
    language: Language | None = None  # the caller's (`language_for`); None: not said
    max_turns: int | None = None  # the request's, within the app's own cap


def language_tag(value: str | None) -> Language | None:
    """ "en", "en-GB", "zh-Hans-CN" … as the language the answer is written in."""
    tag = (value or "").strip().lower()
    if tag.startswith("en"):
        return "en-US"
    if tag.startswith("zh"):
        return "zh-CN"
    return None


def language_for(body: ChatCompletionRequest, headers: HeaderLookup) -> Language | None:
    """The language the caller asked for: `metadata.language`, else the first zh… or
    en… tag of `Accept-Language` in the order of its weights; None when neither says."""
    said = (body.metadata or {}).get("language")
    if said is not None:
        chosen = language_tag(said)
        if chosen is None:
            raise _bad(
                "metadata.language must be zh-CN or en-US (or another zh… / en… tag)",
                "metadata.language",
            )
        return chosen
    weighted = []
    for index, part in enumerate((headers.get("Accept-Language") or "").split(",")):
        tag, _, params = part.strip().partition(";")
        weight = 1.0
        if params.strip().startswith("q="):
            try:
                weight = float(params.strip()[2:])
            except ValueError:
                continue
        if weight > 0:
            weighted.append((-weight, index, tag))
    for _, _, tag in sorted(weighted):
        chosen = language_tag(tag)
        if chosen is not None:
            return chosen
    return None


def _identifier(value: str | None, what: str) -> str | None:
    if value is None or value == "":
        return None
    if not _ID_TEXT.match(value):
        raise _bad(f"{what} must be 1–200 letters, digits or ._@:+-", what)
    return value


class HeaderLookup(Protocol):
    """A request's headers as `read_turn` reads them: Werkzeug's (whose names are
    case-insensitive) or a plain dict."""

    def get(self, key: str, /) -> str | None: ...


def read_turn(
    body: ChatCompletionRequest, headers: HeaderLookup, *, default_user: str = OWNER
) -> ChatTurn:
    """What `body` asks, as a turn of one session (`InvalidRequest` naming the field);
    `default_user` when the request names no user."""
    app_id: str | None = None
    if body.model != BASE_MODEL:
        prefix, _, rest = body.model.partition("/")
        if prefix != BASE_MODEL or not rest:
            raise NotFound(
                f"model {body.model!r} does not exist; use {BASE_MODEL!r} or "
                f"'{BASE_MODEL}/<app_id>' (GET /v1/models lists them)",
                detail={"param": "model"},
            )
        app_id = rest
    texts = [_content_text(m, i) for i, m in enumerate(body.messages)]
    last = len(body.messages) - 1
    if body.messages[last].role != "user":
        raise _bad(
            f"messages[{last}]: the last message must be the user's (role user), "
            f"not {body.messages[last].role}",
            f"messages[{last}].role",
        )
    instruction = texts[last].strip()
    if not instruction:
        raise _bad(
            f"messages[{last}]: the user's message is empty", f"messages[{last}].content"
        )
    if len(instruction) > MAX_INSTRUCTION:
        raise _bad(
            f"messages[{last}]: the user's message is longer than {MAX_INSTRUCTION} characters",
            f"messages[{last}].content",
        )
    system = "\n\n".join(
        t.strip()
        for m, t in zip(body.messages, texts, strict=True)
        if m.role in ("system", "developer")
    ).strip()
    named = body.user or headers.get(USER_HEADER) or None
    field_name = "user" if body.user else USER_HEADER
    user = check_user_id(named, field=field_name) if named else default_user
    conversation = _identifier(headers.get(CONVERSATION_HEADER), CONVERSATION_HEADER)
    if conversation is None:
        first = next(
            t for m, t in zip(body.messages, texts, strict=True) if m.role == "user"
        )
        conversation = "first-" + hashlib.sha256(first.strip().encode()).hexdigest()[:16]
    return ChatTurn(
        model=body.model,
        app_id=app_id,
        instruction=instruction,
        system_prompt=system,
        user=user,
        conversation_id=conversation,
        session_id=session_id_for(user, conversation),
        prompt_tokens=sum(estimate_tokens(t) + 4 for t in texts),
        language=language_for(body, headers),
        max_turns=body.max_turns,
    )


# -------------------------------------------------------------- confirmations

_PUNCTUATION = " \t\r\n。！!.,，~～?？'\""
_ALWAYS = {"总是允许", "一直允许", "始终允许", "always", "always allow"}
_YES = {"确认", "确定", "好", "好的", "是", "是的", "可以", "同意", "执行", "继续", "允许"}
_YES |= {"yes", "y", "ok", "okay", "sure", "confirm", "allow", "go ahead", "yes please"}
_NO = {"取消", "不", "不要", "不用", "否", "拒绝", "算了", "别"}
_NO |= {"no", "n", "cancel", "deny", "stop", "no thanks"}


def confirmation_decision(text: str) -> str | None:
    """`allow_once` / `allow_always` / `deny` when `text` is just an answer word."""
    word = text.strip(_PUNCTUATION).lower()
    if word in _ALWAYS:
        return "allow_always"
    if word in _YES:
        return "allow_once"
    if word in _NO:
        return "deny"
    return None


# ---------------------------------------------------------------------- answers


@dataclass
class TurnAnswer:
    content: str
    session_id: str
    views: list[dict[str, Any]] = field(default_factory=list)
    awaiting_confirmation: str | None = None
    reasoning: str = ""  # the model's reasoning behind the answer, when an app kept it
    awaiting_user_input: bool = False  # an app asked a question; the next message answers
    tokens: Tally = field(default_factory=Tally)  # of the model calls the turn made

    def with_thinking(self) -> str:
        """`content` with the reasoning ahead of it as `<think>…</think>` text."""
        if not self.reasoning:
            return self.content
        return f"<think>\n{self.reasoning}\n</think>\n\n{self.content}"

    @property
    def usage_estimated(self) -> bool:
        """Whether `usage` is an estimate: no model call, or one whose server gave
        no usage."""
        return self.tokens.calls == 0 or self.tokens.estimated

    def usage(self, turn: ChatTurn) -> Usage:
        """The model's tokens summed over the turn's calls; without any, an estimate
        from the request's and the answer's text."""
        prompt, completion = self.tokens.prompt_tokens, self.tokens.completion_tokens
        if self.tokens.calls == 0:
            prompt, completion = turn.prompt_tokens, estimate_tokens(self.content)
        return Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
        )

    def triton(self, turn: ChatTurn) -> dict[str, Any]:
        """The `triton` field: the session, and the views behind the text."""
        return {
            "session_id": self.session_id,
            "user": turn.user,
            "conversation_id": turn.conversation_id,
            "views": self.views,
            "awaiting_confirmation": self.awaiting_confirmation,
            "awaiting_user_input": self.awaiting_user_input,
            "usage_estimated": self.usage_estimated,
        }


def _choices(reply: AppReply) -> str:
    """The choices of an app's question (`awaiting_user_input`) as a Markdown list."""
    asked = (reply.model_extra or {}).get("awaiting_user_input")
    choices = asked.get("choices") if isinstance(asked, dict) else None
    if not isinstance(choices, list) or not choices:
        return ""
    return "\n\n" + "\n".join(f"- {choice}" for choice in choices)


class ChatService:
    """Answers chat turns with the pipeline, in the sessions of `sessions`."""

    def __init__(
        self,
        instructions: Instructions,
        events: EventBus,
        meter: UsageMeter | None = None,
    ):
        self.events = events  # the bus the pipeline publishes on
        self.instructions = instructions
        self.meter = meter or UsageMeter()  # the model calls made for each turn
        self.created = int(time.time())

    def models(self) -> list[str]:
        """`triton` and `triton/<app_id>` for every installed app."""
        return [
            BASE_MODEL,
            *(f"{BASE_MODEL}/{app_id}" for app_id in self.instructions.app_ids()),
        ]

    def check_model(self, turn: ChatTurn) -> None:
        if turn.app_id is not None and turn.model not in self.models():
            raise NotFound(
                f"model {turn.model!r} does not exist: no app {turn.app_id!r} is installed "
                "(GET /v1/models lists the models)",
                detail={"param": "model"},
            )

    def answer(self, turn: ChatTurn, base_url: str = "") -> TurnAnswer:
        """Run the turn (see the module docstring); app failures are error views;
        its usage is what the model said of the calls made for it."""
        with self.meter.measuring(turn.session_id) as tokens:
            answer = self._answer(turn, base_url)
        answer.tokens = tokens
        return answer

    def _answer(self, turn: ChatTurn, base_url: str) -> TurnAnswer:
        sid = turn.session_id
        self.instructions.keep_note(sid, SYSTEM_PROMPT_KEY, turn.system_prompt or None)
        self.instructions.keep_note(
            sid, MAX_TURNS_KEY, str(turn.max_turns) if turn.max_turns else None
        )
        # the session's owner: its apps and steps work in that user's sandbox
        self.instructions.keep_note(
            sid, USER_KEY, None if turn.user == OWNER else turn.user
        )
        asking = self.instructions.note(sid, ASKING_KEY)
        decision = confirmation_decision(turn.instruction)
        resumed = self.instructions.resume_waiting(sid, decision) if decision else None
        replies: list[tuple[str, str | None, AppReply]] = []
        if resumed is not None:
            replies.append((resumed.app_id, resumed.task_id, resumed.reply))
            fallback = resumed.reply.message or ""
        else:
            request = InstructionRequest(
                text=turn.instruction, session_id=sid, language=turn.language
            )
            # an answer goes to the app that asked, whatever app the request names
            with addressed_to(asking or turn.app_id):
                response = self.instructions.run(request)
            replies = [(t.app_id, t.task_id, t.result) for t in response.tasks if t.result]
            fallback = response.message
        # the language the answer was written in: the caller's, else the session's
        language = turn.language or self.instructions.language(sid)
        parts = [
            reply_markdown(reply, app_id, base_url, user=turn.user, language=language)
            + _choices(reply)
            for app_id, _, reply in replies
        ]
        answer = TurnAnswer(
            content="\n\n".join(p for p in parts if p) or fallback,
            session_id=sid,
            views=[
                {"app_id": app_id, "task_id": task_id, **reply.dump()}
                for app_id, task_id, reply in replies
            ],
        )
        waiting = [
            app_id
            for app_id, _, reply in replies
            if (reply.model_extra or {}).get("awaiting_user_input")
        ]
        answer.awaiting_user_input = bool(waiting)
        self.instructions.keep_note(sid, ASKING_KEY, waiting[0] if waiting else None)
        answer.reasoning = "\n\n".join(
            str((reply.model_extra or {}).get("reasoning") or "")
            for _, _, reply in replies
            if (reply.model_extra or {}).get("reasoning")
        )
        for _, _, reply in replies:
            if reply.view_type == "confirm":
                answer.awaiting_confirmation = str(reply.data.get("confirmation_id") or "")
        return answer
