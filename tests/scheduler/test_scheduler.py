"""The scheduler's logic with an injected clock: no test sleeps for a schedule."""

from __future__ import annotations

import json
import threading
from datetime import datetime

import pytest

from aios_protocol.errors import InvalidRequest, NotFound
from aios_protocol.messages import ScheduleJob, ScheduleJobPatch
from aios_runtime.json_client import request_json
from controller.pipeline.cancel import Cancelled, TaskCancels
from scheduler import JobRunner, JobStore, Scheduler
from scheduler.scheduler import CommandReview, JobRunning, NeedsUserConfirmation


def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def agent_job(**kw) -> ScheduleJob:
    fields = {
        "name": "喝水提醒",
        "execution_type": "agent",
        "schedule_type": "interval",
        "interval_s": 60,
        "app_id": "scheduler_app",
        "instruction": "提醒我喝水",
    }
    return ScheduleJob(**{**fields, **kw})


def command_job(**kw) -> ScheduleJob:
    fields = {
        "name": "echo",
        "execution_type": "command",
        "schedule_type": "interval",
        "interval_s": 1,
        "app_id": "hello_app",
        "command": ["echo", "hi"],
    }
    return ScheduleJob(**{**fields, **kw})


def test_interval_job_runs_when_the_clock_says_so(make_scheduler, clock, pipeline, toasts):
    scheduler = make_scheduler()
    job = scheduler.create(agent_job())
    assert job["next_run_at"].startswith("2030-05-06T08:01:00")
    assert scheduler.tick() == []
    clock.advance(seconds=60)
    assert len(scheduler.tick()) == 1
    assert scheduler.wait_idle()
    assert pipeline.said == [("提醒我喝水", "sess_sched" + job["id"][4:])]
    assert toasts[-1][0] == "定时任务「喝水提醒」已运行"
    (run,) = scheduler.runs(job["id"])
    assert run["status"] == "ok" and run["summary"] == "done: 提醒我喝水"
    assert scheduler.get(job["id"])["next_run_at"].startswith("2030-05-06T08:02:00")


def test_command_job_goes_to_the_executor_with_its_app(make_scheduler, clock, executor):
    scheduler = make_scheduler()
    job = scheduler.create(command_job(timeout=5))
    clock.advance(seconds=1)
    scheduler.tick()
    scheduler.wait_idle()
    (body,) = executor.bodies
    assert body["app_id"] == "hello_app"
    assert body["steps"] == [
        {
            "step_id": 1,
            "tool": "shell_exec",
            "args": {"cmd": ["echo", "hi"], "timeout": 5.0},
        }
    ]
    (run,) = scheduler.runs(job["id"])
    assert run["status"] == "ok" and run["output_tail"] == "hi\n"


def test_command_timeout_and_failure_are_recorded(make_scheduler, clock, executor):
    scheduler = make_scheduler()
    job = scheduler.create(command_job())
    executor.answer = {
        "status": "error",
        "code": "tool_timeout",
        "error": "took too long",
        "result": {"stdout": "partial", "stderr": ""},
    }
    clock.advance(seconds=1)
    scheduler.tick()
    scheduler.wait_idle()
    executor.answer = {
        "status": "ok",
        "result": {"returncode": 3, "stdout": "", "stderr": "bad"},
    }
    clock.advance(seconds=1)
    scheduler.tick()
    scheduler.wait_idle()
    newest, oldest = scheduler.runs(job["id"])
    assert (oldest["status"], oldest["output_tail"]) == ("timeout", "partial")
    assert (newest["status"], newest["summary"]) == ("error", "退出码 3")


def test_an_agent_job_that_times_out_is_cancelled(tmp_path, clock, toasts, slow_peer):
    """The pipeline's own cancellation (`TaskCancels`) stops the run's blocking call."""
    cancels = TaskCancels()
    outcome = []

    def slow_pipeline(text: str, session_id: str, language: str | None) -> dict:
        with cancels.running(session_id, "hello_app"):
            try:
                cancels.guard(lambda: request_json("POST", f"{slow_peer}/slow", {}))
            except Cancelled as exc:
                outcome.append(exc.code)
                raise
        return {}

    notify = lambda *a: toasts.append(a)  # noqa: E731
    cancel = lambda sid: cancels.cancel_app("hello_app", sid)  # noqa: E731
    scheduler = Scheduler(
        JobStore(tmp_path / "state"),
        JobRunner(lambda *a: {}, slow_pipeline, notify, cancel),
        clock=clock,
    )
    job = scheduler.create(agent_job(timeout=0.3))
    clock.advance(seconds=60)
    scheduler.tick()
    assert scheduler.wait_idle(3)
    assert outcome == ["cancelled"]
    (run,) = scheduler.runs(job["id"])
    assert run["status"] == "timeout" and "cancelled" in run["summary"], run
    assert run["duration_s"] < 2
    assert "超时" in toasts[-1][0]
    assert scheduler.get(job["id"])["running"] is False


