"""What the Scheduled Tasks window shows: one line per job, its controls, its history.

Built with `aios_sdk.views`, every label in the user's language (`turn.tr`); every
control is a button whose `action_id` is the verb (`enable`, `disable`, `run`,
`history`, `delete`, `refresh`) and whose params name the job (`job_id`). 删除 /
Delete asks first (`delete_view`: 保留 or 删除; in a dialog 取消 means "dismiss",
so no button that deletes is called that), and so does deleting them all
(`delete_all_view`, which says how many). A job's
controls sit in its own row (`item_id`), and each row says when the job runs, so
two jobs of one name are told apart; `which_view` asks which of several jobs an
instruction meant, one button per candidate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aios_sdk import Turn
from aios_sdk.views import button, list_reply, table_reply

__all__ = [
    "delete_all_view",
    "delete_view",
    "describe",
    "history_view",
    "jobs_view",
    "plural",
    "when",
    "which_view",
]


def plural(count: int, noun: str) -> str:
    """English counts: "1 run", "3 runs"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _minute(moment: Any) -> str:
    return str(moment or "")[:16].replace("T", " ")


_ZH_DAYS = {
    "mon": "周一",
    "tue": "周二",
    "wed": "周三",
    "thu": "周四",
    "fri": "周五",
    "sat": "周六",
    "sun": "周日",
}
_EN_DAYS = {
    "mon": "Monday",
    "tue": "Tuesday",
    "wed": "Wednesday",
    "thu": "Thursday",
    "fri": "Friday",
    "sat": "Saturday",
    "sun": "Sunday",
}


_DAY_NUMBERS = dict(enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))) | {
    7: "sun"
}


def _day_key(field: str) -> str:
    """A cron day-of-week field as a key of `_ZH_DAYS` ("1" and "MON" → "mon")."""
    field = field.lower()
    if field.isdigit():
        return _DAY_NUMBERS.get(int(field), field)
    return "mon-fri" if field == "1-5" else field


def _cron_words(cron: str, turn: Turn) -> str:
    """ "0 9 * * *" → 每天 9:00 / every day at 9:00 (also hourly, every n minutes, a
    weekday, weekdays, a day of the month); a line it cannot say is "on a custom
    schedule" with the line itself after it."""
    fields = cron.split()
    custom = turn.tr(f"按自定时间表（{cron}）", f"on a custom schedule ({cron})")
    if len(fields) != 5:
        return custom
    minute, hour, day, month, weekday = fields
    if month != "*":
        return custom
    if minute.startswith("*/") and minute[2:].isdigit() and fields[1:] == ["*"] * 4:
        return turn.tr(f"每 {int(minute[2:])} 分钟", f"every {int(minute[2:])} min")
    if minute.isdigit() and fields[1:] == ["*"] * 4:
        return turn.tr(f"每小时的第 {int(minute)} 分", f"every hour at :{int(minute):02d}")
    if not (minute.isdigit() and hour.isdigit()):
        return custom
    clock = f"{int(hour)}:{int(minute):02d}"
    days = _day_key(weekday)
    if day != "*":
        if not day.isdigit() or days != "*":
            return custom
        return turn.tr(
            f"每月 {int(day)} 日 {clock}", f"on day {int(day)} of each month at {clock}"
        )
    if days == "*":
        return turn.tr(f"每天 {clock}", f"every day at {clock}")
    if days == "mon-fri":
        return turn.tr(f"工作日 {clock}", f"weekdays at {clock}")
    if days in _ZH_DAYS:
        return turn.tr(f"每{_ZH_DAYS[days]} {clock}", f"every {_EN_DAYS[days]} at {clock}")
    return custom


