"""The reply and action builders of `aios_sdk.views` produce valid protocol messages."""

from __future__ import annotations

from aios_protocol.messages import ACTION_TYPES, AppReply
from aios_sdk import views


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
