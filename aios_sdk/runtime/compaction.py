"""Keeping the model context inside its window.

Only `model_messages` is changed here; the display history stays whole. Every turn
starts with `light_cleanup` (old tool results and large old tool inputs shortened);
past `SUMMARY_AT` of the window the older part is replaced by an LLM summary
(`summarize`); if that fails or is not enough, `targeted_trim` drops the oldest whole
exchanges — a user message, or an assistant message together with every tool result
answering it, so a tool call is never separated from its result — and
`hard_truncate` cuts the longest contents as the last resort. What is kept keeps its
ids (a message's `id`, a result's `asked_by`). `estimate_tokens`
counts characters (CJK about one token each, other text about four characters per
token) times a calibration factor learnt from the API's `usage.prompt_tokens`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aios_sdk.runtime.messages import new_message_id

__all__ = [
    "SUMMARY_AT",
    "Compactor",
    "calibrated",
    "estimate_tokens",
    "exchanges",
    "hard_truncate",
    "light_cleanup",
    "targeted_trim",
]

SUMMARY_AT = 0.75
KEEP_RECENT_RESULTS = 4  # tool results newer than these stay whole
OLD_RESULT_CHARS = 400
OLD_INPUT_CHARS = 300
SUMMARY_MARK = "[Summary of the earlier conversation]"

Message = dict[str, Any]


def _raw_tokens(text: str) -> float:
    wide = sum(1 for ch in text if ord(ch) > 0x2E80)
    return wide + (len(text) - wide) / 4.0


def estimate_tokens(
    messages: Sequence[Message], tools: Sequence[Any] = (), calibration: float = 1.0
) -> int:
    """Tokens the model will count for `messages` (and the tools' schemas)."""
    total = 0.0
    for message in messages:
        total += 4 + _raw_tokens(str(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            total += 8 + _raw_tokens(str(function.get("arguments") or ""))
    if tools:
        total += _raw_tokens(json.dumps(list(tools), ensure_ascii=False))
    return int(total * calibration) + 1


def calibrated(
    previous: float, prompt_tokens: int, messages: Sequence[Message], tools: Sequence[Any]
) -> float:
    """The calibration after the API counted `prompt_tokens` for what we sent: the
    system prompt and the tools' schemas (a fixed overhead, as we estimate it) are
    subtracted first, so the factor says how the conversation itself counts."""
    if prompt_tokens <= 0:
        return previous
    system = [m for m in messages if m.get("role") == "system"]
    body = [m for m in messages if m.get("role") != "system"]
    overhead = estimate_tokens(system, tools, 1.0) if system or tools else 0
    ours = estimate_tokens(body, (), 1.0)
    ratio = max(0.25, min(4.0, (prompt_tokens - overhead) / max(ours, 1)))
    return round(0.5 * previous + 0.5 * ratio, 4) if previous != 1.0 else ratio


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"…[shortened: {len(text) - limit} characters removed]"


def _shorten_arguments(arguments: str, limit: int) -> str:
    """Large string values of a call's JSON arguments shortened; still valid JSON."""
    if len(arguments) <= limit:
        return arguments
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return json.dumps({"_shortened": _shorten(arguments, limit)}, ensure_ascii=False)
    if isinstance(parsed, dict):
        parsed = {
            k: _shorten(v, limit // 2) if isinstance(v, str) else v
            for k, v in parsed.items()
        }
    return json.dumps(parsed, ensure_ascii=False)


def light_cleanup(messages: list[Message], keep_recent: int = KEEP_RECENT_RESULTS) -> int:
    """Shorten tool results and tool inputs older than the last `keep_recent` results,
    in place; answers how many messages changed."""
    tool_positions = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    if len(tool_positions) <= keep_recent:
        return 0
    boundary = tool_positions[-keep_recent] if keep_recent else len(messages)
    changed = 0
    for message in messages[:boundary]:
        if message.get("role") == "tool":
            content = str(message.get("content") or "")
            short = _shorten(content, OLD_RESULT_CHARS)
            if short != content:
                message["content"] = short
                changed += 1
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            arguments = str(function.get("arguments") or "")
            short = _shorten_arguments(arguments, OLD_INPUT_CHARS)
            if short != arguments:
                function["arguments"] = short
                changed += 1
    return changed


def exchanges(messages: Sequence[Message]) -> list[list[int]]:
    """Indices grouped so that no group splits a tool call from its results: the
    system prompt alone, each user message alone, each assistant message with the tool
    messages that follow it."""
    groups: list[list[int]] = []
    for index, message in enumerate(messages):
        if message.get("role") == "tool" and groups and index - 1 in groups[-1]:
            groups[-1].append(index)
        else:
            groups.append([index])
    return groups


def targeted_trim(
    messages: list[Message],
    budget: int,
    tools: Sequence[Any] = (),
    calibration: float = 1.0,
) -> list[Message]:
    """The oldest whole exchanges dropped (never the system prompt nor the last user
    message and what follows it) until the estimate fits `budget`."""
    groups = exchanges(messages)
    keep_first = 1 if messages and messages[0].get("role") == "system" else 0
    last_user = max(
        (n for n, g in enumerate(groups) if messages[g[0]].get("role") == "user"), default=0
    )
    dropped: set[int] = set()
    for n in range(keep_first, last_user):
        kept = [m for i, m in enumerate(messages) if i not in dropped]
        if estimate_tokens(kept, tools, calibration) <= budget:
            break
        dropped.update(groups[n])
    kept = [m for i, m in enumerate(messages) if i not in dropped]
    # a result whose call was dropped must not lead: the next group starts clean
    while len(kept) > keep_first and kept[keep_first].get("role") == "tool":
        kept.pop(keep_first)
    return kept


def hard_truncate(
    messages: list[Message],
    budget: int,
    tools: Sequence[Any] = (),
    calibration: float = 1.0,
) -> list[Message]:
    """Cut the longest contents (halving) until the estimate fits `budget`."""
    messages = [dict(m) for m in messages]
    for _ in range(40):
        if estimate_tokens(messages, tools, calibration) <= budget:
            break
        longest = max(
            range(len(messages)), key=lambda i: len(str(messages[i].get("content") or ""))
        )
        content = str(messages[longest].get("content") or "")
        if len(content) < 200:
            break
        messages[longest]["content"] = _shorten(content, len(content) // 2)
    return messages


@dataclass
class Compactor:
    """The window policy: `window` tokens, a summary from `summarize` when possible."""

    window: int
    summarize: Callable[[list[Message]], str] | None = None

    def fit(
        self, messages: list[Message], tools: Sequence[Any], calibration: float
    ) -> tuple[list[Message], list[str]]:
        """The model context for the next turn, and what was done to it."""
        done: list[str] = []
        if light_cleanup(messages):
            done.append("cleanup")
        if estimate_tokens(messages, tools, calibration) < self.window * SUMMARY_AT:
            return messages, done
        summarized = self._summarized(messages)
        if summarized is not None:
            messages = summarized
            done.append("summary")
        budget = int(self.window * SUMMARY_AT)
        if estimate_tokens(messages, tools, calibration) > budget:
            messages = targeted_trim(messages, budget, tools, calibration)
            done.append("trim")
        if estimate_tokens(messages, tools, calibration) > self.window:
            messages = hard_truncate(messages, int(self.window * 0.9), tools, calibration)
            done.append("truncate")
        return messages, done

    def reactive(
        self,
        messages: list[Message],
        tools: Sequence[Any],
        calibration: float,
        attempt: int = 1,
    ) -> tuple[list[Message], list[str]]:
        """The context again after the model refused it as too long. The first time a
        summary of the older part (whatever the estimate says), or — without one —
        the oldest exchanges trimmed to half; after that trimmed to half and, as the
        last resort, the longest contents cut (the tools' schemas are a fixed cost)."""
        fixed = estimate_tokens([], tools, calibration)
        target = fixed + max(100, (estimate_tokens(messages, (), calibration) // 2))
        if attempt <= 1:
            summarized = self._summarized(messages)
            if summarized is not None:
                return summarized, ["summary"]
        done = ["trim"]
        messages = targeted_trim(messages, target, tools, calibration)
        if attempt > 1 and estimate_tokens(messages, tools, calibration) > target:
            messages = hard_truncate(messages, target, tools, calibration)
            done.append("truncate")
        return messages, done

    def _summarized(self, messages: list[Message]) -> list[Message] | None:
        """Everything before the last user message condensed into one user message."""
        if self.summarize is None:
            return None
        start = 1 if messages and messages[0].get("role") == "system" else 0
        last_user = max(
            (i for i, m in enumerate(messages) if m.get("role") == "user"), default=start
        )
        older = messages[start:last_user]
        if len(older) < 2:
            return None
        try:
            summary = self.summarize(older).strip()
        except Exception:  # the model failed: trim instead
            return None
        if not summary:
            return None
        note = {"role": "user", "content": f"{SUMMARY_MARK}\n{summary}"}
        ack = {
            "role": "assistant",
            "id": new_message_id(),
            "content": "Understood; I will continue from there.",
        }
        return [*messages[:start], note, ack, *messages[last_user:]]


def summary_prompt(older: Sequence[Message]) -> list[dict[str, str]]:
    """The chat messages asking the model to summarise `older`."""
    lines = []
    for message in older:
        role = message.get("role")
        content = str(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            content += f"\n[call {function.get('name')} {function.get('arguments')}]"
        lines.append(f"{role}: {content[:2000]}")
    return [
        {
            "role": "system",
            "content": "Summarise this agent conversation for the agent itself: the "
            "user's goals, what was done with which tools, results, files, open "
            "questions. At most 200 words, no preamble.",
        },
        {"role": "user", "content": "\n".join(lines)[:60_000]},
    ]
