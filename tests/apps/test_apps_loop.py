"""The music, system, scheduler and skills apps hand what their rules do not
understand to the SDK's agent loop, with a model configured.

One real system (controller, executor, the four apps copied to a temporary folder)
runs for the module against the scripted model (`tests.fakes.openai_server`). For
each app: a request its rules do not read, which the model answers with two of the
app's tools in a row (their results go back to it), and one where the model asks the
user first (`ask_user`) and the next thing said answers it and continues the loop;
in a real browser, the music window's question answered by a click (screenshots in
/tmp/shots/apploop).
Without a model these requests keep their offline answers (`test_apps_e2e.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser import desktop_page
from tests.controller.system import RunningSystem, copy_shipped_apps, launch
from tests.fakes.openai_server import (
    FakeOpenAI,
    RecordedRequest,
    json_reply,
    text_reply,
    tool_calls_reply,
)

pytestmark = pytest.mark.slow

APPS = ("music_app", "system_agent", "scheduler_app", "skills_app")

# per app: a request its rules do not understand, and two of its own tools in a row
REQUESTS = {
    "music_app": (
        "七里香是哪年发行的",
        ("music_library", {}),
        ("file_list", {}),
    ),
    "system_agent": (
        "帮我整理一下桌面",
        ("system_info", {"what": "overview"}),
        ("cache_get", {"key": "ui_snapshot", "namespace": "system"}),
    ),
    "scheduler_app": (
        "tidy up my reminders please",
        ("schedule", {"action": "list"}),
        ("notify", {"title": "Reminders", "body": "tidied", "level": "info"}),
    ),
    "skills_app": (
        "给月球起名",
        ("search_skills", {"keyword": "translate"}),
        ("file_list", {}),
    ),
}


@pytest.fixture(scope="module")
def system(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI
) -> Iterator[RunningSystem]:
    root = tmp_path_factory.mktemp("apps_loop")
    apps_dir = copy_shipped_apps(root / "apps", APPS)
    config = {
        "llm": {"api_key": "sk-apps-loop-test", "base_url": fake.base_url},
        "apps": {"start_at_launch": True},
    }
    running = launch(root, apps_dir, config=config)
    try:
        running.wait_for(
            lambda: all(r["status"] == "running" for r in running.apps().values()),
            what="every app running",
        )
        yield running
    finally:
        running.stop()


@pytest.fixture(autouse=True)
def _fresh_model(fake: FakeOpenAI) -> None:
    fake.reset()


def say(
    system: RunningSystem, fake: FakeOpenAI, app: str, text: str, session: str = ""
) -> tuple[dict[str, Any], str]:
    """`text`, routed to `app`: its one reply and the session."""
    fake.routes[text] = app
    answer = system.say(text, session_id=session or None)
    tasks = answer["tasks"]
    assert [t["app_id"] for t in tasks] == [app], answer
    return tasks[0]["result"], answer["session_id"]


def loop_requests(fake: FakeOpenAI) -> list[RecordedRequest]:
    """What the apps asked the model (the router's requests left out)."""
    return [r for r in fake.requests if not r.is_routing]


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    return [m for m in request.messages if m.get("role") == "tool"]


def failed(message: dict[str, Any]) -> bool:
    """Whether a tool message says its call failed (an object with an `error`)."""
    result = json.loads(message["content"])
    return isinstance(result, dict) and "error" in result


@pytest.mark.parametrize("app", APPS)
def test_a_request_the_rules_do_not_read_chains_two_of_the_apps_tools(
    system: RunningSystem, fake: FakeOpenAI, app: str
) -> None:
    text, first, second = REQUESTS[app]
    fake.script(
        tool_calls_reply(first),
        tool_calls_reply(second),
        text_reply(f"{app}: done with two tools."),
    )
    reply, _ = say(system, fake, app, text)
    assert reply["status"] == "ok", reply
    assert reply["data"]["content"] == f"{app}: done with two tools.", reply
    asked = loop_requests(fake)
    assert len(asked) == 3, [r.messages for r in asked]
    offered = {t["function"]["name"] for t in asked[0].body["tools"]}
    assert {first[0], second[0], "ask_user"} <= offered, offered
    # the app's role prompt leads the loop's system prompt, the request follows
    role = (system.apps_dir / app / "role.md").read_text("utf-8").strip()
    assert asked[0].messages[0]["content"].startswith(role)
    assert asked[0].messages[-1] == {"role": "user", "content": text}
    # each tool ran and its result went back to the model, one after the other
    assert len(tool_results(asked[1])) == 1
    ran = tool_results(asked[2])
    assert len(ran) == 2
    assert not any(failed(result) for result in ran), ran


@pytest.mark.parametrize("app", APPS)
def test_the_model_asks_first_and_the_answer_continues_the_loop(
    system: RunningSystem, fake: FakeOpenAI, app: str
) -> None:
    text, first, _ = REQUESTS[app]
    question = {"question": "Which one do you mean?", "choices": ["the first", "all"]}
    fake.script(tool_calls_reply(("ask_user", question)))
    asked, session = say(system, fake, app, text)
    assert asked["data"]["content"] == "Which one do you mean?", asked
    assert asked["awaiting_user_input"]["choices"] == ["the first", "all"]
    # the answer, said next, goes back to the same loop, which goes on with a tool
    fake.reset()
    fake.script(tool_calls_reply(first), text_reply(f"{app}: did it for all."))
    answered, _ = say(system, fake, app, "all", session)
    assert answered["data"]["content"] == f"{app}: did it for all.", answered
    resumed, last = loop_requests(fake)
    (answer,) = [m for m in tool_results(resumed) if "answer" in m["content"]]
    assert json.loads(answer["content"]) == {"answer": "all"}
    assert resumed.messages[1] == {"role": "user", "content": text}
    assert not failed(tool_results(last)[-1])


def test_a_request_the_system_model_finds_no_desktop_change_for_goes_to_the_loop(
    system: RunningSystem, fake: FakeOpenAI
) -> None:
    """With a desktop to read, the system app first asks the model for desktop
    commands; when it answers none, the loop takes the request."""
    snapshot = {
        "viewport": {"width": 1280, "height": 800},
        "elements": [{"id": "taskbar", "type": "taskbar", "label": "任务栏"}],
    }
    assert system.post("/api/ui/snapshot", snapshot).status_code == 200
    try:
        fake.script(
            json_reply({"commands": []}),
            tool_calls_reply(("system_info", {"what": "memory"})),
            text_reply("内存够用。"),
        )
        reply, _ = say(system, fake, "system_agent", "我的电脑还能再开几个程序")
        assert reply["data"]["content"] == "内存够用。", reply
        commands, first, second = loop_requests(fake)
        assert commands.body.get("response_format") == {"type": "json_object"}
        assert "tools" in first.body and not failed(tool_results(second)[-1])
    finally:  # no desktop again: the other tests' requests go to the loop at once
        empty = {"viewport": snapshot["viewport"], "elements": []}
        assert system.post("/api/ui/snapshot", empty).status_code == 200


SHOTS = Path("/tmp/shots/apploop")
ASKED = {
    "zh-CN": (
        "七里香是哪年发行的",
        "你问的是哪个版本？",
        "专辑版",
        "专辑版发行于 2004 年。",
    ),
    "en-US": (
        "when did Yesterday by The Beatles come out and then play it",
        "Which recording do you mean?",
        "the single",
        "The single came out in 1965.",
    ),
}


@pytest.mark.browser
@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_music_windows_question_is_answered_by_a_click(
    browser: Any, system: RunningSystem, fake: FakeOpenAI, locale: str
) -> None:
    text, question, choice, answer = ASKED[locale]
    SHOTS.mkdir(parents=True, exist_ok=True)
    with desktop_page(browser, system, ["music_app"], locale=locale) as page:
        fake.routes[text] = "music_app"
        fake.script(
            tool_calls_reply(("ask_user", {"question": question, "choices": [choice]}))
        )
        page.fill("#command_input", text)
        page.press("#command_input", "Enter")
        window = page.locator("#win_music_app")
        chosen = window.get_by_role("button", name=choice)
        expect(chosen).to_be_visible(timeout=20000)
        expect(window.locator(".win-main")).to_contain_text(question)
        page.screenshot(path=str(SHOTS / f"music_loop_question_{locale}.png"))
        fake.script(tool_calls_reply(("music_library", {})), text_reply(answer))
        chosen.click()
        expect(window).to_contain_text(answer, timeout=20000)
        page.screenshot(path=str(SHOTS / f"music_loop_answer_{locale}.png"))
    resumed = loop_requests(fake)[1]
    (said,) = [m for m in tool_results(resumed) if "answer" in m["content"]]
    assert json.loads(said["content"]) == {"answer": choice}
