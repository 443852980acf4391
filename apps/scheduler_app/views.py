"""What the Scheduled Tasks window shows: one line per job, its controls, its history.

Built with `aios_sdk.views`; every control is a button whose `action_id` is the
verb (`enable`, `disable`, `run`, `history`, `cancel`, `refresh`) and whose params
name the job (`job_id`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aios_sdk.views import button, list_reply, reply

__all__ = ["describe", "history_view", "jobs_view"]

TITLE = "定时任务 (Scheduled Tasks)"


def _minute(moment: Any) -> str:
    return str(moment or "")[:16].replace("T", " ")


def describe(job: Mapping[str, Any]) -> str:
    """One line saying when a job runs, when next, how often it ran, and its state."""
    kind = job.get("schedule_type")
    if kind == "once":
        when = f"于 {_minute(job.get('run_at'))}"
    elif kind == "interval":
        seconds = float(job.get("interval_s") or 0)
        when = f"每 {seconds / 60:g} 分钟" if seconds >= 60 else f"每 {seconds:g} 秒"
    else:
        when = f"cron {job.get('cron')}"
    upcoming = job.get("next_run_at")
    state = "已停用" if not job.get("enabled") else "运行中" if job.get("running") else ""
    if job.get("awaiting_confirmation"):
        state = f"等待你的确认：{job['awaiting_confirmation']}"
    parts = [
        when,
        f"下次 {_minute(upcoming)}" if upcoming else "不再运行",
        f"已运行 {job.get('run_count', 0)} 次",
        state,
    ]
    return " · ".join(p for p in parts if p)


def _controls(job: Mapping[str, Any]) -> list[dict[str, Any]]:
    job_id, name = job["id"], job["name"]
    verb, label = ("disable", "停用") if job.get("enabled") else ("enable", "启用")
    return [
        button(f"{label}「{name}」", verb, job_id=job_id),
        button(f"立即运行「{name}」", "run", job_id=job_id),
        button(f"历史「{name}」", "history", job_id=job_id),
        button(f"取消「{name}」", "cancel", job_id=job_id),
    ]


def jobs_view(jobs: list[Mapping[str, Any]], note: str = "") -> dict[str, Any]:
    """The window: every job with its controls (`note` is the spoken message)."""
    items = [{"title": f"⏰ {j['name']}", "sub": describe(j), "id": j["id"]} for j in jobs]
    actions = [button("刷新", "refresh")]
    for job in jobs:
        actions += _controls(job)
    message = note or (f"共有 {len(jobs)} 个定时任务" if jobs else "还没有定时任务")
    view = list_reply(items, title=TITLE, actions=actions, message=message)
    view["data"]["empty"] = "还没有定时任务 (no scheduled tasks)"
    return view


def history_view(name: str, runs: list[Mapping[str, Any]]) -> dict[str, Any]:
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
    return reply(
        "table",
        {
            "columns": ["开始", "结果", "用时", "摘要"],
            "rows": rows,
            "title": f"运行历史「{name}」",
        },
        actions=[button("返回列表", "refresh")],
        message=f"最近 {len(rows)} 次运行",
    )
