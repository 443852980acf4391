"""What a request cost in model tokens: the counts of every model call made for it.

The model client reports each call it completed with `note(usage, messages,
output)`: the server's own `prompt_tokens` and `completion_tokens`, or, for a server
that gave none, an estimate from the text (`estimate_tokens`), marked as one. The
call adds to every `Tally` counted in its context (`counting`). `UsageMeter` ties the
calls to a request by its session: `measuring(session_id)` opens a tally for the
request running in that session, and the model calls an app makes for that session
(`counting_for(session_id)`, its sub-agents' included) add to it while it is open.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Tally", "UsageMeter", "counting", "estimate_tokens", "note"]


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: one token per CJK character, one per 4 other ones."""
    wide = sum(1 for ch in text if ord(ch) >= 0x2E80)
    return wide + (len(text) - wide + 3) // 4


@dataclass
class Tally:
    """The tokens of the model calls of one request; `estimated` when some call's
    server said nothing of its usage (its share is then an estimate)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    estimated: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, prompt_tokens: int, completion_tokens: int, estimated: bool) -> None:
        with self._lock:
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.calls += 1
            self.estimated = self.estimated or estimated


_counted: ContextVar[tuple[Tally, ...]] = ContextVar("usage_tallies", default=())


@contextmanager
def counting(*tallies: Tally) -> Iterator[None]:
    """Within the block, the model calls of this context add to `tallies` too."""
    token = _counted.set(_counted.get() + tallies)
    try:
        yield
    finally:
        _counted.reset(token)


def note(
    usage: Mapping[str, int], messages: Sequence[Mapping[str, Any]], output: str
) -> None:
    """One completed model call: `usage` as the server gave it (maybe nothing), the
    `messages` it was asked with and its `output`, for an estimate."""
    tallies = _counted.get()
    if not tallies:
        return
    prompt = usage.get("prompt_tokens")
    completion = usage.get("completion_tokens")
    estimated = prompt is None or completion is None
    if prompt is None:
        prompt = sum(estimate_tokens(str(m.get("content") or "")) + 4 for m in messages)
    if completion is None:
        completion = estimate_tokens(output)
    for tally in tallies:
        tally.add(prompt, completion, estimated)


class UsageMeter:
    """The open tallies of the requests running now, by their session."""

    def __init__(self) -> None:
        self._open: dict[str, list[Tally]] = {}
        self._lock = threading.Lock()

    @contextmanager
    def measuring(self, session_id: str) -> Iterator[Tally]:
        """A tally of the request running in `session_id`, open within the block;
        the calls made in this context count toward it."""
        tally = Tally()
        with self._lock:
            self._open.setdefault(session_id, []).append(tally)
        try:
            with counting(tally):
                yield tally
        finally:
            with self._lock:
                tallies = self._open.get(session_id, [])
                tallies.remove(tally)
                if not tallies:
                    self._open.pop(session_id, None)

    @contextmanager
    def counting_for(self, session_id: str | None) -> Iterator[None]:
        """Within the block, model calls count toward the open requests of
        `session_id` (none: toward nothing)."""
        with self._lock:
            tallies = tuple(self._open.get(session_id or "", ()))
        with counting(*tallies):
            yield
