"""`history_summary` of a session (S-41, issue 6): by the LLM when one is configured.

`summarize_history(turns, client)` asks the model for one short sentence about what
the user asked recently and what was done, bounded to `limit` characters; without a
model, or when the model fails, it returns `deterministic_summary(turns)`, a pure
function ("用户刚问过“帮我播放周杰伦的歌”，之前问过“…”").

A turn is a plain string (the user's instruction) or a mapping / object with the
user's words under `text` (or `instruction`) and, optionally, the system's answer
under `message` (or `reply`) and the app under `app_id`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from aios_sdk.llm import LLMError
from controller.llm import LLMClient

__all__ = ["DEFAULT_LIMIT", "deterministic_summary", "summarize_history"]

log = logging.getLogger("aios.controller.llm_summary")

DEFAULT_LIMIT = 200
MAX_TURNS_FOR_MODEL = 10
_QUOTE_LIMIT = 40


def _field(turn: Any, *names: str) -> str:
    for name in names:
        value = turn.get(name) if isinstance(turn, Mapping) else getattr(turn, name, None)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return ""


def _user_text(turn: Any) -> str:
    if isinstance(turn, str):
        return " ".join(turn.split())
    return _field(turn, "text", "instruction", "user")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def deterministic_summary(turns: Sequence[Any], limit: int = DEFAULT_LIMIT) -> str:
    """ "用户刚问过“<latest>”，之前问过“<older>”、…" — at most `limit` characters."""
    asked = [t for t in (_user_text(turn) for turn in reversed(turns)) if t]
    if not asked:
        return ""
    summary = f"用户刚问过“{_clip(asked[0], _QUOTE_LIMIT)}”"
    older: list[str] = []
    for text in asked[1:]:
        quoted = f"“{_clip(text, _QUOTE_LIMIT)}”"
        candidate = summary + "，之前问过" + "、".join([*older, quoted])
        if len(candidate) > limit:
            break
        older.append(quoted)
    if older:
        summary += "，之前问过" + "、".join(older)
    return _clip(summary, limit)


def _transcript(turns: Sequence[Any]) -> str:
    lines = []
    for turn in list(turns)[-MAX_TURNS_FOR_MODEL:]:
        user = _user_text(turn)
        if user:
            lines.append(f"用户: {_clip(user, 200)}")
        if not isinstance(turn, str):
            answer = _field(turn, "message", "reply")
            if answer:
                app = _field(turn, "app_id")
                lines.append(f"系统{f'({app})' if app else ''}: {_clip(answer, 200)}")
    return "\n".join(lines)


def _clean(text: str, limit: int) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = first.strip("\"'“”「」 ")
    return _clip(first, limit)


def summarize_history(
    turns: Sequence[Any], client: LLMClient | None, *, limit: int = DEFAULT_LIMIT
) -> str:
    """The session's summary, ≤ `limit` characters; one model call at most.

    No model call when `client` is None or not configured, or there are no turns.
    """
    fallback = deterministic_summary(turns, limit)
    if not fallback or client is None or not client.configured:
        return fallback
    messages = [
        {
            "role": "system",
            "content": "Summarise the conversation below in ONE sentence of "
            f"Simplified Chinese, at most {min(limit, 100)} characters, starting with "
            "“用户”: what the user asked recently and what was done. Answer with the "
            "sentence only.",
        },
        {"role": "user", "content": _transcript(turns)},
    ]
    try:
        summary = _clean(client.chat(messages, max_tokens=160, temperature=0), limit)
    except LLMError as exc:
        log.info("history summary by the model failed (%s); using the fallback", exc.code)
        return fallback
    return summary or fallback
