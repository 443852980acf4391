"""Without processes: a name resolves to the element a person means.

An exact label or role first, a fuzzy name only when nothing has the exact one;
several candidates → the answer asks which and lists them (a button each that does
it to that one); none → it says there is none. Never a success for a different
element. Snapshots shaped like the desktop's with the music window open: on an empty
library (最近播放, 筛选, 音质, 搜索, no 播放) and on a library of two songs (a 播放 in
each song's row), in Chinese and in English; an empty library's answer is that
there are no songs yet, with the music window's add-songs control offered, and a
play/pause toggle is the play button under either of its names. Undo takes back the
desktop's latest change, as the snapshot's history lists it; the 撤销 of an answer
takes back only that answer's change, and an answer that changed nothing offers
the latest change by name; a second control moved into a corner
another holds goes beside it; the desktop's own parts (background, taskbar, a
window's title bar) are named like controls.
"""

from __future__ import annotations

from typing import Any

import pytest

from aios_protocol.messages import AppReply, parse
from aios_sdk import Turn
from apps.system_agent.flows import SystemFlows
from apps.system_agent.names import find_element
from apps.system_agent.phrases import parse_request
from apps.system_agent.targets import plan_ui
from tests.apps.doubles import PlanningAgent, ok

ZH = Turn(context={"language": "zh-CN"})
EN = Turn(context={"language": "en-US"})

LABELS = {
    "zh-CN": {
        "play": "播放",
        "recent": "最近播放",
        "filter": "筛选",
        "quality": "音质",
        "search": "搜索",
        "music": "音乐应用",
        "songs": ("七里香", "晴天"),
        "add": "添加歌曲",
        "pause": "暂停",
    },
    "en-US": {
        "play": "Play",
        "recent": "Recently played",
        "filter": "Filter",
        "quality": "Quality",
        "search": "Search",
        "music": "Music",
        "songs": ("Morning Light", "Evening Rain"),
        "add": "Add songs",
        "pause": "Pause",
    },
}


def element(ident: str, kind: str, label: str, y: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": ident,
        "type": kind,
        "label": label,
        "x": 140,
        "y": y,
        "width": 44,
        "height": 24,
        "visible": True,
        **extra,
    }


def music_snapshot(language: str, songs: int) -> dict[str, Any]:
    """The desktop's snapshot with the music window open on its list of `songs` songs."""
    words = LABELS[language]
    inside = {"window": "win_music_app"}
    window = element("win_music_app", "window", words["music"], 30, width=620, height=480)
    elements = [
        element("taskbar", "taskbar", "任务栏", 748, width=1280, height=52),
        element("command_bar", "command_bar", "指令栏", 756),
        element("task_music_app", "taskbar_icon", words["music"], 756),
        {**window, "view": "list", "items": songs},
    ]
    for number, title in enumerate(words["songs"][:songs], 1):
        ident = "btn_play" if number == 1 else f"btn_play_{number}"
        elements.append(
            element(ident, "button", words["play"], 90 + 40 * number, row=title, **inside)
        )
    elements += [
        element("btn_filter", "input", words["filter"], 420, **inside),
        element("btn_set_quality", "select", words["quality"], 420, **inside),
        element("btn_search", "input", words["search"], 420, **inside),
        element("btn_add_songs", "file", words["add"], 460, **inside),
        element("btn_recent", "button", words["recent"], 460, **inside),
    ]
    return {"viewport": {"width": 1280, "height": 800}, "elements": elements}


def playing(language: str) -> dict[str, Any]:
    """The snapshot with the music window's player on one song: its toggle reads 暂停."""
    snapshot = music_snapshot(language, songs=0)
    inside = {"window": "win_music_app"}
    for each in snapshot["elements"]:
        if each["id"] == "win_music_app":
            each.update(view="media", items=0)
    snapshot["elements"] = [
        e for e in snapshot["elements"] if e["id"] not in ("btn_add_songs", "btn_recent")
    ] + [element("btn_pause", "button", LABELS[language]["pause"], 400, **inside)]
    return snapshot


F3 = {"zh-CN": "把播放按钮移到左上角", "en-US": "move the play button to the top-left"}
TURN = {"zh-CN": ZH, "en-US": EN}


