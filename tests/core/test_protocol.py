"""The wire protocol: every model validates the spec's samples and names the field at fault."""

from __future__ import annotations

import pytest

import aios_protocol.messages as protocol
from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import (
    ACTION_TYPES,
    UI_OPS,
    ActionRequest,
    AppReply,
    Context,
    HandleRequest,
    Manifest,
    Step,
    ToolResult,
    UISnapshot,
    parse,
)

SPEC_LIST_REPLY = {
    "status": "ok",
    "view_type": "list",
    "data": {
        "title": "周杰伦的歌曲",
        "items": [
            {"id": "s_001", "title": "七里香", "artist": "周杰伦", "duration": "4:59"},
            {"id": "s_002", "title": "稻香", "artist": "周杰伦", "duration": "3:43"},
        ],
    },
    "actions": [
        {
            "type": "button",
            "label": "播放",
            "action_id": "play",
            "params": {"song_id": "s_001"},
        },
        {
            "type": "button",
            "label": "播放",
            "action_id": "play",
            "params": {"song_id": "s_002"},
        },
        {"type": "input", "label": "筛选", "action_id": "filter"},
    ],
    "message": "为你找到周杰伦的 2 首歌",
}


def test_spec_list_reply_round_trips_with_opaque_data() -> None:
    reply = parse(AppReply, SPEC_LIST_REPLY)
    dumped = reply.dump()
    assert dumped["data"] == SPEC_LIST_REPLY["data"]  # S-06: data untouched
    assert [a["action_id"] for a in dumped["actions"]] == ["play", "play", "filter"]
    assert dumped["message"] == "为你找到周杰伦的 2 首歌"


