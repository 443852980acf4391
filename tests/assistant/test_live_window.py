"""The desktop shows the agent loop live, in a real browser: the tool call with its
arguments and result while the model still works, the streamed answer (without an
attempt the loop retried), and the pause with its confirmation, whose yes replays the
call."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.assistant.conftest import ASSISTANT
from tests.browser import desktop_page
from tests.controller.system import RunningSystem
from tests.fakes.openai_server import (
    FakeOpenAI,
    delayed,
    text_reply,
    tool_calls_reply,
    truncated_reply,
)
from tests.procs import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def page(browser, system: RunningSystem):
    with desktop_page(browser, system, [ASSISTANT]) as desktop:
        yield desktop


def say(page, fake: FakeOpenAI, text: str) -> None:
    fake.routes[text] = ASSISTANT
    page.fill("#command_input", text)
    page.press("#command_input", "Enter")


def test_tool_calls_and_results_show_while_the_model_works(page, fake: FakeOpenAI) -> None:
    fake.script(
        tool_calls_reply(("file_list", {"path": "."})),
        delayed(2.5, text_reply("工作区里只有一个说明文件 README.txt。")),
    )
    say(page, fake, "智能助手 列一下工作区")
    live = page.locator(f"#agent_live_{ASSISTANT}")
    call = live.locator(".agent-live-call")
    # the assistant starts on this first use and asks the model: seconds on a busy machine
    expect(call).to_contain_text("file_list", timeout=15000)
    expect(call.locator(".agent-live-args")).to_contain_text('"path": "."')
    expect(call.locator(".agent-live-result")).to_contain_text("README.txt")
    expect(call).to_have_attribute("data-status", "ok")
    window = page.locator(f"#win_{ASSISTANT}")
    expect(window).to_contain_text("工作区里只有一个说明文件 README.txt。", timeout=20000)


def test_a_retried_attempt_is_taken_back_from_the_live_view(page, fake: FakeOpenAI) -> None:
    """Cut off, asked again from the same history, cut off again and continued: the
    first attempt's text leaves the view, each piece shows once."""
    fake.script(
        truncated_reply("AAA-first"),
        truncated_reply("BBB-second"),
        delayed(2.5, text_reply("CCC-tail")),
    )
    say(page, fake, "智能助手 写一段很长的话")
    live = page.locator(f"#agent_live_{ASSISTANT}")
    expect(live.locator(".agent-live-note")).to_have_count(2, timeout=15000)
    expect(live.locator(".agent-live-text")).to_have_text(["BBB-second"])
    window = page.locator(f"#win_{ASSISTANT}")
    expect(window).to_contain_text("BBB-secondCCC-tail", timeout=20000)
    expect(window).not_to_contain_text("AAA-first")


def test_the_pause_shows_its_confirmation_and_yes_replays(
    page, fake: FakeOpenAI, system: RunningSystem
) -> None:
    fake.script(
        tool_calls_reply(("file_write", {"path": "README.txt", "content": "页面确认"}))
    )
    say(page, fake, "智能助手 在页面里改写说明")
    window = page.locator(f"#win_{ASSISTANT}")
    expect(window.locator(".v-confirm")).to_be_visible(timeout=20000)
    expect(window.locator(".confirm-step").first).to_contain_text("README.txt")
    fake.script(text_reply("已按你的确认改写 `README.txt`。"))
    page.locator("#confirm_allow_once").click()  # the desktop's confirmation dialog
    expect(window).to_contain_text("已按你的确认改写", timeout=20000)
    assert (system.workspace(ASSISTANT) / "README.txt").read_text() == "页面确认"


SHOTS = ROOT / "test-artifacts" / "assistant"


@pytest.mark.parametrize(
    ("locale", "text", "answer"),
    [
        ("zh-CN", "智能助手 用技能改写说明", "技能改写了说明文件。"),
        ("en-US", "assistant rewrite the readme with the skill", "The skill rewrote it."),
    ],
)
def test_a_forked_skills_write_asks_in_the_desktops_dialog(
    browser, system: RunningSystem, fake: FakeOpenAI, locale: str, text: str, answer: str
) -> None:
    """The sub-agent of a skill marked `context: fork` meets the same dialog as any
    call: the overwrite waits for the click, then its report reaches the answer."""
    skill = system.state_dir / "users" / "default" / "skills" / "rewrite_readme"
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(
        "---\nname: rewrite_readme\ndescription: Rewrite the README\ncontext: fork\n"
        "allowed-tools: [file_write]\n---\nRewrite README.txt.\n"
    )
    written = f"rewritten by the skill ({locale})"
    fake.when(
        "<fork-boilerplate>",
        tool_calls_reply(("file_write", {"path": "README.txt", "content": written})),
        text_reply("rewrote README.txt"),
    )
    fake.script(tool_calls_reply(("skill", {"name": "rewrite_readme"})))
    readme = system.workspace(ASSISTANT) / "README.txt"
    with desktop_page(browser, system, [ASSISTANT], locale=locale) as page:
        say(page, fake, text)
        dialog = page.locator("#confirm_dialog")
        expect(dialog).to_be_visible(timeout=20000)
        expect(dialog.locator(".confirm-step").first).to_contain_text("README.txt")
        assert readme.read_text() != written  # nothing ran before the click
        SHOTS.mkdir(parents=True, exist_ok=True)
        shot = SHOTS / f"forked_skill_confirm_{locale}.png"
        page.screenshot(path=str(shot), animations="disabled")
        fake.script(text_reply(answer))
        page.locator("#confirm_allow_once").click()
        window = page.locator(f"#win_{ASSISTANT}")
        expect(window).to_contain_text(answer, timeout=20000)
        shot = SHOTS / f"forked_skill_done_{locale}.png"
        page.screenshot(path=str(shot), animations="disabled")
    assert readme.read_text() == written