@pytest.mark.parametrize("language", ["zh-CN", "en-US"])
def test_an_empty_library_has_no_play_button_and_recently_played_is_not_it(language):
    snapshot = music_snapshot(language, songs=0)
    found = find_element(parse_request(F3[language]).target, snapshot["elements"])
    assert found.elements == []
    assert [e["id"] for e in found.similar][:1] == ["btn_recent"]  # offered, not taken
    # a window whose rows the snapshot does not tell: the similar names
    for each in snapshot["elements"]:
        each.pop("items", None)
    outcome = plan_ui(parse_request(F3[language]), snapshot, TURN[language])
    assert not outcome.ok and outcome.commands == [] and outcome.choices == []
    said = {
        "zh-CN": "桌面上没有“播放按钮”。名字相近的有：最近播放。",
        "en-US": 'There is no "play button" on the desktop. Similar names: Recently played.',
    }
    assert outcome.message == said[language]


@pytest.mark.parametrize(
    ("language", "text", "said", "add"),
    [
        (
            "zh-CN",
            "移动播放按钮",
            "音乐应用里还没有歌曲，所以没有播放按钮。先添加歌曲吧。",
            "添加歌曲",
        ),
        (
            "en-US",
            "move the play button",
            "There is no play button because Music has no songs yet. Add some songs first.",
            "Add songs",
        ),
    ],
)
def test_an_empty_library_says_there_are_no_songs_and_offers_to_add_some(
    language: str, text: str, said: str, add: str
) -> None:
    flows = SystemFlows(PlanningAgent())
    snapshot = music_snapshot(language, songs=0)
    turn = {"language": language, "tool_results": {"step_1": ok("cache_get", snapshot)}}
    reply = flows.handle(text, turn)
    assert (reply["status"], reply["notice"], reply["message"]) == ("ok", "info", said)
    assert "ui_commands" not in reply
    # the music window's add-songs control, opened from the answer
    assert reply["actions"] == [
        {
            "type": "link",
            "label": add,
            "action_id": "add_songs",
            "href": "aios:files#btn_add_songs",
        }
    ]
    parse(AppReply, reply)


@pytest.mark.parametrize("language", ["zh-CN", "en-US"])
def test_a_playing_songs_pause_button_is_the_play_button(language: str) -> None:
    snapshot = playing(language)
    for phrase in ("播放按钮", "暂停按钮", "play button", "the pause button", "播放"):
        assert find_element(phrase, snapshot["elements"]).element["id"] == "btn_pause"
    outcome = plan_ui(parse_request(F3[language]), snapshot, TURN[language])
    assert outcome.ok, outcome.message
    assert outcome.commands == [{"op": "move", "id": "btn_pause", "x": 20, "y": 20}]
    # a control called 播放 itself comes first: the songs' own buttons
    both = music_snapshot(language, songs=2)
    both["elements"] += [e for e in snapshot["elements"] if e["id"] == "btn_pause"]
    found = find_element("播放按钮", both["elements"])
    assert [e["id"] for e in found.elements] == ["btn_play", "btn_play_2"]
    assert find_element("暂停按钮", both["elements"]).element["id"] == "btn_pause"


def test_the_rules_resolve_exact_before_fuzzy_and_never_a_longer_label() -> None:
    elements = music_snapshot("zh-CN", songs=0)["elements"]
    for phrase in ("播放按钮", "播放", "播放键", "play button", "the play button"):
        assert find_element(phrase, elements).elements == [], phrase
    assert find_element("最近播放按钮", elements).element["id"] == "btn_recent"
    assert find_element("recently played", elements).element["id"] == "btn_recent"
    assert find_element("音质下拉框", elements).element["id"] == "btn_set_quality"
    assert find_element("the quality select", elements).element["id"] == "btn_set_quality"
    # an app's name means its window, not its taskbar icon
    assert find_element("音乐应用", elements).element["id"] == "win_music_app"
    two = music_snapshot("en-US", songs=2)["elements"]
    assert [e["id"] for e in find_element("paly button", two).elements] == [
        "btn_play",
        "btn_play_2",
    ]  # a typo is fuzzy: still both play buttons, still a question


