"""The system-control app's phrase resolution and replies, without processes.

Chinese and English phrasings, against a snapshot shaped like the desktop's, become
the right S-82 UI commands (F-3: "把播放按钮移到左上角" → move btn_play to (20, 20));
window operations, status questions, failures and undo are covered too, and every
answer in the user's language (`context["language"]`: zh-CN, en-US). The
status answers come from the executor's `system_info` tool, read here from the real
machine (`read_system`).
"""

from __future__ import annotations

from typing import Any

import pytest

from aios_protocol.messages import AppReply, parse
from aios_sdk import Turn
from apps.system_agent.flows import SystemFlows
from apps.system_agent.names import find_element
from apps.system_agent.phrases import has_cjk, parse_request
from apps.system_agent.status import status_view
from apps.system_agent.targets import (
    plan_ui,
    plan_window,
    position_point,
    resolve_app,
)
from executor.tools.system_info import read_system
from tests.apps.doubles import PlanningAgent, failed, ok

SNAPSHOT: dict[str, Any] = {
    "viewport": {"width": 1280, "height": 800},
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
            "id": "btn_pause",
            "type": "button",
            "label": "暂停",
            "x": 190,
            "y": 200,
            "width": 80,
            "height": 36,
            "visible": True,
        },
        {
            "id": "btn_next",
            "type": "button",
            "label": "下一首",
            "x": 280,
            "y": 200,
            "width": 80,
            "height": 36,
            "visible": True,
        },
        {
            "id": "btn_search",
            "type": "input",
            "label": "搜索",
            "x": 100,
            "y": 100,
            "width": 200,
            "height": 30,
            "visible": True,
        },
        {
            "id": "btn_filter",
            "type": "input",
            "label": "筛选",
            "x": 100,
            "y": 140,
            "width": 200,
            "height": 30,
            "visible": True,
        },
        {
            "id": "taskbar",
            "type": "taskbar",
            "label": "任务栏",
            "x": 0,
            "y": 752,
            "width": 1280,
            "height": 48,
            "visible": True,
        },
        {
            "id": "command_bar",
            "type": "input",
            "label": "输入指令",
            "x": 400,
            "y": 760,
            "width": 480,
            "height": 32,
            "visible": True,
        },
        {
            "id": "clock",
            "type": "text",
            "label": "12:00",
            "x": 1200,
            "y": 760,
            "width": 60,
            "height": 30,
            "visible": True,
        },
        {
            "id": "win_music_app",
            "type": "window",
            "label": "音乐应用",
            "x": 50,
            "y": 50,
            "width": 600,
            "height": 500,
            "visible": True,
        },
        {
            "id": "win_code_app",
            "type": "window",
            "label": "代码应用",
            "x": 700,
            "y": 50,
            "width": 500,
            "height": 500,
            "visible": True,
        },
    ],
}


ZH = Turn(context={"language": "zh-CN"})
EN = Turn(context={"language": "en-US"})
IN_ENGLISH = {"language": "en-US"}


# the status answers read the layout too: is there a change to offer to undo?
LAYOUT_STEP = {
    "step_id": 2,
    "tool": "cache_get",
    "args": {"key": "ui_snapshot", "namespace": "system"},
}


def commands_for(text: str, snapshot: dict[str, Any] = SNAPSHOT) -> list[dict[str, Any]]:
    request = parse_request(text)
    outcome = (
        plan_window(request, snapshot, ZH)
        if request.op == "window"
        else plan_ui(request, snapshot, ZH)
    )
    assert outcome.ok, f"{text!r}: {outcome.message}"
    return outcome.commands


