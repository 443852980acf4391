"""Skills in a real running system: the listing through the controller, routing to 技能,
install through the real confirmation flow, and the desktop in Chromium.

One `aios start --headless` with hello_app and the shipped skills_app; the shared
skills folder is `<state_dir>/skills/` with the example skills copied in at start.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from aios_protocol.messages import ATOMIC_TOOLS
from controller.api.tools import LISTING_TTL
from tests.browser import desktop_page
from tests.controller.system import RunningSystem, copy_shipped_apps, launch
from tests.procs import ROOT
from tests.security.conftest import open_desktop
from tests.skills.conftest import PY_SKILL, wait_for, write_skill

pytestmark = pytest.mark.slow
SHOTS = ROOT / "test-artifacts" / "skills"
ROUTING_SHOTS = Path("/tmp/shots/routing")
SKILLS_TOOLS = {"search_skills", "skill", "run_command", "install_skill", "reload_skills"}


def _running(
    factory: pytest.TempPathFactory, name: str, app_ids: tuple[str, ...]
) -> Iterator[RunningSystem]:
    """A launched system with copies of the shipped `app_ids`, once 技能 runs."""
    root = factory.mktemp(name)
    running = launch(root, copy_shipped_apps(root / "apps", app_ids))
    try:
        running.wait_app("skills_app", "running")
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    yield from _running(tmp_path_factory, "skills_system", ("hello_app", "skills_app"))


def listing(system: RunningSystem, app_id: str) -> dict:
    response = system.get(f"/api/tools?app_id={app_id}")
    assert response.status_code == 200, response.text
    return response.json()


def skills_listed(system: RunningSystem) -> dict[str, dict]:
    status = listing(system, "skills_app")["providers"].get("skills", {})
    return {s["name"]: s for s in status.get("skills", [])}


def test_api_tools_lists_the_skills_tools_through_a_running_controller(system) -> None:
    body = wait_for(
        lambda: (
            (b := listing(system, "skills_app"))["providers"]["skills"]["state"]
            == "running"
            and b
        ),
        20,
    )
    tools = {t["name"]: t for t in body["tools"] if t["provider"] == "skills"}
    assert set(tools) == SKILLS_TOOLS
    assert (
        tools["install_skill"]["requires_confirmation"]
        and tools["install_skill"]["risk_level"] == "system"
    )
    assert {"temp_convert", "text_stats", "code_review"} <= set(skills_listed(system))
    # every app sees them (the skills are the system's, not one app's)
    assert {t["name"] for t in listing(system, "hello_app")["tools"]} >= SKILLS_TOOLS


def test_an_instruction_no_app_claims_goes_to_the_matching_skill(system) -> None:
    (task,) = system.say("把30摄氏度换算成华氏度")["tasks"]
    assert task["app_id"] == "skills_app"
    reply = task["result"]
    assert reply["view_type"] == "dashboard" and "temp_convert" in reply["data"]["title"]
    (run,) = [a for a in reply["actions"] if a["action_id"] == "run"]
    assert [f["name"] for f in run["fields"]] == ["value", "to"]
    assert system.say("帮我订一张去北京的机票")["tasks"] == []  # no app and no skill


def test_a_skill_instruction_is_answered_first(system) -> None:
    """The number said fills the one numeric option, 华氏 names
    `--to f`, the skill runs and its answer (30 °C = 86 °F) comes first."""
    (task,) = system.say("把30摄氏度换算成华氏度")["tasks"]
    assert task["app_id"] == "skills_app" and task["status"] == "done", task
    reply = task["result"]
    assert reply["message"] == "30 °C = 86.0 °F"
    first, *rest = reply["data"]["widgets"]
    assert first["data"]["code"].startswith("30 °C = 86.0 °F")
    assert [w.get("folded", False) for w in rest] == [False, True]  # the help folded
    (run,) = [a for a in reply["actions"] if a["action_id"] == "run"]
    assert {f["name"]: f.get("value") for f in run["fields"]} == {"value": 30, "to": "f"}
    # two numbers: which one is meant is not clear, so nothing runs
    (task,) = system.say("把30或40摄氏度换算成华氏度")["tasks"]
    reply = task["result"]
    assert reply["message"] == "找到技能「temp_convert」：请填写「温度数值」后点运行"
    assert all(w["title"] != "输出" for w in reply["data"]["widgets"])


def _confirm(system: RunningSystem, text: str) -> dict:
    (task,) = system.say(text)["tasks"]
    assert task["app_id"] == "skills_app"
    reply = task["result"]
    assert reply["view_type"] == "confirm", reply
    (step,) = reply["data"]["steps"]
    assert step["tool"] == "install_skill" and step["kind"] == "requires_confirmation"
    return reply["data"]


def test_install_pauses_for_the_users_yes_and_deny_installs_nothing(system) -> None:
    shared = system.state_dir / "users" / "default" / "skills"
    work = system.workspace("skills_app")
    write_skill(
        work,
        "hello_skill.py",
        PY_SKILL.format(name="hello_skill", summary="Say hello"),
        executable=False,
    )
    data = _confirm(system, "安装技能 hello_skill.py")
    assert not (shared / "hello_skill").exists()  # nothing ran yet
    final = system.post(
        f"/api/confirmations/{data['confirmation_id']}", {"decision": "allow_once"}
    )
    assert final.status_code == 200, final.text
    assert final.json()["message"] == "已安装技能「hello_skill」：Say hello"
    assert os.access(shared / "hello_skill", os.X_OK)
    wait_for(lambda: "hello_skill" in skills_listed(system), 5)
    write_skill(work, "tips.md", "# 小贴士\n", executable=False)
    data = _confirm(system, "安装技能 tips.md")
    final = system.post(
        f"/api/confirmations/{data['confirmation_id']}", {"decision": "deny"}
    )
    assert final.json()["message"] == "好的，没有安装"
    assert not (shared / "tips.md").exists()


def test_a_skill_dropped_into_the_folder_routes_without_a_restart(system) -> None:
    # the executor sees it within 2 s; the controller reuses a listing up to LISTING_TTL
    seen = 2.0 + LISTING_TTL
    shared: Path = system.state_dir / "users" / "default" / "skills"
    write_skill(
        shared,
        "moon_phase",
        "#!/bin/sh\n[ \"$1\" = --help ] && { echo '月相查询 - 查看今晚的月相 (moon phase tonight)'; exit 0; }\necho 满月\n",
    )
    wait_for(lambda: skills_listed(system).get("moon_phase", {}).get("summary"), seen)
    (task,) = wait_for(lambda: system.say("查看今晚的月相")["tasks"], 4)
    assert (
        task["app_id"] == "skills_app" and "moon_phase" in task["result"]["data"]["title"]
    )
    (shared / "moon_phase").unlink()
    wait_for(lambda: "moon_phase" not in skills_listed(system), seen)


# ------------------------------------------------------------------- desktop


@pytest.mark.browser
def test_the_skills_window_lists_every_skill_and_runs_one(browser, system) -> None:
    desktop = open_desktop(browser, system, wait_for="#task_skills_app")
    page = desktop.page
    try:
        page.click("#start_button")
        page.click("#start_menu .start-item[data-app-id=skills_app]")
        window = page.locator("#win_skills_app")
        row = window.locator("tr", has_text="temp_convert")
        row.wait_for()
        assert "可执行" in row.inner_text() and "共享" in row.inner_text()
        assert "Markdown" in window.locator("tr", has_text="code_review").inner_text()
        row.get_by_role("button", name="打开").click()
        window.locator("input[name=value]").wait_for()
        window.locator("input[name=value]").fill("100")
        window.get_by_role("button", name="运行", exact=True).click()  # not 在沙箱中运行
        window.locator(".v-widget").first.get_by_text("100 °C = 212.0 °F").wait_for()
        window.get_by_role("button", name="返回列表").click()
        window.get_by_role("button", name="重新加载").click()
        window.locator("tr", has_text="text_stats").wait_for()
        assert desktop.errors == []
    finally:
        page.context.close()


ANSWERS = {
    "zh-CN": (
        "把30摄氏度换算成华氏度",
        "使用说明",
        "把30或40摄氏度换算成华氏度",
        "找到技能「temp_convert」：请填写「温度数值」后点运行",
    ),
    "en-US": (
        "convert 30 celsius to fahrenheit",
        "How to use it",
        "convert 30 or 40 celsius to fahrenheit",
        'Found the skill "temp_convert": fill in "The number of degrees" and press Run',
    ),
}


@pytest.mark.browser
@pytest.mark.parametrize("locale", list(ANSWERS))
def test_a_skill_instruction_shows_its_answer_without_scrolling(
    browser, system, locale: str
) -> None:
    """At 1280×800: the answer is at the top of the skills window,
    inside what the window shows; the help is folded until it is clicked. Two
    numbers: the form, saying what to fill in, and no output."""
    said, help_title, unclear, asking = ANSWERS[locale]
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale=locale)
    page = context.new_page()
    page.set_default_timeout(15000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{system.url}/?token={system.token}")
        page.wait_for_selector("#task_skills_app")
        page.fill("#command_input", said)
        page.press("#command_input", "Enter")
        window = page.locator("#win_skills_app")
        answer = window.locator(".v-widget").first.get_by_text("30 °C = 86.0 °F")
        answer.wait_for()
        SHOTS.mkdir(parents=True, exist_ok=True)
        ROUTING_SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"skill-answer-{locale}.png"))
        main = window.locator(".win-main").bounding_box()
        box = answer.bounding_box()
        assert main and box
        shown_to = min(main["y"] + main["height"], 800)
        assert main["y"] <= box["y"] and box["y"] + box["height"] <= shown_to, (main, box)
        scrolled = window.locator(".win-main").evaluate("n => n.scrollTop")
        assert scrolled == 0
        help_text = window.get_by_text("--value VALUE", exact=False)
        assert not help_text.is_visible()  # folded
        window.get_by_text(help_title).click()
        help_text.first.wait_for(state="visible")
        page.screenshot(path=str(SHOTS / f"skill-answer-{locale}-help-open.png"))
        page.fill("#command_input", unclear)
        page.press("#command_input", "Enter")
        window.locator(".win-status", has_text=asking).wait_for()
        assert window.locator("input[name=value]").input_value() == ""
        assert window.locator("select[name=to]").input_value() == "f"
        assert window.locator(".v-code", has_text="°F").count() == 0  # nothing ran
        page.screenshot(path=str(SHOTS / f"skill-asks-{locale}.png"))
        back = "返回列表" if locale == "zh-CN" else "Back to the list"
        if locale == "en-US":  # the skill's own words in English too
            shown = window.locator(".win-main").inner_text()
            assert not re.search(r"[\u4e00-\u9fff]", shown), shown
        page.screenshot(path=str(ROUTING_SHOTS / f"skills-form-{locale}.png"))
        window.get_by_role("button", name=back).click()
        table = window.locator("table")
        table.locator("tr", has_text="code_review").wait_for()
        summaries = [r.inner_text() for r in table.locator("tbody tr").all()]
        if locale == "en-US":  # each shipped skill's summary in English only
            assert not any(re.search(r"[\u4e00-\u9fff]", row) for row in summaries)
            assert any("Code review checklist" in row for row in summaries), summaries
        else:
            assert any("文字统计" in row for row in summaries), summaries
        page.screenshot(path=str(ROUTING_SHOTS / f"skills-window-{locale}.png"))
        assert errors == []
    finally:
        context.close()


FAILED_RUN = {
    "zh-CN": (
        "统计一下行数和字数",
        "没能完成：技能「text_stats」运行出错（参数错误或执行失败）。",
    ),
    "en-US": (
        "count the words",
        'Not done: the skill "text_stats" failed (bad arguments or a general failure).',
    ),
}


@pytest.mark.browser
@pytest.mark.parametrize("locale", list(FAILED_RUN))
def test_a_skill_that_exits_non_zero_shows_as_not_done(browser, system, locale) -> None:
    """text_stats run without a file exits 1: the skills window says plainly that it
    was not done, as an error (banner and toast, never a success), with the exit code
    and stderr folded under the technical details."""
    said, plain = FAILED_RUN[locale]
    with (
        answering_what_is_left(system),
        desktop_page(browser, system, ["skills_app"], locale=locale) as page,
    ):
        page.fill("#command_input", said)
        page.press("#command_input", "Enter")
        notice = page.locator("#win_skills_app .win-notice")
        expect(notice).to_have_attribute("data-level", "error", timeout=20000)
        expect(notice.locator(".win-notice-text")).to_contain_text(plain)
        detail = notice.get_by_text("exit code 1", exact=False)
        assert not detail.is_visible()  # folded away
        toast = page.locator("#toasts .toast").last
        expect(toast).to_have_class(re.compile(r"\btoast-error\b"))
        expect(toast.locator(".toast-icon")).not_to_have_text("✅")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"skill-not-done-{locale}.png"))


@pytest.mark.browser
def test_the_tools_window_shows_the_skills_tools_with_provider_and_risk(
    browser, system
) -> None:
    desktop = open_desktop(browser, system, wait_for="#task_skills_app")
    page = desktop.page
    try:
        page.click("#start_button")
        page.click("#start_menu [data-system-action=tools]")
        page.locator("#tools_dialog").wait_for()
        page.select_option("#tools_app", "skills_app")
        skills = page.locator("#tools_groups .tool-group[data-provider=skills]")
        install = skills.locator(".tool-card[data-tool=install_skill]")
        install.wait_for()
        assert install.locator(".tool-risk").get_attribute("data-risk") == "system"
        expect(install.locator(".tool-asks")).to_have_text("先问你")
        run = skills.locator(".tool-card[data-tool=run_command]")
        assert run.locator(".tool-risk").get_attribute("data-risk") == "execute"
        expect(run.locator(".tool-risk")).to_have_text("会运行程序")
        expect(skills.locator(".tool-group-title")).to_contain_text("技能")
        expect(skills.locator(".tool-group-problem")).to_have_count(0)  # running
        assert desktop.errors == []
    finally:
        page.context.close()


CONFIRM_WORDS = {
    "zh-CN": (
        "安装技能 desk_skill.md",
        "安装技能“desk_skill.md”：装好后每个应用都能使用它",
        "技术细节：完整计划",
        "已安装技能「desk_skill」",
    ),
    "en-US": (
        "install the skill desk_skill_en.md",
        'install the skill "desk_skill_en.md": every app can use it once it is installed',
        "Technical details: the exact plan",
        'Installed the skill "desk_skill_en"',
    ),
}


@pytest.mark.browser
@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_desktop_confirms_an_install_in_the_readers_words(
    browser, system, locale: str
) -> None:
    """The 🛡️ confirmation says what installing a skill does in the reader's
    language (the controller's sentence); the tool's id and its developer's
    description stay folded away, under a label in the reader's language. The
    window's answer while it waits is a question, not a success."""
    said, step, folded, done = CONFIRM_WORDS[locale]
    asked = "需要你的确认" if locale == "zh-CN" else "Please confirm"
    name = said.rsplit(" ", 1)[1]
    write_skill(
        system.workspace("skills_app"), name, "# 桌面安装的技能\n", executable=False
    )
    with (
        answering_what_is_left(system),
        desktop_page(browser, system, ["skills_app"], locale=locale) as page,
    ):
        page.fill("#command_input", said)
        page.press("#command_input", "Enter")
        dialog = page.locator("#confirm_dialog")
        expect(dialog.locator(".confirm-step")).to_have_text(step, timeout=20000)
        shown = dialog.inner_text()  # what is read: the folded details are not
        for developer in ("install_skill", "Install a skill file", "system", "skills)"):
            assert developer not in shown, (developer, shown)
        # the window's answer is a question, and so is any toast of it: never a ✅
        window = page.locator("#win_skills_app")
        expect(window.locator(".win-status")).to_have_attribute("data-level", "info")
        words = window.inner_text()
        for developer in ("install_skill", "Install a skill file", "system"):
            assert developer not in words, (developer, words)
        asking = page.locator("#toasts .toast", has_text=asked)
        for icon in asking.locator(".toast-icon").all_inner_texts():
            assert "✅" not in icon
        if locale == "en-US":
            assert not re.search(r"[\u4e00-\u9fff]", shown), shown
        details = dialog.locator("details.confirm-plan")
        expect(details.locator("summary")).to_have_text(folded)
        details.locator("summary").click()
        expect(details.locator(".confirm-tool-words")).to_contain_text("install_skill")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"confirm-install-{locale}.png"))
        with page.expect_response(lambda r: "/api/confirmations/" in r.url):
            page.locator("#confirm_allow_once").click()
        page.locator("#win_skills_app").get_by_text(done).first.wait_for()
    assert (system.state_dir / "users" / "default" / "skills" / name).is_file()


