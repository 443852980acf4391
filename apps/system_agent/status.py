"""System status: the views that show what the executor's `system_info` tool read.

`system_info` answers for the computer (CPU, memory, disk, the busiest processes)
as plain JSON. `status_view()` turns that JSON into the answer to the question
asked — a card with the one number ("内存占用多少") — or, for the overview, a
`dashboard`, `chart` or `table` view, each with a 刷新 (refresh) button; every
label is in the user's language (`turn.tr`). Percentages are charted on a 0–100
scale, so 23 % disk looks like 23 %. A process list cut short says so in its title.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aios_sdk import Turn
from aios_sdk.views import (
    button,
    card_reply,
    chart_reply,
    dashboard_reply,
    table_reply,
    text_reply,
    widget,
)

__all__ = ["status_view", "status_sentence"]


def status_sentence(status: Mapping[str, Any], turn: Turn, topic: str = "") -> str:
    """The sentence to speak: the number the user asked about, or all three."""
    cpu = status.get("cpu", {}).get("percent", 0)
    mem = status.get("memory", {})
    disk = status.get("disk", {})
    if topic == "cpu":
        cores = status.get("cpu", {}).get("count", "?")
        return turn.tr(f"CPU 占用 {cpu}%，共 {cores} 个核心", f"CPU {cpu}%, {cores} cores")
    if topic == "memory":
        used = f"{mem.get('used_gb', 0)} / {mem.get('total_gb', 0)} GB"
        percent = mem.get("percent", 0)
        return turn.tr(f"内存占用 {percent}%（{used}）", f"Memory {percent}% ({used})")
    if topic == "disk":
        used = f"{disk.get('used_gb', 0)} / {disk.get('total_gb', 0)} GB"
        percent = disk.get("percent", 0)
        return turn.tr(f"磁盘占用 {percent}%（{used}）", f"Disk {percent}% ({used})")
    if topic == "process":
        procs = status.get("processes") or []
        count = status.get("process_count", 0)
        busiest = procs[0]["name"] if procs else turn.tr("无", "none")
        return turn.tr(
            f"共 {count} 个进程，最忙的是 {busiest}",
            f"{count} processes, the busiest is {busiest}",
        )
    return turn.tr(
        f"CPU {cpu}%，内存 {mem.get('percent', 0)}%，磁盘 {disk.get('percent', 0)}%",
        f"CPU {cpu}%, memory {mem.get('percent', 0)}%, disk {disk.get('percent', 0)}%",
    )


def _refresh(view: str, topic: str, turn: Turn) -> dict[str, Any]:
    return button(turn.tr("刷新", "Refresh"), "refresh", view=view, topic=topic)


def _process_table(
    status: Mapping[str, Any],
    turn: Turn,
    title: str | None = None,
    users: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """The processes as a table; with `users`, whose each one is."""
    columns = ["PID", turn.tr("进程", "Process"), "CPU %", turn.tr("内存 %", "Memory %")]
    rows = []
    for p in status.get("processes") or []:
        row = [p["pid"], p["name"], p["cpu"], p["memory"]]
        rows.append([*row, p.get("user", "")] if users else row)
    if users:
        columns.append(turn.tr("用户", "User"))
    return table_reply(columns, rows, title=title, **options)


def _list_title(status: Mapping[str, Any], turn: Turn) -> str:
    """The process list's title, saying how many of how many when it was cut."""
    shown = len(status.get("processes") or [])
    count = int(status.get("process_count") or shown)
    if shown < count:
        return turn.tr(
            f"进程（按 CPU 排序，显示前 {shown} 个，共 {count} 个）",
            f"Processes (by CPU, top {shown} of {count})",
        )
    return turn.tr("进程（按 CPU 排序）", "Processes (by CPU)")


def _topics(turn: Turn) -> dict[str, str]:
    """What each figure is called: CPU, memory, disk."""
    return {
        "cpu": "CPU",
        "memory": turn.tr("内存", "Memory"),
        "disk": turn.tr("磁盘", "Disk"),
    }


def _load_lines(load: list[Any], turn: Turn) -> list[str]:
    """The load average in plain words, two lines: what it counts (tasks running or
    waiting for the CPU), then its averages over the last 1, 5 and 15 minutes."""
    one, five, fifteen = (f"{float(x):.2f}" for x in load[:3])
    return [
        turn.tr(
            "平均负载（正在运行或等待 CPU 的任务数）：",
            "Average load (tasks running or waiting for the CPU):",
        ),
        turn.tr(
            f"近 1 分钟 {one}，近 5 分钟 {five}，近 15 分钟 {fifteen}",
            f"{one} over the last minute, {five} over 5 minutes, {fifteen} over 15 minutes",
        ),
    ]


