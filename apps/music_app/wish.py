"""Free-form music requests through the LLM: "来点适合跑步的歌" → a catalogue search.

A request that describes a wish instead of naming an artist or a song
(`MusicIntent.free_form`) is given to the model in ONE chat call in JSON mode,
which answers `{"query": "<search term>", "title": "<a song title, optional>"}`.
`interpret_wish(llm, request, fallback)` returns a `Wish`: the term to search and
how to name it, plus a short note for the message. It never raises: without a
model, the request's own words (`fallback`) are searched as before; when the model
fails (timeout, refused key, malformed or empty answer) they are searched too, and
the note says so, in the user's `language`. The app never sees the API key (the
controller holds it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["SYSTEM_PROMPT", "Wish", "interpret_wish"]

SYSTEM_PROMPT = (
    "你是音乐应用的点歌助手。用户会用一句话描述想听什么（场景、心情、风格），"
    "你把它变成在 iTunes 那样的音乐目录里搜索的关键词。"
    '只输出一个 JSON 对象：{"query": "搜索词", "title": "歌名"}。'
    "query 必填，要短（1 到 4 个词：歌手、曲风、情绪或场景词，例如 “workout”、“轻音乐”、"
    "“周杰伦”）；只有当用户想要的是某一首具体的歌时才给 title（歌名），否则省略 title。"
)

MAX_QUERY = 80
MAX_TITLE = 80
_LINE_BREAK = re.compile(r"[\r\n\t]+")


@dataclass(frozen=True)
class Wish:
    """What to search (`query`), how to call it (`shown`), and a note for the user."""

    query: str
    shown: str
    note: str = ""
    by_model: bool = False


def _field(value: Any, limit: int) -> str:
    if not isinstance(value, str):
        return ""
    text = _LINE_BREAK.sub(" ", value).strip().strip("\"'“”《》")
    return text if len(text) <= limit else ""


def interpret_wish(
    llm: Any | None, request: str, fallback: Wish, language: str = "zh-CN"
) -> Wish:
    """The model's search for `request`, or `fallback` (with a note if it failed);
    the note is in `language` ("zh-CN" or "en-US")."""
    english = language == "en-US"
    if llm is None:
        return fallback
    try:
        if not getattr(llm, "available", False):
            return fallback
        answer = llm.chat(
            [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": request},
            ],
            json=True,
        )
    except Exception as exc:  # the model failing is not the user's error
        return _failed(fallback, getattr(exc, "code", "") or "llm_error", english)
    if not isinstance(answer, dict):
        return _failed(fallback, "llm_bad_reply", english)
    term = _field(answer.get("query"), MAX_QUERY)
    title = _field(answer.get("title"), MAX_TITLE)
    if not term and not title:
        return _failed(fallback, "llm_bad_reply", english)
    if title and term and title.lower() not in term.lower():
        query = f"{title} {term}"
        shown = f"{title} ({term})" if english else f"{term}的{title}"
    else:
        query = shown = term or title
    if english:
        note = f'Searched for "{query}" for "{request}". '
    else:
        note = f"按“{request}”搜索了“{query}”。"
    return Wish(query, shown, note=note, by_model=True)


def _failed(fallback: Wish, code: str, english: bool) -> Wish:
    if english:
        note = f"The model did not answer this time ({code}); searched your own words. "
    else:
        note = f"大模型这次没有答上来（{code}），按原话搜索。"
    return Wish(fallback.query, fallback.shown, note=note)