PHRASINGS: list[tuple[str, dict[str, Any]]] = [
    # F-3 and other moves
    ("把播放按钮移到左上角", {"op": "move", "id": "btn_play", "x": 20, "y": 20}),
    (
        "move the play button to the top-left",
        {"op": "move", "id": "btn_play", "x": 20, "y": 20},
    ),
    ("把播放按钮移到右上角", {"op": "move", "id": "btn_play", "x": 1180, "y": 20}),
    ("把播放按钮移到左下角", {"op": "move", "id": "btn_play", "x": 20, "y": 744}),
    ("把播放按钮移到右下角", {"op": "move", "id": "btn_play", "x": 1180, "y": 744}),
    ("把播放按钮放到中间", {"op": "move", "id": "btn_play", "x": 600, "y": 382}),
    (
        "put the play button in the center",
        {"op": "move", "id": "btn_play", "x": 600, "y": 382},
    ),
    ("把命令栏移到顶部", {"op": "move", "id": "command_bar", "x": 400, "y": 20}),
    (
        "move the command bar to the bottom right",
        {"op": "move", "id": "command_bar", "x": 780, "y": 748},
    ),
    ("把下一首按钮移到(300, 120)", {"op": "move", "id": "btn_next", "x": 300, "y": 120}),
    ("把播放按钮向右移动30像素", {"op": "move", "id": "btn_play", "x": 130, "y": 200}),
    (
        "move the play button left by 40 px",
        {"op": "move", "id": "btn_play", "x": 60, "y": 200},
    ),
    ("把音乐窗口移到左上角", {"op": "move", "id": "win_music_app", "x": 20, "y": 20}),
    # sizes
    ("把搜索框变大一点", {"op": "resize", "id": "btn_search", "width": 250, "height": 38}),
    (
        "make the search box bigger",
        {"op": "resize", "id": "btn_search", "width": 250, "height": 38},
    ),
    ("把播放按钮缩小", {"op": "resize", "id": "btn_play", "width": 64, "height": 29}),
    (
        "make the play button smaller",
        {"op": "resize", "id": "btn_play", "width": 64, "height": 29},
    ),
    ("把筛选框放大两倍", {"op": "resize", "id": "btn_filter", "width": 400, "height": 60}),
    (
        "把播放按钮调成200x100",
        {"op": "resize", "id": "btn_play", "width": 200, "height": 100},
    ),
    # colours
    ("把播放按钮改成红色", {"op": "change_color", "id": "btn_play", "color": "red"}),
    ("make the play button red", {"op": "change_color", "id": "btn_play", "color": "red"}),
    ("把任务栏变成蓝色", {"op": "change_color", "id": "taskbar", "color": "blue"}),
    (
        "turn the pause button green",
        {"op": "change_color", "id": "btn_pause", "color": "green"},
    ),
    (
        "把播放键的颜色改成#ff8800",
        {"op": "change_color", "id": "btn_play", "color": "#ff8800"},
    ),
    # angles
    ("把播放按钮旋转45度", {"op": "rotate", "id": "btn_play", "degrees": 45}),
    (
        "rotate the play button 90 degrees",
        {"op": "rotate", "id": "btn_play", "degrees": 90},
    ),
    ("把暂停按钮逆时针旋转30度", {"op": "rotate", "id": "btn_pause", "degrees": -30}),
    ("把播放按钮转回来", {"op": "rotate", "id": "btn_play", "degrees": 0}),
    # show / hide
    ("隐藏任务栏", {"op": "hide", "id": "taskbar"}),
    ("hide the taskbar", {"op": "hide", "id": "taskbar"}),
    ("显示任务栏", {"op": "show", "id": "taskbar"}),
    ("show the task bar", {"op": "show", "id": "taskbar"}),
    ("把时钟隐藏", {"op": "hide", "id": "clock"}),
    ("hide the next button", {"op": "hide", "id": "btn_next"}),
    # text
    ("把播放按钮的文字改成开始", {"op": "change_text", "id": "btn_play", "text": "开始"}),
    (
        "change the text of the play button to Start",
        {"op": "change_text", "id": "btn_play", "text": "Start"},
    ),
    (
        "rename the pause button to Hold",
        {"op": "change_text", "id": "btn_pause", "text": "Hold"},
    ),
    # windows
    ("关闭音乐窗口", {"op": "close_window", "id": "music_app"}),
    ("close the music window", {"op": "close_window", "id": "music_app"}),
    ("打开代码应用", {"op": "open_window", "id": "code_app"}),
    ("open the code app", {"op": "open_window", "id": "code_app"}),
    ("切换到音乐应用", {"op": "focus_window", "id": "music_app"}),
    ("focus the code window", {"op": "focus_window", "id": "code_app"}),
    ("最大化音乐窗口", {"op": "maximize_window", "id": "music_app"}),
    ("maximize the music window", {"op": "maximize_window", "id": "music_app"}),
    ("把音乐窗口最小化", {"op": "minimize_window", "id": "music_app"}),
    ("minimise the code window", {"op": "minimize_window", "id": "code_app"}),
    ("打开系统控制", {"op": "open_window", "id": "system_agent"}),
]


