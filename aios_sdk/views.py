"""Builders for reply dicts, views and actions.

A reply is a plain dict and an app may write it by hand; these functions spell the
field names of `aios_protocol.messages` once, so an app cannot misspell them (the SDK
server still validates every reply as `protocol.AppReply`). `reply` builds any
view; `text_reply`, `list_reply` and `error_reply` the common ones; one function
per action type builds the controls (each takes `item_id=`: the `id` of the list
item, table row or card the control is drawn in); `ui_command` a desktop command.
A reply that answered but not fully (a source unreachable, the user's program
failed) says so with `notice="warning"` and keeps the technical text in `detail`.
Every text the user reads is written in their language (`turn.tr(zh, en)`).

    from aios_sdk.views import button, text_reply
    again = button(turn.tr("再说一次", "Say it again"), "again")
    return text_reply(turn.tr("你好", "Hello"), actions=[again])
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
    state: Mapping[str, Any] | None = None,
    notice: str | None = None,
    detail: str | None = None,
) -> dict[str, Any]:
    """An app reply; empty `steps` / `ui_commands` / `state` are left out.

    `state` is what the app wants back as `context["cwd_state"]` in later calls of
    the same session (merged into what it kept before). `notice` (`"info"`,
    `"warning"`, `"error"`) marks an `ok` reply as degraded or informative; `detail`
    is the technical text the desktop shows folded away under the plain `message`.
    """
    body: dict[str, Any] = {
        "status": status,
        "view_type": view_type,
        "data": dict(data or {}),
        "actions": [dict(action) for action in actions],
    }
    if message is not None:
        body["message"] = message
    if notice is not None:
        body["notice"] = notice
    if detail:
        body["detail"] = detail
    steps = [dict(step) for step in steps]
    if steps:
        body["steps"] = steps
    commands = [dict(command) for command in ui_commands]
    if commands:
        body["ui_commands"] = commands
    if state:
        body["state"] = dict(state)
    return body


def text_reply(content: str, message: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """A `text` view, `{"content": …}`; the spoken `message` is `content` unless given."""
    return reply(
        "text",
        {"content": content},
        message=content if message is None else message,
        **kwargs,
    )


def list_reply(
    items: Iterable[Mapping[str, Any]], title: str | None = None, **kwargs: Any
) -> dict[str, Any]:
    """A `list` view: `{"items": [{"title", "sub", …}], "title"?}`."""
    data: dict[str, Any] = {"items": [dict(item) for item in items]}
    if title is not None:
        data["title"] = title
    return reply("list", data, **kwargs)


def error_reply(code: str, message: str, detail: str | None = None) -> dict[str, Any]:
    """The standard error view (same shape as `protocol.AppReply.error`): the plain
    `message`, the technical `detail` (if any) folded away."""
    return reply(
        "error",
        {"code": code, "message": message},
        message=message,
        status="error",
        detail=detail,
    )


def _placed(action: dict[str, Any], item_id: str | None) -> dict[str, Any]:
    """`action`, drawn inside the list item / table row / card whose `id` is `item_id`."""
    if item_id is not None:
        action["item_id"] = str(item_id)
    return action


# ------------------------------------------------------------------------ actions


def button(
    label: str, action_id: str, *, item_id: str | None = None, **params: Any
) -> dict[str, Any]:
    """Forwards `{action_id, params}` when clicked; `item_id` places it in that item."""
    action: dict[str, Any] = {"type": "button", "label": label, "action_id": action_id}
    if params:
        action["params"] = params
    return _placed(action, item_id)


def submit_form(
    label: str,
    action_id: str,
    fields: Iterable[Mapping[str, Any]] = (),
    *,
    item_id: str | None = None,
) -> dict[str, Any]:
    """Forwards `{action_id, form_values}`; fields are `{name, label, type, value?}`.

    Without fields it is a button submitting the values of the reply's `form` view
    (the one editable copy); with fields it draws a small form of its own."""
    action = {
        "type": "submit_form",
        "label": label,
        "action_id": action_id,
        "fields": [dict(field) for field in fields],
    }
    return _placed(action, item_id)


def _choice(
    kind: str,
    label: str,
    action_id: str,
    options: Iterable[Any],
    value: Any,
    item_id: str | None,
) -> dict[str, Any]:
    action = {
        "type": kind,
        "label": label,
        "action_id": action_id,
        "options": list(options),
    }
    if value is not None:
        action["value"] = value
    return _placed(action, item_id)


def select(
    label: str,
    action_id: str,
    options: Iterable[Any],
    value: Any = None,
    *,
    item_id: str | None = None,
) -> dict[str, Any]:
    """Forwards `{action_id, selected}`; `value` is the option shown as chosen.

    An option is a string or `{"label": …, "value": …}`."""
    return _choice("select", label, action_id, options, value, item_id)


def radio(
    label: str,
    action_id: str,
    options: Iterable[Any],
    value: Any = None,
    *,
    item_id: str | None = None,
) -> dict[str, Any]:
    """Forwards `{action_id, selected}`; `value` is the option shown as chosen."""
    return _choice("radio", label, action_id, options, value, item_id)


def checkbox(
    label: str,
    action_id: str,
    options: Iterable[Any],
    checked: Iterable[Any] = (),
    *,
    item_id: str | None = None,
) -> dict[str, Any]:
    """Forwards `{action_id, checked: [...]}`."""
    action = {
        "type": "checkbox",
        "label": label,
        "action_id": action_id,
        "options": list(options),
        "checked": list(checked),
    }
    return _placed(action, item_id)


def input_box(
    label: str,
    action_id: str,
    placeholder: str | None = None,
    value: str | None = None,
    *,
    item_id: str | None = None,
) -> dict[str, Any]:
    """Forwards `{action_id, value}`; `value` prefills the box."""
    action: dict[str, Any] = {"type": "input", "label": label, "action_id": action_id}
    if placeholder is not None:
        action["placeholder"] = placeholder
    if value is not None:
        action["value"] = value
    return _placed(action, item_id)


def link(
    label: str, action_id: str, href: str, *, item_id: str | None = None
) -> dict[str, Any]:
    """Forwards `{action_id, href}`."""
    action = {"type": "link", "label": label, "action_id": action_id, "href": href}
    return _placed(action, item_id)


def toggle(
    label: str, action_id: str, on: bool = False, *, item_id: str | None = None
) -> dict[str, Any]:
    """Forwards `{action_id, on}`."""
    action = {"type": "toggle", "label": label, "action_id": action_id, "on": on}
    return _placed(action, item_id)


def slider(
    label: str,
    action_id: str,
    *,
    min: float = 0,
    max: float = 100,
    step: float = 1,
    value: float | None = None,
    item_id: str | None = None,
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
    return _placed(action, item_id)


def datetime_picker(
    label: str, action_id: str, value: str | None = None, *, item_id: str | None = None
) -> dict[str, Any]:
    """Forwards `{action_id, value: "2026-08-14T22:00"}`."""
    action: dict[str, Any] = {"type": "datetime", "label": label, "action_id": action_id}
    if value is not None:
        action["value"] = value
    return _placed(action, item_id)


def ui_command(op: str, element_id: str, **fields: Any) -> dict[str, Any]:
    """A desktop command: `ui_command("move", "btn_play", x=20, y=20)`."""
    return {"op": op, "id": element_id, **fields}
