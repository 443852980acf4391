"""`history_summary` of a session: by the LLM when one is configured.

`summarize_history(turns, client)` asks the model for one short sentence about what
the user asked recently and what was done, bounded to `limit` characters; without a
model, or when the model fails, it returns `deterministic_summary(turns)`, a pure
function ("用户刚问过“帮我播放周杰伦的歌”，之前问过“…”").

A turn is a plain string (the user's instruction) or a mapping / object with the
user's words under `text` (or `instruction`) and, optionally, the system's answer
under `message` (or `reply`) and the apps under `apps` (or `app_id`) — the shape of
`controller.sessions.Session.history`; turns whose `kind` is set and is not
"instruction" (window opens, button clicks) are left out.

The model is slow next to a request: `BackgroundSummarizer` writes summaries off the
request path (one worker thread, the latest turns per session win), so the context
builder can use the last LLM summary and fall back to the deterministic one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aios_protocol.llm import LLMError
from controller.llm.client import LLMClient

__all__ = [
    "DEFAULT_LIMIT",
    "BackgroundSummarizer",
    "deterministic_summary",
    "summarize_history",
]

log = logging.getLogger("aios.controller.llm.summary")

DEFAULT_LIMIT = 200
MAX_TURNS_FOR_MODEL = 10
_QUOTE_LIMIT = 40


def _get(turn: Any, name: str) -> Any:
    # dict first: the Mapping ABC check costs more than the rest of the lookup
    if isinstance(turn, (dict, Mapping)):
        return turn.get(name)
    return getattr(turn, name, None)


def _field(turn: Any, *names: str) -> str:
    for name in names:
        value = _get(turn, name)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return ""


def _is_instruction(turn: Any) -> bool:
    if isinstance(turn, str):
        return True
    return _get(turn, "kind") in (None, "", "instruction")


def _user_text(turn: Any) -> str:
    if type(turn) is dict:  # a session's history entry: the common case, made cheap
        if turn.get("kind") not in (None, "", "instruction"):
            return ""
        text = turn.get("text")
        if isinstance(text, str) and text.strip():
            return " ".join(text.split())
    if isinstance(turn, str):
        return " ".join(turn.split())
    return _field(turn, "text", "instruction", "user") if _is_instruction(turn) else ""


def _apps(turn: Any) -> str:
    apps = _get(turn, "apps")
    if isinstance(apps, (list, tuple)) and apps:
        return "、".join(str(a) for a in apps)
    return _field(turn, "app_id")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def deterministic_summary(turns: Sequence[Any], limit: int = DEFAULT_LIMIT) -> str:
    """ "用户刚问过“<latest>”，之前问过“<older>”、…" — at most `limit` characters."""
    # lazily, newest first: only the few turns that fit are looked at, not the history
    asked = (t for t in (_user_text(turn) for turn in reversed(turns)) if t)
    latest = next(asked, None)
    if latest is None:
        return ""
    summary = f"用户刚问过“{_clip(latest, _QUOTE_LIMIT)}”"
    older: list[str] = []
    # the length the summary would have with `older`: "，之前问过" + quotes joined by "、"
    length = len(summary) + len("，之前问过") - len("、")
    for text in asked:
        quoted = f"“{_clip(text, _QUOTE_LIMIT)}”"
        length += len("、") + len(quoted)
        if length > limit:
            break
        older.append(quoted)
    if older:
        summary += "，之前问过" + "、".join(older)
    return _clip(summary, limit)


def _transcript(turns: Sequence[Any]) -> str:
    lines = []
    asked = [turn for turn in turns if _user_text(turn)]
    for turn in asked[-MAX_TURNS_FOR_MODEL:]:
        lines.append(f"用户: {_clip(_user_text(turn), 200)}")
        if not isinstance(turn, str):
            answer = _field(turn, "message", "reply")
            if answer:
                app = _apps(turn)
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
            '"用户": what the user asked recently and what was done. Answer with the '
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


class BackgroundSummarizer:
    """LLM summaries written by one worker thread, never on a request's path.

    `submit(key, turns, on_done)` queues a summary of `turns` for `key` (a session
    id); a newer submit for the same key replaces one not started yet. `on_done(text)`
    is called from the worker with the summary (the deterministic one if the model
    fails). Without a configured model, `submit` does nothing and returns False.
    """

    def __init__(self, client: LLMClient, *, limit: int = DEFAULT_LIMIT):
        self.client = client
        self.limit = limit
        self._pending: dict[str, tuple[list[Any], Callable[[str], None], LLMClient]] = {}
        self._wake = threading.Condition()
        self._worker: threading.Thread | None = None
        self._closed = False

    @property
    def enabled(self) -> bool:
        """A model is configured and the summarizer is not closed: `submit` works."""
        return not self._closed and self.client.configured

    def submit(
        self,
        key: str,
        turns: Sequence[Any],
        on_done: Callable[[str], None],
        client: LLMClient | None = None,
    ) -> bool:
        """Queue the summary; `client` (the session's user's model) asks instead of
        the summarizer's own when given."""
        model = client or self.client
        if self._closed or not model.configured:
            return False
        with self._wake:
            self._pending[key] = (list(turns), on_done, model)
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._run, name="llm-summarizer", daemon=True
                )
                self._worker.start()
            self._wake.notify()
        return True

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._pending.clear()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._pending and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                key = next(iter(self._pending))
                turns, on_done, model = self._pending.pop(key)
            try:
                on_done(summarize_history(turns, model, limit=self.limit))
            except Exception:  # a failing callback must not stop the worker
                log.exception("history summary callback for %s failed", key)
