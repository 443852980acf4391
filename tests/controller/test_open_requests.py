"""Open requests and named apps, in pure logic on the shipped manifests.

A request no specialist can do (write a poem) must not go to a specialist whose
loose words it happens to share; an app named at the start of an instruction takes
it alone; quoted words, titles, the topic of a piece of writing, the material after
a request's colon, what a reminder should say, what a scheduled job should do and a
program's code are content, not evidence of which app should act; a request with a
leading time is the scheduler's, whatever the job will do. A request for knowledge
about a topic (its style, its history) or for a work named by its kind (a book, a
film) is the assistant's, whatever its verb ("搜索", "search" are also the music
app's words) and whatever its topic ("周杰伦的音乐风格").
Without a model, what no app's words claim goes to the catch-all assistant (which
then says it needs a model); without the assistant installed, the answer says
plainly that no installed app can do it.
"""

from __future__ import annotations

import pytest

from aios_runtime.settings import Settings
from controller.llm.client import LLMClient
from controller.routing.content import timed, without_content
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


@pytest.mark.parametrize(
    "text",
    [
        "明天下午3点播放音乐",
        "明天下午三点放一首周杰伦的歌",
        "今晚8点播放七里香",
        "下午3点播放音乐",
        "3点播放音乐",
        "每周一早上9点播放轻音乐",
        "周五下午5点运行脚本 backup.py",
        "1小时后关闭音乐窗口",
        "明天下午3点让音乐应用播放周杰伦",  # the app is named inside the job
        "tomorrow at 3pm play music",
        "at 7pm play some jazz",
        "in 10 minutes pause the music",
        "in half an hour stop the music",
    ],
)
def test_a_timed_request_is_the_schedulers_whatever_the_job(router, apps, text):
    plan = router.route(text, apps)
    assert plan.tasks == [PlannedTask("t1", "scheduler_app", text, [])], plan.reason
    assert plan.confidence >= CONFIDENT


def test_a_time_alone_or_a_question_about_the_time_is_not_a_job(router, apps):
    assert not timed("3点了吗")
    assert not timed("明天下午3点")
    assert not timed("明天会下雨吗")
    assert timed("明天下午3点“播放音乐”")
    assert "scheduler_app" not in app_ids(router.route("把时钟调到3点", apps))


def test_without_a_scheduler_a_timed_request_is_what_follows(router, apps):
    no_scheduler = tuple(a for a in apps if a.system_role != "scheduler")
    assert app_ids(router.route("明天下午3点播放音乐", no_scheduler)) == ["music_app"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the topic of a piece of writing is no specialist's evidence
        ("写一首关于音乐的诗", ["assistant_app"]),
        ("写一首关于代码的诗", ["assistant_app"]),
        ("写一个关于播放器的故事", ["assistant_app"]),
        ("以音乐为主题写一首诗", ["assistant_app"]),
        ("write a poem about music and code", ["assistant_app"]),
        ("write a haiku about code", ["assistant_app"]),
        ("写一首题为《播放》的诗", ["assistant_app"]),
        ("给我写一篇关于摇滚乐历史的文章", ["assistant_app"]),
        ("帮我写一封关于下载音乐的邮件", ["assistant_app"]),
        ("write an email about the new playlist", ["assistant_app"]),
        ("帮我起草一份关于系统升级的通知", ["assistant_app"]),
        ("写一段关于系统内存的介绍", ["assistant_app"]),
        ("给我讲一个关于程序员的笑话", ["assistant_app"]),
        # the material after a request's colon, and quoted words, are content
        ("翻译这段话：我想听音乐", ["assistant_app"]),
        ("翻译：play the next song", ["assistant_app"]),
        ("总结以下内容：今天播放了三首歌", ["assistant_app"]),
        ('说"播放"这个词', ["assistant_app"]),
        ("把“播放音乐”这几个字翻译成英文", ["assistant_app"]),
        # what no specialist can do
        ("帮我订一张去上海的机票", ["assistant_app"]),
        ("用微信给妈妈发消息", ["assistant_app"]),
        ("book a flight to Paris", ["assistant_app"]),
        # a topic or a title beside the specialist's own request keeps the request
        ("搜索关于爱情的歌", ["music_app"]),
        ("play songs about love", ["music_app"]),
        ("play a song called Run", ["music_app"]),
        ("播放《代码》这首歌", ["music_app"]),
        ("写一个关于排序的程序", ["code_app"]),
        ("how about some music", ["music_app"]),
        ("音乐：播放七里香", ["music_app"]),
        ("帮我：播放音乐", ["music_app"]),
        ("运行 for i in range(3): print(i)", ["code_app"]),
    ],
)
def test_topics_and_material_are_content_offline(router, apps, text, expected):
    reason = router.route(text, apps).reason
    assert app_ids(offline(router).route(text, apps)) == expected, reason


