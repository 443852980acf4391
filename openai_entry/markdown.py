"""An app's reply as readable Markdown, for chat clients and terminals that show text.

`reply_markdown(reply, app_id, base_url)` writes each view type the way a person
would read it, reading `data` by the shape `aios_protocol.views` gives its view type:
`text` as its content, `list` as bullets, `table` and `chart` as Markdown tables,
`code` as a fenced block (and its output as another), `card` as headed sections, `media` and `image` as links (a
workspace path becomes the controller's file URL under `base_url`: the desktop's
`/api/apps/<app_id>/files/…` for the owner, `/v1/sandbox/files/<app_id>/…` for
another user, who fetches it with their key), `form` as the
fields it asks for, `dashboard` widget by widget, `metric` as its figure, `confirm`
as the question and how to answer it, `error` as its message. A view type it does
not know, or `data` without its type's shape, is shown as a JSON block. The reply's
`message` heads every view but `text`, when it says something the view does not.
The `/v1` entry answers with it and the `aios say` command prints it. The few words
it adds of its own (an empty list, how to answer a question) are in the reader's
`language` only, from `WORDS`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import AppReply
from aios_protocol.strings import DEFAULT_LANGUAGE
from aios_protocol.views import (
    CardData,
    ChartData,
    CodeData,
    ConfirmData,
    DashboardData,
    ErrorData,
    FormData,
    ImageData,
    ListData,
    LoadingData,
    MediaData,
    MetricData,
    TableData,
    TextData,
    read_view_data,
)
from aios_runtime.users import OWNER

__all__ = ["MARKDOWN_VIEWS", "WORDS", "reply_markdown", "view_markdown", "words"]

WORDS: dict[str, dict[str, str]] = {
    "zh-CN": {
        "empty_list": "（空列表）",
        "confirm_question": "需要你的确认",
        "confirm_hint": "回复「确认」执行，或「取消」放弃。",
    },
    "en-US": {
        "empty_list": "(empty list)",
        "confirm_question": "Your confirmation is needed",
        "confirm_hint": "Reply yes to go ahead, or no to cancel.",
    },
}
"""The words this module adds to a reply, by language and key."""


def words(language: str | None) -> dict[str, str]:
    """The table of `language` (the default language's for one it lacks or None)."""
    return WORDS.get(language or DEFAULT_LANGUAGE, WORDS[DEFAULT_LANGUAGE])


def _text(value: Any) -> str:
    """A value as the desktop shows it (a whole float without its `.0`, as JavaScript)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value, ensure_ascii=False)


def _cell(value: Any) -> str:
    return _text(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _fence(body: str, language: str = "") -> str:
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{fence}{language}\n{body.rstrip()}\n{fence}"


def _table(columns: list[str], rows: list[list[Any]]) -> str:
    if not columns:
        width = max((len(row) for row in rows), default=0)
        columns = [str(i + 1) for i in range(width)]
    lines = [
        "| " + " | ".join(_cell(c) for c in columns) + " |",
        "|" + "|".join(" --- " for _ in columns) + "|",
    ]
    for row in rows:
        cells = [*row, *[""] * (len(columns) - len(row))][: len(columns)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def _titled(title: str | None, body: str) -> str:
    """`body` under its bold `title` (when it has one)."""
    return f"**{title}**\n\n{body}" if title else body


class _Links:
    """Where a workspace path of the app `app_id` is served, under `base_url`: the
    desktop's file route for the owner, `/v1/sandbox/files/…` (the user's own file,
    fetched with their key) for another user; `words` are the reader's."""

    def __init__(
        self, app_id: str, base_url: str, user: str = OWNER, language: str | None = None
    ) -> None:
        self.app_id = app_id
        self.base_url = base_url
        self.user = user
        self.language = language
        self.words = words(language)

    def __call__(self, url: str) -> str:
        """An http(s) or data: URL as it is; a workspace path as the file route."""
        text = url.strip()
        if not text or text.startswith(("http://", "https://", "data:")):
            return text
        relative = quote(text.removeprefix("workspace/").lstrip("/"))
        base = self.base_url.rstrip("/")
        if self.user != OWNER:
            return f"{base}/v1/sandbox/files/{self.app_id}/{relative}"
        return f"{base}/api/apps/{self.app_id}/files/{relative}"


# ------------------------------------------------------------------ view types


def _text_view(data: TextData, links: _Links) -> str:
    return _titled(data.get("title"), data["content"])


def _list(data: ListData, links: _Links) -> str:
    lines = []
    for item in data["items"]:
        title = f"{item['icon']} {item['title']}" if item.get("icon") else item["title"]
        line = f"- **{title}**" if title else "-"
        sub = item.get("sub")
        lines.append(f"{line} — {sub}" if sub else line)
    body = "\n".join(lines) or data.get("empty") or links.words["empty_list"]
    return _titled(data.get("title"), body)


def _table_view(data: TableData, links: _Links) -> str:
    body = _table(data["columns"], data["rows"])
    if not data["rows"] and data.get("empty"):
        body += f"\n\n{data['empty']}"
    return _titled(data.get("title"), body)