def _answer_card(
    status: Mapping[str, Any], topic: str, turn: Turn, **options: Any
) -> dict[str, Any]:
    """The card answering "how much <topic>": the percentage and, a line each, what
    it is of and when it was read."""
    part = status.get(topic, {})
    if topic == "cpu":
        lines = [
            turn.tr(
                f"共 {part.get('count', '?')} 个核心", f"{part.get('count', '?')} cores"
            )
        ]
        if len(part.get("load") or []) >= 3:
            lines += _load_lines(part["load"], turn)
    else:
        used, total = part.get("used_gb", 0), part.get("total_gb", 0)
        lines = [turn.tr(f"已用 {used} GB，共 {total} GB", f"{used} GB used of {total} GB")]
    if status.get("time"):
        lines.append(turn.tr(f"读取于 {status['time']}", f"Read at {status['time']}"))
    percent = part.get("percent", 0)
    shown = _topics(turn)[topic]
    card = {
        "id": topic,
        "title": turn.tr(f"{shown}占用 {percent}%", f"{shown} {percent}%"),
        "desc": "\n".join(lines),
    }
    return card_reply([card], **options)


def _usage_title(turn: Turn) -> str:
    return turn.tr("资源占用 (%)", "Usage (%)")


def _usage_chart(
    status: Mapping[str, Any], turn: Turn, titled: bool = True, **options: Any
) -> dict[str, Any]:
    topics = _topics(turn)
    return chart_reply(
        [topics["cpu"], topics["memory"], topics["disk"]],
        [
            float(status.get("cpu", {}).get("percent", 0)),
            float(status.get("memory", {}).get("percent", 0)),
            float(status.get("disk", {}).get("percent", 0)),
        ],
        max=100,
        title=_usage_title(turn) if titled else None,
        **options,
    )


def status_view(
    status: Mapping[str, Any], turn: Turn, view: str = "dashboard", topic: str = ""
) -> dict[str, Any]:
    """The reply for a `system_info` answer: a card answering `topic` (cpu, memory,
    disk) unless a chart or table was asked for; else a `dashboard`, `chart` or
    `table`."""
    # a table lists processes, whatever else was named
    message = status_sentence(status, turn, "process" if view == "table" else topic)
    actions = [_refresh(view, topic, turn)]
    if view == "dashboard" and topic in _topics(turn):
        overview = turn.tr("系统总览", "Overview")
        actions.append(button(overview, "refresh", view="dashboard", topic=""))
        return _answer_card(status, topic, turn, actions=actions, message=message)
    if view == "table":
        title = _list_title(status, turn)
        return _process_table(
            status, turn, title, users=True, actions=actions, message=message
        )
    if view == "chart":
        if topic == "cpu" and status.get("cpu", {}).get("per_cpu"):
            per_cpu = status["cpu"]["per_cpu"]
            return chart_reply(
                [turn.tr(f"核心 {i + 1}", f"Core {i + 1}") for i in range(len(per_cpu))],
                [float(v) for v in per_cpu],
                max=100,
                title=turn.tr("各核心 CPU 占用 (%)", "CPU per core (%)"),
                actions=actions,
                message=message,
            )
        return _usage_chart(status, turn, actions=actions, message=message)
    cpu = status.get("cpu", {})
    mem = status.get("memory", {})
    disk = status.get("disk", {})
    topics = _topics(turn)
    cores = turn.tr(f"{cpu.get('count', '?')} 核", f"{cpu.get('count', '?')} cores")
    memory = f"{mem.get('used_gb', 0)} / {mem.get('total_gb', 0)} GB"
    disk_used = f"{disk.get('used_gb', 0)} / {disk.get('total_gb', 0)} GB"
    widgets = [
        widget(text_reply(f"{cpu.get('percent', 0)}% · {cores}"), "CPU"),
        widget(text_reply(f"{mem.get('percent', 0)}% · {memory}"), topics["memory"]),
        widget(text_reply(f"{disk.get('percent', 0)}% · {disk_used}"), topics["disk"]),
        # the widget says the title, the chart does not repeat it
        widget(_usage_chart(status, turn, titled=False), _usage_title(turn)),
        widget(_process_table(status, turn), turn.tr("最忙的进程", "Busiest processes")),
    ]
    processes = turn.tr("进程列表", "Processes")
    actions.append(button(processes, "refresh", view="table", topic="process"))
    return dashboard_reply(
        widgets,
        turn.tr("系统状态", "System status") + f" · {status.get('time', '')}",
        actions=actions,
        message=message,
    )