@pytest.mark.parametrize(
    ("text", "app_id"),
    [
        ("帮我用音乐应用放一首歌", "music_app"),
        ("请帮我用代码应用运行 hello.py", "code_app"),
    ],
)
def test_an_app_handed_the_job_by_name_takes_it_alone(router, apps, text, app_id):
    plan = router.route(text, apps)
    assert plan.tasks == [PlannedTask("t1", app_id, text, [])], plan.reason
    assert plan.confidence == DeterministicRouter.ADDRESSED


@pytest.mark.parametrize(
    "text",
    [
        # knowledge about a topic: the topic is content, whatever app it sounds like
        "帮我总结一下周杰伦的音乐风格",
        "给我讲讲摇滚乐的起源",
        "评价一下这张专辑",
        "跟我聊聊爵士乐",
        "周杰伦的音乐风格是什么",
        "搜索爵士乐的历史",
        "分析一下这张专辑的风格",
        "summarize Jay Chou's music style",
        "describe the style of rock music",
        "tell me about Jay Chou",
        "what do you know about rock music",
        "what's Jay Chou's music style like?",
        "what is the history of jazz",
        "give me an overview of classical music",
        # a work named by its kind, not a song: its title and the verb are content
        "搜索《代码大全》这本书",
        "搜索电影《三体》",
        "搜索周杰伦的电影",
        "下载《三体》这本小说",
        "帮我找一本书",
        "search for the book 'Code Complete'",
        "search for the book Code Complete",
        "download the movie Inception",
        "find me a book by Stephen King",
        "find me a good movie",
        # a general topic that only sounds like what an app shows or owns: a
        # language (the code app runs Python, it does not teach it), an aspect of
        # one, a thing "of" something, a skill of people, music in general
        "介绍 Python",
        "tell me about Python",
        "介绍一下CPU的历史",
        "describe the process of photosynthesis",
        "介绍一下沟通技能",
        "tell me about music",
    ],
)
def test_a_question_or_a_work_no_app_names_is_the_assistants(router, apps, text):
    plan = router.route(text, apps)
    assert plan.tasks == [PlannedTask("t1", "assistant_app", text, [])], plan.reason
    assert plan.confidence >= CONFIDENT  # no model is asked to agree
    assert plan.reason.endswith("[asked]")
    assert plan.asked  # a skill whose summary matches comes first


@pytest.mark.parametrize(
    ("text", "app_id"),
    [
        # the same verbs and topics, on what the music app does
        ("播放周杰伦的歌", "music_app"),
        ("搜索周杰伦的歌", "music_app"),
        ("我想听音乐", "music_app"),
        ("play some jazz", "music_app"),
        ("search songs by Jay Chou", "music_app"),
        ("搜索《七里香》", "music_app"),  # a title alone is a song's
        ("播放《代码》这首歌", "music_app"),
        ("播放情书", "music_app"),  # 书 and 剧 only count with their measure word
        ("播放京剧", "music_app"),
        ("播放周杰伦的代表作", "music_app"),
        ("play the film soundtrack", "music_app"),
        ("play songs from the movie Frozen", "music_app"),  # the film qualifies songs
        ("play the soundtrack of the movie Inception", "music_app"),
        ("下载这部电影的主题曲", "music_app"),
        ("播放周杰伦的情书", "music_app"),
        # a style to change something to is no question about one
        ("把背景换成复古的风格", "system_agent"),
        ("change the style of the play button", "system_agent"),
        ("show the style of the button", "system_agent"),
        ("隐藏桌面的背景", "system_agent"),  # a background is the wallpaper
        ("hide the background of the taskbar", "system_agent"),
        # writing one is the writing rule's, and a given text the material rule's
        ("给我写一篇关于摇滚乐历史的文章", "assistant_app"),
        ("总结以下内容：今天播放了三首歌", "assistant_app"),
    ],
)
def test_what_only_looks_like_a_question_keeps_its_app(router, apps, text, app_id):
    assert app_ids(offline(router).route(text, apps)) == [app_id]


