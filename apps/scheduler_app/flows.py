"""How 定时任务 answers: words become `schedule` tool calls, clicks manage the jobs.

What the user says is read by `phrases.understand` (in the user's local time): a
time and a thing to do creates an `agent` job whose instruction comes back here at
its time ("提醒我喝水" is answered at once, as a notification and a spoken line); a
time and a command ("每天早上9点运行命令 date") creates a `command` job, which the
controller runs through the executor in this app's sandbox (a program the whitelist
does not allow is refused, or waits for the user's yes). A new job whose name is
taken gets its time in its name. A job said again — the same instruction or command
at the same time — is not added twice: the answer names the job there is and its
time, with 再加一个 / Add another to add it all the same. "取消喝水提醒" / "暂停…" / "恢复…" act on the one
job they name; when several jobs match, the answer lists them (each with its time)
with a button each, and nothing is done until one is picked. A job's 删除 / Delete
button asks first (保留 or 删除); "取消所有定时任务" / "cancel all my reminders" asks once,
naming how many, then deletes them all and says how many went. A new job is answered
with the window; "我有哪些定时任务" or opening the window lists them. The window's
buttons (`views`) carry the job in their params. Every answer is in the user's
language (`turn.tr`); what the scheduler refused is said plainly, its own text kept
as the `detail`. What the rules do not understand goes, with a model, to the SDK's
agent loop with the app's tools (`schedule`, `notify`); without one, the help.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from aios_sdk import Flows, Turn, action
from aios_sdk.errors import ToolFailed
from aios_sdk.views import button, error_reply, text_reply

from .phrases import Request, understand
from .views import (
    delete_all_view,
    delete_view,
    describe,
    history_view,
    jobs_view,
    plural,
    when,
    which_view,
)

__all__ = ["SchedulerFlows"]


def _help(turn: Turn) -> str:
    return turn.tr(
        "我能设定提醒和定时任务，例如「10分钟后提醒我喝水」「每天早上8点播放音乐」",
        'I can set reminders and scheduled tasks, e.g. "remind me in 10 minutes to '
        'drink water" or "every day at 8am play music"',
    )


def _program(command: str) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return words[0] if words else command


def _not_allowed(command: str, turn: Turn) -> str:
    program = _program(command)
    return turn.tr(
        f"没有设定：不允许运行命令「{program}」。可以在设置的“允许的命令”里加上 "
        f"{program} 后再说一次。",
        f'Not set: the command "{program}" is not allowed. Add {program} under '
        "Settings → Allowed programs, then say it again.",
    )


def _distinct(name: str, job: Mapping[str, Any], taken: set[str], turn: Turn) -> str:
    """`name`, or with the job's time when another job already has it."""
    if name not in taken:
        return name
    timed = turn.tr(f"{name}（{when(job, turn)}）", f"{name} ({when(job, turn)})")
    candidate, number = timed[:100], 2
    while candidate in taken:
        candidate, number = f"{timed[:95]} {number}", number + 1
    return candidate


_SAME_MOMENT_S = 60  # two one-off jobs this close in time are at the same time


def _same_job(job: Mapping[str, Any], asked: Mapping[str, Any]) -> bool:
    """Whether `job` does what `asked` asks, when it asks: the same instruction or
    command on the same schedule (a one-off at the same minute)."""
    if job.get("execution_type", "agent") != asked["execution_type"]:
        return False
    field = "command" if asked["execution_type"] == "command" else "instruction"
    if " ".join(str(job.get(field) or "").split()) != " ".join(str(asked[field]).split()):
        return False
    kind = asked["schedule_type"]
    if job.get("schedule_type") != kind:
        return False
    if kind == "cron":
        return " ".join(str(job.get("cron")).split()) == " ".join(
            str(asked["cron"]).split()
        )
    if kind == "interval":
        return float(job.get("interval_s") or 0) == float(asked["interval_s"])
    try:  # a time without an offset is the user's local time
        at, asked_at = (
            datetime.fromisoformat(str(moment)).astimezone()
            for moment in (job.get("run_at"), asked["run_at"])
        )
    except ValueError:
        return False
    return abs((at - asked_at).total_seconds()) < _SAME_MOMENT_S


def _matching(jobs: list[dict[str, Any]], target: str) -> list[dict[str, Any]]:
    """The jobs `target` names: those whose name or instruction holds it; a name said
    in full picks its job unless another match's name holds that name too."""
    if not target:
        return []
    hits = [
        j for j in jobs if target in j["name"] or target in (j.get("instruction") or "")
    ]
    exact = [j for j in hits if j["name"] == target]
    if len(exact) == 1 and not any(target in j["name"] for j in hits if j is not exact[0]):
        return exact
    return hits


def _refused(code: str, turn: Turn) -> str:
    """What a refusal of the `schedule` tool means, in plain words."""
    if code == "needs_user_confirmation":
        return turn.tr(
            "这个定时任务还在等你确认，请先在确认框里回答",
            "This task is waiting for your yes: answer the confirmation first",
        )
    if code == "job_running":
        return turn.tr(
            "这个定时任务正在运行，请稍后再试", "This task is running; try again later"
        )
    if code == "not_found":
        return turn.tr("这个定时任务已经不在了", "This task no longer exists")
    if code == "invalid_request":
        return turn.tr(
            "这个时间设定不对，请换个说法", "That schedule is not valid; try other words"
        )
    return turn.tr(
        "定时任务暂时没能完成这个操作", "The scheduler could not do that right now"
    )


