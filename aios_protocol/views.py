"""The shape of each view type's `data`, written once.

A reply names a `view_type` and carries `data`. For every view type this
module says which keys of `data` the renderers read and what they hold, as one
TypedDict each (`TextData`, `ListData`, …). `VIEW_TYPES` are the view types an app
answers with, `SYSTEM_VIEW_TYPES` the ones only the system sends (`confirm`, a task
paused for the user's yes). The SDK's builders (`aios_sdk.views`) write these
shapes; the desktop (`desktop/web/views.js`) and the Markdown of `/v1` and of the
`aios` command (`openai_entry/markdown.py`) read them and nothing else. Keys beyond
a shape belong to the app: they travel with the reply and are never shown.
`read_view_data` checks a `data` against its view type's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, Required, Union, get_args

from typing_extensions import TypedDict  # pydantic reads TypedDicts of this kind

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = [
    "SYSTEM_VIEW_TYPES",
    "VIEW_SHAPES",
    "VIEW_TYPES",
    "Card",
    "CardData",
    "Cell",
    "ChartData",
    "ChartType",
    "Choice",
    "CodeData",
    "ConfirmData",
    "ConfirmStep",
    "DashboardData",
    "EndAction",
    "ErrorData",
    "FormData",
    "FormInput",
    "ImageData",
    "ListData",
    "ListItem",
    "LoadingData",
    "MediaData",
    "MediaType",
    "MetricData",
    "TableData",
    "TextData",
    "ViewType",
    "Widget",
    "read_view_data",
    "upgrade_view_data",
]

# total=False with Required[...]: a key is optional unless marked required.


class TextData(TypedDict, total=False):
    """`text`: `content`, shown as it is (line breaks kept)."""

    content: Required[str]
    title: str


class ListItem(TypedDict, total=False):
    """One row of a `list`; `id` names it for the controls whose `item_id` is that id."""

    title: Required[str]
    sub: str  # one quiet line under the title
    id: str
    icon: str  # an emoji before the title


class ListData(TypedDict, total=False):
    """`list`: `items` in order; `empty` is what it says when there is none."""

    items: Required[list[ListItem]]
    title: str
    empty: str


class Card(TypedDict, total=False):
    """One card; `image` is an http(s) or data: URL or a path in the app's workspace."""

    title: Required[str]
    desc: str
    image: str
    id: str


class CardData(TypedDict, total=False):
    """`card`: `cards` side by side."""

    cards: Required[list[Card]]
    title: str


Cell = Union[str, int, float, bool, None]
"""One cell of a table."""


class TableData(TypedDict, total=False):
    """`table`: `rows` of cells in the order of `columns`; `row_ids[i]` names row i
    for the controls whose `item_id` is that id (None: no controls in that row)."""

    columns: Required[list[str]]
    rows: Required[list[list[Cell]]]
    row_ids: list[str | None]
    title: str
    empty: str


class Choice(TypedDict, total=False):
    """An option whose label differs from the value sent back (else a plain string)."""

    label: Required[str]
    value: Any


class FormInput(TypedDict, total=False):
    """One field of a `form` view or of a `submit_form` action; its value comes back
    under `name` in `form_values`. `type`: `text` (the default), `textarea`, `code` (a
    monospace editor with line numbers, Tab indenting), `select` (with `options`),
    `checkbox`, `number`, `password`, `date`, `time`, `datetime`, or another HTML
    input type."""

    name: Required[str]
    label: str
    type: str
    value: Any
    options: list[str | Choice]
    placeholder: str
    required: bool


class FormData(TypedDict, total=False):
    """`form`: the fields a `submit_form` action without fields of its own submits."""

    fields: Required[list[FormInput]]
    title: str


MediaType = Literal["audio", "video"]


class EndAction(TypedDict, total=False):
    """What a player sends its app when playback ends, as a click of a button would."""

    action_id: Required[str]
    params: dict[str, Any]


class MediaData(TypedDict, total=False):
    """`media`: a player for `url` (an http(s) URL or a path in the app's workspace)."""

    url: Required[str]
    type: MediaType  # audio unless it says video
    title: str
    artist: str
    autoplay: bool
    on_end: EndAction  # sent to the app once when playback reaches the end
    # sent when the user pauses / plays with the player's own controls, so the app's
    # buttons and words follow what the player does
    on_pause: EndAction
    on_play: EndAction