def test_a_question_beside_a_request_is_a_task_of_its_own(router, apps):
    for text in (
        "搜索《代码大全》这本书并播放周杰伦的歌",
        "search for the book 'Code Complete' and play some jazz",
        "介绍一下周杰伦，然后播放七里香",
        "介绍一下爵士乐并播放一首",  # a topic ends where another request joins
    ):
        plan = router.route(text, apps)
        assert app_ids(plan) == ["assistant_app", "music_app"], (text, plan.reason)
        assert plan.tasks[1].depends_on == ["t1"]
        assert plan.confidence >= CONFIDENT
        assert not plan.asked
    # topics listed, or a second question, stay one question
    for text in ("summarize jazz and rock", "介绍一下周杰伦并分析他的音乐风格"):
        plan = router.route(text, apps)
        assert plan.tasks == [PlannedTask("t1", "assistant_app", text, [])], plan.reason


OWNED = [
    # what the system app shows live
    ("说说现在的CPU占用", "system_agent"),
    ("总结一下CPU的使用情况", "system_agent"),
    ("说说内存", "system_agent"),
    ("tell me about my disk usage", "system_agent"),
    ("describe the memory usage", "system_agent"),
    ("tell me about the processes", "system_agent"),
    # the skills list
    ("介绍一下技能", "skills_app"),
    ("tell me about my skills", "skills_app"),
    ("tell me about the skills app", "skills_app"),
    # an app named as an app
    ("介绍一下代码应用", "code_app"),
    ("tell me about the code app", "code_app"),
    ("介绍一下音乐应用", "music_app"),
    ("tell me about the music app", "music_app"),
    # what the music app keeps
    ("介绍一下曲库", "music_app"),
    ("tell me about my songs", "music_app"),
]


@pytest.mark.parametrize(("text", "app_id"), OWNED)
def test_a_question_about_what_an_app_shows_or_owns_is_that_apps(
    router, apps, text, app_id
):
    plan = router.route(text, apps)
    assert plan.tasks == [PlannedTask("t1", app_id, text, [])], plan.reason
    assert plan.confidence >= CONFIDENT  # no model is asked to agree
    assert "[owned: " in plan.reason and not plan.asked
    # the app answers it whether or not the assistant is installed
    specialists = tuple(a for a in apps if a.system_role != "catch_all")
    assert app_ids(router.route(text, specialists)) == [app_id]


def test_what_an_app_owns_is_its_manifests_subjects(router, apps):
    """The rule reads the manifests' `subjects` and names, no app ids: a weather app
    that lists 天气 as a subject takes the question about the weather; the same
    app without it leaves it to the assistant."""
    weather = AppProfile(
        "weather_app", "天气预报", keywords=("查天气",), subjects=("天气",)
    )
    plan = router.route("说说现在的天气", (*apps, weather))
    assert app_ids(plan) == ["weather_app"], plan.reason
    mute = AppProfile("weather_app", "天气预报", keywords=("查天气",))
    assert app_ids(router.route("说说现在的天气", (*apps, mute))) == ["assistant_app"]
    # its name as an app's, in any language it gives
    named = AppProfile("weather_app", "天气预报", names={"en-US": "Weather"})
    assert app_ids(router.route("tell me about the weather app", (*apps, named))) == [
        "weather_app"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "搜索《代码大全》这本书",
        "帮我总结一下周杰伦的音乐风格",
        "summarize Jay Chou's music style",
    ],
)
def test_without_the_assistant_a_question_gets_the_plain_no_app_reply(router, apps, text):
    specialists = tuple(a for a in apps if a.system_role != "catch_all")
    plan = offline(router).route(text, specialists)
    assert plan.tasks == [], plan.reason
    assert plan.reason == no_match_message(specialists)