@pytest.mark.parametrize("language", ["zh-CN", "en-US"])
def test_two_play_buttons_ask_which_listing_their_songs(language):
    snapshot = music_snapshot(language, songs=2)
    first, second = LABELS[language]["songs"]
    outcome = plan_ui(parse_request(F3[language]), snapshot, TURN[language])
    assert not outcome.ok and outcome.commands == []
    assert [c.label for c in outcome.choices] == [first, second]
    asked = {
        "zh-CN": f"有 2 个“播放按钮”：{first}、{second}。要哪一个？",
        "en-US": f'2 elements match "play button": {first}, {second}. Which one?',
    }
    assert outcome.message == asked[language]
    chosen = outcome.choices[1].outcome
    assert chosen.commands == [{"op": "move", "id": "btn_play_2", "x": 20, "y": 20}]
    done = {
        "zh-CN": f"已将{second}的播放按钮移到左上角",
        "en-US": f"Moved the play button of {second} to the top-left",
    }
    assert chosen.message == done[language]


@pytest.mark.parametrize(
    ("text", "ident"),
    [
        ("把晴天的播放按钮移到左上角", "btn_play_2"),
        ("把七里香的播放按钮移到左上角", "btn_play"),
        ("把第二个播放按钮移到左上角", "btn_play_2"),
        ("把最后一个播放按钮移到左上角", "btn_play_2"),
        ("把播放按钮移到左上角", None),
        ("把音乐应用的播放按钮移到左上角", None),  # both are in that window
    ],
)
def test_a_row_or_an_ordinal_picks_one(text: str, ident: str | None) -> None:
    outcome = plan_ui(parse_request(text), music_snapshot("zh-CN", songs=2), ZH)
    if ident is None:
        assert len(outcome.choices) == 2 and not outcome.commands
    else:
        assert outcome.ok and outcome.commands[0]["id"] == ident, outcome.message


def test_a_row_named_in_english() -> None:
    snapshot = music_snapshot("en-US", songs=2)
    for text in (
        "move the play button of Evening Rain to the top-left",
        "move the Evening Rain play button to the top-left",
        "move the second play button to the top-left",
    ):
        outcome = plan_ui(parse_request(text), snapshot, EN)
        assert outcome.ok and outcome.commands[0]["id"] == "btn_play_2", text
        assert outcome.message == "Moved the play button of Evening Rain to the top-left"


def test_a_window_control_goes_above_the_taskbar() -> None:
    snapshot = music_snapshot("zh-CN", songs=2)
    outcome = plan_ui(parse_request("把晴天的播放按钮移到左下角"), snapshot, ZH)
    # the taskbar's top is at 748: 748 - 24 - 20
    assert outcome.commands == [{"op": "move", "id": "btn_play_2", "x": 20, "y": 704}]


def test_the_flows_ask_with_a_button_per_song_and_a_choice_does_it() -> None:
    flows = SystemFlows(PlanningAgent())
    results = {"tool_results": {"step_1": ok("cache_get", music_snapshot("zh-CN", 2))}}
    question = flows.handle("把播放按钮移到左上角", results)
    assert question["status"] == "ok" and question["notice"] == "info"  # no ✅
    assert "ui_commands" not in question
    assert question["data"]["content"] == "有 2 个“播放按钮”：七里香、晴天。要哪一个？"
    assert [(a["label"], a["action_id"]) for a in question["actions"]] == [
        ("七里香", "choose"),
        ("晴天", "choose"),
    ]
    parse(AppReply, question)
    params = question["actions"][1]["params"]
    done = flows.handle(None, {}, {"action_id": "choose", "params": params})
    assert done["message"] == "已将晴天的播放按钮移到左上角"
    assert done["ui_commands"] == [{"op": "move", "id": "btn_play_2", "x": 20, "y": 20}]
    undo = done["actions"][0]
    # 撤销 of this answer: the change it made
    assert (undo["label"], undo["action_id"]) == ("撤销", "undo")
    assert undo["params"] == {"change": [{"op": "move", "id": "btn_play_2"}]}
    parse(AppReply, done)
    nothing = flows.handle(None, {}, {"action_id": "choose", "params": {}})
    assert "ui_commands" not in nothing


def test_none_found_is_an_answer_not_a_success() -> None:
    flows = SystemFlows(PlanningAgent())
    results = {"tool_results": {"step_1": ok("cache_get", music_snapshot("zh-CN", 0))}}
    reply = flows.handle("把下载按钮移到左上角", results)
    assert (reply["status"], reply["notice"]) == ("ok", "info")  # no ✅, no error
    assert "ui_commands" not in reply
    assert reply["message"].startswith("桌面上没有“下载按钮”")