class ImageData(TypedDict, total=False):
    """`image`: `url` (http(s), data: or a workspace path) with its `caption`."""

    url: Required[str]
    caption: str


ChartType = Literal["bar", "line", "pie"]


class ChartData(TypedDict, total=False):
    """`chart`: `values[i]` labelled `labels[i]`; bars scale to `max` when given
    (percentages: 100), else to the largest value."""

    labels: Required[list[str]]
    values: Required[list[float]]
    type: ChartType  # bar unless it says otherwise
    title: str
    max: float


class CodeData(TypedDict, total=False):
    """`code`: `code` in a copyable block; `language` names it (`python`, `text`).
    `output` is what running it printed, shown whole below the code; when the
    executor had to cut it, `output_truncated` is true and `output_size` says how
    many bytes it was in all."""

    code: Required[str]
    language: str
    title: str
    output: str
    output_truncated: bool
    output_size: int


class Widget(TypedDict, total=False):
    """One part of a dashboard: a view of its own, `data` in the shape of its `type`.
    A `folded` widget shows its title only until it is opened (a long help text
    below the answer)."""

    type: Required[str]
    data: Required[dict[str, Any]]
    title: str
    folded: bool


class DashboardData(TypedDict, total=False):
    """`dashboard`: `widgets` in a grid, each drawn as the view it is."""

    widgets: Required[list[Widget]]
    title: str


class MetricData(TypedDict, total=False):
    """`metric`: one figure, e.g. `42` `%` `CPU`."""

    value: Required[str | float]
    unit: str
    label: str


class LoadingData(TypedDict, total=False):
    """`loading`: the placeholder while steps run; `text` (else the reply's
    `message`) says what is being done."""

    text: str


class ErrorData(TypedDict, total=False):
    """`error`: the plain `message`, the machine `code`, the technical `detail`."""

    code: Required[str]
    message: Required[str]
    detail: str


class ConfirmStep(TypedDict, total=False):
    """One risky step of a paused plan, with the sentence the user reads."""

    step_id: int
    tool: str
    kind: str
    sentence: str
    command: str | None


class ConfirmData(TypedDict, total=False):
    """`confirm` (the system's): the question of a task paused before risky steps;
    the answer goes to `POST /api/confirmations/<confirmation_id>`."""

    confirmation_id: Required[str]
    app_id: str
    app_name: str
    session_id: str
    task_id: str | None
    kind: str  # instruction | open | action | schedule
    job_id: str | None
    summary: str
    steps: list[ConfirmStep]
    plan: list[dict[str, Any]]
    decisions: list[str]
    created: float


ViewType = Literal[
    "text",
    "list",
    "card",
    "table",
    "form",
    "media",
    "image",
    "chart",
    "code",
    "dashboard",
    "metric",
    "loading",
    "error",
]
VIEW_TYPES: tuple[ViewType, ...] = get_args(ViewType)
SYSTEM_VIEW_TYPES: tuple[str, ...] = ("confirm",)

VIEW_SHAPES: Mapping[str, Any] = {
    "text": TextData,
    "list": ListData,
    "card": CardData,
    "table": TableData,
    "form": FormData,
    "media": MediaData,
    "image": ImageData,
    "chart": ChartData,
    "code": CodeData,
    "dashboard": DashboardData,
    "metric": MetricData,
    "loading": LoadingData,
    "error": ErrorData,
    "confirm": ConfirmData,
}
"""view type → the TypedDict of its `data` (every type of VIEW_TYPES and
SYSTEM_VIEW_TYPES)."""


# a list item's keys that are not read as its quiet second line
_ITEM_OWN_KEYS = frozenset({"id", "title", "sub", "name", "icon", "image", "url"})


