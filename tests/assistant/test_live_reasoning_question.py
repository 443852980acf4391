"""What a person sees of the model's reasoning and of its questions, in a real
browser, in Chinese and in English: the reasoning folded under 思考过程 / Thinking
(opened by a click), and a question with its choices as buttons, a click on one
continuing the same loop. Screenshots in test-artifacts/."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.assistant.conftest import ASSISTANT, agent_requests
from tests.browser import desktop_page
from tests.controller.system import RunningSystem
from tests.fakes.openai_server import FakeOpenAI, text_reply, tool_calls_reply

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
WORDS = {
    "zh-CN": {
        "fold": "思考过程",
        "ask": "图标用什么颜色？",
        "colour": "蓝色",
        "other": "红色",
        "box": "你的回答",
    },
    "en-US": {
        "fold": "Thinking",
        "ask": "Which colour for the icon?",
        "colour": "blue",
        "other": "red",
        "box": "Your answer",
    },
}


def say(page, fake: FakeOpenAI, text: str) -> None:
    fake.routes[text] = ASSISTANT
    page.fill("#command_input", text)
    page.press("#command_input", "Enter")


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_reasoning_is_folded_and_a_question_is_answered_by_a_click(
    browser, system: RunningSystem, fake: FakeOpenAI, locale: str
) -> None:
    words = WORDS[locale]
    ARTIFACTS.mkdir(exist_ok=True)
    with desktop_page(browser, system, [ASSISTANT], locale=locale) as page:
        fake.script(text_reply("42", reasoning="6 × 7 = 42, so the answer is 42."))
        say(page, fake, f"智能助手 6*7 {locale}")
        window = page.locator(f"#win_{ASSISTANT}")
        fold = window.locator(".win-main details.agent-reasoning")
        expect(fold).to_be_visible(timeout=20000)
        expect(fold.locator("summary")).to_have_text(words["fold"])
        text = fold.locator(".agent-reasoning-text")
        expect(text).to_be_hidden()  # folded until opened
        fold.locator("summary").click()
        expect(text).to_have_text("6 × 7 = 42, so the answer is 42.")
        page.screenshot(path=str(ARTIFACTS / f"agent_reasoning_{locale}.png"))

        question = {"question": words["ask"], "choices": [words["other"], words["colour"]]}
        fake.script(tool_calls_reply(("ask_user", question)))
        say(page, fake, f"智能助手 pick a colour {locale}")
        chosen = window.get_by_role("button", name=words["colour"])
        expect(chosen).to_be_visible(timeout=20000)
        expect(window.locator(".win-main")).to_contain_text(words["ask"])
        expect(window.get_by_role("button", name=words["other"])).to_be_visible()
        expect(window.get_by_label(words["box"])).to_be_visible()
        page.screenshot(path=str(ARTIFACTS / f"agent_question_{locale}.png"))
        fake.script(text_reply(f"OK: {words['colour']}."))
        chosen.click()
        expect(window).to_contain_text(f"OK: {words['colour']}.", timeout=20000)
        last = agent_requests(fake)[-1].messages[-1]
        assert last["role"] == "tool" and words["colour"] in last["content"]
