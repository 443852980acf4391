"""System status: what psutil says about this machine, and the views that show it.

`collect()` is the body of the system agent's `system_status` custom tool (it reads
the machine, so it runs as a tool, S-05/S-62): CPU, memory, disk and the busiest
processes as plain JSON. `status_view()` turns that JSON into the answer to the
question asked — a card with the one number ("内存占用多少") — or, for the overview,
a `dashboard`, `chart` or `table` view, each with a 刷新 (refresh) button.
Percentages are charted on a 0–100 scale, so 23 % disk looks like 23 %.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

import psutil

from aios_sdk.views import button, reply

__all__ = ["collect", "status_view", "status_sentence"]

GIB = 1024**3


def _gib(value: float) -> float:
    return round(value / GIB, 1)


def collect(top: int = 5, disk_path: str = "/") -> dict[str, Any]:
    """A snapshot of CPU, memory, disk and the `top` processes by CPU then memory."""
    top = max(1, min(int(top or 5), 20))
    processes = list(psutil.process_iter(["pid", "name", "memory_percent", "username"]))
    for proc in processes:  # prime per-process CPU counters
        try:
            proc.cpu_percent(None)
        except (psutil.Error, OSError):
            pass
    cpu_total = psutil.cpu_percent(interval=0.2)
    per_cpu = psutil.cpu_percent(interval=None, percpu=True)
    rows = []
    for proc in processes:
        try:
            cpu = proc.cpu_percent(None)
            info = proc.info
            rows.append(
                {
                    "pid": info.get("pid"),
                    "name": info.get("name") or "?",
                    "cpu": round(cpu, 1),
                    "memory": round(info.get("memory_percent") or 0.0, 1),
                }
            )
        except (psutil.Error, OSError):
            continue
    rows.sort(key=lambda r: (r["cpu"], r["memory"]), reverse=True)
    memory = psutil.virtual_memory()
    try:
        disk = psutil.disk_usage(disk_path)
        disk_info = {
            "path": disk_path,
            "percent": disk.percent,
            "used_gb": _gib(disk.used),
            "total_gb": _gib(disk.total),
        }
    except OSError:
        disk_info = {"path": disk_path, "percent": 0.0, "used_gb": 0.0, "total_gb": 0.0}
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "cpu": {
            "percent": cpu_total,
            "per_cpu": per_cpu,
            "count": psutil.cpu_count() or len(per_cpu),
            "load": load,
        },
        "memory": {
            "percent": memory.percent,
            "used_gb": _gib(memory.total - memory.available),
            "total_gb": _gib(memory.total),
        },
        "disk": disk_info,
        "processes": rows[:top],
        "process_count": len(processes),
    }


def status_sentence(status: Mapping[str, Any], topic: str = "") -> str:
    """The sentence to speak: the number the user asked about, or all three."""
    cpu = status.get("cpu", {}).get("percent", 0)
    mem = status.get("memory", {})
    disk = status.get("disk", {})
    if topic == "cpu":
        return f"CPU 占用 {cpu}%，共 {status.get('cpu', {}).get('count', '?')} 个核心"
    if topic == "memory":
        return f"内存占用 {mem.get('percent', 0)}%（{mem.get('used_gb', 0)} / {mem.get('total_gb', 0)} GB）"
    if topic == "disk":
        return f"磁盘占用 {disk.get('percent', 0)}%（{disk.get('used_gb', 0)} / {disk.get('total_gb', 0)} GB）"
    if topic == "process":
        procs = status.get("processes") or []
        busiest = procs[0]["name"] if procs else "无"
        return f"共 {status.get('process_count', 0)} 个进程，最忙的是 {busiest}"
    return f"CPU {cpu}%，内存 {mem.get('percent', 0)}%，磁盘 {disk.get('percent', 0)}%"


def _refresh(view: str, topic: str) -> dict[str, Any]:
    return button("刷新", "refresh", view=view, topic=topic)


def _process_table(status: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "columns": ["PID", "进程", "CPU %", "内存 %"],
        "rows": [
            [p["pid"], p["name"], p["cpu"], p["memory"]]
            for p in status.get("processes") or []
        ],
    }


_TOPICS = {"cpu": "CPU", "memory": "内存", "disk": "磁盘"}


def _answer_card(status: Mapping[str, Any], topic: str) -> dict[str, Any]:
    """The card answering "how much <topic>": the percentage and what it is of."""
    part = status.get(topic, {})
    if topic == "cpu":
        desc = f"{part.get('count', '?')} 个核心"
        if part.get("load"):
            desc += " · 负载 " + " / ".join(str(x) for x in part["load"])
    else:
        desc = f"已用 {part.get('used_gb', 0)} GB，共 {part.get('total_gb', 0)} GB"
    return {
        "cards": [
            {
                "id": topic,
                "title": f"{_TOPICS[topic]}占用 {part.get('percent', 0)}%",
                "desc": f"{desc}（{status.get('time', '')}）",
            }
        ]
    }


def _usage_chart(
    status: Mapping[str, Any], title: str | None = "资源占用 (%)"
) -> dict[str, Any]:
    chart: dict[str, Any] = {
        "type": "bar",
        "max": 100,
        "labels": ["CPU", "内存", "磁盘"],
        "values": [
            float(status.get("cpu", {}).get("percent", 0)),
            float(status.get("memory", {}).get("percent", 0)),
            float(status.get("disk", {}).get("percent", 0)),
        ],
    }
    if title:
        chart["title"] = title
    return chart


def status_view(
    status: Mapping[str, Any], view: str = "dashboard", topic: str = ""
) -> dict[str, Any]:
    """The reply for a `collect()` result: a card answering `topic` (cpu, memory,
    disk) unless a chart or table was asked for; else a `dashboard`, `chart` or
    `table`."""
    message = status_sentence(status, topic)
    actions = [_refresh(view, topic)]
    if view == "dashboard" and topic in _TOPICS:
        actions.append(button("系统总览", "refresh", view="dashboard", topic=""))
        return reply("card", _answer_card(status, topic), actions=actions, message=message)
    if view == "table":
        data: dict[str, Any] = {"title": "进程（按 CPU 排序）", **_process_table(status)}
    elif view == "chart":
        if topic == "cpu" and status.get("cpu", {}).get("per_cpu"):
            per_cpu = status["cpu"]["per_cpu"]
            data = {
                "type": "bar",
                "max": 100,
                "title": "各核心 CPU 占用 (%)",
                "labels": [f"CPU{i}" for i in range(len(per_cpu))],
                "values": [float(v) for v in per_cpu],
            }
        else:
            data = _usage_chart(status)
    else:
        view = "dashboard"
        cpu = status.get("cpu", {})
        mem = status.get("memory", {})
        disk = status.get("disk", {})
        chart = _usage_chart(status, title=None)  # the widget's title says it
        data = {
            "title": f"系统状态 · {status.get('time', '')}",
            "widgets": [
                {
                    "type": "text",
                    "title": "CPU",
                    "content": f"{cpu.get('percent', 0)}% · {cpu.get('count', '?')} 核",
                },
                {
                    "type": "text",
                    "title": "内存",
                    "content": f"{mem.get('percent', 0)}% · {mem.get('used_gb', 0)} / {mem.get('total_gb', 0)} GB",
                },
                {
                    "type": "text",
                    "title": "磁盘",
                    "content": f"{disk.get('percent', 0)}% · {disk.get('used_gb', 0)} / {disk.get('total_gb', 0)} GB",
                },
                {"type": "chart", "title": "资源占用 (%)", "data": chart},
                {"type": "table", "title": "最忙的进程", "data": _process_table(status)},
            ],
        }
        actions.append(button("进程列表", "refresh", view="table", topic="process"))
    return reply(view, data, actions=actions, message=message)
