"""The scheduler app's flows over a fake agent: the window's buttons and words become
the right `schedule` tool calls (no process, no HTTP)."""

from __future__ import annotations

from typing import Any

import pytest

from aios_protocol.errors import ToolFailed
from aios_sdk import Turn
from apps.scheduler_app.flows import SchedulerFlows
from apps.scheduler_app.views import describe, when

JOB = {
    "id": "job_abc",
    "name": "休息提醒",
    "schedule_type": "interval",
    "interval_s": 1800,
    "enabled": True,
    "run_count": 2,
    "next_run_at": "2030-05-06T08:30:00+08:00",
    "instruction": "提醒我休息",
}


class Agent:
    """Answers `call_tool("schedule", …)` like the controller would, and records it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail: ToolFailed | None = None

    def call_tool(self, tool: str, **args: Any) -> Any:
        self.calls.append((args.get("action", tool), args))
        if self.fail is not None:
            raise self.fail
        verb = args.get("action")
        if verb == "list":
            return {"jobs": [JOB]}
        if verb == "runs":
            run = {
                "started": "2030-05-06T08:00:00",
                "status": "ok",
                "duration_s": 0.5,
                "summary": "提醒：休息",
            }
            return {"runs": [run]}
        if verb == "create":
            return {**JOB, **args["job"], "id": "job_new"}
        return {}


def click(flows: SchedulerFlows, action_id: str, **params: Any) -> dict[str, Any]:
    return flows.handle(None, {}, {"action_id": action_id, "params": params})


def test_the_window_lists_jobs_with_their_controls() -> None:
    agent = Agent()
    view = SchedulerFlows(agent).handle("", {})
    assert view["view_type"] == "list"
    assert view["data"]["items"][0]["title"] == "⏰ 休息提醒"
    assert "每 30 分钟" in view["data"]["items"][0]["sub"]
    controls = {
        (a["action_id"], (a.get("params") or {}).get("job_id")) for a in view["actions"]
    }
    assert {
        ("disable", "job_abc"),
        ("run", "job_abc"),
        ("history", "job_abc"),
        ("delete", "job_abc"),
        ("refresh", None),
    } <= controls


def test_buttons_call_the_schedule_tool_for_their_job() -> None:
    agent = Agent()
    flows = SchedulerFlows(agent)
    assert click(flows, "disable", job_id="job_abc")["message"] == "已暂停"
    assert agent.calls[0] == (
        "update",
        {"action": "update", "job_id": "job_abc", "changes": {"enabled": False}},
    )
    assert click(flows, "run", job_id="job_abc")["message"] == "已开始运行"
    history = click(flows, "history", job_id="job_abc")
    assert history["view_type"] == "table" and history["data"]["rows"][0][1] == "✅ 成功"
    assert "休息提醒" in history["data"]["title"]
    assert click(flows, "delete_confirmed", job_id="job_abc")["message"] == "已删除"
    verbs = [verb for verb, _ in agent.calls]
    assert verbs == ["update", "list", "run", "list", "list", "runs", "cancel", "list"]


def test_words_create_a_job_and_a_refusal_is_an_error_view() -> None:
    agent = Agent()
    answer = SchedulerFlows(agent).handle("每隔一小时提醒我休息", {})
    created = agent.calls[1][1]["job"]  # after the list: is the name taken?
    assert created["schedule_type"] == "interval" and created["interval_s"] == 3600
    assert created["execution_type"] == "agent" and created["instruction"] == "提醒我休息"
    # a 休息提醒 exists already (every 30 minutes): the new one has its time in its name
    assert created["name"] == "休息提醒（每 60 分钟）"
    assert answer["view_type"] == "list"
    assert "已设定「休息提醒（每 60 分钟）」" in answer["message"]
    agent.fail = ToolFailed(
        "job job_x waits for the user's yes", code="needs_user_confirmation"
    )
    refused = click(SchedulerFlows(agent), "enable", job_id="job_x")
    assert (
        refused["status"] == "error"
        and refused["data"]["code"] == "needs_user_confirmation"
    )


EN = {"language": "en-US"}
ZH = {"language": "zh-CN"}


def test_the_window_speaks_the_users_language() -> None:
    agent = Agent()
    english = SchedulerFlows(agent).handle("", EN)
    assert english["data"]["title"] == "Scheduled Tasks"
    assert english["data"]["empty"] == "No scheduled tasks yet"
    assert english["message"] == "1 scheduled task"
    sub = english["data"]["items"][0]["sub"]
    assert sub == "every 30 min · next 2030-05-06 08:30 · ran 2 times"
    labels = [a["label"] for a in english["actions"]]
    assert labels == ["Refresh", "Pause", "Run now", "History", "Delete"]
    history = SchedulerFlows(agent).handle(
        None, EN, {"action_id": "history", "params": {"job_id": "job_abc"}}
    )
    assert history["data"]["columns"] == [
        "Started",
        "Result",
        "Duration",
        "Summary",
        "Output",
    ]
    assert history["data"]["title"] == 'Runs of "休息提醒"'
    assert [a["label"] for a in history["actions"]] == ["Back to the list"]
    # the same window on a Chinese desktop, as before
    chinese = SchedulerFlows(agent).handle("", ZH)
    assert chinese["data"]["title"] == "定时任务"
    assert chinese["data"]["empty"] == "还没有定时任务"
    assert chinese["message"] == "共有 1 个定时任务"
    assert (
        chinese["data"]["items"][0]["sub"]
        == "每 30 分钟 · 下次 2030-05-06 08:30 · 已运行 2 次"
    )
    assert [a["label"] for a in chinese["actions"]] == [
        "刷新",
        "暂停",
        "立即运行",
        "历史",
        "删除",
    ]


def test_answers_in_english_and_a_refusal_said_plainly() -> None:
    agent = Agent()
    created = SchedulerFlows(agent).handle("remind me in 5 minutes to stretch", EN)
    assert agent.calls[1][1]["job"]["instruction"] == "remind me to stretch"
    assert created["status"] == "ok" and "notice" not in created
    assert created["message"].startswith('OK, "stretch reminder" is set: at ')
    assert (
        click_in(SchedulerFlows(agent), EN, "disable", job_id="job_abc")["message"]
        == "Paused"
    )
    reminded = SchedulerFlows(agent).handle("remind me to stretch", EN)
    assert reminded["message"] == "Reminder: stretch"
    assert agent.calls[-1][1]["title"] == "⏰ Reminder"
    assert [a["label"] for a in reminded["actions"]] == ["Scheduled tasks"]
    agent.fail = ToolFailed(
        "job job_x waits for the user's yes", code="needs_user_confirmation"
    )
    for context, plain in (
        (EN, "This task is waiting for your yes: answer the confirmation first"),
        (ZH, "这个定时任务还在等你确认，请先在确认框里回答"),
    ):
        refused = click_in(SchedulerFlows(agent), context, "enable", job_id="job_x")
        assert refused["status"] == "error" and "notice" not in refused
        assert refused["data"]["code"] == "needs_user_confirmation"
        assert refused["message"] == refused["data"]["message"] == plain
        assert refused["detail"] == "job job_x waits for the user's yes"


def test_a_reminder_on_a_chinese_desktop_is_as_before() -> None:
    agent = Agent()
    reminded = SchedulerFlows(agent).handle("提醒我喝水", ZH)
    assert (
        reminded["message"] == "提醒：喝水"
        and reminded["data"]["content"] == "⏰ 提醒：喝水"
    )
    assert agent.calls[-1][1]["title"] == "⏰ 提醒"
    assert [a["label"] for a in reminded["actions"]] == ["查看定时任务"]


def click_in(
    flows: SchedulerFlows, context: dict[str, Any], action_id: str, **params: Any
) -> dict[str, Any]:
    return flows.handle(None, context, {"action_id": action_id, "params": params})


# ------------------------------------------------- commands, and jobs of one name

DAILY = {
    "id": "job_daily",
    "name": "喝水提醒",
    "schedule_type": "cron",
    "cron": "0 9 * * *",
    "enabled": True,
    "run_count": 0,
    "next_run_at": "2030-05-07T09:00:00+08:00",
    "instruction": "提醒我喝水",
}
SOON = {
    "id": "job_soon",
    "name": "喝水提醒",
    "schedule_type": "once",
    "run_at": "2030-05-06T08:10:00+08:00",
    "enabled": True,
    "run_count": 0,
    "next_run_at": "2030-05-06T08:10:00+08:00",
    "instruction": "提醒我喝水",
}


class Jobs(Agent):
    """The fake controller holding `jobs`; `refuse` makes `create` fail with a code."""

    def __init__(self, *jobs: dict[str, Any]) -> None:
        super().__init__()
        self.jobs = [dict(j) for j in jobs]
        self.refuse: ToolFailed | None = None

    def call_tool(self, tool: str, **args: Any) -> Any:
        verb = args.get("action")
        if verb == "list":
            self.calls.append((verb, args))
            return {"jobs": self.jobs}
        if verb == "create" and self.refuse is not None:
            self.calls.append((verb, args))
            raise self.refuse
        if verb == "cancel":
            self.jobs = [j for j in self.jobs if j["id"] != args["job_id"]]
        return super().call_tool(tool, **args)


def verbs(agent: Agent) -> list[str]:
    return [verb for verb, _ in agent.calls]


def test_a_command_said_becomes_a_command_job() -> None:
    agent = Jobs()
    answer = SchedulerFlows(agent).handle("每天早上9点运行命令 date", ZH)
    [(_, create)] = [c for c in agent.calls if c[0] == "create"]
    job = create["job"]
    assert job["execution_type"] == "command" and job["command"] == "date"
    assert job["language"] == "zh-CN"  # its runs speak to the user who made it
    assert "instruction" not in job
    assert (job["schedule_type"], job["cron"]) == ("cron", "0 9 * * *")
    assert answer["status"] == "ok" and "已设定" in answer["message"]


def test_a_command_that_is_not_allowed_is_refused_in_plain_words() -> None:
    for context, plain in (
        (ZH, "没有设定：不允许运行命令「date」"),
        (EN, 'Not set: the command "date" is not allowed'),
    ):
        agent = Jobs()
        agent.refuse = ToolFailed(
            "'date' is not in the command whitelist", code="command_not_allowed"
        )
        said = (
            "每天早上9点运行命令 date"
            if context is ZH
            else "every day at 9am run the command date"
        )
        refused = SchedulerFlows(agent).handle(said, context)
        assert (
            refused["status"] == "error"
            and refused["data"]["code"] == "command_not_allowed"
        )
        assert refused["message"].startswith(plain), refused["message"]
        assert refused["detail"] == "'date' is not in the command whitelist"


def test_a_waiting_command_job_says_it_waits_for_the_users_yes() -> None:
    class Waiting(Jobs):
        def call_tool(self, tool: str, **args: Any) -> Any:
            made = super().call_tool(tool, **args)
            if args.get("action") == "create":
                made = {**made, "enabled": False, "awaiting_confirmation": "运行命令：date"}
            return made

    answer = SchedulerFlows(Waiting()).handle("每天早上9点运行命令 date", ZH)
    assert "确认" in answer["message"] and answer["notice"] == "info"


def test_each_jobs_controls_sit_in_its_row() -> None:
    view = SchedulerFlows(Jobs(DAILY, SOON)).handle("", ZH)
    rows = {item["id"] for item in view["data"]["items"]}
    assert rows == {"job_daily", "job_soon"}
    placed = [
        (a["item_id"], a["action_id"], a["label"])
        for a in view["actions"]
        if a.get("item_id")
    ]
    assert placed == [
        ("job_daily", "disable", "暂停"),
        ("job_daily", "run", "立即运行"),
        ("job_daily", "history", "历史"),
        ("job_daily", "delete", "删除"),
        ("job_soon", "disable", "暂停"),
        ("job_soon", "run", "立即运行"),
        ("job_soon", "history", "历史"),
        ("job_soon", "delete", "删除"),
    ]
    for action in view["actions"]:
        if action.get("item_id"):
            assert action["params"]["job_id"] == action["item_id"]
    subs = [item["sub"] for item in view["data"]["items"]]
    assert subs[0].startswith("每天 9:00") and subs[1].startswith("于 2030-05-06 08:10")


def test_cancelling_a_name_two_jobs_share_asks_which_and_deletes_nothing() -> None:
    agent = Jobs(DAILY, SOON)
    asked = SchedulerFlows(agent).handle("取消喝水提醒", ZH)
    assert "cancel" not in verbs(agent)
    assert asked["status"] == "ok" and "哪一个" in asked["message"]
    items = asked["data"]["items"]
    assert [i["id"] for i in items] == ["job_daily", "job_soon"]
    assert "每天 9:00" in items[0]["sub"] and "2030-05-06 08:10" in items[1]["sub"]
    buttons = [
        (a["item_id"], a["action_id"], a["params"]["job_id"])
        for a in asked["actions"]
        if a.get("item_id")
    ]
    assert buttons == [
        ("job_daily", "delete", "job_daily"),
        ("job_soon", "delete", "job_soon"),
    ]
    # the user picks the one that runs soon; 删除 asks, and only that one goes
    sure = click_in(SchedulerFlows(agent), ZH, "delete", job_id="job_soon")
    assert "cancel" not in verbs(agent) and sure["notice"] == "info"
    picked = click_in(SchedulerFlows(agent), ZH, "delete_confirmed", job_id="job_soon")
    assert [j["id"] for j in agent.jobs] == ["job_daily"]
    assert picked["data"]["items"][0]["id"] == "job_daily"


def test_pausing_a_shared_name_asks_which_in_english() -> None:
    agent = Jobs(DAILY, SOON)
    asked = SchedulerFlows(agent).handle("pause 喝水提醒", EN)
    assert verbs(agent) == ["list"]
    assert (
        asked["message"] == '2 scheduled tasks match "喝水提醒": which one should I pause?'
    )
    labels = [a["label"] for a in asked["actions"] if a.get("item_id")]
    assert labels == ["Pause", "Pause"]
    assert "every day at 9:00" in asked["data"]["items"][0]["sub"]


def test_one_match_is_cancelled_and_a_full_name_picks_its_job() -> None:
    agent = Jobs(DAILY, {**SOON, "name": "起床提醒", "instruction": "提醒我起床"})
    done = SchedulerFlows(agent).handle("取消喝水提醒", ZH)
    assert [j["id"] for j in agent.jobs] == ["job_soon"]
    assert done["message"] == "已取消：喝水提醒"
    named = Jobs(DAILY, {**SOON, "name": "喝水提醒（于 2030-05-06 08:10）"})
    SchedulerFlows(named).handle("取消喝水提醒（于 2030-05-06 08:10）", ZH)
    assert [j["id"] for j in named.jobs] == ["job_daily"]


def test_a_second_job_of_one_name_gets_its_time_in_its_name() -> None:
    agent = Jobs(DAILY)
    answer = SchedulerFlows(agent).handle("每隔半小时提醒我喝水", ZH)
    [(_, create)] = [c for c in agent.calls if c[0] == "create"]
    assert create["job"]["name"] == "喝水提醒（每 30 分钟）"
    assert "已设定「喝水提醒（每 30 分钟）」" in answer["message"]


def test_the_history_shows_the_output_and_a_failed_run_in_words() -> None:
    class Ran(Jobs):
        def call_tool(self, tool: str, **args: Any) -> Any:
            if args.get("action") == "runs":
                self.calls.append(("runs", args))
                return {
                    "runs": [
                        {
                            "started": "2030-05-06T09:00:01",
                            "status": "error",
                            "duration_s": 0.2,
                            "summary": "没有完成：我可以写、看、改、运行 Python 代码",
                            "output_tail": "",
                        },
                        {
                            "started": "2030-05-06T09:00:00",
                            "status": "ok",
                            "duration_s": 0.1,
                            "summary": "退出码 0",
                            "output_tail": "Mon May  6 09:00:00 CST 2030\n",
                        },
                    ]
                }
            return super().call_tool(tool, **args)

    history = click_in(SchedulerFlows(Ran(DAILY)), ZH, "history", job_id="job_daily")
    assert history["data"]["columns"] == ["开始", "结果", "用时", "摘要", "输出"]
    failed, ok = history["data"]["rows"]
    assert failed[1] == "❌ 失败" and ok[1] == "✅ 成功"
    assert ok[4] == "Mon May  6 09:00:00 CST 2030"
    english = click_in(SchedulerFlows(Ran(DAILY)), EN, "history", job_id="job_daily")
    assert [row[1] for row in english["data"]["rows"]] == ["❌ Failed", "✅ Succeeded"]
    assert english["data"]["columns"][-1] == "Output"


def test_apps_that_did_not_understand_mark_their_help_as_not_done() -> None:
    """What a scheduled run judges by: the issue's "运行命令 date" sent to the code
    app got its help, which a run counted as done; the help is marked `warning`."""
    from apps.code_app.flows import CodeFlows
    from tests.apps.doubles import PlanningAgent

    for flows in (CodeFlows(PlanningAgent()), SchedulerFlows(Jobs())):
        answer = flows.handle("运行命令 date", ZH)
        assert answer["status"] == "ok" and answer["notice"] == "warning", answer


@pytest.mark.parametrize(
    ("job", "zh", "en"),
    [
        ({"cron": "0 8 * * *"}, "每天 8:00", "every day at 8:00"),
        ({"cron": "30 7 * * 1-5"}, "工作日 7:30", "weekdays at 7:30"),
        ({"cron": "0 9 * * 1"}, "每周一 9:00", "every Monday at 9:00"),
        ({"cron": "0 9 * * sun"}, "每周日 9:00", "every Sunday at 9:00"),
        ({"cron": "0 * * * *"}, "每小时的第 0 分", "every hour at :00"),
        ({"cron": "*/15 * * * *"}, "每 15 分钟", "every 15 min"),
        ({"cron": "0 8 1 * *"}, "每月 1 日 8:00", "on day 1 of each month at 8:00"),
        (
            {"cron": "0 8 1 1 *"},
            "按自定时间表（0 8 1 1 *）",
            "on a custom schedule (0 8 1 1 *)",
        ),
    ],
)
def test_a_schedule_reads_like_speech(job, zh, en) -> None:
    """Never `cron 0 8 * * *`."""
    job = {"schedule_type": "cron", "enabled": True, "run_count": 0, **job}
    assert when(job, Turn(context=ZH)) == zh
    assert when(job, Turn(context=EN)) == en


def test_a_paused_job_says_paused_and_nothing_of_its_next_run() -> None:
    job = {"schedule_type": "cron", "cron": "0 8 * * *", "enabled": False, "run_count": 3}
    assert describe(job, Turn(context=ZH)) == "每天 8:00 · 已运行 3 次 · 已暂停"
    assert describe(job, Turn(context=EN)) == "every day at 8:00 · ran 3 times · paused"


@pytest.mark.parametrize(
    ("context", "asked", "keep", "delete", "done"),
    [
        (
            ZH,
            "删除定时任务「喝水提醒」？删除后它不会再运行，也不能恢复。",
            "保留",
            "删除",
            "已删除「喝水提醒」",
        ),
        (
            EN,
            'Delete the scheduled task "喝水提醒"? It will not run again, and this '
            "cannot be undone.",
            "Keep",
            "Delete",
            'Deleted "喝水提醒"',
        ),
    ],
)
def test_delete_asks_first_and_cancel_deletes_nothing(
    context: dict, asked: str, keep: str, delete: str, done: str
) -> None:
    """No button called 取消 / Cancel deletes a job. A job's button is
    删除 / Delete, and it asks first: 保留 / Keep (first, the safe choice) deletes
    nothing; only the question's 删除 deletes. An older window's `cancel` asks too."""
    agent = Jobs(DAILY, SOON)
    window = SchedulerFlows(agent).handle("", context)
    labels = {a["label"] for a in window["actions"] if a.get("item_id") == "job_daily"}
    assert delete in labels and not labels & {"取消", "Cancel"}
    for clicked in ("delete", "cancel"):
        question = click_in(SchedulerFlows(agent), context, clicked, job_id="job_daily")
        assert question["message"] == asked and question["notice"] == "info"
        assert [i["id"] for i in question["data"]["items"]] == ["job_daily"]
        assert "cancel" not in verbs(agent)
        assert [(a["label"], a["action_id"]) for a in question["actions"]] == [
            (keep, "refresh"),
            (delete, "delete_confirmed"),
        ]
    kept = click_in(SchedulerFlows(agent), context, "refresh")
    assert {j["id"] for j in agent.jobs} == {"job_daily", "job_soon"}
    assert kept["view_type"] == "list"
    (sure,) = [a for a in question["actions"] if a["action_id"] == "delete_confirmed"]
    gone = click_in(SchedulerFlows(agent), context, "delete_confirmed", **sure["params"])
    assert gone["message"] == done
    assert [j["id"] for j in agent.jobs] == ["job_soon"]


@pytest.mark.parametrize(
    ("context", "said", "asked", "keep", "sure", "done"),
    [
        (
            ZH,
            "取消所有定时任务",
            "删除全部 2 个定时任务？删除后它们不会再运行，也不能恢复。",
            "保留",
            "全部删除（2 个）",
            "已删除 2 个定时任务",
        ),
        (
            EN,
            "cancel all my reminders",
            "Delete all 2 scheduled tasks? They will not run again, and this cannot "
            "be undone.",
            "Keep",
            "Delete all 2",
            "Deleted 2 scheduled tasks",
        ),
    ],
)
def test_cancelling_them_all_asks_once_naming_how_many_then_says_how_many(
    context: dict, said: str, asked: str, keep: str, sure: str, done: str
) -> None:
    """Not a job named "all my reminders": one question naming how many, 保留 / Keep
    (first, the safe choice) deletes nothing, the yes deletes the jobs asked about
    (not one made since) and says how many went."""
    agent = Jobs(DAILY, SOON)
    question = SchedulerFlows(agent).handle(said, context)
    assert question["message"] == asked and question["notice"] == "info"
    assert [i["id"] for i in question["data"]["items"]] == ["job_daily", "job_soon"]
    assert [(a["label"], a["action_id"]) for a in question["actions"]] == [
        (keep, "refresh"),
        (sure, "delete_all_confirmed"),
    ]
    assert "cancel" not in verbs(agent)
    later = {**DAILY, "id": "job_later", "name": "later"}
    agent.jobs.append(later)
    yes = question["actions"][1]
    gone = click_in(SchedulerFlows(agent), context, yes["action_id"], **yes["params"])
    assert gone["message"] == done
    assert agent.jobs == [later]
    none = SchedulerFlows(Jobs()).handle(said, context)  # nothing to delete: no question
    assert none["view_type"] == "list" and none["notice"] == "info"
    assert not [a for a in none["actions"] if a["action_id"] == "delete_all_confirmed"]


class Keeping(Jobs):
    """The fake controller that keeps what is created."""

    def call_tool(self, tool: str, **args: Any) -> Any:
        if args.get("action") == "create":
            self.calls.append(("create", args))
            made = {
                **args["job"],
                "id": f"job_{len(self.jobs)}",
                "enabled": True,
                "run_count": 0,
            }
            self.jobs.append(made)
            return made
        return super().call_tool(tool, **args)


@pytest.mark.parametrize(
    ("context", "said", "name", "exists", "again", "second"),
    [
        (
            ZH,
            "每天早上8点提醒我喝水",
            "喝水提醒",
            "已经有一样的定时任务「喝水提醒」（每天 8:00），没有重复添加。"
            "如果确实要再加一个，请点“再加一个”。",
            "再加一个",
            "喝水提醒（每天 8:00）",
        ),
        (
            EN,
            "remind me every day at 8am to drink water",
            "drink water reminder",
            'The same scheduled task "drink water reminder" already exists (every day '
            'at 8:00); nothing was added. To add another one all the same, press "Add '
            'another".',
            "Add another",
            "drink water reminder (every day at 8:00)",
        ),
    ],
)
def test_the_same_reminder_said_twice_is_one_job_unless_asked_again(
    context: dict, said: str, name: str, exists: str, again: str, second: str
) -> None:
    """Said twice, a reminder is not made twice in silence: the answer names the job
    there is and its time, adds nothing, and offers to add another all the same."""
    agent = Keeping()
    first = SchedulerFlows(agent).handle(said, context)
    assert [j["name"] for j in agent.jobs] == [name] and "notice" not in first
    repeated = SchedulerFlows(agent).handle(said, context)
    assert [j["name"] for j in agent.jobs] == [name]  # nothing added
    assert repeated["message"] == exists and repeated["notice"] == "info"
    (more,) = [a for a in repeated["actions"] if a["action_id"] == "add_again"]
    assert more["label"] == again
    added = click_in(SchedulerFlows(agent), context, "add_again", **more["params"])
    assert [j["name"] for j in agent.jobs] == [name, second]
    assert added["view_type"] == "list" and second in added["message"]
    # a one-off said twice within the minute is the same; another time is not
    soon = Keeping()
    SchedulerFlows(soon).handle("10分钟后提醒我喝水", ZH)
    assert (
        "已经有一样的定时任务"
        in SchedulerFlows(soon).handle("10分钟后提醒我喝水", ZH)["message"]
    )
    SchedulerFlows(soon).handle("20分钟后提醒我喝水", ZH)
    assert len(soon.jobs) == 2