def upgrade_view_data(view_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """`data` in the one shape, from the older forms apps may still send: a list item as
    a bare string or with `name` for its title (and no `sub`: its other plain values
    become the second line), table rows as objects (`columns` from the first row when
    not given, a row's `id` its `row_ids` entry), `chart_type` for a chart's `type`,
    a dashboard widget with its data beside `type` instead of under `data`. Data
    already in the shape is answered unchanged (the same object)."""
    if view_type == "list":
        return _upgrade_list(data)
    if view_type == "table":
        return _upgrade_table(data)
    if view_type == "chart" and "chart_type" in data and "type" not in data:
        return {**data, "type": data["chart_type"]}
    if view_type == "dashboard":
        return _upgrade_dashboard(data)
    return data


def _upgrade_list(data: dict[str, Any]) -> dict[str, Any]:
    items = data.get("items")
    if not isinstance(items, list) or all(
        isinstance(item, dict) and "title" in item for item in items
    ):
        return data
    upgraded: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            upgraded.append({"title": "" if item is None else str(item)})
            continue
        item = dict(item)
        if "title" not in item:
            item["title"] = str(item.get("name") or "")
            if item.get("sub") is None:
                plain = [
                    str(value)
                    for key, value in item.items()
                    if key not in _ITEM_OWN_KEYS
                    and value is not None
                    and not isinstance(value, dict | list)
                ]
                if plain:
                    item["sub"] = " · ".join(plain)
        upgraded.append(item)
    return {**data, "items": upgraded}


def _upgrade_table(data: dict[str, Any]) -> dict[str, Any]:
    rows = data.get("rows")
    if not isinstance(rows, list) or not any(isinstance(row, dict) for row in rows):
        return data
    columns = data.get("columns")
    if not isinstance(columns, list) or not columns:
        first = next(row for row in rows if isinstance(row, dict))
        columns = [str(key) for key in first if key != "id"]
    upgraded = {**data, "columns": columns}
    upgraded["rows"] = [
        [row.get(column) for column in columns] if isinstance(row, dict) else row
        for row in rows
    ]
    if "row_ids" not in data and any(isinstance(row, dict) and "id" in row for row in rows):
        upgraded["row_ids"] = [
            str(row["id"]) if isinstance(row, dict) and row.get("id") is not None else None
            for row in rows
        ]
    return upgraded


def _upgrade_dashboard(data: dict[str, Any]) -> dict[str, Any]:
    widgets = data.get("widgets")
    if not isinstance(widgets, list):
        return data
    upgraded: list[Any] = []
    changed = False
    for widget in widgets:
        if not isinstance(widget, dict):
            upgraded.append(widget)
            continue
        inner = widget.get("data")
        if not isinstance(inner, dict):
            inner = {k: v for k, v in widget.items() if k not in ("type", "title")}
            if widget.get("type") == "chart" and "chart_type" in widget:
                inner["type"] = inner.pop("chart_type")
            widget = {k: widget[k] for k in ("type", "title") if k in widget}
        new_inner = upgrade_view_data(str(widget.get("type") or ""), inner)
        if widget.get("data") is not new_inner:
            widget = {**widget, "data": new_inner}
            changed = True
        upgraded.append(widget)
    return {**data, "widgets": upgraded} if changed else data


@cache
def _adapter(view_type: str) -> TypeAdapter[Any]:
    from pydantic import TypeAdapter  # on first use: the builders need no pydantic

    return TypeAdapter(VIEW_SHAPES[view_type])


def read_view_data(view_type: str, data: Any) -> dict[str, Any]:
    """`data` as the shape of `view_type` says: its keys only, each value checked.

    Raises `InvalidRequest` naming the key at fault when `data` does not have the
    shape, or when `view_type` is not a known view type. A dashboard's widgets are
    checked as widgets; read each widget's `data` by its own `type`.
    """
    from pydantic import ValidationError

    from aios_protocol.errors import InvalidRequest
    from aios_protocol.messages import describe_validation_error

    if view_type not in VIEW_SHAPES:
        raise InvalidRequest(f"unknown view type {view_type!r}")
    try:
        shaped: dict[str, Any] = _adapter(view_type).validate_python(data)
    except ValidationError as exc:
        raise InvalidRequest(
            f"invalid {view_type} view data: {describe_validation_error(exc)}"
        ) from exc
    return shaped
