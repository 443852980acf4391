"""The scheduler app's flows over a fake agent: the window's buttons and words become
the right `schedule` tool calls (no process, no HTTP)."""

from __future__ import annotations

from typing import Any

from aios_protocol.errors import ToolFailed
from apps.scheduler_app.flows import SchedulerFlows

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
        ("cancel", "job_abc"),
        ("refresh", None),
    } <= controls


def test_buttons_call_the_schedule_tool_for_their_job() -> None:
    agent = Agent()
    flows = SchedulerFlows(agent)
    assert click(flows, "disable", job_id="job_abc")["message"] == "已停用"
    assert agent.calls[0] == (
        "update",
        {"action": "update", "job_id": "job_abc", "changes": {"enabled": False}},
    )
    assert click(flows, "run", job_id="job_abc")["message"] == "已开始运行"
    history = click(flows, "history", job_id="job_abc")
    assert history["view_type"] == "table" and history["data"]["rows"][0][1] == "ok"
    assert "休息提醒" in history["data"]["title"]
    assert click(flows, "cancel", job_id="job_abc")["message"] == "已取消"
    verbs = [verb for verb, _ in agent.calls]
    assert verbs == ["update", "list", "run", "list", "list", "runs", "cancel", "list"]


def test_words_create_a_job_and_a_refusal_is_an_error_view() -> None:
    agent = Agent()
    answer = SchedulerFlows(agent).handle("每隔半小时提醒我休息", {})
    created = agent.calls[0][1]["job"]
    assert created["schedule_type"] == "interval" and created["interval_s"] == 1800
    assert created["execution_type"] == "agent" and created["instruction"] == "提醒我休息"
    assert answer["view_type"] == "list" and "已设定「休息提醒」" in answer["message"]
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
    assert labels == [
        "Refresh",
        "Disable “休息提醒”",
        "Run “休息提醒” now",
        "History of “休息提醒”",
        "Cancel “休息提醒”",
    ]
    history = SchedulerFlows(agent).handle(
        None, EN, {"action_id": "history", "params": {"job_id": "job_abc"}}
    )
    assert history["data"]["columns"] == ["Started", "Result", "Duration", "Summary"]
    assert history["data"]["title"] == "Runs of “休息提醒”"
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
        "停用「休息提醒」",
        "立即运行「休息提醒」",
        "历史「休息提醒」",
        "取消「休息提醒」",
    ]


def test_answers_in_english_and_a_refusal_said_plainly() -> None:
    agent = Agent()
    created = SchedulerFlows(agent).handle("remind me in 5 minutes to stretch", EN)
    assert agent.calls[0][1]["job"]["instruction"] == "remind me to stretch"
    assert created["status"] == "ok" and "notice" not in created
    assert created["message"].startswith("OK, “stretch reminder” is set: at ")
    assert (
        click_in(SchedulerFlows(agent), EN, "disable", job_id="job_abc")["message"]
        == "Disabled"
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
