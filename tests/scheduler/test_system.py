"""End to end with real processes: `aios start --headless`, the executor, the apps.

A 1-second interval command job runs through the executor and shows up in its
runs; the scheduler app turns words into a job through the `schedule` tool (app
token → executor → controller) and answers in the desktop's language, and the job
survives a restart.
"""

from __future__ import annotations

import copy
from datetime import datetime

import pytest

from tests.controller.system import TEST_CONFIG, build_apps_dir, copy_shipped_apps, launch

pytestmark = pytest.mark.slow


def test_interval_job_runs_and_words_become_jobs(tmp_path):
    apps = build_apps_dir(tmp_path / "apps", test_apps=())
    copy_shipped_apps(apps, ("scheduler_app",))
    system = launch(tmp_path, apps)
    try:
        system.wait_app("scheduler_app", "running")
        job = {
            "name": "tick",
            "execution_type": "command",
            "schedule_type": "interval",
            "interval_s": 1,
            "app_id": "hello_app",
            "command": ["echo", "tick"],
            "timeout": 5,
        }
        created = system.post("/api/schedules", job)
        assert created.status_code == 201, created.text
        job_id = created.json()["id"]

        def two_runs():
            runs = system.get(f"/api/schedules/{job_id}/runs").json()["runs"]
            return runs if len(runs) >= 2 else None

        runs = system.wait_for(two_runs, timeout=20, what="two runs of the 1 s job")
        assert {r["status"] for r in runs} == {"ok"}, runs
        assert runs[0]["output_tail"] == "tick\n"
        assert (system.state_dir / "runs" / job_id).is_dir()

        answer = system.say("10分钟后提醒我喝水")
        assert answer["tasks"][0]["app_id"] == "scheduler_app", answer
        assert answer["tasks"][0]["result"]["status"] == "ok", answer
        jobs = system.get("/api/schedules").json()["jobs"]
        reminder = next(j for j in jobs if j["app_id"] == "scheduler_app")
        assert reminder["name"] == "喝水提醒" and reminder["instruction"] == "提醒我喝水"
        assert system.get(f"/api/schedules/{job_id}").status_code in (404, 405)

        # the desktop's language reaches the app: the same window, in English
        english = system.post(
            "/api/instruction", {"text": "list my reminders", "language": "en-US"}
        ).json()
        window = english["tasks"][0]["result"]
        assert english["tasks"][0]["app_id"] == "scheduler_app", english
        assert window["data"]["title"] == "Scheduled Tasks"
        assert window["message"] == f"{len(window['data']['items'])} scheduled tasks"
    finally:
        system.stop()

    again = launch(tmp_path, apps, state_dir=system.state_dir)
    try:
        names = {j["name"] for j in again.get("/api/schedules").json()["jobs"]}
        assert names == {"tick", "喝水提醒"}
    finally:
        again.stop()


def test_a_daily_command_said_in_words_runs_its_command_through_the_executor(tmp_path):
    """ "每天早上9点运行命令 date" is a command job that runs `date` in
    the scheduler app's sandbox (its output in the run), a program outside the
    whitelist is refused when the job is made, and an agent job whose app did not do
    the work is not ok."""
    config = copy.deepcopy(TEST_CONFIG)
    config["tool_sandbox"]["shell_whitelist"] = ["ls", "cat", "echo", "python3", "date"]
    apps = build_apps_dir(tmp_path / "apps", test_apps=())
    copy_shipped_apps(apps, ("scheduler_app",))
    system = launch(tmp_path, apps, config=config)
    try:
        system.wait_app("scheduler_app", "running")
        answer = system.say("每天早上9点运行命令 date")
        [task] = answer["tasks"]
        assert task["app_id"] == "scheduler_app" and task["result"]["status"] == "ok", (
            answer
        )
        [job] = system.get("/api/schedules").json()["jobs"]
        assert (job["execution_type"], job["command"], job["cron"]) == (
            "command",
            "date",
            "0 9 * * *",
        )
        assert job["app_id"] == "scheduler_app" and job["enabled"] is True
        assert system.post(f"/api/schedules/{job['id']}/run", {}).status_code == 202

        def ran(job_id: str):
            runs = system.get(f"/api/schedules/{job_id}/runs").json()["runs"]
            return runs or None

        [run] = system.wait_for(lambda: ran(job["id"]), timeout=20, what="the run of date")
        assert run["status"] == "ok", run
        assert str(datetime.now().year) in run["output_tail"], run
        assert run["summary"] == "退出码 0"

        refused = system.say("每天早上9点运行命令 rm -rf notes")
        reply = refused["tasks"][0]["result"]
        assert reply["status"] == "error" and reply["data"]["code"] == "command_not_allowed"
        assert reply["message"].startswith("没有设定：不允许运行命令「rm」"), reply
        assert len(system.get("/api/schedules").json()["jobs"]) == 1

        for instruction, why in (
            ("定时任务 咕噜咕噜", "没有完成："),  # the scheduler app answers with its help
            ("xyzzy plugh", "没有应用接下这条指令"),  # no app takes it
        ):
            made = system.post(
                "/api/schedules",
                {
                    "name": instruction,
                    "execution_type": "agent",
                    "schedule_type": "cron",
                    "cron": "0 9 * * *",
                    "app_id": "scheduler_app",
                    "instruction": instruction,
                },
            ).json()
            system.post(f"/api/schedules/{made['id']}/run", {})
            job_id = made["id"]
            [run] = system.wait_for(
                lambda job_id=job_id: ran(job_id), timeout=20, what=instruction
            )
            assert run["status"] == "error" and run["summary"].startswith(why), run
    finally:
        system.stop()
