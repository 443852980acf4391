"""Older forms of a view's data, which apps written before the view vocabulary still
send, reach every renderer in the one shape (the desktop showed them; they must not
turn into empty slots or raw JSON)."""

from __future__ import annotations

from aios_protocol.messages import AppReply
from aios_protocol.views import read_view_data, upgrade_view_data


def reply(view_type: str, data: dict) -> dict:
    shaped = AppReply.model_validate({"status": "ok", "view_type": view_type, "data": data})
    read_view_data(view_type, shaped.data)  # the one shape, or this raises
    return shaped.data


def test_table_rows_as_objects_become_columns_rows_and_row_ids() -> None:
    data = reply(
        "table",
        {"rows": [{"id": "r1", "name": "a.py", "size": 3}, {"id": "r2", "name": "b.py"}]},
    )
    assert data["columns"] == ["name", "size"]
    assert data["rows"] == [["a.py", 3], ["b.py", None]]
    assert data["row_ids"] == ["r1", "r2"]
    given = reply("table", {"columns": ["size"], "rows": [{"size": 1, "name": "x"}]})
    assert given["columns"] == ["size"] and given["rows"] == [[1]]


def test_list_items_named_or_bare_get_a_title_and_their_plain_values_a_sub_line() -> None:
    data = reply(
        "list",
        {"items": ["plain", {"name": "七里香", "artist": "周杰伦", "duration": "4:59"}]},
    )
    assert data["items"][0] == {"title": "plain"}
    assert data["items"][1]["title"] == "七里香"
    assert data["items"][1]["sub"] == "周杰伦 · 4:59"


def test_chart_type_and_flat_dashboard_widgets() -> None:
    assert (
        reply("chart", {"labels": ["a"], "values": [1], "chart_type": "pie"})["type"]
        == "pie"
    )
    data = reply(
        "dashboard",
        {
            "widgets": [
                {
                    "type": "chart",
                    "title": "CPU",
                    "labels": ["x"],
                    "values": [2],
                    "chart_type": "line",
                }
            ]
        },
    )
    assert data["widgets"] == [
        {
            "type": "chart",
            "title": "CPU",
            "data": {"labels": ["x"], "values": [2], "type": "line"},
        }
    ]


def test_data_in_the_shape_is_left_as_it_is() -> None:
    data = {"columns": ["a"], "rows": [[1]], "row_ids": ["x"]}
    assert upgrade_view_data("table", data) is data
    items = {"items": [{"title": "t", "extra": 1}]}
    assert upgrade_view_data("list", items) is items
