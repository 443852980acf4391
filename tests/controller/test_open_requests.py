"""Open requests and named apps, in pure logic on the shipped manifests.

A request no specialist can do (write a poem) must not go to a specialist whose
loose words it happens to share; an app named at the start of an instruction takes
it alone; quoted words, titles, what a reminder should say, what a scheduled job
should do and a program's code are content, not evidence of which app should act.
Without a model, what no app's words claim goes to the catch-all assistant (which
then says it needs a model); without the assistant installed, the answer says
plainly that no installed app can do it.
"""

from __future__ import annotations

import pytest

from aios_runtime.settings import Settings
from controller.llm.client import LLMClient
from controller.routing.content import without_content
from controller.routing.llm_router import FallbackRouter, LLMRouter
from controller.routing.router import (
    AppProfile,
    DeterministicRouter,
    PlannedTask,
    no_match_message,
)
from tests.controller.test_router import app_ids, shipped_apps

CONFIDENT = DeterministicRouter.CONFIDENT


@pytest.fixture(scope="module")
def apps() -> tuple[AppProfile, ...]:
    return shipped_apps()


@pytest.fixture(scope="module")
def router() -> DeterministicRouter:
    return DeterministicRouter()


def offline(router: DeterministicRouter) -> FallbackRouter:
    """The pipeline's router on a computer without a model."""
    return FallbackRouter(router, LLMRouter(LLMClient(Settings())))


@pytest.mark.parametrize(
    "text",
    [
        "写一首诗",
        "帮我写一首诗",
        "写一首关于秋天的诗",
        "给我写首诗",
        "作一首诗",
        "写一个故事",
        "write a poem",
        "write me a poem about autumn",
        "write a story about a dragon",
    ],
)
def test_writing_a_poem_is_no_specialists_job(router, apps, text):
    plan = router.route(text, apps)
    specialists = {"music_app", "code_app", "system_agent", "hello_app", "scheduler_app"}
    assert not specialists & set(app_ids(plan)), (text, plan.reason)
    assert app_ids(offline(router).route(text, apps)) == ["assistant_app"], text


@pytest.mark.parametrize(
    ("text", "app_id"),
    [
        ("智能助手，帮我写一首关于秋天的诗", "assistant_app"),
        ("智能助手，帮我写一首歌", "assistant_app"),
        ("智能助手：播放七里香，然后把播放按钮移到左上角", "assistant_app"),
        ("让智能助手帮我整理文件", "assistant_app"),
        ("请智能助手帮我查一下资料", "assistant_app"),
        ("ask the assistant to write a poem", "assistant_app"),
        ("hey assistant, play some music", "assistant_app"),
        ("音乐应用，播放七里香", "music_app"),
        ("用代码应用运行 hello.py", "code_app"),
        ("系统控制：查看内存占用", "system_agent"),
    ],
)
def test_a_named_app_takes_the_whole_instruction_alone(router, apps, text, app_id):
    plan = router.route(text, apps)
    assert plan.tasks == [PlannedTask("t1", app_id, text, [])], plan.reason
    assert plan.confidence >= CONFIDENT


@pytest.mark.parametrize(
    ("text", "app_id"),
    [
        ("打开代码应用的窗口", "system_agent"),  # the app is the object, not addressed
        ("关闭音乐应用的窗口", "system_agent"),
        ("你好啊小助手", "hello_app"),  # a nickname is not an app's name
    ],
)
def test_an_app_named_as_an_object_is_not_addressed(router, apps, text, app_id):
    assert app_ids(router.route(text, apps)) == [app_id]


@pytest.mark.parametrize(
    ("text", "app_id"),
    [
        ('提醒我"播放音乐"', "scheduler_app"),
        ("提醒我“播放音乐”", "scheduler_app"),
        ("提醒我《播放音乐》", "scheduler_app"),
        ("10分钟后提醒我播放音乐", "scheduler_app"),
        ("提醒我喝水并播放音乐", "scheduler_app"),
        ("remind me to play some music", "scheduler_app"),
        ("10分钟后播放音乐", "scheduler_app"),
        ("每天早上8点播放音乐", "scheduler_app"),
        ("every day at 8am play music", "scheduler_app"),
        ('运行这段代码 print("播放")', "code_app"),
        ("运行这段代码 print('play music')", "code_app"),
        ("执行 play_music(song='七里香')", "code_app"),
    ],
)
def test_quoted_words_reminders_and_programs_are_content(router, apps, text, app_id):
    plan = router.route(text, apps)
    assert plan.tasks == [PlannedTask("t1", app_id, text, [])], plan.reason
    assert plan.confidence >= CONFIDENT, plan.reason


def test_content_never_hides_the_request_itself(router, apps):
    # quotes around the whole request: the words are all there is to go by
    assert app_ids(router.route("“播放七里香”", apps)) == ["music_app"]
    # a reminder's content ends at a strong boundary: what follows is a request
    plan = router.route("提醒我喝水，然后播放七里香", apps)
    assert app_ids(plan) == ["scheduler_app", "music_app"]
    # a title is the song's name, the verb outside it still counts
    assert app_ids(router.route("播放《晴天》", apps)) == ["music_app"]
    # English words and contractions are not quotes
    assert without_content("what's the weather") == "what's the weather"
    assert without_content("search for songs by Adele") == "search for songs by Adele"


def test_a_part_no_app_claims_goes_to_the_assistant_not_nowhere(router, apps):
    plan = router.route("播放七里香，然后写一首关于秋天的诗", apps)
    assert app_ids(plan) == ["music_app", "assistant_app"]
    assert plan.tasks[1].depends_on == ["t1"]


def test_without_the_assistant_no_app_says_so_plainly(router, apps):
    specialists = tuple(a for a in apps if a.system_role != "catch_all")
    plan = offline(router).route("写一首诗", specialists)
    assert plan.tasks == []
    assert plan.reason == no_match_message(specialists)
    assert plan.reason.startswith("没有应用能做这件事。")
    english = no_match_message(specialists, "en-US")
    assert english.startswith("No app can do that.")
    assert "没有" not in english
