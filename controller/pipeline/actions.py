"""Forwarding a triggered action to its app.

The desktop posts `{session_id, action_id, type, <the type's payload key>}`; the app
receives `{action_id, <only that type's payload key>, session_id}` as its
`action_request`.
"""

from __future__ import annotations

from typing import Any

from aios_protocol.messages import ActionPost, ActionRequest

__all__ = ["ACTION_PAYLOAD_KEYS", "action_request_for"]

# The one payload key the system forwards for each action type.
ACTION_PAYLOAD_KEYS: dict[str, str] = {
    "button": "params",
    "submit_form": "form_values",
    "select": "selected",
    "checkbox": "checked",
    "radio": "selected",
    "input": "value",
    "link": "href",
    "toggle": "on",
    "slider": "value",
    "datetime": "value",
    "file": "value",
}
_PAYLOAD_FIELDS = ("params", "form_values", "selected", "checked", "value", "href", "on")


def action_request_for(post: ActionPost, session_id: str) -> ActionRequest:
    """The body an app receives: `{action_id, <the type's payload key>, session_id}`.

    An unknown or missing `type` forwards every payload key the desktop set.
    """
    key = ACTION_PAYLOAD_KEYS.get(post.type or "")
    fields: dict[str, Any] = {"action_id": post.action_id, "session_id": session_id}
    if key is not None:
        value = getattr(post, key)
        if value is None and key == "params":
            value = {}
        if value is not None:
            fields[key] = value
    else:
        for name in _PAYLOAD_FIELDS:
            if getattr(post, name) is not None:
                fields[name] = getattr(post, name)
    return ActionRequest(**fields)