def test_a_running_job_never_overlaps_itself(make_scheduler, clock, executor):
    scheduler = make_scheduler()
    job = scheduler.create(command_job())
    executor.gate = threading.Event()
    clock.advance(seconds=1)
    assert len(scheduler.tick()) == 1
    for _ in range(3):
        clock.advance(seconds=1)
        assert scheduler.tick() == []
    with pytest.raises(JobRunning):
        scheduler.run_now(job["id"])
    executor.gate.set()
    scheduler.wait_idle()
    entry = scheduler.get(job["id"])
    assert len(executor.bodies) == 1 and entry["skipped"] == 3 and entry["run_count"] == 1


def test_catch_up_after_downtime_is_one_run(make_scheduler, clock, executor, tmp_path):
    scheduler = make_scheduler()
    job = scheduler.create(command_job(interval_s=10))
    scheduler.stop()
    clock.advance(hours=5)  # the controller was down for five hours
    again = make_scheduler()
    assert len(again.tick()) == 1
    again.wait_idle()
    assert again.tick() == []
    (run,) = again.runs(job["id"])
    assert run["trigger"] == "catch_up"
    assert when(again.get(job["id"])["next_run_at"]) > clock.now


def test_restart_keeps_jobs_and_closes_interrupted_runs(make_scheduler, clock, executor):
    scheduler = make_scheduler()
    job = scheduler.create(command_job())
    executor.gate = threading.Event()
    clock.advance(seconds=1)
    scheduler.tick()  # running when the controller "stops"
    again = make_scheduler()
    entry = again.get(job["id"])
    assert entry["name"] == "echo" and entry["running"] is False
    runs = again.runs(job["id"])
    assert runs[0]["status"] == "error" and "中断" in runs[0]["summary"]
    # the stopped controller's worker is let go only now: in a real restart it is
    # gone, and here it would otherwise race the reads above with its own answer
    executor.gate.set()
    scheduler.wait_idle()


def test_once_and_max_runs_end_the_job(make_scheduler, clock, pipeline):
    scheduler = make_scheduler()
    once = scheduler.create(
        agent_job(schedule_type="once", interval_s=None, run_at="2030-05-06T08:10:00+00:00")
    )
    limited = scheduler.create(agent_job(name="twice", interval_s=60, max_runs=2))
    for _ in range(12):
        clock.advance(minutes=1)
        scheduler.tick()
        scheduler.wait_idle()
    assert scheduler.get(once["id"])["next_run_at"] is None
    assert scheduler.get(once["id"])["run_count"] == 1
    assert scheduler.get(limited["id"])["run_count"] == 2
    assert scheduler.get(limited["id"])["next_run_at"] is None


def test_cron_in_local_time_and_bad_cron_names_the_field(make_scheduler, clock):
    scheduler = make_scheduler()
    job = scheduler.create(
        agent_job(schedule_type="cron", interval_s=None, cron="0 9 * * mon")
    )
    assert job["next_run_at"][:16] in {"2030-05-06T09:00", "2030-05-13T09:00"}
    with pytest.raises(InvalidRequest, match="cron"):
        scheduler.create(
            agent_job(schedule_type="cron", interval_s=None, cron="99 9 * * mon")
        )


def test_disable_enable_and_patch(make_scheduler, clock, pipeline):
    scheduler = make_scheduler()
    job = scheduler.create(agent_job())
    off = scheduler.update(job["id"], ScheduleJobPatch(enabled=False))
    assert off["enabled"] is False and off["next_run_at"] is None
    clock.advance(minutes=5)
    assert scheduler.tick() == []
    on = scheduler.update(job["id"], ScheduleJobPatch(enabled=True, interval_s=30))
    assert on["interval_s"] == 30 and when(on["next_run_at"]) > clock.now


def test_apps_see_only_their_own_jobs(make_scheduler):
    scheduler = make_scheduler(manages_all=lambda app_id: app_id == "scheduler_app")
    mine = scheduler.create(agent_job(app_id="someone_else"), caller="music_app")
    assert mine["app_id"] == "music_app"  # an app's job is always its own
    other = scheduler.create(agent_job(app_id="hello_app"))
    assert [j["id"] for j in scheduler.jobs(caller="music_app")] == [mine["id"]]
    with pytest.raises(NotFound):
        scheduler.delete(other["id"], caller="music_app")
    assert len(scheduler.jobs(caller="scheduler_app")) == 2  # the window sees every job