def when(job: Mapping[str, Any], turn: Turn) -> str:
    """When the job runs, in words ("每天 9:00", "于 2030-05-06 08:10")."""
    kind = job.get("schedule_type")
    if kind == "once":
        at = _minute(job.get("run_at"))
        return turn.tr(f"于 {at}", f"at {at}")
    if kind == "interval":
        seconds = float(job.get("interval_s") or 0)
        if seconds >= 60:
            return turn.tr(f"每 {seconds / 60:g} 分钟", f"every {seconds / 60:g} min")
        return turn.tr(f"每 {seconds:g} 秒", f"every {seconds:g} s")
    return _cron_words(str(job.get("cron") or ""), turn)


def describe(job: Mapping[str, Any], turn: Turn) -> str:
    """One line saying when a job runs, when next, how often it ran, and its state."""
    upcoming = job.get("next_run_at")
    if not job.get("enabled"):
        state = turn.tr("已暂停", "paused")
    elif job.get("running"):
        state = turn.tr("运行中", "running")
    else:
        state = ""
    if job.get("awaiting_confirmation"):
        waiting = job["awaiting_confirmation"]
        state = turn.tr(f"等待你的确认：{waiting}", f"waiting for your yes: {waiting}")
    runs = job.get("run_count", 0)
    if not job.get("enabled") or (upcoming and job.get("schedule_type") == "once"):
        upcoming_words = ""  # paused says it all; a one-off's next run is its time
    elif upcoming:
        upcoming_words = turn.tr(f"下次 {_minute(upcoming)}", f"next {_minute(upcoming)}")
    else:
        upcoming_words = turn.tr("不会再运行", "will not run again")
    parts = [
        when(job, turn),
        upcoming_words,
        turn.tr(f"已运行 {runs} 次", f"ran {plural(runs, 'time')}"),
        state,
    ]
    return " · ".join(p for p in parts if p)


def _item(job: Mapping[str, Any], turn: Turn) -> dict[str, Any]:
    return {"title": f"⏰ {job['name']}", "sub": describe(job, turn), "id": job["id"]}


def _control(label: str, verb: str, job: Mapping[str, Any]) -> dict[str, Any]:
    """A button in the job's row; `name` goes along for the answer's sentence."""
    return button(label, verb, item_id=job["id"], job_id=job["id"], name=job["name"])


def _controls(job: Mapping[str, Any], turn: Turn) -> list[dict[str, Any]]:
    if job.get("enabled"):
        switch = _control(turn.tr("暂停", "Pause"), "disable", job)
    else:
        switch = _control(turn.tr("恢复", "Resume"), "enable", job)
    return [
        switch,
        _control(turn.tr("立即运行", "Run now"), "run", job),
        _control(turn.tr("历史", "History"), "history", job),
        _control(turn.tr("删除", "Delete"), "delete", job),
    ]


def jobs_view(jobs: list[Mapping[str, Any]], turn: Turn, note: str = "") -> dict[str, Any]:
    """The window: every job with its controls in its row (`note` is the spoken message)."""
    items = [_item(j, turn) for j in jobs]
    actions = [button(turn.tr("刷新", "Refresh"), "refresh")]
    for job in jobs:
        actions += _controls(job, turn)
    none = turn.tr("还没有定时任务", "No scheduled tasks yet")
    count = turn.tr(f"共有 {len(jobs)} 个定时任务", plural(len(jobs), "scheduled task"))
    return list_reply(
        items,
        turn.tr("定时任务", "Scheduled Tasks"),
        empty=none,
        actions=actions,
        message=note or (count if jobs else none),
    )


def which_view(
    jobs: Sequence[Mapping[str, Any]], verb: str, target: str, turn: Turn
) -> dict[str, Any]:
    """Several jobs match `target`: each with its time and one button (`verb`:
    cancel | disable | enable) in its row; nothing is done until one is picked."""
    label, question = {
        "cancel": (turn.tr("删除", "Delete"), turn.tr("删除", "delete")),
        "disable": (turn.tr("暂停", "Pause"), turn.tr("暂停", "pause")),
        "enable": (turn.tr("恢复", "Resume"), turn.tr("恢复", "resume")),
    }[verb]
    count = len(jobs)
    asked = turn.tr(
        f"有 {count} 个定时任务符合「{target}」，要{question}哪一个？",
        f'{count} scheduled tasks match "{target}": which one should I {question}?',
    )
    clicked = "delete" if verb == "cancel" else verb  # deleting asks first
    actions = [_control(label, clicked, job) for job in jobs]
    actions.append(button(turn.tr("返回列表", "Back to the list"), "refresh"))
    return list_reply(
        [_item(j, turn) for j in jobs],
        asked,
        actions=actions,
        message=asked,
        notice="info",  # a question, not a result
    )


