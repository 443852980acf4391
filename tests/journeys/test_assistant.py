"""Journeys with the assistant and a model: a question answered, a note written into
the workspace, and an overwrite that asks first and is refused.

In Chromium at 1280×800, in Chinese and in English, against the real system with
every shipped app and the scripted OpenAI-compatible server as its model (the
router's answer for each instruction is scripted to the assistant). What happened
is read from the assistant's workspace and from what the model was asked.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.fakes.openai_server import FakeOpenAI, text_reply, tool_calls_reply
from tests.journeys.conftest import LOCALES, Journey, World, start_world

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ASSISTANT = "assistant_app"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from start_world(tmp_path_factory, "journeys_assistant", model=True)


@pytest.fixture
def model(world: World) -> Iterator[FakeOpenAI]:
    assert world.model is not None
    world.model.reset()
    yield world.model
    assert world.model.pending == 0, "the model was asked less often than scripted"


def ask(journey: Journey, model: FakeOpenAI, text: str) -> None:
    model.routes[text] = ASSISTANT  # the router gives it to the assistant
    journey.say(text)


def asked_with(model: FakeOpenAI, text: str) -> bool:
    """Whether the assistant's model (not the router) was asked about `text`."""
    return any(not r.is_routing and text in r.prompt_text for r in model.requests)


@pytest.mark.parametrize("locale", LOCALES)
def test_assistant_answers_a_question(
    journey: Journey, model: FakeOpenAI, locale: str
) -> None:
    answer = journey.tr(
        "秋风起，落叶黄，一行大雁向南方。",
        "The sea is wide, the sea is deep, and it sings.",
    )
    model.script(text_reply(answer))
    text = journey.tr("写一首关于秋天的诗", "compose a poem about the sea")
    ask(journey, model, text)
    window = journey.window(ASSISTANT)
    expect(window).to_contain_text(answer)
    assert asked_with(model, text)
    journey.shot("1-answered")


@pytest.mark.parametrize("locale", LOCALES)
def test_assistant_writes_a_note_into_its_workspace(
    journey: Journey, model: FakeOpenAI, locale: str
) -> None:
    note = journey.world.workspace(ASSISTANT) / "shopping.txt"
    note.unlink(missing_ok=True)
    content = journey.tr("牛奶\n鸡蛋\n面包\n", "milk\neggs\nbread\n")
    done = journey.tr(
        "已把购物清单写进 shopping.txt。", "I wrote the list into shopping.txt."
    )
    model.script(
        tool_calls_reply(("file_write", {"path": "shopping.txt", "content": content})),
        text_reply(done),
    )
    ask(
        journey,
        model,
        journey.tr(
            "让智能助手把牛奶、鸡蛋、面包写进购物清单 shopping.txt",
            "ask the assistant to write milk, eggs and bread into shopping.txt",
        ),
    )
    window = journey.window(ASSISTANT)
    expect(window).to_contain_text(done)
    assert note.read_text("utf-8") == content
    journey.shot("1-written")


@pytest.mark.parametrize("locale", LOCALES)
def test_assistant_asks_before_overwriting_and_a_no_keeps_the_file(
    journey: Journey, model: FakeOpenAI, locale: str
) -> None:
    readme = journey.world.workspace(ASSISTANT) / "README.txt"
    kept = readme.read_text("utf-8")
    model.script(
        tool_calls_reply(("file_write", {"path": "README.txt", "content": "gone"}))
    )
    ask(
        journey,
        model,
        journey.tr("让智能助手清空说明文件", "ask the assistant to empty the readme"),
    )
    dialog = journey.page.locator("#confirm_dialog")
    expect(dialog).to_contain_text("README.txt")
    assert readme.read_text("utf-8") == kept  # nothing written before the answer
    journey.shot("1-asked")
    left = journey.tr("好的，说明文件保持原样。", "All right, the readme stays as it is.")
    model.script(text_reply(left))
    dialog.get_by_role("button", name=journey.tr("拒绝", "Deny"), exact=True).click()
    expect(journey.window(ASSISTANT)).to_contain_text(left)
    assert readme.read_text("utf-8") == kept
    journey.shot("2-refused")