def with_history(
    snapshot: dict[str, Any], *changes: list[dict[str, str]]
) -> dict[str, Any]:
    return {**snapshot, "undo": list(changes)}


@pytest.mark.parametrize(
    ("language", "typed", "said"),
    [
        ("zh-CN", "撤销", "已撤销：移动晴天的播放按钮（还可以再撤销 1 步）"),
        ("zh-CN", "撤回", "已撤销：移动晴天的播放按钮（还可以再撤销 1 步）"),
        (
            "en-US",
            "undo",
            "Undone: moving the Play button of Evening Rain (1 more to undo)",
        ),
    ],
)
def test_undo_takes_back_the_latest_change_of_the_history(
    language: str, typed: str, said: str
) -> None:
    snapshot = music_snapshot(language, 2)
    for element in snapshot["elements"]:
        if element["id"] in ("btn_play", "btn_play_2"):
            element["changed"] = ["move"]
    snapshot = with_history(
        snapshot,
        [{"op": "move", "id": "btn_play"}],
        [{"op": "move", "id": "btn_play_2"}],
    )
    flows = SystemFlows(PlanningAgent())
    turn = {"language": language}
    planned = flows.handle(typed, turn)
    assert planned["steps"][0]["tool"] == "cache_get"
    reply = flows.handle(
        typed, {**turn, "tool_results": {"step_1": ok("cache_get", snapshot)}}
    )
    assert reply["message"] == said
    [command] = reply["ui_commands"]
    assert (command["op"], command["id"]) == ("undo", "layout") and command["ref"]
    # one more to take back, named: not a bare 撤销 that reads as undoing this answer
    assert [(a["action_id"], a["label"]) for a in reply["actions"]] == [
        (
            "undo",
            {
                "zh-CN": "撤销上一步界面改动（移动七里香的播放按钮）",
                "en-US": "Undo the last layout change (moving the Play button of "
                "Morning Light)",
            }[language],
        )
    ]
    parse(AppReply, reply)
    last = with_history(snapshot, [{"op": "move", "id": "btn_play"}])
    clicked = flows.handle(
        None,
        {**turn, "tool_results": {"step_1": ok("cache_get", last)}},
        {"action_id": "undo"},
    )
    assert clicked["ui_commands"][0]["op"] == "undo" and clicked["actions"] == []
    none = flows.handle(
        typed, {**turn, "tool_results": {"step_1": ok("cache_get", with_history(last))}}
    )
    assert (none["notice"], none.get("ui_commands")) == ("info", None)


BLUE = [{"op": "change_color", "id": "desktop", "label": "桌面背景"}]
LAST_CHANGE = {
    "zh-CN": "撤销上一步界面改动（改颜色：桌面背景）",
    "en-US": "Undo the last layout change (recolouring the background)",
}


@pytest.mark.parametrize("language", ["zh-CN", "en-US"])
def test_an_answer_that_changed_nothing_names_the_change_its_undo_takes_back(
    language: str,
) -> None:
    snapshot = with_history(music_snapshot(language, 2), BLUE)
    flows = SystemFlows(PlanningAgent())
    turn = {"language": language, "tool_results": {"step_1": ok("cache_get", snapshot)}}
    # an app that is not installed: nothing changed, and no bare 撤销
    missing = flows.handle(
        "打开天气应用" if language == "zh-CN" else "open the weather app", turn
    )
    assert "ui_commands" not in missing
    assert [(a["action_id"], a["label"]) for a in missing["actions"]] == [
        ("undo", LAST_CHANGE[language])
    ]
    assert "params" not in missing["actions"][0]  # the latest change, whichever it is
    # the status answer, too (the system window's standing way back)
    status = flows.handle(
        "CPU占用多少",
        {
            "language": language,
            "tool_results": {
                "step_1": ok("system_info", {"cpu_percent": 5.0}),
                "step_2": ok("cache_get", snapshot),
            },
        },
    )
    undo = [a for a in status["actions"] if a["action_id"] == "undo"]
    assert [a["label"] for a in undo] == [LAST_CHANGE[language]]
    # nothing to take back: nothing offered
    empty = {"language": language, "tool_results": {"step_1": ok("cache_get", {})}}
    assert not flows.handle("打开天气应用", empty).get("actions")