@pytest.mark.parametrize(("text", "command"), PHRASINGS, ids=[p[0] for p in PHRASINGS])
def test_phrasing_becomes_the_right_command(text: str, command: dict[str, Any]) -> None:
    assert commands_for(text) == [command]


def test_there_are_enough_phrasings_in_both_languages() -> None:
    chinese = [t for t, _ in PHRASINGS if has_cjk(t)]
    english = [t for t, _ in PHRASINGS if not has_cjk(t)]
    assert len(PHRASINGS) >= 20 and len(chinese) >= 10 and len(english) >= 10


def test_every_command_is_a_valid_protocol_ui_command() -> None:
    commands = [c for text, _ in PHRASINGS for c in commands_for(text)]
    reply = parse(
        AppReply, {"status": "ok", "view_type": "text", "data": {}, "ui_commands": commands}
    )
    assert len(reply.ui_commands) == len(PHRASINGS)


def test_f3_message_is_the_one_to_speak() -> None:
    outcome = plan_ui(parse_request("把播放按钮移到左上角"), SNAPSHOT, ZH)
    assert outcome.message == "已将播放按钮移到左上角"
    english = plan_ui(parse_request("move the play button to the top-left"), SNAPSHOT, EN)
    assert english.message == "Moved the play button to the top-left"


def test_positions_keep_a_margin_inside_the_viewport() -> None:
    element = {"x": 5, "y": 5, "width": 100, "height": 50}
    viewport = (1000.0, 600.0)
    assert position_point("top-left", element, viewport) == (20, 20)
    assert position_point("top-right", element, viewport) == (880, 20)
    assert position_point("bottom-left", element, viewport) == (20, 530)
    assert position_point("bottom-right", element, viewport) == (880, 530)
    assert position_point("center", element, viewport) == (450, 275)
    assert position_point("top", element, viewport) == (5, 20)
    assert position_point("left", element, viewport) == (20, 5)
    # no viewport in the snapshot: a default desktop size is assumed
    bare = {"elements": SNAPSHOT["elements"]}
    assert commands_for("把播放按钮移到左上角", bare)[0]["x"] == 20


def test_resolution_by_id_label_and_translation() -> None:
    elements = SNAPSHOT["elements"]
    for phrase, ident in [
        ("btn_play", "btn_play"),
        ("播放", "btn_play"),
        ("the play button", "btn_play"),
        ("搜索框", "btn_search"),
        ("search box", "btn_search"),
        ("任务栏", "taskbar"),
        ("音乐窗口", "win_music_app"),
        ("下一首按钮", "btn_next"),
        ("播放按扭", "btn_play"),  # a typo still resolves, fuzzily
    ]:
        best = find_element(phrase, elements).element
        assert best is not None and best["id"] == ident, phrase
    assert find_element("天气预报按钮", elements).elements == []
    assert resolve_app("音乐窗口") == ("music_app", "音乐应用")
    assert resolve_app("the code app") == ("code_app", "代码应用")
    assert resolve_app("天气") is None


def test_unknown_element_and_missing_snapshot_give_clear_answers() -> None:
    outcome = plan_ui(parse_request("把天气按钮移到左上角"), SNAPSHOT, ZH)
    assert not outcome.ok and "桌面上没有“天气按钮”" in outcome.message
    no_snapshot = plan_ui(parse_request("把播放按钮移到左上角"), None, ZH)
    assert not no_snapshot.ok and "请先打开桌面" in no_snapshot.message
    nowhere = plan_ui(parse_request("移动播放按钮"), SNAPSHOT, ZH)
    assert not nowhere.ok and "移到哪里" in nowhere.message
    closing_the_taskbar = plan_window(parse_request("关闭任务栏"), SNAPSHOT, ZH)
    assert closing_the_taskbar.commands == [{"op": "hide", "id": "taskbar"}]


