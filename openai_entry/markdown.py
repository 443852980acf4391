"""An app's reply as readable Markdown, for chat clients that show text only.

`reply_markdown(reply, app_id, base_url)` writes each view type of S-52 the way a
person would read it: `text` as its content, `list` as bullets, `table` and `chart`
as Markdown tables, `code` as a fenced block, `card` as headed sections, `media` and
`image` as links (a workspace path becomes the controller's file URL under
`base_url`), `form` as the fields it asks for, `dashboard` widget by widget, `confirm`
as the question and how to answer it, `error` as its message. A view type it does
not know is its message and its data as a JSON block. The reply's `message` heads
every view but `text`, when it says something the view does not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

from aios_protocol.messages import AppReply

__all__ = ["CONFIRM_HINT", "reply_markdown"]

CONFIRM_HINT = "回复「确认」执行，或「取消」放弃。(Reply yes to go ahead, or no to cancel.)"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
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


def _link(url: Any, app_id: str, base_url: str) -> str:
    """An http(s) URL as it is; a workspace path as the controller's file route."""
    text = _text(url).strip()
    if not text or text.startswith(("http://", "https://", "data:")):
        return text
    relative = text.removeprefix("workspace/").lstrip("/")
    return f"{base_url.rstrip('/')}/api/apps/{app_id}/files/{quote(relative)}"


# ------------------------------------------------------------------ view types


def _list(data: Mapping[str, Any], app_id: str, base_url: str) -> str:
    lines = [f"**{_text(data['title'])}**", ""] if data.get("title") else []
    for item in data.get("items") or []:
        if not isinstance(item, Mapping):
            lines.append(f"- {_text(item)}")
            continue
        title = _text(item.get("title") or item.get("name") or item.get("label"))
        sub = _text(item.get("sub") or item.get("desc") or item.get("description"))
        line = f"- **{title}**" if title else "-"
        lines.append(f"{line} — {sub}" if sub else line)
    return "\n".join(lines) if lines else "(空列表 / empty list)"


def _table_view(data: Mapping[str, Any], app_id: str, base_url: str) -> str:
    columns = data.get("columns") or []
    keys = [c.get("key", c.get("label")) if isinstance(c, Mapping) else c for c in columns]
    names = [
        _text(c.get("label", c.get("key"))) if isinstance(c, Mapping) else _text(c)
        for c in columns
    ]
    rows: list[list[Any]] = []
    for row in data.get("rows") or []:
        if isinstance(row, Mapping):
            cells = row.get("cells")
            rows.append(
                list(cells) if isinstance(cells, list) else [row.get(k) for k in keys]
            )
        elif isinstance(row, list | tuple):
            rows.append(list(row))
        else:
            rows.append([row])
    return _table(names, rows)


def _code(data: Mapping[str, Any], app_id: str, base_url: str) -> str:
    return _fence(_text(data.get("code")), _text(data.get("language")))


def _cards(data: Mapping[str, Any], app_id: str, base_url: str) -> str:
    parts = []
    for card in data.get("cards") or []:
        if not isinstance(card, Mapping):
            parts.append(_text(card))
            continue
        lines = [f"### {_text(card.get('title'))}"]
        if card.get("image"):
            lines.append(
                f"![{_cell(card.get('title'))}]({_link(card['image'], app_id, base_url)})"
            )
        if card.get("desc"):
            lines.append(_text(card["desc"]))
        parts.append("\n\n".join(lines))
    return "\n\n".join(parts)


def _media(data: Mapping[str, Any], app_id: str, base_url: str) -> str:
    title = _text(data.get("title")) or _text(data.get("type")) or "media"
    kind = f" ({_text(data['type'])})" if data.get("type") else ""
    return f"[{_cell(title)}]({_link(data.get('url'), app_id, base_url)}){kind}"


def _image(data: Mapping[str, Any], app_id: str, base_url: str) -> str:
    caption = _text(data.get("caption"))
    image = f"![{_cell(caption)}]({_link(data.get('url'), app_id, base_url)})"
    return f"{image}\n\n{caption}" if caption else image


def _chart(data: Mapping[str, Any], app_id: str, base_url: str) -> str:
    labels = list(data.get("labels") or [])
    values = list(data.get("values") or [])
    title = f"**{_text(data['title'])}**\n\n" if data.get("title") else ""
    return title + _table(
        ["", "value"], [list(pair) for pair in zip(labels, values, strict=False)]
    )


def _form(data: Mapping[str, Any], app_id: str, base_url: str) -> str:
    lines = []
    for field in data.get("fields") or []:
        if isinstance(field, Mapping):
            label = _text(field.get("label") or field.get("name"))
            lines.append(f"- {label} ({_text(field.get('type') or 'text')})")
    return "\n".join(lines)


def _dashboard(data: Mapping[str, Any], app_id: str, base_url: str) -> str:
    parts = []
    for widget in data.get("widgets") or []:
        if isinstance(widget, Mapping):
            render = _VIEWS.get(_text(widget.get("type")))
            inner = widget.get("data")
            widget_data = inner if isinstance(inner, Mapping) else widget
            parts.append(render(widget_data, app_id, base_url) if render else _json(widget))
    return "\n\n".join(parts)


def _text_view(data: Mapping[str, Any], app_id: str, base_url: str) -> str:
    return _text(data.get("content"))


def _json(data: Any) -> str:
    return _fence(json.dumps(data, ensure_ascii=False, indent=2, default=str), "json")


Render = Callable[[Mapping[str, Any], str, str], str]
_VIEWS: dict[str, Render] = {
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
}


def reply_markdown(reply: AppReply, app_id: str, base_url: str = "") -> str:
    """The reply as Markdown (see the module docstring)."""
    data = reply.data or {}
    message = (reply.message or "").strip()
    if reply.view_type == "error" or reply.status == "error":
        return f"⚠️ {_text(data.get('message')) or message or 'error'}"
    if reply.view_type == "confirm":
        return f"{message or '需要你的确认'}\n\n{CONFIRM_HINT}"
    if reply.view_type == "loading":
        return message or "…"
    render = _VIEWS.get(reply.view_type)
    body = render(data, app_id, base_url) if render else _json(data)
    if reply.view_type == "text":
        return body.strip() or message
    if message and message not in body:
        return f"{message}\n\n{body}" if body else message
    return body
