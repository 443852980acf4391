"""`history_summary` of a session (S-41, issue 6): by the LLM when one is configured.

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
builder can use the last LLM summary and fall back to the deterministic one, which
`IncrementalSummaries` keeps up to date reading only the turns added since.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aios_sdk.llm import LLMError
from controller.llm import LLMClient

__all__ = [
    "DEFAULT_LIMIT",
    "BackgroundSummarizer",
    "IncrementalSummaries",
    "deterministic_summary",
    "summarize_history",
]

log = logging.getLogger("aios.controller.llm_summary")

DEFAULT_LIMIT = 200
MAX_TURNS_FOR_MODEL = 10
_QUOTE_LIMIT = 40
# an instruction of a history: (its position, its words quoted)
_Asked = tuple[int, str]


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
    return _compose((quoted for _, quoted in _asked(turns, len(turns))), limit)[0]


def _asked(turns: Sequence[Any], stop: int, start: int = 0) -> Iterator[_Asked]:
    """(position, quoted words) of every instruction in `turns[start:stop]`, newest
    first."""
    for position in range(stop - 1, start - 1, -1):
        text = _user_text(turns[position])
        if text:
            yield position, f"“{_clip(text, _QUOTE_LIMIT)}”"


def _compose(quotes: Iterable[str], limit: int) -> tuple[str, int, bool]:
    """The summary of these quoted instructions (newest first), how many of them it
    read, and whether it read them all (else the last one read did not fit)."""
    unread = iter(quotes)
    latest = next(unread, None)
    if latest is None:
        return "", 0, True
    summary = "用户刚问过" + latest
    # what `limit` leaves for "，之前问过" and the older quotes joined by "、"
    room = limit - len(summary) - len("，之前问过") + len("、")
    older: list[str] = []
    complete = True
    for quoted in unread:
        room -= len(quoted) + 1  # "、" and the quote
        if room < 0:
            complete = False
            break
        older.append(quoted)
    if older:
        summary += "，之前问过" + "、".join(older)
    return _clip(summary, limit), 1 + len(older) + (not complete), complete


@dataclass
class _Reading:
    """What one summary read of a history: `turns[start:]` and their instructions.

    An instruction's place is its position plus `base`, the turns cut from the
    front of this history before: places stay put while the history moves.
    """

    length: int  # of the history then
    base: int
    start: int  # where the turns read begin (0: from the oldest)
    turns: list[Any]  # those turns, oldest first
    places: list[int]  # the instructions read among them, newest first
    quotes: list[str]  # their words, quoted
    complete: bool  # no older instruction is left unread

    def follow(
        self, turns: Sequence[Any], search: int
    ) -> tuple[int, list[int], list[str], bool] | None:
        """(base, places, quotes, complete) of `turns`: the instructions of the turns
        added since, then those read here; None if `turns` is not this history
        grown at the end and cut at the front."""
        newest = len(turns) - 1
        last = self.turns[-1]
        for back in range(min(search, len(turns))):
            if turns[newest - back] is last:
                break
        else:
            return None
        seen = newest - back  # where the newest turn read is now
        dropped = self.length - 1 - seen  # turns cut from the front since
        start = self.start - dropped  # where the turns read begin now
        if (
            dropped < 0
            or list(turns[max(start, 0) : seen + 1]) != self.turns[max(-start, 0) :]
        ):
            return None
        base = self.base + dropped
        places: list[int] = []
        quotes: list[str] = []
        for position, quoted in _asked(turns, len(turns), seen + 1):
            places.append(position + base)
            quotes.append(quoted)
        added = len(places)
        places += self.places
        quotes += self.quotes
        complete = self.complete
        if self.places and self.places[-1] < base:  # some were cut from the front
            kept = added + sum(1 for place in self.places if place >= base)
            places, quotes, complete = places[:kept], quotes[:kept], True
        return base, places, quotes, complete


class IncrementalSummaries:
    """`deterministic_summary` of histories that grow at the end and lose turns at
    the front (a session's, `Session.add_turn`), reading only the turns added since
    the last summary of the same key.

    Every instruction needs a new summary, and reading the ~15 latest turns again
    cost more than the rest of building its context. What the last summary read is
    reused once the same turns (compared as one list) are found where they are now,
    shifted by the turns dropped at the front; anything else — another history, a
    turn replaced or inserted in between, more instructions needed than were read —
    reads afresh. A turn itself is never edited in place (`Session` appends new ones).
    """

    SEARCH = 8  # how far from the end the newest turn read before is looked for

    def __init__(self, limit: int = DEFAULT_LIMIT):
        self.limit = limit
        self._readings: dict[str, _Reading] = {}
        self._lock = threading.Lock()

    def summary(self, key: str, turns: Sequence[Any]) -> str:
        """`deterministic_summary(turns, limit)`."""
        with self._lock:
            previous = self._readings.get(key)
        followed = previous.follow(turns, self.SEARCH) if previous is not None else None
        if followed is not None:
            base, places, quotes, complete = followed
            text, read, read_all = _compose(quotes, self.limit)
            if read_all and not complete:
                followed = None  # it needs instructions never read
        if followed is None:
            base, places, quotes = 0, [], []

            def record() -> Iterator[str]:
                for position, quoted in _asked(turns, len(turns)):
                    places.append(position)
                    quotes.append(quoted)
                    yield quoted

            text, read, read_all = _compose(record(), self.limit)
        if turns:
            start = 0 if read_all else places[read - 1] - base
            reading = _Reading(
                len(turns),
                base,
                start,
                list(turns[start:]),
                places[:read],
                quotes[:read],
                read_all,
            )
            with self._lock:
                self._readings[key] = reading
        return text


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
        self._pending: dict[str, tuple[list[Any], Callable[[str], None]]] = {}
        self._wake = threading.Condition()
        self._worker: threading.Thread | None = None
        self._closed = False

    @property
    def enabled(self) -> bool:
        """A model is configured and the summarizer is not closed: `submit` works."""
        return not self._closed and self.client.configured

    def submit(
        self, key: str, turns: Sequence[Any], on_done: Callable[[str], None]
    ) -> bool:
        if not self.enabled:
            return False
        with self._wake:
            self._pending[key] = (list(turns), on_done)
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
                turns, on_done = self._pending.pop(key)
            try:
                on_done(summarize_history(turns, self.client, limit=self.limit))
            except Exception:  # a failing callback must not stop the worker
                log.exception("history summary callback for %s failed", key)