@pytest.mark.parametrize(
    ("text", "view", "topic"),
    [
        ("查看系统状态", "dashboard", ""),
        ("显示系统状态", "dashboard", ""),
        ("CPU占用多少", "dashboard", "cpu"),
        ("内存还剩多少", "dashboard", "memory"),
        ("列出进程", "table", "process"),
        ("show system status", "dashboard", ""),
        ("show the cpu usage as a chart", "chart", "cpu"),
        ("disk usage", "dashboard", "disk"),
    ],
)
def test_status_questions(text: str, view: str, topic: str) -> None:
    request = parse_request(text)
    assert (request.op, request.status_view, request.status_topic) == (
        "status",
        view,
        topic,
    )


# ------------------------------------------------------------------ the flows


def test_f3_plans_cache_get_of_the_system_snapshot() -> None:
    flows = SystemFlows(PlanningAgent())
    plan = flows.handle("把播放按钮移到左上角", {})
    assert plan["view_type"] == "loading"
    assert plan["steps"] == [
        {
            "step_id": 1,
            "tool": "cache_get",
            "args": {"key": "ui_snapshot", "namespace": "system"},
        }
    ]
    reply = flows.handle(
        "把播放按钮移到左上角", {"tool_results": {"step_1": ok("cache_get", SNAPSHOT)}}
    )
    assert reply["view_type"] == "text"
    assert reply["data"]["content"] == "已将播放按钮移到左上角"
    assert reply["message"] == "已将播放按钮移到左上角"
    assert reply["ui_commands"] == [{"op": "move", "id": "btn_play", "x": 20, "y": 20}]
    undo = reply["actions"][0]
    assert (undo["action_id"], undo["label"]) == ("undo", "撤销")
    # undo takes back the change this answer made (it reads the snapshot's history)
    assert undo["params"] == {"change": [{"op": "move", "id": "btn_play"}]}
    undone = flows.handle(None, {}, {"action_id": "undo", "params": undo["params"]})
    assert undone["steps"][0]["tool"] == "cache_get"


def test_flows_answer_errors_as_text() -> None:
    flows = SystemFlows(PlanningAgent())
    missing = flows.handle(
        "把播放按钮移到左上角", {"tool_results": {"step_1": ok("cache_get", None)}}
    )
    assert missing["status"] == "error" and "请先打开桌面" in missing["message"]
    assert "ui_commands" not in missing
    help_reply = flows.handle("今天天气怎么样", {})
    assert (
        help_reply["view_type"] == "text"
        and "把播放按钮移到左上角" in help_reply["data"]["content"]
    )
    broken = flows.handle(
        "查看系统状态", {"tool_results": {"step_1": failed("system_info", "boom")}}
    )
    assert broken["status"] == "error" and "系统状态" in broken["message"]
    assert "boom" not in broken["message"] and broken["detail"] == "boom"


def test_help_is_in_the_users_language_and_its_examples_work() -> None:
    flows = SystemFlows(PlanningAgent())
    chinese = flows.handle("今天天气怎么样", {})
    english = flows.handle("what is the weather today", IN_ENGLISH)
    zh_text, en_text = chinese["data"]["content"], english["data"]["content"]
    assert "· 把播放按钮移到左上角\n" in zh_text and "move the play button" not in zh_text
    assert "· move the play button to the top-left\n" in en_text and not has_cjk(en_text)
    assert chinese["message"].startswith("没听懂这条指令。我可以")
    assert english["message"].startswith("I did not understand that. I can")
    # nothing was done: marked so, as every app's help is, never a success
    assert chinese["notice"] == english["notice"] == "warning"
    for text in (zh_text, en_text):
        examples = [
            example.strip()
            for line in text.splitlines()[1:]
            for example in line.lstrip("· ").split(" / ")
        ]
        assert len(examples) >= 10
        for example in examples:
            assert parse_request(example).op != "unknown", example


def test_the_agent_and_its_manifest_share_one_icon() -> None:
    import json

    from apps.system_agent.agent import SystemAgent
    from tests.procs import ROOT

    manifest = json.loads((ROOT / "apps/system_agent/manifest.json").read_text("utf-8"))
    assert SystemAgent.icon == manifest["icon"] == "🎛️"


def test_a_question_about_one_number_is_answered_with_that_number() -> None:
    status = read_system("overview", 3)
    flows = SystemFlows(PlanningAgent())
    results = {"tool_results": {"step_1": ok("system_info", status)}}
    reply = flows.handle("现在内存占用多少", results)
    assert reply["view_type"] == "card"
    card = reply["data"]["cards"][0]
    assert card["title"] == f"内存占用 {status['memory']['percent']}%"
    assert f"{status['memory']['total_gb']} GB" in card["desc"]
    overview = next(a for a in reply["actions"] if a["label"] == "系统总览")
    assert overview["params"] == {"view": "dashboard", "topic": ""}
    assert flows.handle("查看系统状态", results)["view_type"] == "dashboard"
    parse(AppReply, reply)