@contextlib.contextmanager
def answering_what_is_left(system: RunningSystem) -> Iterator[None]:
    """A question this test left unanswered (it failed before its answer) is denied,
    so it does not stand over the next test's desktop."""
    try:
        yield
    finally:
        for pending in system.get("/api/confirmations").json()["confirmations"]:
            system.post(
                f"/api/confirmations/{pending['confirmation_id']}", {"decision": "deny"}
            )


TOOLS_WORDS = {
    "zh-CN": ("内置工具", "定时任务"),
    "en-US": ("Built-in tools", "Scheduled tasks"),
}


@pytest.mark.browser
@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_tools_window_counts_the_atomic_tools_as_the_readme_does(
    browser, system, locale: str
) -> None:
    """The built-in group holds the atomic tools alone, as many as README.md says;
    the scheduler's `schedule` is a group of its own. Every built-in tool says what
    it does in the reader's language."""
    built_in, scheduled = TOOLS_WORDS[locale]
    count = len(ATOMIC_TOOLS)
    readme = (ROOT / "README.md").read_text("utf-8")
    assert f"runs with {NUMBER_WORDS[count]} atomic tools" in readme
    with desktop_page(browser, system, ["hello_app"], locale=locale) as page:
        page.click("#start_button")
        page.click("#start_menu [data-system-action=tools]")
        page.select_option("#tools_app", "hello_app")
        atomic = page.locator("#tools_groups .tool-group[data-provider=atomic]")
        expect(atomic.locator(".tool-group-title")).to_have_text(f"{built_in} · {count}")
        expect(atomic.locator(".tool-card")).to_have_count(count)
        names = atomic.locator(".tool-card").evaluate_all(
            "cards => cards.map(c => c.dataset.tool)"
        )
        assert set(names) == set(ATOMIC_TOOLS)
        timer = page.locator("#tools_groups .tool-group[data-provider=scheduler]")
        expect(timer.locator(".tool-group-title")).to_have_text(f"{scheduled} · 1")
        expect(timer.locator(".tool-card[data-tool=schedule]")).to_have_count(1)
        does = atomic.locator(".tool-does").all_inner_texts()
        cjk = [bool(re.search(r"[\u4e00-\u9fff]", text)) for text in does]
        assert all(cjk) if locale == "zh-CN" else not any(cjk), does
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"tools-count-{locale}.png"))