def _code(data: CodeData, links: _Links) -> str:
    body = _fence(data["code"], data.get("language", ""))
    if data.get("output") is not None:  # what running it printed, below it
        body += "\n\n" + _fence(data.get("output") or "", "text")
    return _titled(data.get("title"), body)


def _cards(data: CardData, links: _Links) -> str:
    parts = [f"**{data['title']}**"] if data.get("title") else []
    for card in data["cards"]:
        lines = [f"### {card['title']}"]
        if card.get("image"):
            lines.append(f"![{_cell(card['title'])}]({links(card['image'])})")
        if card.get("desc"):
            lines.append(card["desc"])
        parts.append("\n\n".join(lines))
    return "\n\n".join(parts)


def _media(data: MediaData, links: _Links) -> str:
    kind = data.get("type", "")
    title = data.get("title") or kind or "media"
    line = f"[{_cell(title)}]({links(data['url'])})" + (f" ({kind})" if kind else "")
    return f"{line} — {data['artist']}" if data.get("artist") else line


def _image(data: ImageData, links: _Links) -> str:
    caption = data.get("caption", "")
    image = f"![{_cell(caption)}]({links(data['url'])})"
    return f"{image}\n\n{caption}" if caption else image


def _chart(data: ChartData, links: _Links) -> str:
    pairs = zip(data["labels"], data["values"], strict=False)
    return _titled(data.get("title"), _table(["", "value"], [list(p) for p in pairs]))


def _form(data: FormData, links: _Links) -> str:
    lines = [
        f"- {field.get('label') or field['name']} ({field.get('type') or 'text'})"
        for field in data["fields"]
    ]
    return _titled(data.get("title"), "\n".join(lines))


def _dashboard(data: DashboardData, links: _Links) -> str:
    parts = [f"**{data['title']}**"] if data.get("title") else []
    for part in data["widgets"]:
        body = view_markdown(
            part["type"],
            part["data"],
            links.app_id,
            links.base_url,
            user=links.user,
            language=links.language,
        )
        parts.append(_titled(part.get("title"), body))
    return "\n\n".join(parts)


def _metric(data: MetricData, links: _Links) -> str:
    figure = f"**{_text(data['value'])}{' ' + data['unit'] if data.get('unit') else ''}**"
    return f"{data['label']}: {figure}" if data.get("label") else figure


def _loading(data: LoadingData, links: _Links) -> str:
    return data.get("text") or "…"


def _error(data: ErrorData, links: _Links) -> str:
    return f"⚠️ {data['message'] or 'error'}"


def _confirm(data: ConfirmData, links: _Links) -> str:
    question = data.get("summary") or links.words["confirm_question"]
    return f"{question}\n\n{links.words['confirm_hint']}"


def _json(data: Any) -> str:
    return _fence(json.dumps(data, ensure_ascii=False, indent=2, default=str), "json")


MARKDOWN_VIEWS: dict[str, Callable[[Any, _Links], str]] = {
    "text": _text_view,
    "list": _list,
    "table": _table_view,
    "code": _code,
    "card": _cards,
    "media": _media,
    "image": _image,
    "chart": _chart,
    "form": _form,
    "dashboard": _dashboard,
    "metric": _metric,
    "loading": _loading,
    "error": _error,
    "confirm": _confirm,
}
"""view type → its Markdown, for every type of VIEW_TYPES and SYSTEM_VIEW_TYPES. A
whole reply's `loading`, `error` and `confirm` say what its `message` says."""


def view_markdown(
    view_type: str,
    data: Any,
    app_id: str,
    base_url: str = "",
    *,
    user: str = OWNER,
    language: str | None = None,
) -> str:
    """One view's `data` as Markdown (its files linked for `user`, its own words in
    `language`); JSON when its type or its shape is unknown."""
    render = MARKDOWN_VIEWS.get(view_type)
    if render is None:
        return _json(data)
    try:
        shaped = read_view_data(view_type, data)
    except InvalidRequest:
        return _json(data)
    return render(shaped, _Links(app_id, base_url, user, language))


def reply_markdown(
    reply: AppReply,
    app_id: str,
    base_url: str = "",
    *,
    user: str = OWNER,
    language: str | None = None,
) -> str:
    """The reply as Markdown (see the module docstring), its files linked for `user`,
    the words it adds in `language` (None: the product's default)."""
    data = reply.data or {}
    message = (reply.message or "").strip()
    if reply.view_type == "error" or reply.status == "error":
        return f"⚠️ {_text(data.get('message')) or message or 'error'}"
    if reply.view_type == "confirm":
        said = words(language)
        question = message or _text(data.get("summary")) or said["confirm_question"]
        return f"{question}\n\n{said['confirm_hint']}"
    if reply.view_type == "loading":
        return _text(data.get("text")) or message or "…"
    body = view_markdown(
        reply.view_type, data, app_id, base_url, user=user, language=language
    )
    if reply.view_type == "text":
        return body.strip() or message
    if message and message not in body:
        return f"{message}\n\n{body}" if body else message
    return body