def test_the_dashboard_charts_percentages_on_a_full_scale() -> None:
    dashboard = status_view(read_system("overview", 3), ZH)
    chart = next(w for w in dashboard["data"]["widgets"] if w["type"] == "chart")
    assert chart["title"] == "资源占用 (%)" and "title" not in chart["data"]  # said once
    assert chart["data"]["max"] == 100


def test_status_flow_and_views_from_the_real_machine() -> None:
    status = read_system("overview", 3)
    assert 0 <= status["cpu"]["percent"] <= 100
    assert status["memory"]["total_gb"] > 0
    assert status["disk"]["total_gb"] > 0
    assert 1 <= len(status["processes"]) <= 3
    assert {"pid", "name", "cpu", "memory"} <= set(status["processes"][0])
    flows = SystemFlows(PlanningAgent())
    plan = flows.handle("查看系统状态", {})
    assert plan["steps"] == [
        {"step_id": 1, "tool": "system_info", "args": {"what": "overview", "limit": 8}},
        LAYOUT_STEP,
    ]
    reply = flows.handle(
        "查看系统状态", {"tool_results": {"step_1": ok("system_info", status)}}
    )
    assert reply["view_type"] == "dashboard"
    assert {w["type"] for w in reply["data"]["widgets"]} == {"text", "chart", "table"}
    assert reply["actions"][0]["action_id"] == "refresh"
    assert reply["message"].startswith("CPU ")
    table = status_view(status, ZH, "table", "process")
    assert table["data"]["columns"] == ["PID", "进程", "CPU %", "内存 %", "用户"]
    assert len(table["data"]["rows"]) == len(status["processes"])
    count = status["process_count"]
    assert table["data"]["title"] == f"进程（按 CPU 排序，显示前 3 个，共 {count} 个）"
    chart = status_view(status, ZH, "chart", "cpu")
    assert (
        len(chart["data"]["labels"])
        == len(chart["data"]["values"])
        == len(status["cpu"]["per_cpu"])
    )
    refresh = flows.handle(
        None,
        {"tool_results": {"step_1": ok("system_info", status)}},
        {"action_id": "refresh", "params": {"view": "table", "topic": "process"}},
    )
    assert refresh["view_type"] == "table"
    for view in (reply, table, chart):
        parse(AppReply, view)


def test_each_status_question_asks_the_computer_for_what_it_shows() -> None:
    """The app asks the executor's `system_info` (it runs confined)
    for the process list, the one figure, or the overview; every answer shape makes
    a view whose sentence fits the data it has."""
    flows = SystemFlows(PlanningAgent())
    for said, args in (
        ("列出进程", {"what": "processes", "limit": 500}),
        ("list processes", {"what": "processes", "limit": 500}),
        ("系统状态表格", {"what": "processes", "limit": 500}),
        ("现在内存占用多少", {"what": "memory"}),
        ("磁盘还剩多少空间", {"what": "disk"}),
        ("CPU占用多少", {"what": "cpu"}),
        ("CPU图表", {"what": "cpu"}),
        ("内存图表", {"what": "overview", "limit": 8}),
        ("查看系统状态", {"what": "overview", "limit": 8}),
    ):
        plan = flows.handle(said, {})
        assert plan["steps"] == [
            {"step_id": 1, "tool": "system_info", "args": args},
            LAYOUT_STEP,
        ], said
        answer = read_system(args["what"], args.get("limit"))
        reply = flows.handle(said, {"tool_results": {"step_1": ok("system_info", answer)}})
        assert reply["status"] == "ok", (said, reply)
        parse(AppReply, reply)
    listed = read_system("processes", 500)
    table = flows.handle(
        "系统状态表格", {"tool_results": {"step_1": ok("system_info", listed)}}
    )
    assert table["view_type"] == "table"
    assert table["message"].startswith(f"共 {listed['process_count']} 个进程，最忙的是 ")
    english = flows.handle(
        "list processes",
        {"tool_results": {"step_1": ok("system_info", listed)}, **IN_ENGLISH},
    )
    assert english["message"].startswith(f"{listed['process_count']} processes")
    assert english["data"]["columns"] == ["PID", "Process", "CPU %", "Memory %", "User"]
    everything = {**listed, "processes": listed["processes"][:2], "process_count": 2}
    assert (
        status_view(everything, ZH, "table", "process")["data"]["title"]
        == "进程（按 CPU 排序）"
    )


