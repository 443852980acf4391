"""How 定时任务 answers: words become `schedule` tool calls, clicks manage the jobs.

What the user says is read by `phrases.understand` (in the user's local time): a
time and a thing to do creates an `agent` job whose instruction comes back here at
its time ("提醒我喝水" is answered at once, as a notification and a spoken line);
"取消喝水提醒" cancels the jobs it names; a new job is answered with the window; "我有哪些定时任务" or opening the window
lists them. The window's buttons (`views`) carry the job in their params.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aios_sdk import Flows, Turn, action
from aios_sdk.errors import ToolFailed
from aios_sdk.views import button, error_reply, text_reply

from .phrases import Request, understand
from .views import describe, history_view, jobs_view

__all__ = ["SchedulerFlows"]

HELP = "我能设定提醒和定时任务，例如「10分钟后提醒我喝水」「每天早上8点播放音乐」"


class SchedulerFlows(Flows):
    """Every answer of 定时任务; the jobs live in the controller (the `schedule` tool)."""

    def handle(self, instruction, context, action_request=None) -> dict[str, Any]:
        try:
            return super().handle(instruction, context, action_request)
        except ToolFailed as exc:
            return error_reply(exc.code, exc.message)

    def schedule(self, verb: str, **args: Any) -> Any:
        return self.agent.call_tool("schedule", action=verb, **args)

    def window(self, note: str = "") -> dict[str, Any]:
        return jobs_view(self.schedule("list").get("jobs", []), note)

    # -------------------------------------------------------------- words

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        said = turn.instruction
        request = understand(said, datetime.now().astimezone())
        if request.kind == "create":
            return self.create(request)
        if request.kind == "cancel":
            return self.cancel_named(request.target)
        if request.kind == "remind_now":
            return self.remind_now(request.what)
        if request.kind == "list" or "打开" in said or not said:
            return self.window()
        return text_reply(HELP)

    def create(self, request: Request) -> dict[str, Any]:
        job = {
            "name": request.name[:100] or request.what[:100],
            "execution_type": "agent",
            "instruction": request.what,
            **request.schedule,
        }
        created = self.schedule("create", job=job)
        note = f"好的，已设定「{created['name']}」：{describe(created)}"
        return self.window(note)

    def cancel_named(self, target: str) -> dict[str, Any]:
        jobs = self.schedule("list").get("jobs", [])
        hits = [
            j
            for j in jobs
            if target and (target in j["name"] or target in j.get("instruction", ""))
        ]
        if not hits:
            return text_reply(f"没有找到「{target}」的定时任务")
        for job in hits:
            self.schedule("cancel", job_id=job["id"])
        return text_reply(f"已取消：{'、'.join(j['name'] for j in hits)}")

    def remind_now(self, thing: str) -> dict[str, Any]:
        """A reminder's time has come: a notification, and the line that is spoken."""
        self.agent.call_tool("notify", title="⏰ 提醒 (reminder)", body=thing, level="info")
        return text_reply(
            f"⏰ 提醒：{thing}",
            message=f"提醒：{thing}",
            actions=[button("查看定时任务", "refresh")],
        )

    # ------------------------------------------------------------- clicks

    @action("refresh")
    def refresh(self, turn: Turn) -> dict[str, Any]:
        return self.window()

    @action("enable", "disable")
    def switch(self, turn: Turn) -> dict[str, Any]:
        on = turn.action_id == "enable"
        self.schedule("update", job_id=turn.params.get("job_id"), changes={"enabled": on})
        return self.window("已启用" if on else "已停用")

    @action("run")
    def run_now(self, turn: Turn) -> dict[str, Any]:
        self.schedule("run", job_id=turn.params.get("job_id"))
        return self.window("已开始运行")

    @action("history")
    def history(self, turn: Turn) -> dict[str, Any]:
        job_id = turn.params.get("job_id")
        jobs = {j["id"]: j for j in self.schedule("list").get("jobs", [])}
        runs = self.schedule("runs", job_id=job_id).get("runs", [])
        return history_view(jobs.get(job_id, {}).get("name", job_id or ""), runs)

    @action("cancel")
    def cancel(self, turn: Turn) -> dict[str, Any]:
        self.schedule("cancel", job_id=turn.params.get("job_id"))
        return self.window("已取消")
