"""Journeys with the apps that need no model: Hello, Code, System control, Scheduled
tasks, Skills, and the assistant saying what it lacks.

In Chromium at 1280×800, in Chinese and in English, against the real system with
every shipped app and no model configured. Each journey checks what is shown (the
window, its status line, toasts) and what happened: the file in the user's
workspace, the figure of the machine the reply gives, the scheduler's job, the
skill's answer.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import psutil
import pytest
from playwright.sync_api import expect

from tests.journeys.conftest import LOCALES, Journey, World, start_world

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from start_world(tmp_path_factory, "journeys_apps")


def empty_code_workspace(journey: Journey):
    folder = journey.world.workspace("code_app")
    for path in folder.iterdir():
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    return folder


# ---------------------------------------------------------------- Hello


@pytest.mark.parametrize("locale", LOCALES)
def test_hello_greets_with_the_users_own_greeting(journey: Journey, locale: str) -> None:
    greeting = journey.world.workspace("hello_app") / "greeting.txt"
    words = journey.tr("早安", "Good morning")
    greeting.write_text(words, "utf-8")
    try:
        journey.page.click("#task_hello_app")
        text = journey.window("hello_app").locator(".v-text")
        expect(text).to_have_text(
            journey.tr("早安！很高兴见到你。", "Good morning! Nice to meet you.")
        )
        expect(journey.status("hello_app")).to_have_text(journey.tr("已回复", "Replied"))
        journey.shot("1-greeted")
        text.evaluate("n => { n.dataset.probe = 'first'; }")
        journey.button("hello_app", journey.tr("再说一次", "Say it again")).click()
        expect(journey.window("hello_app").locator(".v-text[data-probe]")).to_have_count(0)
        expect(text).to_have_text(
            journey.tr("早安！很高兴见到你。", "Good morning! Nice to meet you.")
        )
        journey.shot("2-again")
    finally:
        greeting.write_text("你好", "utf-8")


# ---------------------------------------------------------------- Code


@pytest.mark.parametrize("locale", LOCALES)
def test_code_writes_a_program_from_a_template_and_runs_it(
    journey: Journey, locale: str
) -> None:
    folder = empty_code_workspace(journey)
    journey.say(
        journey.tr(
            "写一个计算斐波那契数列的程序",
            "write a program that prints the Fibonacci numbers",
        )
    )
    window = journey.window("code_app")
    expect(journey.status("code_app")).to_contain_text(
        journey.tr(
            "已用模板“斐波那契数列”写好 fibonacci.py",
            'Wrote fibonacci.py from the template "Fibonacci numbers"',
        )
    )
    written = folder / "fibonacci.py"
    assert written.is_file()
    expect(window.locator(".v-code code")).to_have_text(written.read_text("utf-8"))
    journey.shot("1-written")
    journey.button("code_app", journey.tr("运行", "Run")).click()
    numbers = "[0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377]"
    expect(journey.status("code_app")).to_have_text(
        journey.tr(f"运行结果：{numbers}", f"Output: {numbers}")
    )
    journey.shot("2-run")


@pytest.mark.parametrize("locale", LOCALES)
def test_code_runs_a_line_and_a_failing_one(journey: Journey, locale: str) -> None:
    folder = empty_code_workspace(journey)
    journey.say(journey.tr("执行代码 print(2**10)", "run print(2**10)"))
    window = journey.window("code_app")
    expect(journey.status("code_app")).to_have_text(
        journey.tr(
            "运行结果：1024（代码已存为工作区里的 snippet.py）",
            "Output: 1024 (the code is saved as snippet.py in the workspace)",
        )
    )
    expect(window.locator(".v-code code")).to_have_text("print(2**10)\n")
    expect(window.locator(".v-code-output-text")).to_have_text("1024\n")
    assert (folder / "snippet.py").read_text("utf-8") == "print(2**10)\n"
    journey.shot("1-output")
    journey.say(journey.tr("执行代码 print(1/0)", "run print(1/0)"))
    expect(window.locator(".win-notice")).to_contain_text(
        journey.tr("⚠️ 运行出错（退出码 1）", "The program failed (exit code 1)")
    )
    expect(window.locator(".win-notice details pre")).to_contain_text("ZeroDivisionError")
    expect(window.locator(".win-notice")).to_have_attribute("data-level", "warning")
    # a failure is never toasted as a success
    expect(journey.page.locator("#toasts .toast-success", has_text="1/0")).to_have_count(0)
    expect(journey.page.locator("#toasts .toast-warning")).to_have_count(1)
    journey.shot("2-failed")


@pytest.mark.parametrize("locale", LOCALES)
def test_code_edits_a_file_and_saves_it(journey: Journey, locale: str) -> None:
    folder = empty_code_workspace(journey)
    (folder / "greet.py").write_text("print('old')\n", "utf-8")
    journey.say(journey.tr("编辑 greet.py", "edit greet.py"))
    window = journey.window("code_app")
    editor = window.locator(".win-main textarea")
    expect(editor).to_have_value("print('old')\n")
    expect(journey.status("code_app")).to_have_text(
        journey.tr("正在编辑 greet.py", "Editing greet.py")
    )
    journey.shot("1-editing")
    editor.fill("print('new')\n")
    journey.button("code_app", journey.tr("保存", "Save")).click()
    # the file is the person's own, not the app's: overwriting it asks first
    dialog = journey.page.locator("#confirm_dialog")
    expect(dialog).to_contain_text(
        journey.tr(
            "覆盖已有文件 workspace/greet.py",
            "overwrite the existing file workspace/greet.py",
        )
    )
    assert (folder / "greet.py").read_text("utf-8") == "print('old')\n"
    journey.shot("2-asked")
    dialog.get_by_role(
        "button", name=journey.tr("允许一次", "Allow once"), exact=True
    ).click()
    expect(journey.status("code_app")).to_have_text(
        journey.tr("已保存 greet.py", "Saved greet.py")
    )
    expect(window.locator(".v-code code")).to_have_text("print('new')\n")
    assert (folder / "greet.py").read_text("utf-8") == "print('new')\n"
    journey.shot("3-saved")


@pytest.mark.parametrize("locale", LOCALES)
def test_code_makes_a_new_file_from_its_form(journey: Journey, locale: str) -> None:
    folder = empty_code_workspace(journey)
    journey.page.click("#task_code_app")
    window = journey.window("code_app")
    expect(journey.status("code_app")).to_contain_text(
        journey.tr("工作区还没有 Python 文件", "The workspace has no Python files")
    )
    form = window.locator("form#btn_new")
    form.locator("input[name=path]").fill("hi.py")
    form.locator("textarea[name=code]").fill("print('hi there')\n")
    journey.shot("1-form-filled")
    journey.button("code_app", journey.tr("新建文件", "New file")).click()
    expect(journey.status("code_app")).to_have_text(
        journey.tr("已保存 hi.py", "Saved hi.py")
    )
    assert (folder / "hi.py").read_text("utf-8") == "print('hi there')\n"
    journey.shot("2-saved")
    journey.button("code_app", journey.tr("运行", "Run")).click()
    expect(journey.status("code_app")).to_have_text(
        journey.tr("运行结果：hi there", "Output: hi there")
    )
    journey.shot("3-run")


@pytest.mark.parametrize("locale", LOCALES)
def test_code_lists_the_files_and_shows_one(journey: Journey, locale: str) -> None:
    folder = empty_code_workspace(journey)
    (folder / "alpha.py").write_text("print('alpha')\n", "utf-8")
    (folder / "beta.py").write_text("print('beta')\n", "utf-8")
    journey.say(journey.tr("列出我的代码文件", "show my python files"))
    window = journey.window("code_app")
    expect(journey.status("code_app")).to_have_text(
        journey.tr("工作区有 2 个 Python 文件", "The workspace has 2 Python files")
    )
    expect(window.locator(".v-list-item .v-list-title")).to_have_text(
        ["alpha.py", "beta.py"]
    )
    journey.shot("1-listed")
    row = window.locator(".v-list-item[data-item-id='beta.py']")
    row.get_by_role("button", name=journey.tr("查看", "View"), exact=True).click()
    expect(window.locator(".v-code code")).to_have_text("print('beta')\n")
    journey.shot("2-shown")


# ---------------------------------------------------------------- System control


@pytest.mark.parametrize("locale", LOCALES)
def test_system_says_the_cpu_and_the_memory(journey: Journey, locale: str) -> None:
    journey.say(journey.tr("CPU占用多少", "how busy is the CPU"))
    cores = psutil.cpu_count()
    status = journey.status("system_agent")
    expect(status).to_have_text(
        re.compile(
            journey.tr(
                rf"^CPU 占用 [\d.]+%，共 {cores} 个核心$", rf"^CPU [\d.]+%, {cores} cores$"
            )
        )
    )
    journey.shot("1-cpu")
    journey.say(journey.tr("现在内存占用多少", "how much memory is used"))
    total = round(psutil.virtual_memory().total / 2**30, 1)
    expect(status).to_have_text(
        re.compile(
            journey.tr(
                rf"^内存占用 [\d.]+%（[\d.]+ / {total} GB）$",
                rf"^Memory [\d.]+% \([\d.]+ / {total} GB\)$",
            )
        )
    )
    expect(journey.window("system_agent").locator(".v-dashboard")).to_have_count(0)
    journey.shot("2-memory")


@pytest.mark.parametrize("locale", LOCALES)
def test_system_overview_refresh_and_processes(journey: Journey, locale: str) -> None:
    journey.say(journey.tr("查看系统状态", "show system status"))
    window = journey.window("system_agent")
    status = journey.status("system_agent")
    chart = window.locator(".v-widget[data-widget-type=chart]")
    expect(chart.locator(".chart-bar")).to_have_count(3)
    expect(status).to_have_text(
        re.compile(
            journey.tr(
                r"^CPU [\d.]+%，内存 [\d.]+%，磁盘 [\d.]+%$",
                r"^CPU [\d.]+%, memory [\d.]+%, disk [\d.]+%$",
            )
        )
    )
    # the disk figure is this machine's (a tenth either way: files come and go)
    said = float(re.findall(r"([\d.]+)%", status.inner_text())[-1])
    assert abs(said - psutil.disk_usage("/").percent) <= 0.2, said
    journey.shot("1-overview")
    window.locator(".v-dashboard").evaluate("n => { n.dataset.probe = 'before'; }")
    with journey.page.expect_response(lambda r: r.url.endswith("/system_agent/action")):
        journey.button("system_agent", journey.tr("刷新", "Refresh")).click()
    expect(window.locator(".v-dashboard[data-probe]")).to_have_count(0)  # drawn afresh
    expect(chart.locator(".chart-bar")).to_have_count(3)
    journey.shot("2-refreshed")
    journey.button("system_agent", journey.tr("进程列表", "Processes")).click()
    expect(status).to_have_text(
        re.compile(
            journey.tr(
                r"^共 \d+ 个进程，最忙的是 \S+$", r"^\d+ processes, the busiest is \S+$"
            )
        )
    )
    # the controller is one of them, under its own name
    controller = journey.world.system.proc.pid
    row = window.locator(
        "tbody tr", has=journey.page.locator(f"td:text-is('{controller}')")
    )
    expect(row.locator("td").nth(1)).to_have_text(psutil.Process(controller).name())
    busiest = re.split(journey.tr("最忙的是 ", "the busiest is "), status.inner_text())[-1]
    expect(window.locator("tbody tr").first.locator("td").nth(1)).to_have_text(busiest)
    journey.shot("3-processes")


# ---------------------------------------------------------------- Scheduled tasks


@pytest.mark.parametrize("locale", LOCALES)
def test_scheduler_sets_a_reminder_and_lists_it(journey: Journey, locale: str) -> None:
    world = journey.world
    world.clear_jobs()
    asked = datetime.now(UTC)
    journey.say(journey.tr("10分钟后提醒我喝水", "remind me in 10 minutes to drink water"))
    name = journey.tr("喝水提醒", "drink water reminder")
    status = journey.status("scheduler_app")
    expect(status).to_contain_text(
        journey.tr(f"好的，已设定「{name}」", f'OK, "{name}" is set')
    )
    jobs = world.jobs()
    assert list(jobs) == [name], jobs
    due = datetime.fromisoformat(jobs[name]["run_at"].replace("Z", "+00:00"))
    assert abs(due - (asked + timedelta(minutes=10))) < timedelta(seconds=30), due
    assert jobs[name]["enabled"] is True
    journey.shot("1-set")
    journey.say(journey.tr("我有哪些定时任务", "list my reminders"))
    expect(status).to_have_text(journey.tr("共有 1 个定时任务", "1 scheduled task"))
    expect(journey.window("scheduler_app").locator(".v-list-item")).to_have_count(1)
    expect(journey.window("scheduler_app").locator(".v-list-item")).to_contain_text(name)
    journey.shot("2-listed")


@pytest.mark.parametrize("locale", LOCALES)
def test_scheduler_asks_before_deleting(journey: Journey, locale: str) -> None:
    world = journey.world
    world.clear_jobs()
    journey.say(journey.tr("30分钟后提醒我休息", "remind me in 30 minutes to rest"))
    name = journey.tr("休息提醒", "rest reminder")
    expect(journey.status("scheduler_app")).to_contain_text(name)
    window = journey.window("scheduler_app")
    journey.button("scheduler_app", journey.tr("删除", "Delete")).click()
    question = journey.tr(
        f"删除定时任务「{name}」？", f'Delete the scheduled task "{name}"?'
    )
    expect(window).to_contain_text(question)
    assert name in world.jobs()  # nothing deleted before the yes
    journey.shot("1-asked")
    journey.button("scheduler_app", journey.tr("保留", "Keep")).click()
    expect(window).not_to_contain_text(question)
    expect(window.locator(".v-list-item", has_text=name)).to_have_count(1)
    assert name in world.jobs()
    journey.shot("2-kept")
    journey.button("scheduler_app", journey.tr("删除", "Delete")).click()
    expect(window).to_contain_text(question)
    journey.button("scheduler_app", journey.tr("删除", "Delete")).click()
    expect(window).not_to_contain_text(question)
    expect(journey.status("scheduler_app")).to_contain_text(name)
    assert world.jobs() == {}
    journey.shot("3-deleted")


def local(moment: str) -> datetime:
    """A job's time as the user's clock shows it."""
    return datetime.fromisoformat(moment.replace("Z", "+00:00")).astimezone()


@pytest.mark.parametrize("locale", LOCALES)
def test_scheduler_takes_the_time_said_first_or_last(journey: Journey, locale: str) -> None:
    world = journey.world
    world.clear_jobs()
    said = journey.tr(
        ["明天早上8点叫我起床", "晚上7点提醒我给妈妈打电话", "每天9点提醒我拉伸"],
        [
            "wake me up tomorrow at 8am",
            "remind me at 7pm to call mom",
            "every day at 9 remind me to stretch",
        ],
    )
    names = journey.tr(
        ["起床提醒", "给妈妈打电话提醒", "拉伸提醒"],
        ["wake up reminder", "call mom reminder", "stretch reminder"],
    )
    status = journey.status("scheduler_app")
    for text, name in zip(said, names, strict=True):
        journey.say(text)
        expect(status).to_contain_text(
            journey.tr(f"好的，已设定「{name}」", f'OK, "{name}" is set')
        )
    jobs = world.jobs()
    assert sorted(jobs) == sorted(names), jobs
    wake, call, stretch = (jobs[name] for name in names)
    tomorrow = datetime.now().astimezone().date() + timedelta(days=1)
    assert local(wake["run_at"]).date() == tomorrow
    assert local(wake["run_at"]).strftime("%H:%M") == "08:00"
    assert local(call["run_at"]).strftime("%H:%M") == "19:00"
    assert (stretch["schedule_type"], stretch["cron"]) == ("cron", "0 9 * * *")
    expect(journey.window("scheduler_app").locator(".v-list-item")).to_have_count(3)
    journey.shot("1-set")


@pytest.mark.parametrize("locale", LOCALES)
def test_scheduler_cancels_them_all_after_one_yes(journey: Journey, locale: str) -> None:
    world = journey.world
    world.clear_jobs()
    for text in journey.tr(
        ["10分钟后提醒我喝水", "30分钟后提醒我休息"],
        ["remind me in 10 minutes to drink water", "remind me in 30 minutes to rest"],
    ):
        journey.say(text)
    expect(journey.status("scheduler_app")).to_contain_text(
        journey.tr("休息提醒", "rest reminder")
    )
    journey.say(journey.tr("取消所有定时任务", "cancel all my reminders"))
    window = journey.window("scheduler_app")
    question = journey.tr("删除全部 2 个定时任务？", "Delete all 2 scheduled tasks?")
    expect(window).to_contain_text(question)
    assert len(world.jobs()) == 2  # nothing deleted before the yes
    # the safe choice comes first
    expect(window.locator(".win-actions button").first).to_have_text(
        journey.tr("保留", "Keep")
    )
    journey.shot("1-asked")
    journey.button("scheduler_app", journey.tr("全部删除（2 个）", "Delete all 2")).click()
    expect(journey.status("scheduler_app")).to_have_text(
        journey.tr("已删除 2 个定时任务", "Deleted 2 scheduled tasks")
    )
    assert world.jobs() == {}
    expect(window.locator(".v-empty")).to_have_text(
        journey.tr("还没有定时任务", "No scheduled tasks yet")
    )
    journey.shot("2-deleted")


# ---------------------------------------------------------------- Skills

SKILLS = ["code_review", "temp_convert", "text_stats"]


@pytest.mark.parametrize("locale", LOCALES)
def test_skills_lists_them_and_runs_one_from_its_form(
    journey: Journey, locale: str
) -> None:
    journey.say(journey.tr("我有哪些技能", "list my skills"))
    window = journey.window("skills_app")
    expect(journey.status("skills_app")).to_have_text(
        journey.tr("共有 3 个技能", "3 skills")
    )
    expect(window.locator("tbody tr td:first-child")).to_have_text(SKILLS)
    folder = journey.world.system.state_dir / "users" / "default" / "skills"
    assert sorted(p.stem for p in folder.iterdir() if not p.name.startswith(".")) == SKILLS
    journey.shot("1-listed")
    row = window.locator("tr[data-item-id='temp_convert']")
    row.get_by_role("button", name=journey.tr("打开", "Open"), exact=True).click()
    form = window.locator("form#btn_run")
    expect(form).to_be_visible()
    form.locator("input[name=value]").fill("212")
    form.locator("select[name=to]").select_option("c")
    journey.shot("2-form")
    form.get_by_role("button", name=journey.tr("运行", "Run"), exact=True).click()
    expect(journey.status("skills_app")).to_have_text("212 °F = 100.0 °C")
    expect(window.locator(".v-code code").first).to_have_text("212 °F = 100.0 °C")
    journey.shot("3-ran")


@pytest.mark.parametrize("locale", LOCALES)
def test_skills_runs_a_skill_by_name(journey: Journey, locale: str) -> None:
    journey.say(journey.tr("运行技能 temp_convert 37", "run the skill temp_convert 37"))
    window = journey.window("skills_app")
    expect(journey.status("skills_app")).to_have_text("37 °C = 98.6 °F")
    expect(window.locator(".v-title")).to_have_text(
        journey.tr("技能「temp_convert」", 'Skill "temp_convert"')
    )
    journey.shot("1-ran")


# ---------------------------------------------------------------- Assistant


@pytest.mark.parametrize("locale", LOCALES)
def test_assistant_without_a_model_says_what_it_needs(
    journey: Journey, locale: str
) -> None:
    workspace = journey.world.workspace("assistant_app")
    before = sorted(workspace.rglob("*"))
    journey.say(journey.tr("写一首关于秋天的诗", "compose a poem about the sea"))
    window = journey.window("assistant_app")
    notice = window.locator(".win-notice")
    # nothing was done, and why: said so, not "not all of it worked"
    said = journey.tr(
        "什么也没做：智能助手需要配置模型", "Nothing was done: the assistant needs a model"
    )
    expect(notice).to_contain_text(said)
    expect(notice).to_have_attribute("data-level", "error")
    expect(journey.status("assistant_app")).to_have_text(said)
    expect(window).to_contain_text(journey.tr("在设置里填写 API Key", "Settings"))
    assert sorted(workspace.rglob("*")) == before  # nothing was written
    journey.shot("1-answer")
    journey.button("assistant_app", journey.tr("打开设置", "Open Settings")).click()
    dialog = journey.page.locator("#settings_dialog")
    expect(dialog.locator("#settings_api_key")).to_be_visible()  # where a model is set up
    journey.shot("2-settings")