# The shape desktop/web/snapshot.js sends: action controls btn_<action_id> (then
# btn_<id>_2 …) typed by action type, windows win_<app>, taskbar icons task_<app>,
# the command bar and its input, the start menu, the clock.
DESKTOP_SNAPSHOT: dict[str, Any] = {
    "viewport": {"width": 1440, "height": 900},
    "elements": [
        {
            "id": "start_menu",
            "type": "start_menu",
            "label": "开始菜单",
            "x": 0,
            "y": 0,
            "width": 0,
            "height": 0,
            "visible": False,
        },
        {
            "id": "taskbar",
            "type": "taskbar",
            "label": "任务栏",
            "x": 0,
            "y": 852,
            "width": 1440,
            "height": 48,
            "visible": True,
        },
        {
            "id": "start_button",
            "type": "button",
            "label": "开始",
            "x": 4,
            "y": 858,
            "width": 40,
            "height": 36,
            "visible": True,
        },
        {
            "id": "command_bar",
            "type": "command_bar",
            "label": "指令栏",
            "x": 300,
            "y": 858,
            "width": 600,
            "height": 36,
            "visible": True,
        },
        {
            "id": "command_input",
            "type": "input",
            "label": "指令输入框",
            "x": 304,
            "y": 860,
            "width": 520,
            "height": 32,
            "visible": True,
        },
        {
            "id": "mic_button",
            "type": "button",
            "label": "麦克风",
            "x": 830,
            "y": 860,
            "width": 32,
            "height": 32,
            "visible": True,
        },
        {
            "id": "clock",
            "type": "clock",
            "label": "时钟",
            "x": 1370,
            "y": 858,
            "width": 60,
            "height": 36,
            "visible": True,
        },
        {
            "id": "task_music_app",
            "type": "taskbar_icon",
            "label": "音乐应用",
            "x": 60,
            "y": 858,
            "width": 36,
            "height": 36,
            "visible": True,
        },
        {
            "id": "win_music_app",
            "type": "window",
            "label": "音乐应用",
            "x": 80,
            "y": 60,
            "width": 640,
            "height": 480,
            "visible": True,
        },
        {
            "id": "btn_play",
            "type": "button",
            "label": "播放",
            "x": 100,
            "y": 200,
            "width": 64,
            "height": 30,
            "visible": True,
        },
        {
            "id": "btn_play_2",
            "type": "button",
            "label": "播放",
            "x": 100,
            "y": 240,
            "width": 64,
            "height": 30,
            "visible": True,
        },
        {
            "id": "btn_filter",
            "type": "input",
            "label": "筛选",
            "x": 100,
            "y": 480,
            "width": 200,
            "height": 30,
            "visible": True,
        },
        {
            "id": "btn_set_quality",
            "type": "select",
            "label": "音质",
            "x": 320,
            "y": 480,
            "width": 120,
            "height": 30,
            "visible": True,
        },
    ],
}


@pytest.mark.parametrize(
    ("text", "command"),
    [
        (
            "把第二个播放按钮移到左上角",
            {"op": "move", "id": "btn_play_2", "x": 20, "y": 20},
        ),
        ("把搜索框移到顶部", {"op": "move", "id": "command_bar", "x": 300, "y": 20}),
        (
            "把指令栏变大一点",
            {"op": "resize", "id": "command_bar", "width": 750, "height": 45},
        ),
        ("把筛选框改成黄色", {"op": "change_color", "id": "btn_filter", "color": "yellow"}),
        ("hide the quality select", {"op": "hide", "id": "btn_set_quality"}),
        ("显示开始菜单", {"op": "show", "id": "start_menu"}),
        ("把时钟移到右上角", {"op": "move", "id": "clock", "x": 1360, "y": 20}),
        ("把麦克风按钮隐藏", {"op": "hide", "id": "mic_button"}),
        ("关闭音乐窗口", {"op": "close_window", "id": "music_app"}),
    ],
)
def test_phrasings_against_the_desktops_snapshot_shape(
    text: str, command: dict[str, Any]
) -> None:
    assert commands_for(text, DESKTOP_SNAPSHOT) == [command]