@pytest.mark.parametrize("language", ["zh-CN", "en-US"])
def test_the_undo_of_an_answer_takes_back_its_own_change_or_nothing(
    language: str,
) -> None:
    flows = SystemFlows(PlanningAgent())
    moved = [{"op": "move", "id": "btn_play_2", "label": "播放"}]
    clicked = {"action_id": "undo", "params": {"change": [dict(moved[0])]}}
    # its change is the latest: taken back
    latest = with_history(music_snapshot(language, 2), BLUE, moved)
    turn = {"language": language, "tool_results": {"step_1": ok("cache_get", latest)}}
    done = flows.handle(None, turn, clicked)
    assert [c["op"] for c in done["ui_commands"]] == ["undo"]
    # a later change (the blue background) came after it: nothing is taken back
    later = with_history(music_snapshot(language, 2), moved, BLUE)
    turn = {"language": language, "tool_results": {"step_1": ok("cache_get", later)}}
    refused = flows.handle(None, turn, clicked)
    assert "ui_commands" not in refused and refused["notice"] == "info"
    assert (
        refused["message"]
        == {
            "zh-CN": "这一步界面改动已经撤销过了，或者之后界面又改过：没有撤销任何改动。",
            "en-US": "That change to the layout was undone already, or the layout has "
            "changed since: nothing was undone.",
        }[language]
    )
    assert [a["label"] for a in refused["actions"]] == [LAST_CHANGE[language]]
    parse(AppReply, refused)


def test_a_control_moved_to_an_occupied_corner_goes_below_what_is_there() -> None:
    snapshot = music_snapshot("zh-CN", 2)
    for element in snapshot["elements"]:
        if element["id"] == "btn_play_2":
            element.update(x=20, y=20, changed=["move"])
    outcome = plan_ui(parse_request("把第一个播放按钮移到左上角"), snapshot, ZH)
    assert outcome.commands == [{"op": "move", "id": "btn_play", "x": 20, "y": 52}]
    assert outcome.message == "已将七里香的播放按钮移到左上角，放在晴天的播放按钮旁边"
    low = plan_ui(parse_request("把第一个播放按钮移到左下角"), snapshot, ZH)
    assert low.commands[0]["y"] == 704  # nothing there


def desktop_parts(language: str) -> dict[str, Any]:
    snapshot = music_snapshot(language, 2)
    snapshot["elements"] += [
        element("desktop", "background", "桌面背景", 0, x=0, width=1280, height=748),
        element("title_music_app", "titlebar", "标题栏", 30, window="win_music_app"),
    ]
    return snapshot


@pytest.mark.parametrize(
    ("language", "text", "ident", "color", "said"),
    [
        ("zh-CN", "把背景换成蓝色", "desktop", "blue", "已将背景改成蓝色"),
        ("zh-CN", "把壁纸换成蓝色", "desktop", "blue", "已将壁纸改成蓝色"),
        ("zh-CN", "把桌面背景换成蓝色", "desktop", "blue", "已将桌面背景改成蓝色"),
        (
            "zh-CN",
            "把背景换成蓝紫渐变",
            "desktop",
            "linear-gradient(135deg, blue, purple)",
            "已将背景改成蓝紫渐变",
        ),
        ("zh-CN", "把任务栏换成绿色", "taskbar", "green", "已将任务栏改成绿色"),
        ("zh-CN", "把标题栏改成红色", "title_music_app", "red", "已将标题栏改成红色"),
        (
            "en-US",
            "change the wallpaper to blue",
            "desktop",
            "blue",
            "Made the wallpaper blue",
        ),
        (
            "en-US",
            "make the background a blue to purple gradient",
            "desktop",
            "linear-gradient(135deg, blue, purple)",
            "Made the background a blue to purple gradient",
        ),
        (
            "en-US",
            "make the title bar red",
            "title_music_app",
            "red",
            "Made the title bar red",
        ),
    ],
)
def test_the_desktops_own_parts_change_colour(
    language: str, text: str, ident: str, color: str, said: str
) -> None:
    turn = ZH if language == "zh-CN" else EN
    outcome = plan_ui(parse_request(text), desktop_parts(language), turn)
    assert outcome.commands == [{"op": "change_color", "id": ident, "color": color}]
    assert outcome.message == said