def delete_view(job: Mapping[str, Any], turn: Turn) -> dict[str, Any]:
    """删除 / Delete asks first: the job with its time, 保留 (back to the list,
    the safe choice first) or 删除 (`delete_confirmed`)."""
    name = job["name"]
    asked = turn.tr(
        f"删除定时任务「{name}」？删除后它不会再运行，也不能恢复。",
        f'Delete the scheduled task "{name}"? It will not run again, and this '
        "cannot be undone.",
    )
    return list_reply(
        [_item(job, turn)],
        asked,
        actions=[
            button(turn.tr("保留", "Keep"), "refresh"),
            button(
                turn.tr("删除", "Delete"),
                "delete_confirmed",
                job_id=job["id"],
                name=name,
            ),
        ],
        message=asked,
        notice="info",  # a question, not a result
    )


def delete_all_view(jobs: Sequence[Mapping[str, Any]], turn: Turn) -> dict[str, Any]:
    """Deleting every job asks once, naming how many: the jobs, 保留 (the safe choice,
    first) or 全部删除 (`delete_all_confirmed`, the jobs shown in its params)."""
    count = len(jobs)
    asked = turn.tr(
        f"删除全部 {count} 个定时任务？删除后它们不会再运行，也不能恢复。",
        f"Delete all {plural(count, 'scheduled task')}? They will not run again, "
        "and this cannot be undone.",
    )
    return list_reply(
        [_item(j, turn) for j in jobs],
        asked,
        actions=[
            button(turn.tr("保留", "Keep"), "refresh"),
            button(
                turn.tr(f"全部删除（{count} 个）", f"Delete all {count}"),
                "delete_all_confirmed",
                job_ids=[j["id"] for j in jobs],
            ),
        ],
        message=asked,
        notice="info",  # a question, not a result
    )


def _outcome(status: str, turn: Turn) -> str:
    if status == "ok":
        return turn.tr("✅ 成功", "✅ Succeeded")
    if status == "timeout":
        return turn.tr("⏱ 超时", "⏱ Timed out")
    return turn.tr("❌ 失败", "❌ Failed")


_OUTPUT_SHOWN = 500  # characters of a run's output in its row (the end of it)


def _output(run: Mapping[str, Any]) -> str:
    text = str(run.get("output_tail") or "").strip()
    return text if len(text) <= _OUTPUT_SHOWN else "…" + text[-_OUTPUT_SHOWN:]


def history_view(name: str, runs: list[Mapping[str, Any]], turn: Turn) -> dict[str, Any]:
    """A job's latest runs, newest first, as a table: how each went and what it said."""
    rows = [
        [
            str(run["started"])[:19].replace("T", " "),
            _outcome(str(run["status"]), turn),
            f"{run.get('duration_s') or 0:g}s",
            run.get("summary", ""),
            _output(run),
        ]
        for run in runs
    ]
    return table_reply(
        [
            turn.tr("开始", "Started"),
            turn.tr("结果", "Result"),
            turn.tr("用时", "Duration"),
            turn.tr("摘要", "Summary"),
            turn.tr("输出", "Output"),
        ],
        rows,
        title=turn.tr(f"运行历史「{name}」", f'Runs of "{name}"'),
        actions=[button(turn.tr("返回列表", "Back to the list"), "refresh")],
        message=turn.tr(f"最近 {len(rows)} 次运行", f"The last {plural(len(rows), 'run')}"),
    )