def test_risky_command_waits_for_the_users_yes(make_scheduler, clock, executor, toasts):
    asked = lambda job: CommandReview("运行程序 rm -rf workspace", ["rm"])  # noqa: E731
    scheduler = make_scheduler(review=asked)
    job = scheduler.create(command_job(command="rm -rf workspace"), caller="hello_app")
    assert job["enabled"] is False and job["awaiting_confirmation"]
    assert "需要你的确认" in toasts[-1][0]
    clock.advance(seconds=5)
    assert scheduler.tick() == []
    with pytest.raises(NeedsUserConfirmation):
        scheduler.update(job["id"], ScheduleJobPatch(enabled=True), caller="hello_app")
    with pytest.raises(NeedsUserConfirmation):
        scheduler.run_now(job["id"])
    yes = scheduler.update(job["id"], ScheduleJobPatch(enabled=True))  # the user's token
    assert yes["enabled"] and yes["awaiting_confirmation"] is None
    clock.advance(seconds=1)
    scheduler.tick()
    scheduler.wait_idle()
    assert executor.bodies[0]["approved_commands"] == ["rm"]


def test_corrupt_files_cost_only_themselves(make_scheduler, tmp_path, clock):
    scheduler = make_scheduler()
    a = scheduler.create(agent_job(name="a"))
    b = scheduler.create(agent_job(name="b"))
    c = scheduler.create(agent_job(name="c"))
    clock.advance(seconds=60)
    scheduler.tick()
    scheduler.wait_idle()
    state = tmp_path / "state"
    lines = (state / "jobs.json").read_text().splitlines()
    assert len(lines) == 5  # one job per line
    lines[2] = lines[2][:20]  # job b damaged mid-line
    (state / "jobs.json").write_text("\n".join(lines))
    (state / "jobs-state.json").write_text("{not json")
    run_file = next((state / "runs" / a["id"]).glob("run_*.json"))
    run_file.write_text("garbage")
    again = make_scheduler()
    assert {j["id"] for j in again.jobs()} == {a["id"], c["id"]}
    assert any("jobs.json is unreadable" in p for p in again.problems)
    assert any("jobs-state.json is unreadable" in p for p in again.problems)
    assert list(state.glob("jobs.json.corrupt-*")) and list(
        state.glob("jobs-state.json.corrupt-*")
    )
    assert again.runs(a["id"]) == []
    assert any(run_file.name in p for p in again.problems)
    assert json.loads((state / "jobs.json").read_text())["jobs"]  # rewritten whole
    assert b["id"] not in (state / "jobs.json").read_text()


def test_toasts_are_in_the_settings_language(tmp_path, clock, executor, pipeline, toasts):
    """A job has no desktop session: its toasts follow the settings' `ui_language`."""
    notify = lambda *a: toasts.append(a)  # noqa: E731
    english = lambda: "en-US"  # noqa: E731
    scheduler = Scheduler(
        JobStore(tmp_path / "state"),
        JobRunner(executor, pipeline, notify, language=english),
        clock=clock,
        notify=notify,
        review=lambda job: CommandReview("run rm -rf workspace", ["rm"]),
        language=english,
    )
    scheduler.create(agent_job(name="Drink water"))
    clock.advance(seconds=60)
    scheduler.tick()
    assert scheduler.wait_idle()
    assert toasts[-1][0] == 'The scheduled job "Drink water" ran'
    risky = scheduler.create(command_job(name="clean", command="rm -rf workspace"))
    assert toasts[-1][:2] == (
        'The scheduled job "clean" needs your confirmation',
        "run rm -rf workspace",
    )
    assert scheduler.settle(risky["id"], True) == (
        'Allowed: the scheduled job "clean" is enabled'
    )
    assert scheduler.settle("job_gone", False) == "This scheduled job no longer exists"


def _task(app_id: str, **reply) -> dict:
    result = {"status": "ok", "view_type": "text", "data": {}, **reply}
    return {"task_id": "t1", "app_id": app_id, "result": result}


