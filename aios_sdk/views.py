"""Builders for replies, views and actions.

A reply is a plain dict and an app may write it by hand; these functions spell the
field names of `aios_protocol.messages` and the `data` shapes of
`aios_protocol.views` once, so an app cannot misspell them (the SDK server still
validates every reply as `protocol.AppReply`). There is one builder per view type —
`text_reply`, `list_reply`, `card_reply`, `table_reply`, `form_reply`,
`media_reply`, `image_reply`, `chart_reply`, `code_reply`, `dashboard_reply` (of
`widget`s), `metric_reply`, `loading_reply`, `error_reply` — and `reply` builds any
view from its `data`. Each takes the reply's other fields as keywords
(`ReplyOptions`: `actions`, `message`, `state`, `notice`, `detail`, …);
`extra_data` adds keys of the app's own to `data`, kept with the reply and never
shown. One function per action type builds the controls (each takes `item_id=`: the
`id` of the list item, table row or card the control is drawn in); `ui_command` a
desktop command. A reply that answered but not fully (a source unreachable, the
user's program failed) says so with `notice="warning"` and keeps the technical text
in `detail`. Every text the user reads is written in their language
(`turn.tr(zh, en)`).

    from aios_sdk.views import button, text_reply
    again = button(turn.tr("再说一次", "Say it again"), "again")
    return text_reply(turn.tr("你好", "Hello"), actions=[again])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from typing_extensions import TypedDict, Unpack

from aios_protocol.views import (
    VIEW_TYPES,
    Card,
    CardData,
    Cell,
    ChartData,
    ChartType,
    Choice,
    CodeData,
    DashboardData,
    EndAction,
    ErrorData,
    FormData,
    FormInput,
    ImageData,
    ListData,
    ListItem,
    LoadingData,
    MediaData,
    MediaType,
    MetricData,
    TableData,
    TextData,
    Widget,
)

__all__ = [
    "BUILDERS",
    "VIEW_TYPES",
    "Card",
    "Cell",
    "Choice",
    "FormInput",
    "ListItem",
    "ReplyOptions",
    "Widget",
    "button",
    "card_reply",
    "chart_reply",
    "checkbox",
    "code_reply",
    "dashboard_reply",
    "datetime_picker",
    "file_picker",
    "error_reply",
    "form_reply",
    "image_reply",
    "input_box",
    "link",
    "list_reply",
    "loading_reply",
    "media_reply",
    "metric_reply",
    "radio",
    "reply",
    "select",
    "slider",
    "submit_form",
    "table_reply",
    "text_reply",
    "toggle",
    "ui_command",
    "widget",
]


class _Options(TypedDict, total=False):
    actions: Iterable[Mapping[str, Any]]
    steps: Iterable[Mapping[str, Any]]
    ui_commands: Iterable[Mapping[str, Any]]
    status: str
    state: Mapping[str, Any] | None
    notice: str | None
    detail: str | None
    extra_data: Mapping[str, Any] | None


class ReplyOptions(_Options, total=False):
    """The keywords every view builder passes on to `reply`."""

    message: str | None


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
    extra_data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An app reply; empty `steps` / `ui_commands` / `state` are left out.

    `state` is what the app wants back as `context["cwd_state"]` in later calls of
    the same session (merged into what it kept before). `notice` (`"info"`,
    `"warning"`, `"error"`) marks an `ok` reply as degraded or informative; `detail`
    is the technical text the desktop shows folded away under the plain `message`.
    `extra_data` are keys of the app's own added to `data`: kept with the
    reply (and in the session's history), never shown.
    """
    body: dict[str, Any] = {
        "status": status,
        "view_type": view_type,
        "data": {**(extra_data or {}), **(data or {})},
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


# --------------------------------------------------------------------- view types


def text_reply(
    content: str,
    message: str | None = None,
    *,
    title: str | None = None,
    **options: Unpack[_Options],
) -> dict[str, Any]:
    """A `text` view; the spoken `message` is `content` unless given."""
    data: TextData = {"content": content}
    if title is not None:
        data["title"] = title
    return reply("text", data, message=content if message is None else message, **options)


def list_reply(
    items: Iterable[ListItem | Mapping[str, Any]],
    title: str | None = None,
    *,
    empty: str | None = None,
    **options: Unpack[ReplyOptions],
) -> dict[str, Any]:
    """A `list` view of `items` ({`title`, `sub`?, `id`?, `icon`?}); `empty` is
    what it says when there is no item."""
    data: ListData = {"items": [cast(ListItem, dict(item)) for item in items]}
    if title is not None:
        data["title"] = title
    if empty is not None:
        data["empty"] = empty
    return reply("list", data, **options)


def card_reply(
    cards: Iterable[Card | Mapping[str, Any]],
    title: str | None = None,
    **options: Unpack[ReplyOptions],
) -> dict[str, Any]:
    """A `card` view: `cards` ({`title`, `desc`?, `image`?, `id`?}) side by side."""
    data: CardData = {"cards": [cast(Card, dict(card)) for card in cards]}
    if title is not None:
        data["title"] = title
    return reply("card", data, **options)


def table_reply(
    columns: Iterable[str],
    rows: Iterable[Sequence[Cell]],
    *,
    row_ids: Iterable[str | None] | None = None,
    title: str | None = None,
    empty: str | None = None,
    **options: Unpack[ReplyOptions],
) -> dict[str, Any]:
    """A `table` view: each row a list of cells in the order of `columns`.

    `row_ids[i]` names row i for the controls whose `item_id` is that id."""
    data: TableData = {"columns": list(columns), "rows": [list(row) for row in rows]}
    if row_ids is not None:
        data["row_ids"] = [None if rid is None else str(rid) for rid in row_ids]
    if title is not None:
        data["title"] = title
    if empty is not None:
        data["empty"] = empty
    return reply("table", data, **options)


def form_reply(
    fields: Iterable[FormInput | Mapping[str, Any]],
    title: str | None = None,
    **options: Unpack[ReplyOptions],
) -> dict[str, Any]:
    """A `form` view: editable `fields` ({`name`, `label`, `type`, `value`?, …}),
    submitted by a `submit_form` action without fields of its own."""
    data: FormData = {"fields": [cast(FormInput, dict(field)) for field in fields]}
    if title is not None:
        data["title"] = title
    return reply("form", data, **options)


def media_reply(
    url: str,
    title: str | None = None,
    *,
    kind: MediaType = "audio",
    artist: str | None = None,
    autoplay: bool = False,
    on_end: EndAction | None = None,
    on_pause: EndAction | None = None,
    on_play: EndAction | None = None,
    **options: Unpack[ReplyOptions],
) -> dict[str, Any]:
    """A `media` view: a player for `url` (http(s), or a path in the workspace).
    `on_end` ({action_id, params}) reaches the app, as a button's click would, when
    playback ends, so the app can say what comes next; `on_pause` / `on_play` when the
    user pauses or plays with the player's own controls. A new view of the same `url`
    keeps the player where it is: `autoplay` then means "go on", its absence "pause"."""
    data: MediaData = {"url": url, "type": kind}
    if title is not None:
        data["title"] = title
    if artist:
        data["artist"] = artist
    if autoplay:
        data["autoplay"] = True
    if on_end is not None:
        data["on_end"] = on_end
    if on_pause is not None:
        data["on_pause"] = on_pause
    if on_play is not None:
        data["on_play"] = on_play
    return reply("media", data, **options)


def image_reply(
    url: str, caption: str | None = None, **options: Unpack[ReplyOptions]
) -> dict[str, Any]:
    """An `image` view: `url` (http(s), data:, or a path in the workspace)."""
    data: ImageData = {"url": url}
    if caption is not None:
        data["caption"] = caption
    return reply("image", data, **options)


def chart_reply(
    labels: Iterable[str],
    values: Iterable[float],
    *,
    kind: ChartType = "bar",
    title: str | None = None,
    max: float | None = None,
    **options: Unpack[ReplyOptions],
) -> dict[str, Any]:
    """A `chart` view: `values[i]` labelled `labels[i]`; `max` fixes the scale of
    the bars (percentages: 100)."""
    data: ChartData = {
        "type": kind,
        "labels": [str(label) for label in labels],
        "values": list(values),
    }
    if title is not None:
        data["title"] = title
    if max is not None:
        data["max"] = max
    return reply("chart", data, **options)


def code_reply(
    code: str,
    language: str | None = None,
    *,
    title: str | None = None,
    output: str | None = None,
    output_truncated: bool = False,
    output_size: int | None = None,
    **options: Unpack[ReplyOptions],
) -> dict[str, Any]:
    """A `code` view: `code` in a copyable block, `language` its name (`python`);
    `output` what running it printed, shown whole below it (`output_truncated` when
    it had to be cut, `output_size` its full size in bytes)."""
    data: CodeData = {"code": code}
    if language is not None:
        data["language"] = language
    if title is not None:
        data["title"] = title
    if output is not None:
        data["output"] = output
        if output_truncated:
            data["output_truncated"] = True
            if output_size is not None:
                data["output_size"] = output_size
    return reply("code", data, **options)


def widget(
    view: Mapping[str, Any], title: str | None = None, *, folded: bool = False
) -> Widget:
    """A dashboard widget showing `view`, a reply another builder made (its
    `view_type` and `data`; its actions and message are not used):
    `widget(text_reply("42%"), title="CPU")`. A `folded` widget shows only its
    title until the user opens it."""
    part: Widget = {"type": str(view["view_type"]), "data": dict(view.get("data") or {})}
    if title is not None:
        part["title"] = title
    if folded:
        part["folded"] = True
    return part


def dashboard_reply(
    widgets: Iterable[Widget],
    title: str | None = None,
    **options: Unpack[ReplyOptions],
) -> dict[str, Any]:
    """A `dashboard` view: `widgets` (see `widget`) in a grid."""
    data: DashboardData = {"widgets": [cast(Widget, dict(part)) for part in widgets]}
    if title is not None:
        data["title"] = title
    return reply("dashboard", data, **options)


def metric_reply(
    value: str | float,
    *,
    unit: str | None = None,
    label: str | None = None,
    **options: Unpack[ReplyOptions],
) -> dict[str, Any]:
    """A `metric` view: one figure (`42`, unit `%`, label `CPU`)."""
    data: MetricData = {"value": value}
    if unit is not None:
        data["unit"] = unit
    if label is not None:
        data["label"] = label
    return reply("metric", data, **options)


def loading_reply(
    text: str | None = None, **options: Unpack[ReplyOptions]
) -> dict[str, Any]:
    """A `loading` placeholder, usually with `steps`; `text` (else `message`)
    says what is being done. `AIOSAgent.plan_steps` builds the common one."""
    data: LoadingData = {} if text is None else {"text": text}
    return reply("loading", data, **options)


def error_reply(code: str, message: str, detail: str | None = None) -> dict[str, Any]:
    """The standard error view (same shape as `protocol.AppReply.error`): the plain
    `message`, the technical `detail` (if any) folded away."""
    data: ErrorData = {"code": code, "message": message}
    return reply("error", data, message=message, status="error", detail=detail)


BUILDERS: Mapping[str, Any] = {
    "text": text_reply,
    "list": list_reply,
    "card": card_reply,
    "table": table_reply,
    "form": form_reply,
    "media": media_reply,
    "image": image_reply,
    "chart": chart_reply,
    "code": code_reply,
    "dashboard": dashboard_reply,
    "metric": metric_reply,
    "loading": loading_reply,
    "error": error_reply,
}
"""view type → its builder: one for every type of `VIEW_TYPES`."""


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
    fields: Iterable[FormInput | Mapping[str, Any]] = (),
    *,
    item_id: str | None = None,
) -> dict[str, Any]:
    """Forwards `{action_id, form_values}`; fields are a form view's (`FormInput`).

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


def file_picker(
    label: str,
    action_id: str,
    *,
    accept: str = "",
    multiple: bool = True,
    drop: bool = False,
    item_id: str | None = None,
) -> dict[str, Any]:
    """A button choosing files (`accept`: the chooser's filter, e.g. "audio/*"; `drop`:
    files dropped on the window count too). Forwards each file in pieces, in order:
    `{action_id, value: {name, size, offset, data}}` with `data` the piece in base64;
    an error reply stops that file."""
    action: dict[str, Any] = {
        "type": "file",
        "label": label,
        "action_id": action_id,
        "accept": accept,
        "multiple": multiple,
        "drop": drop,
    }
    return _placed(action, item_id)


def ui_command(op: str, element_id: str, **fields: Any) -> dict[str, Any]:
    """A desktop command: `ui_command("move", "btn_play", x=20, y=20)`."""
    return {"op": op, "id": element_id, **fields}
