"""Pure-logic tests of the deterministic router (no HTTP, no processes but one import check).

The shipped apps' manifests are read from `apps/*/manifest.json` through the wire
model, so a manifest edit that breaks routing fails here. `synthetic_apps` is also
used by the timing script (100 apps).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from aios_protocol.messages import Manifest
from controller.routing.index import index_for
from controller.routing.router import (
    AppProfile,
    DeterministicRouter,
    PlannedTask,
    RoutePlan,
    Router,
    apps_message,
    no_match_message,
)
from controller.routing.split import split_pieces

ROOT = Path(__file__).resolve().parents[2]
ROUTING_SET = Path(__file__).with_name("routing_set.json")

SPEC_FLOWS = [
    ("帮我播放周杰伦的歌", "music_app"),
    ("帮我下载周杰伦的七里香到本地", "music_app"),
    ("把播放按钮移到左上角", "system_agent"),
    ("跟我打个招呼", "hello_app"),
    ("执行代码 print(2**10)", "code_app"),
]


def shipped_apps() -> tuple[AppProfile, ...]:
    profiles = []
    for path in sorted(ROOT.glob("apps/*/manifest.json")):
        manifest = Manifest.model_validate_json(path.read_text(encoding="utf-8"))
        profiles.append(AppProfile.of(path.parent.name, manifest))
    return tuple(profiles)


# (zh noun, en noun, zh verbs, en verbs): some share verbs with the shipped apps on
# purpose (a video app also 播放, a game also 运行, a file app also 打开 / 列出).
_DOMAINS = [
    ("天气", "weather", ["查询", "查看"], ["check", "forecast"]),
    ("日历", "calendar", ["添加", "查看"], ["add", "schedule"]),
    ("邮件", "email", ["发送", "写"], ["send", "write"]),
    ("地图", "map", ["导航", "搜索"], ["navigate", "search"]),
    ("翻译", "translation", ["翻译", "转换"], ["translate", "convert"]),
    ("计算器", "calculator", ["计算", "算"], ["calculate", "compute"]),
    ("闹钟", "alarm", ["设置", "取消"], ["set", "cancel"]),
    ("笔记", "note", ["记录", "打开"], ["take", "open"]),
    ("相册", "photo", ["查看", "删除"], ["view", "delete"]),
    ("视频", "video", ["播放", "下载"], ["play", "download"]),
    ("新闻", "news", ["阅读", "搜索"], ["read", "search"]),
    ("股票", "stock", ["查询", "关注"], ["quote", "watch"]),
    ("购物", "shopping", ["购买", "搜索"], ["buy", "order"]),
    ("外卖", "takeout", ["点", "订"], ["order", "deliver"]),
    ("打车", "taxi", ["叫", "预约"], ["call", "book"]),
    ("健身", "workout", ["开始", "记录"], ["start", "track"]),
    ("菜谱", "recipe", ["搜索", "收藏"], ["find", "cook"]),
    ("游戏", "game", ["运行", "打开"], ["run", "launch"]),
    ("播客", "podcast", ["播放", "订阅"], ["play", "subscribe"]),
    ("文件", "file", ["打开", "列出"], ["open", "list"]),
    ("电子书", "ebook", ["阅读", "下载"], ["read", "download"]),
    ("聊天", "chat", ["发送", "回复"], ["send", "reply"]),
    ("备忘录", "memo", ["新建", "删除"], ["create", "remove"]),
    ("壁纸", "wallpaper", ["更换", "下载"], ["change", "download"]),
]


def synthetic_apps(count: int, seed: int = 7) -> tuple[AppProfile, ...]:
    """`count` plausible apps with overlapping vocabulary, deterministic for a seed."""
    rng = random.Random(seed)
    apps = []
    for i in range(count):
        zh, en, zh_verbs, en_verbs = _DOMAINS[i % len(_DOMAINS)]
        flavour = rng.choice(["专业", "极简", "智能", "云", "本地", "快速"])
        keywords = [zh, en, f"{zh}应用", *zh_verbs, *en_verbs, f"{flavour}{zh}"]
        examples = [
            f"{zh_verbs[0]}{zh}",
            f"帮我{zh_verbs[1]}一下{zh}",
            f"打开{flavour}{zh}",
            f"{en_verbs[0]} my {en}",
            f"{en_verbs[1]} the {en} please",
        ]
        apps.append(
            AppProfile(
                app_id=f"synthetic_{i:03d}",
                name=f"{flavour}{zh}{i}",
                description=f"{zh_verbs[0]}和{zh_verbs[1]}{zh} ({en_verbs[0]} {en})",
                keywords=tuple(keywords),
                examples=tuple(examples),
            )
        )
    return tuple(apps)


@pytest.fixture(scope="module")
def apps() -> tuple[AppProfile, ...]:
    profiles = shipped_apps()
    assert {p.app_id for p in profiles} >= {
        "hello_app",
        "music_app",
        "code_app",
        "system_agent",
    }
    return profiles


@pytest.fixture(scope="module")
def router() -> DeterministicRouter:
    return DeterministicRouter()


def app_ids(plan: RoutePlan) -> list[str]:
    return [task.app_id for task in plan.tasks]


@pytest.mark.parametrize(("text", "app_id"), SPEC_FLOWS)
def test_spec_flows_route_confidently(router, apps, text, app_id):
    plan = router.route(text, apps)
    assert plan.tasks == [PlannedTask("t1", app_id, text, [])]
    assert plan.confidence >= DeterministicRouter.CONFIDENT
    assert plan.llm_calls == 0


def test_play_button_is_a_desktop_element_not_music(router, apps):
    plan = router.route("把播放按钮移到左上角", apps)
    assert app_ids(plan) == ["system_agent"]
    assert app_ids(router.route("帮我播放周杰伦的歌", apps)) == ["music_app"]
    assert app_ids(router.route("make the play button bigger", apps)) == ["system_agent"]


def test_compound_instruction_becomes_dependent_tasks(router, apps):
    plan = router.route("帮我播放周杰伦的歌，然后把播放按钮移到左上角", apps)
    assert plan.tasks == [
        PlannedTask("t1", "music_app", "帮我播放周杰伦的歌", []),
        PlannedTask("t2", "system_agent", "把播放按钮移到左上角", ["t1"]),
    ]
    assert plan.confidence >= DeterministicRouter.CONFIDENT


def test_three_parts_each_depend_on_all_earlier(router, apps):
    plan = router.route("greet me then play some jazz then show cpu usage", apps)
    assert [(t.task_id, t.app_id, t.instruction, t.depends_on) for t in plan.tasks] == [
        ("t1", "hello_app", "greet me", []),
        ("t2", "music_app", "play some jazz", ["t1"]),
        ("t3", "system_agent", "show cpu usage", ["t1", "t2"]),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("先写一个排序程序再运行它", ["写一个排序程序", "运行它"]),
        ("查看系统状态；播放七里香", ["查看系统状态", "播放七里香"]),
        ("打个招呼，接着播放一首歌", ["打个招呼", "播放一首歌"]),
        (
            "暂停音乐，然后隐藏任务栏，再查看内存占用",
            ["暂停音乐", "隐藏任务栏", "查看内存占用"],
        ),
        ("say hello, then run main.py", ["say hello", "run main.py"]),
        (
            "play some music and then show system status",
            ["play some music", "show system status"],
        ),
        ("下载七里香并把播放按钮移到右下角", ["下载七里香", "把播放按钮移到右下角"]),
        (
            "play Yesterday and make the play button red",
            ["play Yesterday", "make the play button red"],
        ),
    ],
)
def test_connectives_split(router, apps, text, expected):
    plan = router.route(text, apps)
    assert [task.instruction for task in plan.tasks] == expected
    assert [task.depends_on for task in plan.tasks] == [
        [f"t{j}" for j in range(1, k + 1)] for k in range(len(expected))
    ]


@pytest.mark.parametrize(
    "text",
    [
        "跟我打个招呼再说一次",  # 再说一次 is a phrase
        "再来一首周杰伦的歌",  # 再来 is a phrase
        "下一首",
        "合并两个列表的Python函数怎么写",  # 合并 is a word
        "播放周杰伦和林俊杰的歌",
        "search and download Yesterday",  # weak "and", both halves are music
        "play rock and roll",  # weak "and", "roll" alone is no app's
        "修改 sort.py，把排序改成降序",  # weak comma, second half is not sure of another app
    ],
)
def test_connective_inside_a_phrase_does_not_split(router, apps, text):
    plan = router.route(text, apps)
    assert len(plan.tasks) == 1
    assert plan.tasks[0].instruction == text


def test_quoted_and_bracketed_text_is_never_cut():
    pieces = split_pieces("执行代码 print('a; then b') 然后 say (x, then y)")
    assert [piece.text for piece in pieces] == [
        "执行代码 print('a; then b')",
        "say (x, then y)",
    ]
    assert [piece.text for piece in split_pieces("what's the weather, then hi")] == [
        "what's the weather",
        "hi",
    ]


def test_no_match_is_one_short_sentence_saying_where_the_apps_are(router, apps):
    plan = router.route("今天天气怎么样", apps)
    assert plan.tasks == []
    assert plan.confidence < router.minimum
    assert plan.reason == no_match_message(apps)
    assert plan.reason == "没有应用能做这件事。开始菜单里列出了每个应用能做什么。"
    assert "\n" not in plan.reason and "Sorry" not in plan.reason  # short, one language


def test_no_match_in_english_is_english_only(apps):
    english = no_match_message(apps, "en-US")
    assert english == "No app can do that. The start menu shows what each app can do."
    assert no_match_message([], "en-US") == "No apps are installed."
    assert no_match_message(apps, "zh-CN") == no_match_message(apps)  # unchanged


def test_what_the_apps_can_do_names_each_in_the_readers_language(apps):
    english = apps_message(apps, "en-US")
    assert english.startswith("The installed apps can:")
    for app in apps:
        assert f"· {app.name_in('en-US')}" in english
    assert "· Music: Search, play and download music" in english
    chinese = apps_message(apps, "zh-CN")
    for app in apps:
        assert f"· {app.name}" in chinese
    assert "Music" not in chinese and "search, play" not in chinese  # no glosses


def test_no_match_without_apps_or_words(router, apps):
    assert router.route("播放七里香", []).tasks == []
    assert router.route("播放七里香", []).reason == "没有已安装的应用。"
    for text in ("", "   ", "，然后 ", "then"):
        plan = router.route(text, apps)
        assert plan.tasks == [] and plan.confidence == 0.0


def test_a_part_no_app_takes_lowers_confidence_and_is_reported(router, apps):
    plan = router.route("播放七里香，然后告诉我今天天气", apps)
    # the part no app's words claim goes to the catch-all assistant, not nowhere
    assert app_ids(plan) == ["music_app", "assistant_app"]
    assert plan.confidence < DeterministicRouter.CONFIDENT  # an LLM router should look
    assert "告诉我今天天气" in plan.reason
    without = tuple(app for app in apps if app.system_role != "catch_all")
    plan = router.route("播放七里香，然后告诉我今天天气", without)
    assert app_ids(plan) == ["music_app"]
    assert plan.unclaimed == ["告诉我今天天气"]  # the reply says so


def test_thresholds_are_exposed_and_configurable(apps):
    assert 0 < DeterministicRouter.MINIMUM < DeterministicRouter.CONFIDENT < 1
    strict = DeterministicRouter(minimum=0.99)
    assert strict.route("打开代码应用的窗口", apps).tasks == []
    assert DeterministicRouter(confident=0.9).confident == 0.9
    router: Router = DeterministicRouter()  # satisfies the pipeline's protocol
    assert app_ids(router.route("下一首", apps)) == ["music_app"]


def test_routing_set_accuracy(router, apps):
    cases = json.loads(ROUTING_SET.read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 60
    assert sum(1 for c in cases if not c["apps"]) >= 5
    assert sum(1 for c in cases if len(c["apps"]) >= 2) >= 10
    assert {a for c in cases for a in c["apps"]} == {p.app_id for p in apps}
    wrong = []
    for case in cases:
        plan = router.route(case["text"], apps)
        expected_deps = case.get("depends_on", [[] for _ in case["apps"]])
        got = (app_ids(plan), [task.depends_on for task in plan.tasks])
        if got != (case["apps"], expected_deps):
            wrong.append((case["text"], case["apps"], got[0], round(plan.confidence, 2)))
    accuracy = 1 - len(wrong) / len(cases)
    print(f"routing accuracy: {accuracy:.1%} on {len(cases)}")
    for miss in wrong:
        print("  missed:", miss)
    assert wrong == []


def test_confident_answers_on_the_routing_set_are_right(router, apps):
    """Calibration: at or above CONFIDENT the router must (nearly) never be wrong,
    no-app instructions are never confident, and the share answered without an LLM
    (`aios bench`'s zero_llm_share, goal 0.8) keeps a margin above the goal."""
    cases = json.loads(ROUTING_SET.read_text(encoding="utf-8"))["cases"]
    confident = wrong = 0
    for case in cases:
        plan = router.route(case["text"], apps)
        if plan.tasks and plan.confidence >= router.confident:
            confident += 1
            wrong += app_ids(plan) != case["apps"]
            assert case["apps"], case["text"]
    print(f"confident on {confident}/{len(cases)}, wrong among them: {wrong}")
    assert confident >= 0.85 * len(cases)
    assert wrong <= confident * 0.02


def test_spec_flows_survive_100_apps(router, apps):
    crowd = (*synthetic_apps(100 - len(apps)), *apps)
    assert len(crowd) == 100
    for text, app_id in SPEC_FLOWS:
        assert app_ids(router.route(text, crowd)) == [app_id], text
    weather = router.route("今天天气怎么样", crowd)
    assert len(weather.tasks) == 1
    assert weather.tasks[0].app_id.startswith("synthetic_")
    assert "天气" in next(a.name for a in crowd if a.app_id == weather.tasks[0].app_id)
    compound = router.route("帮我播放周杰伦的歌，然后把播放按钮移到左上角", crowd)
    assert app_ids(compound) == ["music_app", "system_agent"]


def test_index_is_built_once_per_app_set(apps):
    assert index_for(tuple(apps)) is index_for(tuple(shipped_apps()))
    fewer = tuple(a for a in apps if a.app_id != "music_app")
    assert index_for(fewer) is not index_for(tuple(apps))
    plan = DeterministicRouter().route("帮我播放周杰伦的歌", fewer)
    assert "music_app" not in app_ids(plan)


@pytest.mark.process
def test_import_does_no_work():
    code = (
        "import sys, controller.routing.router as r\n"
        "assert 'rapidfuzz' not in sys.modules\n"
        "assert r.index_for.cache_info().currsize == 0\n"
        "print('ok')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert done.stdout.strip() == "ok", done.stderr