@pytest.mark.parametrize(
    ("answer", "status", "summary"),
    [
        (
            {
                "message": "提醒：喝水",
                "tasks": [_task("scheduler_app", message="提醒：喝水")],
            },
            "ok",
            "提醒：喝水",
        ),
        (  # the app answered with its help: it did not understand, nothing was done
            {
                "message": "我可以写、看、改、运行 Python 代码",
                "tasks": [
                    _task(
                        "code_app",
                        view_type="list",
                        message="我可以写、看、改、运行 Python 代码",
                        notice="warning",
                    )
                ],
            },
            "error",
            "没有完成：我可以写、看、改、运行 Python 代码",
        ),
        (
            {
                "message": "运行失败",
                "tasks": [
                    _task(
                        "code_app",
                        status="error",
                        view_type="error",
                        message="运行失败",
                    )
                ],
            },
            "error",
            "没有完成：运行失败",
        ),
        (
            {"message": "不确定该交给哪个应用", "tasks": []},
            "error",
            "没有应用接下这条指令：不确定该交给哪个应用",
        ),
        (
            {
                "message": "需要你的确认",
                "tasks": [_task("code_app", view_type="confirm", message="需要你的确认")],
            },
            "error",
            "在等你确认，还没有运行",
        ),
    ],
)
def test_an_agent_run_is_ok_only_when_its_app_did_the_work(
    tmp_path, clock, executor, toasts, answer, status, summary
):
    notify = lambda *a: toasts.append(a)  # noqa: E731
    scheduler = Scheduler(
        JobStore(tmp_path / "state"),
        JobRunner(executor, lambda text, sid, said: {"session_id": sid, **answer}, notify),
        clock=clock,
    )
    job = scheduler.create(agent_job(name="每日任务"))
    scheduler.run_now(job["id"])
    assert scheduler.wait_idle()
    (run,) = scheduler.runs(job["id"])
    assert (run["status"], run["summary"]) == (status, summary)
    assert scheduler.get(job["id"])["last_status"] == status
    title, _, level, _ = toasts[-1]
    if status == "ok":
        assert (title, level) == ("定时任务「每日任务」已运行", "info")
    else:
        assert (title, level) == ("定时任务「每日任务」没有完成", "error")


def test_a_command_run_says_what_happened_in_the_users_language(
    make_scheduler, clock, executor, toasts
):
    scheduler = make_scheduler()
    job = scheduler.create(command_job(name="报时", command=["date"]))
    executor.answer = {
        "status": "ok",
        "result": {"returncode": 0, "stdout": "Mon May  6 08:00:01 UTC 2030\n"},
    }
    scheduler.run_now(job["id"])
    scheduler.wait_idle()
    clock.advance(seconds=1)
    executor.answer = {
        "status": "error",
        "code": "command_not_allowed",
        "error": "'date' is not in the command whitelist (echo)",
        "result": None,
    }
    scheduler.run_now(job["id"])
    scheduler.wait_idle()
    refused, ran = scheduler.runs(job["id"])
    assert (ran["status"], ran["summary"]) == ("ok", "退出码 0")
    assert ran["output_tail"] == "Mon May  6 08:00:01 UTC 2030\n"
    assert (refused["status"], refused["summary"]) == ("error", "不允许运行命令「date」。")
    assert toasts[0][:3] == (
        "定时任务「报时」已运行",
        "Mon May  6 08:00:01 UTC 2030",
        "info",
    )
    assert toasts[1][0] == "定时任务「报时」没有完成" and toasts[1][2] == "error"


def test_a_job_speaks_the_language_of_the_user_who_made_it(
    tmp_path, clock, executor, toasts
):
    """A job has no desktop session: made on an English desktop (`language`), its
    runs' toasts, summaries and instruction are English though Settings say nothing
    (Chinese); a job without one follows Settings."""
    notify = lambda *a: toasts.append(a)  # noqa: E731
    asked: list[str | None] = []

    def pipeline(text: str, session_id: str, language: str | None) -> dict:
        asked.append(language)
        return {"session_id": session_id, "message": "", "tasks": []}

    scheduler = Scheduler(
        JobStore(tmp_path / "state"),
        JobRunner(executor, pipeline, notify),
        clock=clock,
        notify=notify,
    )
    english = scheduler.create(command_job(name="clock", language="en-US"))
    scheduler.run_now(english["id"])
    scheduler.wait_idle()
    (run,) = scheduler.runs(english["id"])
    assert run["summary"] == "exit code 0"
    assert toasts[-1][0] == 'The scheduled job "clock" ran'
    lost = scheduler.create(agent_job(name="nobody", language="en-US"))
    scheduler.run_now(lost["id"])
    scheduler.wait_idle()
    assert asked == ["en-US"]
    assert scheduler.runs(lost["id"])[0]["summary"] == "No app took this instruction"
    chinese = scheduler.create(command_job(name="报时"))
    scheduler.run_now(chinese["id"])
    scheduler.wait_idle()
    assert scheduler.runs(chinese["id"])[0]["summary"] == "退出码 0"
