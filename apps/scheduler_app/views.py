"""What the Scheduled Tasks window shows: one line per job, its controls, its history.

Built with `aios_sdk.views`, every label in the user's language (`turn.tr`); every
control is a button whose `action_id` is the verb (`enable`, `disable`, `run`,
`history`, `cancel`, `refresh`) and whose params name the job (`job_id`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aios_sdk import Turn
from aios_sdk.views import button, list_reply, table_reply

__all__ = ["describe", "history_view", "jobs_view"]


def _plural(count: int, noun: str) -> str:
    """English counts: "1 run", "3 runs"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _minute(moment: Any) -> str:
    return str(moment or "")[:16].replace("T", " ")


def _when(job: Mapping[str, Any], turn: Turn) -> str:
    kind = job.get("schedule_type")
    if kind == "once":
        at = _minute(job.get("run_at"))
        return turn.tr(f"于 {at}", f"at {at}")
    if kind == "interval":
        seconds = float(job.get("interval_s") or 0)
        if seconds >= 60:
            return turn.tr(f"每 {seconds / 60:g} 分钟", f"every {seconds / 60:g} min")
        return turn.tr(f"每 {seconds:g} 秒", f"every {seconds:g} s")
    return f"cron {job.get('cron')}"


def describe(job: Mapping[str, Any], turn: Turn) -> str:
    """One line saying when a job runs, when next, how often it ran, and its state."""
    upcoming = job.get("next_run_at")
    if not job.get("enabled"):
        state = turn.tr("已停用", "disabled")
    elif job.get("running"):
        state = turn.tr("运行中", "running")
    else:
        state = ""
    if job.get("awaiting_confirmation"):
        waiting = job["awaiting_confirmation"]
        state = turn.tr(f"等待你的确认：{waiting}", f"waiting for your yes: {waiting}")
    runs = job.get("run_count", 0)
    parts = [
        _when(job, turn),
        turn.tr(f"下次 {_minute(upcoming)}", f"next {_minute(upcoming)}")
        if upcoming
        else turn.tr("不再运行", "no further runs"),
        turn.tr(f"已运行 {runs} 次", f"ran {_plural(runs, 'time')}"),
        state,
    ]
    return " · ".join(p for p in parts if p)


def _controls(job: Mapping[str, Any], turn: Turn) -> list[dict[str, Any]]:
    job_id, name = job["id"], job["name"]
    if job.get("enabled"):
        switch = button(
            turn.tr(f"停用「{name}」", f"Disable “{name}”"), "disable", job_id=job_id
        )
    else:
        switch = button(
            turn.tr(f"启用「{name}」", f"Enable “{name}”"), "enable", job_id=job_id
        )
    return [
        switch,
        button(turn.tr(f"立即运行「{name}」", f"Run “{name}” now"), "run", job_id=job_id),
        button(
            turn.tr(f"历史「{name}」", f"History of “{name}”"), "history", job_id=job_id
        ),
        button(turn.tr(f"取消「{name}」", f"Cancel “{name}”"), "cancel", job_id=job_id),
    ]


def jobs_view(jobs: list[Mapping[str, Any]], turn: Turn, note: str = "") -> dict[str, Any]:
    """The window: every job with its controls (`note` is the spoken message)."""
    items = [
        {"title": f"⏰ {j['name']}", "sub": describe(j, turn), "id": j["id"]} for j in jobs
    ]
    actions = [button(turn.tr("刷新", "Refresh"), "refresh")]
    for job in jobs:
        actions += _controls(job, turn)
    none = turn.tr("还没有定时任务", "No scheduled tasks yet")
    count = turn.tr(f"共有 {len(jobs)} 个定时任务", _plural(len(jobs), "scheduled task"))
    return list_reply(
        items,
        turn.tr("定时任务", "Scheduled Tasks"),
        empty=none,
        actions=actions,
        message=note or (count if jobs else none),
    )


def history_view(name: str, runs: list[Mapping[str, Any]], turn: Turn) -> dict[str, Any]:
    """A job's latest runs, newest first, as a table."""
    rows = [
        [
            str(run["started"])[:19].replace("T", " "),
            run["status"],
            f"{run.get('duration_s') or 0:g}s",
            run.get("summary", ""),
        ]
        for run in runs
    ]
    return table_reply(
        [
            turn.tr("开始", "Started"),
            turn.tr("结果", "Result"),
            turn.tr("用时", "Duration"),
            turn.tr("摘要", "Summary"),
        ],
        rows,
        title=turn.tr(f"运行历史「{name}」", f"Runs of “{name}”"),
        actions=[button(turn.tr("返回列表", "Back to the list"), "refresh")],
        message=turn.tr(
            f"最近 {len(rows)} 次运行", f"The last {_plural(len(rows), 'run')}"
        ),
    )
