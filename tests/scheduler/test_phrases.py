"""The scheduler app's words, offline, in Chinese and English, at a fixed `now`."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.scheduler_app.phrases import chinese_number, understand

NOW = datetime(2030, 5, 6, 14, 0, tzinfo=UTC)  # a Monday afternoon

CASES = [
    (
        "10分钟后提醒我喝水",
        "喝水提醒",
        "提醒我喝水",
        {"schedule_type": "once", "run_at": "2030-05-06T14:10:00+00:00"},
    ),
    (
        "明天早上8点叫我起床",
        "起床提醒",
        "提醒我起床",
        {"schedule_type": "once", "run_at": "2030-05-07T08:00:00+00:00"},
    ),
    (
        "每天早上8点播放音乐",
        "播放音乐",
        "播放音乐",
        {"schedule_type": "cron", "cron": "0 8 * * *"},
    ),
    (
        "每周一上午9点查看CPU",
        "查看CPU",
        "查看CPU",
        {"schedule_type": "cron", "cron": "0 9 * * mon"},
    ),
    (
        "每隔半小时提醒我休息",
        "休息提醒",
        "提醒我休息",
        {"schedule_type": "interval", "interval_s": 1800.0},
    ),
    (
        "remind me in 5 minutes to stretch",
        "stretch reminder",
        "remind me to stretch",
        {"schedule_type": "once", "run_at": "2030-05-06T14:05:00+00:00"},
    ),
    (
        "下午3点半提醒我开会",
        "开会提醒",
        "提醒我开会",
        {"schedule_type": "once", "run_at": "2030-05-06T15:30:00+00:00"},
    ),
    (
        "每天晚上10点提醒我睡觉",
        "睡觉提醒",
        "提醒我睡觉",
        {"schedule_type": "cron", "cron": "0 22 * * *"},
    ),
    (
        "每隔两小时提醒我喝水",
        "喝水提醒",
        "提醒我喝水",
        {"schedule_type": "interval", "interval_s": 7200.0},
    ),
    (
        "每周五下午5点提醒我写周报",
        "写周报提醒",
        "提醒我写周报",
        {"schedule_type": "cron", "cron": "0 17 * * fri"},
    ),
    (
        "30秒后提醒我看锅",
        "看锅提醒",
        "提醒我看锅",
        {"schedule_type": "once", "run_at": "2030-05-06T14:00:30+00:00"},
    ),
    (
        "remind me tomorrow at 9am to call mom",
        "call mom reminder",
        "remind me to call mom",
        {"schedule_type": "once", "run_at": "2030-05-07T09:00:00+00:00"},
    ),
    (
        "every day at 7:30am check the weather",
        "check the weather",
        "check the weather",
        {"schedule_type": "cron", "cron": "30 7 * * *"},
    ),
    (
        "every 10 minutes remind me to blink",
        "blink reminder",
        "remind me to blink",
        {"schedule_type": "interval", "interval_s": 600.0},
    ),
    (
        "every monday at 9 check cpu",
        "check cpu",
        "check cpu",
        {"schedule_type": "cron", "cron": "0 9 * * mon"},
    ),
    # English says the time anywhere; "wake me up" is 叫我起床
    (
        "wake me up tomorrow at 8am",
        "wake up reminder",
        "remind me to wake up",
        {"schedule_type": "once", "run_at": "2030-05-07T08:00:00+00:00"},
    ),
    (
        "remind me at 7pm to call mom",
        "call mom reminder",
        "remind me to call mom",
        {"schedule_type": "once", "run_at": "2030-05-06T19:00:00+00:00"},
    ),
    (
        "every day at 9 remind me to stretch",
        "stretch reminder",
        "remind me to stretch",
        {"schedule_type": "cron", "cron": "0 9 * * *"},
    ),
]


@pytest.mark.parametrize(("text", "name", "what", "schedule"), CASES)
def test_words_become_a_job(text, name, what, schedule):
    request = understand(text, NOW)
    assert (request.kind, request.name, request.what, request.schedule) == (
        "create",
        name,
        what,
        schedule,
    )


@pytest.mark.parametrize(
    ("text", "kind", "target"),
    [
        ("取消喝水提醒", "cancel", "喝水"),
        ("删除起床的提醒", "cancel", "起床"),
        ("cancel the stretch reminder", "cancel", "stretch"),
        ("我有哪些定时任务", "list", ""),
        ("列出我的提醒", "list", ""),
        ("list my reminders", "list", ""),
        ("", "list", ""),
        ("提醒我喝水", "remind_now", ""),
        ("remind me to stretch", "remind_now", ""),
        # every job at once is not a job named "all my reminders"
        ("取消所有定时任务", "cancel_all", ""),
        ("把提醒全部删掉", "cancel_all", ""),
        ("清空定时任务", "cancel_all", ""),
        ("cancel all my reminders", "cancel_all", ""),
        ("delete all scheduled tasks", "cancel_all", ""),
        ("clear my reminders", "cancel_all", ""),
        ("所有定时任务", "list", ""),
        ("列出所有提醒", "list", ""),
    ],
)
def test_list_cancel_and_a_reminder_that_is_due(text, kind, target):
    request = understand(text, NOW)
    assert (request.kind, request.target) == (kind, target)


@pytest.mark.parametrize(
    ("text", "run_at"),
    [
        ("周五下午5点运行脚本 backup.py", "2030-05-10T17:00:00+00:00"),
        ("星期三早上8点提醒我开会", "2030-05-08T08:00:00+00:00"),
        ("下周一上午9点提醒我交报告", "2030-05-13T09:00:00+00:00"),
        ("周一下午1点提醒我吃药", "2030-05-13T13:00:00+00:00"),  # past: next week's
    ],
)
def test_one_weekday_is_that_day_not_today(text, run_at):
    request = understand(text, NOW)
    assert request.schedule == {"schedule_type": "once", "run_at": run_at}


def test_a_time_already_past_today_means_tomorrow():
    assert (
        understand("8点提醒我吃药", NOW).schedule["run_at"] == "2030-05-07T08:00:00+00:00"
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [("10", 10), ("十", 10), ("十五", 15), ("二十", 20), ("两", 2), ("半", 0.5)],
)
def test_chinese_numbers(text, value):
    assert chinese_number(text) == value


@pytest.mark.parametrize(
    ("text", "command", "schedule"),
    [
        (
            "每天早上9点运行命令 date",
            "date",
            {"schedule_type": "cron", "cron": "0 9 * * *"},
        ),
        (
            "每隔10分钟执行命令 ls -l",
            "ls -l",
            {"schedule_type": "interval", "interval_s": 600.0},
        ),
        (
            "每天早上9点运行命令：`date -u`",
            "date -u",
            {"schedule_type": "cron", "cron": "0 9 * * *"},
        ),
        (
            "every day at 9am run the command date -u",
            "date -u",
            {"schedule_type": "cron", "cron": "0 9 * * *"},
        ),
        (
            "Run the command ls -R every hour",
            "ls -R",  # as typed, not lower-cased
            {"schedule_type": "interval", "interval_s": 3600.0},
        ),
    ],
)
def test_a_command_to_run_is_a_command_not_an_instruction(text, command, schedule):
    request = understand(text, NOW)
    assert (request.kind, request.command, request.schedule) == (
        "create",
        command,
        schedule,
    )
    assert command in request.name


def test_an_instruction_to_run_later_stays_an_instruction():
    for text in ("每天早上8点播放音乐", "每周一上午9点查看CPU", "10分钟后提醒我喝水"):
        assert understand(text, NOW).command == ""


@pytest.mark.parametrize(
    ("text", "kind", "target"),
    [
        ("暂停喝水提醒", "pause", "喝水"),
        ("停用起床的提醒", "pause", "起床"),
        ("pause the stretch reminder", "pause", "stretch"),
        ("恢复喝水提醒", "resume", "喝水"),
        ("resume the stretch reminder", "resume", "stretch"),
        ("取消喝水提醒（每天 9:00）", "cancel", "喝水提醒（每天 9:00）"),
    ],
)
def test_pause_and_resume_name_their_job(text, kind, target):
    request = understand(text, NOW)
    assert (request.kind, request.target) == (kind, target)
