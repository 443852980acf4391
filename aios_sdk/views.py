"""Small builders for reply dicts, views and actions (S-50, S-52, S-53, S-54, S-82).

Optional sugar: a reply is a plain dict and an app may write it by hand. These
functions only spell the field names of `aios_sdk.protocol` once, so an app cannot
misspell them; the SDK server validates every reply as `protocol.AppReply`.

    from aios_sdk.views import button, reply
    return reply("text", {"content": "你好"}, actions=[button("再说一次", "again")])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "button",
    "checkbox",
    "datetime_picker",
    "error_reply",
    "input_box",
    "link",
    "list_reply",
    "radio",
    "reply",
    "select",
    "slider",
    "submit_form",
    "text_reply",
    "toggle",
    "ui_command",
]


def reply(
    view_type: str,
    data: Mapping[str, Any] | None = None,
    *,
    actions: Iterable[Mapping[str, Any]] = (),
    message: str | None = None,
    steps: Iterable[Mapping[str, Any]] = (),
    ui_commands: Iterable[Mapping[str, Any]] = (),
    status: str = "ok",
) -> dict[str, Any]:
    """An app reply (S-50); empty `steps` / `ui_commands` are left out."""
    body: dict[str, Any] = {
        "status": status,
        "view_type": view_type,
        "data": dict(data or {}),
        "actions": [dict(action) for action in actions],
    }
    if message is not None:
        body["message"] = message
    steps = [dict(step) for step in steps]
    if steps:
        body["steps"] = steps
    commands = [dict(command) for command in ui_commands]
    if commands:
        body["ui_commands"] = commands
    return body


def text_reply(content: str, **kwargs: Any) -> dict[str, Any]:
    """A `text` view: `{"content": …}`."""
    return reply("text", {"content": content}, **kwargs)


def list_reply(
    items: Iterable[Mapping[str, Any]], title: str | None = None, **kwargs: Any
) -> dict[str, Any]:
    """A `list` view: `{"items": [{"title", "sub", …}], "title"?}`."""
    data: dict[str, Any] = {"items": [dict(item) for item in items]}
    if title is not None:
        data["title"] = title
    return reply("list", data, **kwargs)


def error_reply(code: str, message: str) -> dict[str, Any]:
    """The standard error view (same shape as `protocol.AppReply.error`)."""
    return reply(
        "error", {"code": code, "message": message}, message=message, status="error"
    )


# ------------------------------------------------------------------------ actions


def button(label: str, action_id: str, **params: Any) -> dict[str, Any]:
    """Forwards `{action_id, params}` when clicked."""
    action: dict[str, Any] = {"type": "button", "label": label, "action_id": action_id}
    if params:
        action["params"] = params
    return action


def submit_form(
    label: str, action_id: str, fields: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """Forwards `{action_id, form_values}`; fields are `{name, label, type}`."""
    return {
        "type": "submit_form",
        "label": label,
        "action_id": action_id,
        "fields": [dict(field) for field in fields],
    }


def _choice(
    kind: str, label: str, action_id: str, options: Iterable[Any]
) -> dict[str, Any]:
    return {"type": kind, "label": label, "action_id": action_id, "options": list(options)}


def select(label: str, action_id: str, options: Iterable[Any]) -> dict[str, Any]:
    """Forwards `{action_id, selected}`."""
    return _choice("select", label, action_id, options)


def radio(label: str, action_id: str, options: Iterable[Any]) -> dict[str, Any]:
    """Forwards `{action_id, selected}`."""
    return _choice("radio", label, action_id, options)


def checkbox(
    label: str, action_id: str, options: Iterable[Any], checked: Iterable[Any] = ()
) -> dict[str, Any]:
    """Forwards `{action_id, checked: [...]}`."""
    return {
        "type": "checkbox",
        "label": label,
        "action_id": action_id,
        "options": list(options),
        "checked": list(checked),
    }


def input_box(label: str, action_id: str, placeholder: str | None = None) -> dict[str, Any]:
    """Forwards `{action_id, value}`."""
    action: dict[str, Any] = {"type": "input", "label": label, "action_id": action_id}
    if placeholder is not None:
        action["placeholder"] = placeholder
    return action


def link(label: str, action_id: str, href: str) -> dict[str, Any]:
    """Forwards `{action_id, href}`."""
    return {"type": "link", "label": label, "action_id": action_id, "href": href}


def toggle(label: str, action_id: str, on: bool = False) -> dict[str, Any]:
    """Forwards `{action_id, on}`."""
    return {"type": "toggle", "label": label, "action_id": action_id, "on": on}


def slider(
    label: str,
    action_id: str,
    *,
    min: float = 0,
    max: float = 100,
    step: float = 1,
    value: float | None = None,
) -> dict[str, Any]:
    """Forwards `{action_id, value}`."""
    action: dict[str, Any] = {
        "type": "slider",
        "label": label,
        "action_id": action_id,
        "min": min,
        "max": max,
        "step": step,
    }
    if value is not None:
        action["value"] = value
    return action


def datetime_picker(label: str, action_id: str, value: str | None = None) -> dict[str, Any]:
    """Forwards `{action_id, value: "2026-08-14T22:00"}`."""
    action: dict[str, Any] = {"type": "datetime", "label": label, "action_id": action_id}
    if value is not None:
        action["value"] = value
    return action


def ui_command(op: str, element_id: str, **fields: Any) -> dict[str, Any]:
    """A desktop command (S-82): `ui_command("move", "btn_play", x=20, y=20)`."""
    return {"op": op, "id": element_id, **fields}