def test_the_background_only_changes_colour_and_asks_which() -> None:
    snapshot = desktop_parts("zh-CN")
    hidden = plan_ui(parse_request("隐藏背景"), snapshot, ZH)
    assert not hidden.ok and "只能换颜色" in hidden.message
    which = plan_ui(parse_request("换一下壁纸"), snapshot, ZH)
    assert not which.ok and which.message.startswith("要把壁纸换成什么颜色")
    # a bare "change" about something else is not a colour change
    assert parse_request("换一首歌").op == parse_request("change the song").op == "unknown"
    sky = plan_ui(parse_request("change the sky to blue"), desktop_parts("en-US"), EN)
    assert sky.message.startswith('There is no "sky" on the desktop.')
    assert "the background, the taskbar and a window's title bar" in sky.message


@pytest.mark.parametrize(
    ("language", "text", "said"),
    [
        ("zh-CN", "把播放按钮改成红色", None),
        ("zh-CN", "把所有播放按钮改成红色", "已将全部 2 个播放按钮改成红色"),
        ("zh-CN", "把播放按钮都改成红色", "已将全部 2 个播放按钮改成红色"),
        ("en-US", "make the play button red", None),
        ("en-US", "make all play buttons red", "Made the 2 play buttons red"),
    ],
)
def test_a_colour_for_several_asks_which_unless_all_are_meant(language, text, said):
    """Two 播放 buttons and a colour: which one, or every one when
    the request says all; never only the first."""
    outcome = plan_ui(
        parse_request(text), music_snapshot(language, songs=2), TURN[language]
    )
    if said is None:
        assert not outcome.ok and len(outcome.choices) == 2 and outcome.commands == []
        return
    assert outcome.ok, outcome.message
    assert outcome.commands == [
        {"op": "change_color", "id": "btn_play", "color": "red"},
        {"op": "change_color", "id": "btn_play_2", "color": "red"},
    ]
    assert outcome.message == said


class ScriptedModel:
    """A model that answers every chat with the same commands."""

    available = True

    def __init__(self, commands: list[dict[str, Any]]) -> None:
        self.commands = commands

    def chat(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {"commands": self.commands}


def test_a_model_cannot_move_or_hide_the_background() -> None:
    from apps.system_agent.llm import commands_from_llm

    model = ScriptedModel(
        [
            {"op": "hide", "id": "desktop"},
            {"op": "move", "id": "title_music_app", "x": 5, "y": 5},
            {"op": "change_color", "id": "desktop", "color": "navy"},
        ]
    )
    asked = commands_from_llm(model, "把桌面弄暗一点", desktop_parts("zh-CN"), False)
    assert asked.commands == [{"op": "change_color", "id": "desktop", "color": "navy"}]


@pytest.mark.parametrize(
    ("language", "text", "listed"),
    [
        ("zh-CN", "打开天气应用", "已安装：音乐应用、定时任务、技能"),
        ("en-US", "open the weather app", "Installed: Music, Scheduled tasks, Skills"),
    ],
)
def test_an_unknown_app_is_answered_with_every_installed_app(
    language: str, text: str, listed: str
) -> None:
    names = {
        "zh-CN": ("音乐应用", "定时任务", "技能"),
        "en-US": ("Music", "Scheduled tasks", "Skills"),
    }[language]
    installed = [{"id": f"app{i}", "name": name} for i, name in enumerate(names)]
    flows = SystemFlows(PlanningAgent())
    results = {
        "language": language,
        "installed_apps": installed,
        "tool_results": {"step_1": ok("cache_get", music_snapshot(language, 1))},
    }
    reply = flows.handle(text, results)
    assert listed in reply["message"], reply["message"]


@pytest.mark.parametrize(
    ("language", "label", "said"),
    [("zh-CN", "播放", "已撤销：移动播放"), ("en-US", "Play", "Undone: moving the Play")],
)
def test_undo_names_a_control_no_longer_shown_by_its_label_never_its_id(
    language: str, label: str, said: str
) -> None:
    snapshot = with_history(
        music_snapshot(language, 0), [{"op": "move", "id": "btn_play_7", "label": label}]
    )
    reply = SystemFlows(PlanningAgent()).handle(
        "撤销" if language == "zh-CN" else "undo",
        {"language": language, "tool_results": {"step_1": ok("cache_get", snapshot)}},
    )
    assert reply["message"].startswith(said), reply["message"]
    assert "btn_play_7" not in reply["message"]
