"""Open requests and named apps through a running system.

A real system (controller, executor, apps as processes) with the shipped assistant,
music and code apps and no model configured. A poem is no specialist's job: it goes
to the assistant, which says plainly that it needs a model; "智能助手，…" is for the
assistant alone, whatever music words follow; a program's text is the code app's;
a request with a leading time becomes a job of the scheduler, its words the job's.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from tests.controller.system import (
    TEST_CONFIG,
    RunningSystem,
    build_apps_dir,
    copy_shipped_apps,
    serving,
)

pytestmark = pytest.mark.slow

SHIPPED = ("assistant_app", "music_app", "code_app", "scheduler_app")


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("open_requests")
    apps = copy_shipped_apps(build_apps_dir(root / "apps", test_apps=()), SHIPPED)
    config = copy.deepcopy(TEST_CONFIG)  # no model: no key, no local model server
    # the music catalogue cannot be reached: nothing listens on port 9
    config["app_settings"] = {"music_app": {"api_base": "http://127.0.0.1:9"}}
    with serving(root, apps, ("hello_app", *SHIPPED), config=config) as running:
        yield running


def say(system: RunningSystem, text: str, language: str = "zh-CN") -> dict[str, Any]:
    response = system.post("/api/instruction", {"text": text, "language": language})
    assert response.status_code == 200, response.text
    return response.json()


def apps_of(reply: dict[str, Any]) -> list[str]:
    return [task["app_id"] for task in reply["tasks"]]


def test_the_named_assistant_alone_says_it_needs_a_model(system: RunningSystem) -> None:
    text = "智能助手，帮我写一首关于秋天的诗"
    reply = say(system, text)
    assert apps_of(reply) == ["assistant_app"], reply
    (task,) = reply["tasks"]
    assert task["instruction"] == text
    assert task["result"]["status"] == "ok"
    assert reply["message"] == "什么也没做：智能助手需要配置模型"
    content = task["result"]["data"]["content"]
    assert "智能助手需要一个模型才能工作" in content and "音乐应用" in content
    assert "assistant" not in content.lower()  # one language


def test_a_poem_goes_to_the_assistant_not_the_music_app(system: RunningSystem) -> None:
    for text in ("写一首诗", "帮我写一首关于秋天的诗"):
        reply = say(system, text)
        assert apps_of(reply) == ["assistant_app"], (text, reply)
        assert reply["message"] == "什么也没做：智能助手需要配置模型"
    english = say(system, "write a poem about autumn", "en-US")
    assert apps_of(english) == ["assistant_app"], english
    assert english["message"] == "Nothing was done: the assistant needs a model"
    content = english["tasks"][0]["result"]["data"]["content"]
    assert content.startswith("The assistant needs a model, and none is configured")
    assert "智能助手需要" not in content


def test_a_programs_words_are_the_code_apps(system: RunningSystem) -> None:
    reply = say(system, '运行这段代码 print("播放")')
    assert apps_of(reply) == ["code_app"], reply


def test_a_timed_request_becomes_a_job_not_music_now(system: RunningSystem) -> None:
    for text, language, instruction in (
        ("明天下午3点播放音乐", "zh-CN", "播放音乐"),
        ("tomorrow at 3pm play music", "en-US", "play music"),
    ):
        reply = say(system, text, language)
        assert apps_of(reply) == ["scheduler_app"], (text, reply)
        assert reply["tasks"][0]["result"]["status"] == "ok", reply
        jobs = system.get("/api/schedules").json()["jobs"]
        job = next(j for j in jobs if j["instruction"] == instruction)
        assert job["schedule_type"] == "once" and "T15:00" in job["run_at"], job


def test_a_poem_about_music_is_the_assistants(system: RunningSystem) -> None:
    for text, language in (
        ("写一首关于音乐的诗", "zh-CN"),
        ("write a poem about music", "en-US"),
    ):
        reply = say(system, text, language)
        assert apps_of(reply) == ["assistant_app"], (text, reply)