# ------------------------------------------------------------------ in English


def test_answers_follow_the_users_language_not_the_instructions() -> None:
    snapshot = {"tool_results": {"step_1": ok("cache_get", SNAPSHOT)}}
    flows = SystemFlows(PlanningAgent())
    english = flows.handle(
        "move the play button to the top-left", {**snapshot, **IN_ENGLISH}
    )
    assert english["status"] == "ok" and "notice" not in english
    assert english["message"] == "Moved the play button to the top-left"
    assert english["ui_commands"] == [{"op": "move", "id": "btn_play", "x": 20, "y": 20}]
    assert [a["label"] for a in english["actions"]] == ["Undo"]
    # said in Chinese on an English desktop: the element's label names it
    said_in_chinese = flows.handle("把播放按钮改成红色", {**snapshot, **IN_ENGLISH})
    assert said_in_chinese["message"] == "Made 播放 red"
    # said in English on a Chinese desktop: a Chinese answer, the same commands
    for context in ({**snapshot, "language": "zh-CN"}, snapshot):
        reply = flows.handle("make the play button red", context)
        assert reply["message"] == "已将播放改成红色"
        assert reply["ui_commands"] == [
            {"op": "change_color", "id": "btn_play", "color": "red"}
        ]
        assert reply["actions"][0]["action_id"] == "undo"
    opened = flows.handle("打开代码应用", {**snapshot, **IN_ENGLISH})
    assert opened["message"] == "Opened Code"
    assert flows.handle("open the code app", snapshot)["message"] == "已打开代码应用"


def test_failures_in_english_keep_their_status_and_their_detail() -> None:
    flows = SystemFlows(PlanningAgent())
    no_snapshot = {"tool_results": {"step_1": ok("cache_get", None)}}
    missing = flows.handle("把播放按钮移到左上角", {**no_snapshot, **IN_ENGLISH})
    assert missing["status"] == "error" and "ui_commands" not in missing
    assert (
        missing["message"]
        == "I do not know the desktop's layout yet: open the desktop first."
    )
    unknown = flows.handle(
        "move the weather button to the top-left",
        {"tool_results": {"step_1": ok("cache_get", SNAPSHOT)}, **IN_ENGLISH},
    )
    assert (unknown["status"], unknown["notice"]) == ("ok", "info")  # said, not failed
    assert 'There is no "weather button"' in unknown["message"]
    broken = {"tool_results": {"step_1": failed("system_info", "psutil: boom")}}
    for context, said in (
        ({**broken, **IN_ENGLISH}, "Cannot read the system status right now"),
        ({**broken, "language": "zh-CN"}, "暂时读不到系统状态"),
    ):
        reply = flows.handle("查看系统状态", context)
        assert reply["status"] == "error" and "notice" not in reply
        assert reply["message"].startswith(said) and "boom" not in reply["message"]
        assert reply["detail"] == "psutil: boom"
    assert not has_cjk(flows.handle("查看系统状态", {**broken, **IN_ENGLISH})["message"])
    nothing = flows.handle(
        None,
        {"tool_results": {"step_1": ok("cache_get", SNAPSHOT)}, **IN_ENGLISH},
        {"action_id": "undo"},
    )
    assert nothing["message"] == "There is no change to the layout to undo."