class SchedulerFlows(Flows):
    """Every answer of 定时任务; the jobs live in the controller (the `schedule` tool)."""

    def handle(self, instruction, context, action_request=None) -> dict[str, Any]:
        try:
            return super().handle(instruction, context, action_request)
        except ToolFailed as exc:
            turn = Turn.read(instruction, context, action_request)
            return error_reply(exc.code, _refused(exc.code, turn), detail=exc.message)

    def schedule(self, verb: str, **args: Any) -> Any:
        return self.agent.call_tool("schedule", action=verb, **args)

    def window(self, turn: Turn, note: str = "") -> dict[str, Any]:
        return jobs_view(self.schedule("list").get("jobs", []), turn, note)

    # -------------------------------------------------------------- words

    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        said = turn.instruction
        request = understand(said, datetime.now().astimezone())
        if request.kind == "create":
            return self.create(request, turn)
        if request.kind in ("cancel", "pause", "resume"):
            verb = {"cancel": "cancel", "pause": "disable", "resume": "enable"}
            return self.act_on_named(verb[request.kind], request.target, turn)
        if request.kind == "cancel_all":
            return self.cancel_all(turn)
        if request.kind == "remind_now":
            return self.remind_now(request.what, turn)
        if request.kind == "list" or "打开" in said or not said:
            return self.window(turn)
        # not understood: the agent loop with a model, else what it can do, marked
        # as not done (`notice`)
        understood = turn.tr("没听懂这条指令", "I did not understand that")
        return self.hand_to_loop(turn) or text_reply(
            _help(turn), understood, notice="warning"
        )

    def create(self, request: Request, turn: Turn) -> dict[str, Any]:
        # its runs answer in the language of the user who made it
        job: dict[str, Any] = {"language": turn.language, **request.schedule}
        if request.command:
            job.update(execution_type="command", command=request.command)
        else:
            job.update(execution_type="agent", instruction=request.what)
        job["name"] = request.name[:100] or request.what[:100]
        jobs = self.schedule("list").get("jobs", [])
        same = next((j for j in jobs if _same_job(j, job)), None)
        if same is not None:  # said twice: not a second, identical job
            return self.already_set(same, job, jobs, turn)
        return self.add(job, jobs, turn)

    def already_set(
        self,
        same: Mapping[str, Any],
        job: dict[str, Any],
        jobs: list[Mapping[str, Any]],
        turn: Turn,
    ) -> dict[str, Any]:
        """The job asked for exists: say which and when, add nothing, and offer to
        add another all the same (再加一个, the job in its params)."""
        name, at = same["name"], when(same, turn)
        note = turn.tr(
            f"已经有一样的定时任务「{name}」（{at}），没有重复添加。"
            "如果确实要再加一个，请点“再加一个”。",
            f'The same scheduled task "{name}" already exists ({at}); nothing was '
            'added. To add another one all the same, press "Add another".',
        )
        window = jobs_view(jobs, turn, note)
        again = button(turn.tr("再加一个", "Add another"), "add_again", job=job)
        window["actions"] = [*window["actions"], again]
        return {**window, "notice": "info"}  # not done as said: a note, not a result

    def add(
        self, job: dict[str, Any], jobs: list[Mapping[str, Any]], turn: Turn
    ) -> dict[str, Any]:
        """Create `job`, its name told apart from the names of `jobs`."""
        job = {**job, "name": _distinct(job["name"], job, {j["name"] for j in jobs}, turn)}
        command = job.get("command")
        try:
            created = self.schedule("create", job=job)
        except ToolFailed as exc:
            if exc.code != "command_not_allowed" or not command:
                raise
            plain = _not_allowed(str(command), turn)
            return error_reply(exc.code, plain, detail=exc.message)
        name, said = created["name"], describe(created, turn)
        if created.get("awaiting_confirmation"):
            note = turn.tr(
                f"已设定「{name}」，请在确认框里允许后它才会运行",
                f'"{name}" is set; it runs once you allow it in the confirmation',
            )
            return {**self.window(turn, note), "notice": "info"}  # not running yet
        note = turn.tr(f"好的，已设定「{name}」：{said}", f'OK, "{name}" is set: {said}')
        return self.window(turn, note)

    def act_on_named(self, verb: str, target: str, turn: Turn) -> dict[str, Any]:
        """Cancel, pause (`disable`) or resume (`enable`) the one job `target` names;
        several: ask which."""
        hits = _matching(self.schedule("list").get("jobs", []), target)
        if not hits:  # nothing done: a note, not a success
            return text_reply(
                turn.tr(f"没有找到「{target}」的定时任务", f'No scheduled task "{target}"'),
                notice="info",
            )
        if len(hits) > 1:
            return which_view(hits, verb, target, turn)
        job = hits[0]
        if verb == "cancel":
            self.schedule("cancel", job_id=job["id"])
            return text_reply(
                turn.tr(f"已取消：{job['name']}", f"Cancelled: {job['name']}")
            )
        on = verb == "enable"
        self.schedule("update", job_id=job["id"], changes={"enabled": on})
        done = (
            turn.tr(f"已恢复：{job['name']}", f"Resumed: {job['name']}")
            if on
            else turn.tr(f"已暂停：{job['name']}", f"Paused: {job['name']}")
        )
        return self.window(turn, done)

    def cancel_all(self, turn: Turn) -> dict[str, Any]:
        """ "取消所有定时任务": asks once, naming how many; nothing is deleted before
        the yes (`delete_all_confirmed`)."""
        jobs = self.schedule("list").get("jobs", [])
        if not jobs:
            return {**self.window(turn), "notice": "info"}  # nothing there to delete
        return delete_all_view(jobs, turn)

    def remind_now(self, thing: str, turn: Turn) -> dict[str, Any]:
        """A reminder's time has come: a notification, and the line that is spoken."""
        self.agent.call_tool(
            "notify", title=turn.tr("⏰ 提醒", "⏰ Reminder"), body=thing, level="info"
        )
        return text_reply(
            turn.tr(f"⏰ 提醒：{thing}", f"⏰ Reminder: {thing}"),
            message=turn.tr(f"提醒：{thing}", f"Reminder: {thing}"),
            actions=[button(turn.tr("查看定时任务", "Scheduled tasks"), "refresh")],
        )

    # ------------------------------------------------------------- clicks

    @action("refresh")
    def refresh(self, turn: Turn) -> dict[str, Any]:
        return self.window(turn)

    @action("add_again")
    def add_again(self, turn: Turn) -> dict[str, Any]:
        """再加一个: the job said twice, added after all."""
        job = turn.params.get("job")
        if not isinstance(job, dict) or not job.get("name"):
            return self.window(turn)
        return self.add(dict(job), self.schedule("list").get("jobs", []), turn)

    @action("enable", "disable")
    def switch(self, turn: Turn) -> dict[str, Any]:
        on = turn.action_id == "enable"
        self.schedule("update", job_id=turn.params.get("job_id"), changes={"enabled": on})
        return self.window(
            turn, turn.tr("已恢复", "Resumed") if on else turn.tr("已暂停", "Paused")
        )

    @action("run")
    def run_now(self, turn: Turn) -> dict[str, Any]:
        self.schedule("run", job_id=turn.params.get("job_id"))
        return self.window(turn, turn.tr("已开始运行", "Started"))

    @action("history")
    def history(self, turn: Turn) -> dict[str, Any]:
        job_id = turn.params.get("job_id")
        jobs = {j["id"]: j for j in self.schedule("list").get("jobs", [])}
        runs = self.schedule("runs", job_id=job_id).get("runs", [])
        return history_view(jobs.get(job_id, {}).get("name", job_id or ""), runs, turn)

    @action("delete", "cancel")
    def delete(self, turn: Turn) -> dict[str, Any]:
        """删除 / Delete (and an older window's 取消): ask first, deleting nothing."""
        job_id = turn.params.get("job_id")
        job = next(
            (j for j in self.schedule("list").get("jobs", []) if j["id"] == job_id), None
        )
        if job is None:
            return self.window(turn, _refused("not_found", turn))
        return delete_view(job, turn)

    @action("delete_all_confirmed")
    def delete_all_confirmed(self, turn: Turn) -> dict[str, Any]:
        """The yes to deleting them all: the jobs that were shown in the question (one
        made since is kept), and how many went."""
        asked = turn.params.get("job_ids")
        wanted = {str(i) for i in asked} if isinstance(asked, list) else set()
        deleted, kept = 0, []
        for job in self.schedule("list").get("jobs", []):
            if job["id"] not in wanted:
                continue
            try:
                self.schedule("cancel", job_id=job["id"])
            except ToolFailed as exc:
                if exc.code != "not_found":  # gone meanwhile: nothing left to delete
                    kept.append(f"{job['name']}: {exc.message}")
                continue
            deleted += 1
        done = turn.tr(
            f"已删除 {deleted} 个定时任务", f"Deleted {plural(deleted, 'scheduled task')}"
        )
        if not kept:
            return self.window(turn, done)
        left = len(kept)
        done += turn.tr(
            f"，还有 {left} 个暂时没能删除（正在运行或在等你确认），请稍后再试",
            f"; {left} could not be deleted right now (running, or waiting for your "
            "yes): try again later",
        )
        return {**self.window(turn, done), "notice": "warning", "detail": "\n".join(kept)}

    @action("delete_confirmed")
    def delete_confirmed(self, turn: Turn) -> dict[str, Any]:
        self.schedule("cancel", job_id=turn.params.get("job_id"))
        name = turn.params.get("name")
        done = (
            turn.tr(f"已删除「{name}」", f'Deleted "{name}"')
            if name
            else turn.tr("已删除", "Deleted")
        )
        return self.window(turn, done)