def test_spec_loading_reply_with_steps() -> None:
    reply = parse(
        AppReply,
        {
            "steps": [
                {
                    "step_id": 1,
                    "tool": "http_request",
                    "args": {"method": "GET", "url": "https://x.example/search"},
                },
                {
                    "step_id": 2,
                    "tool": "file_write",
                    "args": {
                        "path": "workspace/recent.json",
                        "content": "{{step_1.result}}",
                    },
                },
            ],
            "view_type": "loading",
            "status": "ok",
            "data": {},
            "actions": [],
            "message": "正在处理...",
        },
    )
    assert [s.step_id for s in reply.steps] == [1, 2]
    assert reply.steps[1].args["content"] == "{{step_1.result}}"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"view_type": "text", "data": {}}, "status"),
        ({"status": "ok", "data": {}}, "view_type"),
        ({"status": "ok", "view_type": "text"}, "data"),
        ({"status": "maybe", "view_type": "text", "data": {}}, "status"),
        ({"status": "ok", "view_type": "text", "data": []}, "data"),
        (
            {
                "status": "ok",
                "view_type": "text",
                "data": {},
                "actions": [{"type": "button"}],
            },
            "actions.0.button.action_id",
        ),
        (
            {
                "status": "ok",
                "view_type": "text",
                "data": {},
                "actions": [{"type": "wiggle", "action_id": "a"}],
            },
            "actions.0",
        ),
        (
            {"status": "ok", "view_type": "text", "data": {}, "steps": [{"tool": "x"}]},
            "steps.0.step_id",
        ),
        (
            {
                "status": "ok",
                "view_type": "text",
                "data": {},
                "ui_commands": [{"op": "move", "id": "b", "x": 1}],
            },
            "ui_commands.0.move.y",
        ),
    ],
)
def test_wrong_shape_names_the_field(payload: dict, field: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        parse(AppReply, payload)
    assert info.value.code == "invalid_request"
    assert field in info.value.message


def test_every_action_type_parses() -> None:
    payloads = {
        "button": {"params": {"k": 1}},
        "submit_form": {"fields": [{"name": "keyword", "label": "关键词", "type": "text"}]},
        "select": {"options": ["标准", "高品", "无损"]},
        "checkbox": {"options": ["a", {"label": "B", "value": "b"}]},
        "radio": {"options": ["x", "y"]},
        "input": {},
        "link": {"href": "https://example.com"},
        "toggle": {"on": True},
        "slider": {"min": 0, "max": 10, "value": 3},
        "datetime": {"value": "2026-08-14T22:00"},
        "file": {"accept": "audio/*", "drop": True},
    }
    assert set(payloads) == set(ACTION_TYPES)
    actions = [
        {"type": t, "label": t, "action_id": f"a_{t}", **extra}
        for t, extra in payloads.items()
    ]
    reply = parse(
        AppReply, {"status": "ok", "view_type": "text", "data": {}, "actions": actions}
    )
    assert [a.type for a in reply.actions] == list(payloads)


def test_all_ui_commands_parse_and_unknown_op_is_refused() -> None:
    commands = [
        {"op": "move", "id": "btn_play", "x": 20, "y": 20},
        {"op": "resize", "id": "btn_play", "width": 100, "height": 40},
        {"op": "hide", "id": "btn_play"},
        {"op": "show", "id": "btn_play"},
        {"op": "change_color", "id": "btn_play", "color": "red"},
        {"op": "change_text", "id": "btn_play", "text": "Play"},
        {"op": "rotate", "id": "btn_play", "degrees": 45},
    ]
    assert [c["op"] for c in commands] == list(UI_OPS)
    reply = parse(
        AppReply, {"status": "ok", "view_type": "text", "data": {}, "ui_commands": commands}
    )
    assert [c.op for c in reply.ui_commands] == list(UI_OPS)
    with pytest.raises(InvalidRequest):
        parse(
            AppReply,
            {
                "status": "ok",
                "view_type": "text",
                "data": {},
                "ui_commands": [{"op": "explode", "id": "x"}],
            },
        )
    with pytest.raises(InvalidRequest, match="ui_commands.0.hide.x"):
        parse(
            AppReply,
            {
                "status": "ok",
                "view_type": "text",
                "data": {},
                "ui_commands": [{"op": "hide", "id": "x", "x": 1}],
            },
        )


def test_restore_takes_back_named_changes_and_the_snapshot_says_what_changed() -> None:
    """Undo of a moved control: `restore` puts it back in its place, in its row."""
    text = {"status": "ok", "view_type": "text", "data": {}}
    reply = parse(
        AppReply,
        {**text, "ui_commands": [{"op": "restore", "id": "btn_play", "changes": ["move"]}]},
    )
    assert reply.ui_commands[0].dump() == {
        "op": "restore",
        "id": "btn_play",
        "changes": ["move"],
    }
    everything = parse(AppReply, {**text, "ui_commands": [{"op": "restore", "id": "b"}]})
    assert everything.ui_commands[0].dump()["changes"] == []
    with pytest.raises(InvalidRequest, match="changes"):
        parse(
            AppReply,
            {**text, "ui_commands": [{"op": "restore", "id": "b", "changes": ["explode"]}]},
        )
    snapshot = parse(
        UISnapshot,
        {
            "elements": [
                {
                    "id": "btn_play_2",
                    "label": "播放",
                    "row": "晴天",
                    "window": "win_music_app",
                    "changed": ["move"],
                }
            ]
        },
    )
    element = snapshot.elements[0]
    assert (element.row, element.window, element.changed) == (
        "晴天",
        "win_music_app",
        ["move"],
    )
    assert parse(UISnapshot, {"elements": [{"id": "x"}]}).elements[0].changed == []


def test_context_matches_the_spec_sample_and_keeps_extras() -> None:
    ctx = parse(
        Context,
        {
            "role": "你是一个音乐小AI，负责搜索和播放音乐",
            "workdir": "/apps/music_app/workspace",
            "cwd_state": {
                "files": ["recent.json", "playlist.m3u"],
                "last_played": "周杰伦 - 七里香",
            },
            "available_tools": ["http_request", "file_read", "file_write", "shell_exec"],
            "session_id": "sess_abc123",
            "history_summary": "用户刚问过周杰伦的歌",
            "tool_results": {
                "step_1": {
                    "tool": "file_write",
                    "status": "ok",
                    "result": {"path": "workspace/recent.json", "size": 1024},
                }
            },
            "upstream": [{"task_id": "t1"}],
        },
    )
    assert ctx.tool_results is not None
    assert ctx.tool_results["step_1"].result == {
        "path": "workspace/recent.json",
        "size": 1024,
    }
    assert ctx.dump()["upstream"] == [{"task_id": "t1"}]


def test_handle_request_for_an_action() -> None:
    req = parse(
        HandleRequest,
        {
            "instruction": None,
            "context": {"role": "...", "workdir": "...", "available_tools": []},
            "action_request": {
                "action_id": "play_song",
                "params": {"song_id": "s_001"},
                "session_id": "sess_xxx",
            },
        },
    )
    assert req.instruction is None
    assert req.action_request == ActionRequest(
        action_id="play_song", params={"song_id": "s_001"}, session_id="sess_xxx"
    )


def test_manifest_defaults_and_required_fields() -> None:
    manifest = parse(
        Manifest, {"name": "音乐应用", "entry": "main.py", "handle_endpoint": "/handle"}
    )
    assert manifest.workdir == "workspace"
    assert manifest.icon
    with pytest.raises(InvalidRequest, match="entry"):
        parse(Manifest, {"name": "x"})
    with pytest.raises(InvalidRequest, match="handle_endpoint"):
        parse(Manifest, {"name": "x", "entry": "main.py", "handle_endpoint": "handle"})


def test_snapshot_of_the_spec() -> None:
    snap = parse(
        UISnapshot,
        {
            "elements": [
                {
                    "id": "btn_play",
                    "type": "button",
                    "label": "播放",
                    "x": 100,
                    "y": 200,
                    "width": 80,
                    "height": 36,
                    "visible": True,
                },
                {
                    "id": "panel_chat",
                    "type": "panel",
                    "x": 20,
                    "y": 50,
                    "width": 300,
                    "height": 400,
                },
            ]
        },
    )
    assert snap.elements[1].visible is True
    assert snap.viewport is None


def test_error_reply_is_a_valid_view() -> None:
    reply = AppReply.error("app_unreachable", "音乐应用没有响应")
    assert reply.view_type == "error"
    assert reply.data["code"] == "app_unreachable"
    assert parse(AppReply, reply.dump()) == reply


def test_tool_result_and_step_shapes() -> None:
    assert (
        parse(ToolResult, {"tool": "file_read", "status": "ok", "result": "你好"}).result
        == "你好"
    )
    with pytest.raises(InvalidRequest, match="status"):
        parse(ToolResult, {"tool": "file_read", "status": "fine"})
    assert parse(Step, {"step_id": 3, "tool": "notify"}).args == {}


def test_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_")
        and getattr(value, "__module__", None) == protocol.__name__
    }
    missing = public - set(protocol.__all__)
    assert not missing, f"add to __all__: {sorted(missing)}"


def test_step_outcome_reads_ok_failed_and_missing_steps() -> None:
    from aios_sdk import step_outcome

    results = {
        "step_1": {"tool": "file_read", "status": "ok", "result": "你好"},
        "step_2": {
            "tool": "shell_exec",
            "status": "error",
            "error": "timed out",
            "code": "tool_timeout",
        },
        "step_3": {"tool": "cache_get", "status": "error", "code": "denied_by_user"},
    }
    assert step_outcome(results, 1) == (True, "你好", "")
    assert step_outcome(results, 2) == (False, None, "timed out")
    assert step_outcome(results, 3) == (False, None, "denied_by_user")
    assert step_outcome(results, 4) == (False, None, "没有执行")


def test_read_role_reads_role_md_beside_the_module(tmp_path) -> None:
    from aios_sdk import read_role

    (tmp_path / "role.md").write_text("  你是一个音乐小AI\n", encoding="utf-8")
    assert read_role(str(tmp_path / "main.py")) == "你是一个音乐小AI"