def test_the_dashboard_and_its_labels_in_english() -> None:
    status = read_system("overview", 3)
    results = {"tool_results": {"step_1": ok("system_info", status)}}
    flows = SystemFlows(PlanningAgent())
    plan = flows.handle("show system status", IN_ENGLISH)
    assert plan["message"] == "Reading the system status…"
    dashboard = flows.handle("show system status", {**results, **IN_ENGLISH})
    assert dashboard["view_type"] == "dashboard" and dashboard["status"] == "ok"
    assert dashboard["data"]["title"].startswith("System status · ")
    titles = [w["title"] for w in dashboard["data"]["widgets"]]
    assert titles == ["CPU", "Memory", "Disk", "Usage (%)", "Busiest processes"]
    chart = dashboard["data"]["widgets"][3]["data"]
    assert chart["labels"] == ["CPU", "Memory", "Disk"]
    table = dashboard["data"]["widgets"][4]["data"]
    assert table["columns"] == ["PID", "Process", "CPU %", "Memory %"]
    assert dashboard["data"]["widgets"][0]["data"]["content"].endswith(" cores")
    labels = [a["label"] for a in dashboard["actions"]]
    assert labels == ["Refresh", "Processes", "Help"]
    assert dashboard["message"].startswith("CPU ") and ", memory " in dashboard["message"]
    card = flows.handle("how much memory is used", {**results, **IN_ENGLISH})
    assert card["data"]["cards"][0]["title"] == f"Memory {status['memory']['percent']}%"
    assert "GB used of" in card["data"]["cards"][0]["desc"]
    assert [a["label"] for a in card["actions"]] == ["Refresh", "Overview", "Help"]
    for reply in (dashboard, card):
        texts = [reply["message"], reply["data"].get("title", ""), *labels]
        texts += [w["title"] for w in reply["data"].get("widgets", [])]
        texts += [c["title"] + c["desc"] for c in reply["data"].get("cards", [])]
        assert not any(has_cjk(t) for t in texts), texts
        parse(AppReply, reply)
    # the same call on a Chinese desktop is as it was
    chinese = flows.handle("查看系统状态", {**results, "language": "zh-CN"})
    assert [w["title"] for w in chinese["data"]["widgets"]] == [
        "CPU",
        "内存",
        "磁盘",
        "资源占用 (%)",
        "最忙的进程",
    ]
    assert [a["label"] for a in chinese["actions"]] == ["刷新", "进程列表", "帮助"]
    assert chinese["data"]["title"].startswith("系统状态 · ")


# a reading of the computer, as `system_info` answers it
BUSY = {
    "time": "2026-12-04 15:05:48",
    "cpu": {
        "percent": 52.5,
        "per_cpu": [100.0, 5.0],
        "count": 2,
        "load": [1.35, 1.83, 2.31],
    },
}


@pytest.mark.parametrize(
    ("turn", "lines"),
    [
        (
            ZH,
            [
                "共 2 个核心",
                "平均负载（正在运行或等待 CPU 的任务数）：",
                "近 1 分钟 1.35，近 5 分钟 1.83，近 15 分钟 2.31",
                "读取于 2026-12-04 15:05:48",
            ],
        ),
        (
            EN,
            [
                "2 cores",
                "Average load (tasks running or waiting for the CPU):",
                "1.35 over the last minute, 1.83 over 5 minutes, 2.31 over 15 minutes",
                "Read at 2026-12-04 15:05:48",
            ],
        ),
    ],
    ids=["zh-CN", "en-US"],
)
def test_the_cpu_card_says_what_the_load_is(turn: Turn, lines: list[str]) -> None:
    """The load was an unexplained "负载 1.35 / 1.83 / 2.31"; it is said in
    words, each fact on a line of its own, in the reader's language only."""
    card = status_view(BUSY, turn, "dashboard", "cpu")["data"]["cards"][0]
    assert card["desc"].split("\n") == lines
    assert "/" not in card["desc"]


def test_the_per_core_chart_names_each_core() -> None:
    chart = status_view(BUSY, ZH, "chart", "cpu")
    assert chart["data"]["labels"] == ["核心 1", "核心 2"]
    chart = status_view(BUSY, EN, "chart", "cpu")
    assert chart["data"]["labels"] == ["Core 1", "Core 2"]


@pytest.mark.parametrize("text", ["系统总览", "overview", "show the system overview"])
def test_the_overview_is_asked_for_by_its_buttons_name(text: str) -> None:
    """The buttons say 系统总览 / Overview: typing that shows the overview."""
    request = parse_request(text)
    assert (request.op, request.status_view, request.status_topic) == (
        "status",
        "dashboard",
        "",
    )


@pytest.mark.parametrize(
    "text",
    [
        "move the play button to the top left corner",
        "move the play button to the top-left corner",
        "put the play button in the upper left corner",
    ],
)
def test_a_corner_said_with_its_word_corner_moves_the_control(text: str) -> None:
    request = parse_request(text)
    assert (request.target, request.position) == ("play button", "top-left")
    assert commands_for(text)
