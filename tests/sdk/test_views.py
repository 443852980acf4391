"""The reply and action builders of `aios_sdk.views` produce valid protocol messages,
and each view builder the `data` shape of its view type (`aios_protocol.views`)."""

from __future__ import annotations

import pytest

from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import ACTION_TYPES, AppReply
from aios_protocol.views import VIEW_TYPES, read_view_data
from aios_sdk import views
from tests.view_samples import view_samples


def test_every_action_builder_gives_a_valid_action_and_reply() -> None:
    actions = [
        views.button("播放", "play", song_id="s_001"),
        views.submit_form(
            "搜索", "search", [{"name": "keyword", "label": "关键词", "type": "text"}]
        ),
        views.select("音质", "quality", ["标准", "无损"]),
        views.checkbox("标签", "tags", ["a", "b"], checked=["a"]),
        views.radio("模式", "mode", ["单曲", "列表"]),
        views.input_box("筛选", "filter", placeholder="歌名"),
        views.link("官网", "site", "https://example.org"),
        views.toggle("随机", "shuffle", on=True),
        views.slider("音量", "volume", value=30),
        views.datetime_picker("提醒", "remind", value="2026-08-14T22:00"),
        views.file_picker("添加歌曲", "add_songs", accept="audio/*", drop=True),
    ]
    assert sorted(action["type"] for action in actions) == sorted(ACTION_TYPES)
    body = views.list_reply(
        [{"title": "七里香", "sub": "周杰伦"}],
        title="结果",
        actions=actions,
        message="找到 1 首",
        ui_commands=[views.ui_command("move", "btn_play", x=20, y=20)],
    )
    reply = AppReply.model_validate(body)
    assert reply.view_type == "list" and reply.data["title"] == "结果"
    assert reply.actions[0].params == {"song_id": "s_001"}
    assert reply.ui_commands[0].op == "move"
    assert "steps" not in body


def test_text_and_error_replies() -> None:
    text = AppReply.model_validate(views.text_reply("你好", message="已回复"))
    assert text.data == {"content": "你好"} and text.message == "已回复"
    error = views.error_reply("no_song", "没有找到")
    assert (
        AppReply.model_validate(error).dump()
        == AppReply.error("no_song", "没有找到").dump()
    )
    assert error["status"] == "error" and error["view_type"] == "error"


def test_reply_state_and_prefilled_controls() -> None:
    body = views.reply(
        "list",
        {"items": []},
        actions=[
            views.select("音质", "quality", ["标准", "无损"], value="无损"),
            views.radio("模式", "mode", [{"label": "单曲", "value": "one"}], value="one"),
            views.input_box("筛选", "filter", "歌名", value="七里"),
        ],
        state={"quality": "无损"},
    )
    reply = AppReply.model_validate(body)
    assert [a.value for a in reply.actions] == ["无损", "one", "七里"]
    assert body["state"] == {"quality": "无损"}  # read back as the next cwd_state
    assert "state" not in views.reply("text", {"content": ""})
    said = views.text_reply("已撤销", status="error")
    assert said["message"] == "已撤销" and said["status"] == "error"
    assert views.text_reply("内容", "说的话")["message"] == "说的话"


# ------------------------------------------------------------------ view shapes


def _shaped(view_type: str, data: dict) -> None:
    """`data` has exactly its view type's shape: read by the shape, nothing is lost,
    added or changed (the shape drops keys it does not name)."""
    assert read_view_data(view_type, data) == data, view_type
    if view_type == "dashboard":
        for part in data["widgets"]:
            _shaped(part["type"], part["data"])


def test_every_view_builder_writes_its_view_types_shape() -> None:
    samples = view_samples()
    assert sorted(samples) == sorted(VIEW_TYPES) == sorted(views.BUILDERS)
    for view_type, body in samples.items():
        reply = AppReply.model_validate(body)
        assert reply.view_type == view_type
        _shaped(view_type, body["data"])


def test_optional_slots_are_left_out_and_the_apps_own_keys_kept() -> None:
    assert views.table_reply(["a"], [])["data"] == {"columns": ["a"], "rows": []}
    assert views.media_reply("x.mp3")["data"] == {"url": "x.mp3", "type": "audio"}
    assert views.loading_reply()["data"] == {}
    assert views.chart_reply(["a"], [1])["data"] == {
        "type": "bar",
        "labels": ["a"],
        "values": [1],
    }
    # S-06: keys of the app's own travel with the reply; the shape does not read them
    player = views.media_reply("x.mp3", "歌", extra_data={"song_id": "s_1", "url": "no"})
    assert player["data"] == {
        "url": "x.mp3",
        "type": "audio",
        "title": "歌",
        "song_id": "s_1",
    }
    assert read_view_data("media", player["data"]) == {
        "url": "x.mp3",
        "type": "audio",
        "title": "歌",
    }


def test_a_widget_is_the_view_a_builder_made() -> None:
    part = views.widget(
        views.code_reply("x = 1", "python", actions=[views.button("b", "b")]), "代码"
    )
    assert part == {
        "type": "code",
        "data": {"code": "x = 1", "language": "python"},
        "title": "代码",
    }
    folded = views.widget(views.code_reply("usage: x"), "帮助", folded=True)
    assert folded["folded"] is True
    assert read_view_data("dashboard", {"widgets": [folded]})["widgets"] == [folded]


def test_a_code_view_carries_its_output_and_a_cut() -> None:
    ran = views.code_reply("print(1)", "python", output="1\n")
    assert ran["data"] == {"code": "print(1)", "language": "python", "output": "1\n"}
    cut = views.code_reply("x", output="y" * 10, output_truncated=True, output_size=99)
    assert read_view_data("code", cut["data"]) == {
        "code": "x",
        "output": "y" * 10,
        "output_truncated": True,
        "output_size": 99,
    }


def test_data_without_its_shape_is_refused_naming_the_key() -> None:
    with pytest.raises(InvalidRequest, match=r"rows\.0"):
        read_view_data("table", {"columns": ["a"], "rows": [{"a": 1}]})
    with pytest.raises(InvalidRequest, match=r"items\.0\.title"):
        read_view_data("list", {"items": [{"name": "七里香"}]})
    with pytest.raises(InvalidRequest, match="unknown view type"):
        read_view_data("sparkles", {})
    confirm = {"confirmation_id": "conf_1", "summary": "写数据库", "steps": []}
    assert read_view_data("confirm", confirm) == confirm