NUMBER_WORDS = {11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen"}


def test_a_skill_instruction_sent_as_soon_as_ready_reaches_the_skill(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("skills_ready")
    apps = copy_shipped_apps(root / "apps", ("hello_app", "skills_app"))
    running = launch(root, apps)
    try:
        answer = running.say("把30摄氏度换算成华氏度")  # the first thing after `ready`
        assert [task["app_id"] for task in answer["tasks"]] == ["skills_app"], answer
    finally:
        running.stop()


@pytest.fixture(scope="module")
def with_code(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningSystem]:
    """The code app beside the skills app: both say they run things (运行 / run)."""
    yield from _running(tmp_path_factory, "skills_and_code", ("code_app", "skills_app"))


def _said(
    system: RunningSystem, text: str, language: str, session: str | None = None
) -> tuple[dict, str]:
    body = {"text": text, "language": language}
    if session:
        body["session_id"] = session
    response = system.post("/api/instruction", body)
    assert response.status_code == 200, response.text
    (task,) = response.json()["tasks"]
    return task, response.json()["session_id"]


@pytest.mark.parametrize(
    ("text", "language", "answer"),
    [
        ("运行技能 temp_convert 37", "zh-CN", "37 °C = 98.6 °F"),
        ("运行技能temp_convert 37", "zh-CN", "37 °C = 98.6 °F"),
        ("run temp_convert 37", "en-US", "37 °C = 98.6 °F"),
    ],
)
def test_a_request_naming_a_skill_runs_the_skill_not_an_earlier_program(
    with_code: RunningSystem, text: str, language: str, answer: str
) -> None:
    """Through a running system: the user ran fibonacci.py; then
    "运行技能 temp_convert 37" is the skill's, and its answer is the skill's."""
    first, session = _said(with_code, "写一个计算斐波那契数列的程序", language)
    assert first["app_id"] == "code_app"
    ran = with_code.post(
        "/api/apps/code_app/action",
        {
            "action_id": "run",
            "type": "button",
            "params": {"path": "fibonacci.py"},
            "session_id": session,
        },
    )
    assert ran.status_code == 200, ran.text
    assert "[0, 1, 1, 2" in ran.text  # the program ran, and showed its output
    task, _ = _said(with_code, text, language, session)
    assert task["app_id"] == "skills_app", task
    assert task["result"]["message"] == answer
    assert "[0, 1, 1, 2" not in str(task["result"])  # never the earlier output
