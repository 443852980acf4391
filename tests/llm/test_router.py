"""LLM routing behind the deterministic router, against the fake server."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from aios_runtime.settings import Settings
from controller.llm.client import LLMClient
from controller.routing.llm_router import FallbackRouter, LLMRouter, validate_tasks
from controller.routing.router import (
    AppProfile,
    DeterministicRouter,
    PlannedTask,
    RoutePlan,
)
from tests.fakes.openai_server import (
    FakeOpenAI,
    delayed,
    error_reply,
    json_reply,
    text_reply,
)
from tests.llm.conftest import APPS

TWO_TASKS = {
    "tasks": [
        {
            "id": "t1",
            "app_id": "music_app",
            "instruction": "搜索适合跑步的歌",
            "depends_on": [],
        },
        {
            "id": "t2",
            "app_id": "code_app",
            "instruction": "写个程序统计这些歌的总时长",
            "depends_on": ["t1"],
        },
    ]
}


class FixedRouter:
    """A deterministic router that always answers `plan` (and counts its calls)."""

    def __init__(self, plan: RoutePlan, confident: float = 0.6):
        self.plan = plan
        self.confident = confident
        self.calls = 0

    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan:
        self.calls += 1
        return self.plan


UNSURE = RoutePlan([PlannedTask("t1", "music_app", "x")], confidence=0.2, reason="guess")
NOTHING = RoutePlan([], confidence=0.0, reason="no app")


def fallback(client: LLMClient, plan: RoutePlan = UNSURE) -> FallbackRouter:
    return FallbackRouter(FixedRouter(plan), LLMRouter(client))


def test_llm_decomposes_into_tasks_with_dependencies(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(json_reply(TWO_TASKS))
    plan = fallback(client).route("来点适合跑步的歌，然后算算总时长", APPS)
    assert [(t.task_id, t.app_id, t.depends_on) for t in plan.tasks] == [
        ("t1", "music_app", []),
        ("t2", "code_app", ["t1"]),
    ]
    assert plan.tasks[1].instruction == "写个程序统计这些歌的总时长"
    assert plan.llm_calls == 1
    assert plan.reason == "llm"
    [sent] = fake.requests
    assert sent.body["response_format"] == {"type": "json_object"}
    prompt = sent.prompt_text
    for app in APPS:
        assert app.app_id in prompt and app.name in prompt and app.description in prompt
    assert "帮我播放周杰伦的歌" in prompt  # examples are given
    assert sent.messages[-1] == {
        "role": "user",
        "content": "来点适合跑步的歌，然后算算总时长",
    }


def test_malformed_json_gets_one_repair_then_succeeds(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(text_reply('{"tasks": [{"id": "t1", "app_id": '), json_reply(TWO_TASKS))
    plan = fallback(client).route("跑步歌单然后统计", APPS)
    assert [t.app_id for t in plan.tasks] == ["music_app", "code_app"]
    assert plan.llm_calls == 2
    first, repair = fake.requests
    assert len(repair.messages) == len(first.messages) + 2
    assert repair.messages[-2] == {
        "role": "assistant",
        "content": '{"tasks": [{"id": "t1", "app_id": ',
    }
    assert "not usable" in repair.messages[-1]["content"]


def test_unknown_app_is_named_in_the_repair_request(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    bad = {"tasks": [{"id": "t1", "app_id": "weather_app", "instruction": "天气"}]}
    fake.script(json_reply(bad), json_reply(TWO_TASKS))
    plan = fallback(client).route("…", APPS)
    assert plan.llm_calls == 2 and len(plan.tasks) == 2
    assert "weather_app" in fake.requests[1].messages[-1]["content"]


def test_malformed_twice_falls_back_to_the_deterministic_plan(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(text_reply("I think music_app"), text_reply("still not json"))
    plan = fallback(client).route("随便放点什么", APPS)
    assert plan.tasks == UNSURE.tasks
    assert plan.reason == "guess"
    assert plan.llm_calls == 2
    assert len(fake.requests) == 2
    assert fake.pending == 0


def test_forward_dependency_twice_falls_back(fake: FakeOpenAI, client: LLMClient) -> None:
    cyclic = {
        "tasks": [
            {"id": "t1", "app_id": "music_app", "instruction": "a", "depends_on": ["t2"]},
            {"id": "t2", "app_id": "code_app", "instruction": "b", "depends_on": ["t1"]},
        ]
    }
    fake.script(json_reply(cyclic), json_reply(cyclic))
    plan = fallback(client).route("…", APPS)
    assert plan.tasks == UNSURE.tasks and plan.llm_calls == 2
    assert "not an earlier task" in fake.requests[1].messages[-1]["content"]


def test_timeout_falls_back_after_one_call(fake: FakeOpenAI, make_client) -> None:
    client = make_client(timeout=0.3)
    fake.script(delayed(5, json_reply(TWO_TASKS)))
    plan = fallback(client).route("…", APPS)
    assert plan.tasks == UNSURE.tasks
    assert plan.llm_calls == 1
    assert client.status() == "failing"


def test_unauthorized_falls_back_and_marks_failing(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(error_reply(401))
    plan = fallback(client, NOTHING).route("…", APPS)
    assert plan.tasks == [] and plan.reason == "no app" and plan.llm_calls == 1
    assert client.status() == "failing"


def test_model_finding_no_app_keeps_the_deterministic_plan(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(json_reply({"tasks": []}))
    plan = fallback(client).route("…", APPS)
    assert plan.tasks == UNSURE.tasks and plan.llm_calls == 1


def test_confident_deterministic_plan_is_never_sent_to_the_llm(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    fake.script(json_reply(TWO_TASKS))
    router = FallbackRouter(DeterministicRouter(), LLMRouter(client))
    plan = router.route("帮我播放周杰伦的歌", APPS)
    assert [t.app_id for t in plan.tasks] == ["music_app"]
    assert plan.confidence >= router.threshold
    assert plan.llm_calls == 0
    assert fake.requests == []
    assert fake.pending == 1


def test_unmatched_instruction_goes_to_the_llm(fake: FakeOpenAI, client: LLMClient) -> None:
    fake.script(
        json_reply(
            {"tasks": [{"id": "t1", "app_id": "music_app", "instruction": "放首欢快的歌"}]}
        )
    )
    router = FallbackRouter(DeterministicRouter(), LLMRouter(client))
    plan = router.route("今天心情不好，想开心一点", APPS)
    assert [t.app_id for t in plan.tasks] == ["music_app"]
    assert plan.llm_calls == 1 and len(fake.requests) == 1


def test_threshold_comes_from_the_deterministic_router(client: LLMClient) -> None:
    assert FallbackRouter(DeterministicRouter(confident=0.9), None).threshold == 0.9
    assert (
        FallbackRouter(FixedRouter(UNSURE, confident=0.4), LLMRouter(client)).threshold
        == 0.4
    )
    assert FallbackRouter(FixedRouter(UNSURE), None, threshold=0.7).threshold == 0.7


def test_without_llm_the_deterministic_plan_is_returned(fake: FakeOpenAI) -> None:
    unconfigured = LLMClient(Settings())
    for llm_router in (LLMRouter(unconfigured), None):
        deterministic = FixedRouter(NOTHING)
        plan = FallbackRouter(deterministic, llm_router).route("今天心情不好", APPS)
        assert plan is NOTHING and plan.llm_calls == 0
        assert deterministic.calls == 1
    assert fake.requests == []


ASSISTANT = AppProfile(
    "assistant_app",
    "智能助手",
    "通用助手：用模型和工具完成任何任务",
    system_role="catch_all",
)


def test_an_unclaimed_instruction_goes_to_the_catch_all_app(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    apps = (*APPS, ASSISTANT)
    fake.script(json_reply({"tasks": []}))  # the model does not claim it either
    plan = FallbackRouter(FixedRouter(NOTHING), LLMRouter(client)).route(
        "帮我想想周末去哪玩", apps
    )
    assert [(t.app_id, t.instruction) for t in plan.tasks] == [
        ("assistant_app", "帮我想想周末去哪玩")
    ]
    assert plan.llm_calls == 1
    # the model's own choice wins over the catch-all
    fake.script(json_reply(TWO_TASKS))
    plan = FallbackRouter(FixedRouter(NOTHING), LLMRouter(client)).route(
        "来点适合跑步的歌，然后算算总时长", apps
    )
    assert [t.app_id for t in plan.tasks] == ["music_app", "code_app"]
    # without a model it goes there too, and no model is asked (the app says what
    # it needs); without the app installed nothing claims it
    requests = len(fake.requests)
    unconfigured = FallbackRouter(FixedRouter(NOTHING), LLMRouter(LLMClient(Settings())))
    plan = unconfigured.route("帮我想想周末去哪玩", apps)
    assert [(t.app_id, t.instruction) for t in plan.tasks] == [
        ("assistant_app", "帮我想想周末去哪玩")
    ]
    assert plan.llm_calls == 0 and len(fake.requests) == requests
    assert FallbackRouter(FixedRouter(NOTHING), None).route("x", apps).tasks != []
    assert unconfigured.route("帮我想想周末去哪玩", APPS) is NOTHING
    fake.script(json_reply({"tasks": []}))
    absent = FallbackRouter(FixedRouter(NOTHING), LLMRouter(client))
    assert absent.route("帮我想想周末去哪玩", APPS).tasks == []


def test_validate_tasks_renumbers_and_maps_dependencies() -> None:
    payload = {
        "tasks": [
            {"id": "search", "app_id": "music_app", "instruction": " 找歌 "},
            {
                "id": "count",
                "app_id": "代码应用",
                "instruction": "统计",
                "depends_on": ["search"],
            },
        ]
    }
    tasks = validate_tasks(payload, APPS)
    assert tasks == [
        PlannedTask("t1", "music_app", "找歌", []),
        PlannedTask("t2", "code_app", "统计", ["t1"]),
    ]


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"tasks": [{"id": "t1", "app_id": "nope", "instruction": "x"}]}, "not one of"),
        (
            {
                "tasks": [
                    {
                        "id": "t1",
                        "app_id": "music_app",
                        "instruction": "x",
                        "depends_on": ["t1"],
                    }
                ]
            },
            "not an earlier task",
        ),
        (
            {
                "tasks": [
                    {"id": "t1", "app_id": "music_app", "instruction": "x"},
                    {"id": "t1", "app_id": "code_app", "instruction": "y"},
                ]
            },
            "used twice",
        ),
        (
            {"tasks": [{"id": "t1", "app_id": "music_app", "instruction": ""}]},
            "instruction",
        ),
        ({"task": []}, "tasks"),
        (
            {
                "tasks": [
                    {"id": f"t{i}", "app_id": "music_app", "instruction": "x"}
                    for i in range(9)
                ]
            },
            "at most",
        ),
    ],
)
def test_validate_tasks_refuses(payload: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        validate_tasks(payload, APPS)


def test_the_model_of_the_request_being_routed_is_asked(
    fake: FakeOpenAI, client: LLMClient
) -> None:
    from controller.user_settings import model_for, served_user, serving_user

    with FakeOpenAI() as theirs:
        own = Settings(llm={"api_key": "sk-alice", "base_url": theirs.base_url})
        clients = {"alice": LLMClient(own, timeout=client.timeout)}
        router = LLMRouter(
            client, current=lambda: model_for(served_user(), client, clients.get)
        )
        theirs.script(json_reply(TWO_TASKS))
        with serving_user("alice"):
            assert router.route("跑步的歌和总时长", APPS) is not None
        fake.script(json_reply(TWO_TASKS))
        with serving_user("bob"):  # no model of their own: the owner's
            assert router.route("跑步的歌和总时长", APPS) is not None
        assert [r.headers["authorization"] for r in theirs.requests] == ["Bearer sk-alice"]
    assert [r.headers["authorization"] for r in fake.requests] == ["Bearer sk-test"]
