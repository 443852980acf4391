"""Running one job inside the user's boundary, bounded by the job's timeout.

A job runs in the sandbox of the user it belongs to (`job.user_id`; none: the owner).
A `command` job is one `shell_exec` step sent to the executor's `/run` with the
job's `app_id` and user, so that app's workdir in that user's sandbox, its sandbox
and whitelists apply (and the programs the user approved for this job go along as
`approved_commands`); the step's own `timeout` makes the executor kill the command
when the job's time is up. A user's command jobs take turns: each holds that
user's lock while it runs, so two never overlap (one that cannot get it within its
timeout is an `error` saying so). An `agent` job sends its instruction through the
pipeline as if the user had typed it (session `sess_sched<job>`, which
`claim_session` marks as that user's): its `task_done` event opens the view on the desktop
and its message is spoken; the runner then publishes a `notify` event naming the
job (the desktop shows it as a toast). A pipeline that outlives the timeout is
cancelled (`cancel_session`: the pipeline's `TaskCancels`, which abandons its app
call or step round and starts no further one) and the run is a `timeout`.

A run is `ok` only when the work was done. A command: its exit code is 0. An
instruction: some app took it and every task's reply is `ok`, without a `notice` of
`warning` or `error` (an app that did not understand answers with what it can do,
marked `warning`) and not a question still waiting for the user's yes (`confirm`).
Anything else is an `error` whose summary says why, in the user's language; every
run ends with a toast saying whether the job ran or did not complete.
"""

from __future__ import annotations

import logging
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aios_protocol.errors import AiosError
from aios_protocol.messages import (
    Language,
    RunRequest,
    ScheduleJob,
    ScheduleJobState,
    Step,
)
from aios_protocol.strings import user_message
from controller.pipeline.context import tr

__all__ = ["JobRunner", "RunOutcome", "job_session_id"]

log = logging.getLogger("aios.scheduler")

TAIL_CHARS = 2000
_GRACE = 10.0  # seconds the HTTP call waits beyond the step's own timeout
_CANCEL_WAIT = 5.0  # seconds a cancelled agent job's pipeline has to wind down
_CANCEL_EVERY = 0.2  # seconds between cancel requests (work not yet registered)


@dataclass(frozen=True)
class RunOutcome:
    status: str  # ok | error | timeout
    summary: str
    output_tail: str = ""


def job_session_id(job_id: str) -> str:
    """The pipeline session an agent job's runs share (`sess_<letters or digits>`)."""
    return "sess_sched" + job_id.removeprefix("job_")


def _tail(text: str) -> str:
    return text[-TAIL_CHARS:]


def _program(command: str | list[str] | None) -> str:
    """The program a command line runs (its first word)."""
    if isinstance(command, list):
        return command[0] if command else ""
    try:
        words = shlex.split(command or "")
    except ValueError:
        words = (command or "").split()
    return words[0] if words else ""


class JobRunner:
    """Runs jobs: `run_steps(body, timeout)` is the executor's `/run`,
    `instruct(text, session_id, language)` the pipeline (`language`: the job's), `notify(title, body, level, app_id)`
    the toast, `cancel_session(session_id)` stops that session's pipeline work (how
    many works it told to stop); `language()` is the toasts' language."""

    def __init__(
        self,
        run_steps: Callable[[dict[str, Any], float], dict[str, Any]],
        instruct: Callable[[str, str, Language | None], dict[str, Any]],
        notify: Callable[[str, str, str, str], None] = lambda *a: None,
        cancel_session: Callable[[str], int] = lambda session_id: 0,
        *,
        language: Callable[[], str] = lambda: "zh-CN",
        claim_session: Callable[[str, str | None], None] = lambda sid, user: None,
    ):
        self._run_steps = run_steps
        self._instruct = instruct
        self._notify = notify
        self._cancel_session = cancel_session
        self._language = language
        self._claim_session = claim_session
        self._user_locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    def _user_lock(self, job: ScheduleJob) -> threading.Lock:
        with self._locks_lock:
            return self._user_locks.setdefault(job.user_id or "", threading.Lock())

    def run(self, job: ScheduleJob, state: ScheduleJobState) -> RunOutcome:
        try:
            if job.execution_type == "command":
                return self._command(job, state)
            return self._agent(job)
        except AiosError as exc:
            return RunOutcome("error", f"{exc.code}: {exc.message}")
        except Exception as exc:  # a bug must cost this run only
            log.exception("scheduler: job %s failed", job.id)
            return RunOutcome("error", f"{type(exc).__name__}: {exc}")

    def _language_of(self, job: ScheduleJob) -> str:
        return job.language or self._language()

    def _said(self, job: ScheduleJob, zh: str, en: str) -> str:
        """The words for the user who made `job`."""
        return tr(self._language_of(job), zh, en)

    def _ran(self, job: ScheduleJob, outcome: RunOutcome, body: str) -> RunOutcome:
        """Tell the user how the run went (a toast naming the job); `outcome`."""
        if outcome.status == "ok":
            title = self._said(
                job, f"定时任务「{job.name}」已运行", f'The scheduled job "{job.name}" ran'
            )
        else:
            title = self._said(
                job,
                f"定时任务「{job.name}」没有完成",
                f'The scheduled job "{job.name}" did not complete',
            )
        level = "info" if outcome.status == "ok" else "error"
        self._notify(title, body, level, job.app_id)
        return outcome

    def _command(self, job: ScheduleJob, state: ScheduleJobState) -> RunOutcome:
        lock = self._user_lock(job)
        if not lock.acquire(timeout=job.timeout):
            busy = self._said(
                job,
                "这个用户的另一个命令任务一直在运行，这次没有运行",
                "another command job of this user kept running, so this one did not run",
            )
            return self._ran(job, RunOutcome("error", busy), busy)
        try:
            outcome = self._command_run(job, state)
        finally:
            lock.release()
        lines = outcome.output_tail.strip().splitlines()
        body = lines[-1] if outcome.status == "ok" and lines else outcome.summary
        return self._ran(job, outcome, body)

    def _command_run(self, job: ScheduleJob, state: ScheduleJobState) -> RunOutcome:
        step = Step(
            step_id=1, tool="shell_exec", args={"cmd": job.command, "timeout": job.timeout}
        )
        body = RunRequest(
            steps=[step],
            app_id=job.app_id,
            user_id=job.user_id,
            approved_commands=state.approved_commands or None,
        ).dump()
        answer = self._run_steps(body, job.timeout + _GRACE)
        result = (answer.get("tool_results") or {}).get("step_1") or {}
        value = result.get("result")
        value = value if isinstance(value, dict) else {}
        output = _tail(f"{value.get('stdout') or ''}{value.get('stderr') or ''}")
        if result.get("status") == "ok":
            code = value.get("returncode")
            status = "ok" if code == 0 else "error"
            return RunOutcome(
                status, self._said(job, f"退出码 {code}", f"exit code {code}"), output
            )
        if result.get("code") == "tool_timeout":
            stopped = self._said(
                job, f"超过 {job.timeout:g} 秒，已停止", f"stopped after {job.timeout:g}s"
            )
            return RunOutcome("timeout", stopped, output)
        code = str(result.get("code") or "tool_failed")
        program = _program(job.command)
        sentence = user_message(
            code, self._language_of(job), command=program, tool="shell_exec"
        )
        return RunOutcome("error", sentence, output)

    def _agent(self, job: ScheduleJob) -> RunOutcome:
        assert job.id and job.instruction
        answer: dict[str, Any] = {}
        failure: list[BaseException] = []

        self._claim_session(job_session_id(job.id), job.user_id)

        def work() -> None:
            try:
                answer.update(
                    self._instruct(
                        job.instruction or "", job_session_id(job.id or ""), job.language
                    )
                )
            except BaseException as exc:
                failure.append(exc)

        worker = threading.Thread(target=work, name=f"sched-{job.id}", daemon=True)
        worker.start()
        worker.join(job.timeout)
        if worker.is_alive():
            stopped = self._cancel(worker, job_session_id(job.id or ""))
            self._notify(
                tr(
                    self._language_of(job),
                    f"定时任务「{job.name}」超时，已取消",
                    f'The scheduled job "{job.name}" timed out and was cancelled',
                ),
                job.instruction,
                "warning",
                job.app_id,
            )
            how = "cancelled" if stopped else "cancel requested, still winding down"
            return RunOutcome("timeout", f"no answer within {job.timeout:g}s; {how}")
        if failure:
            raise failure[0]
        message = str(answer.get("message") or "")
        why_not = self._not_done(job, answer.get("tasks") or [], message)
        if why_not is None:
            outcome = RunOutcome("ok", message, _tail(message))
        else:
            outcome = RunOutcome("error", why_not, _tail(message))
        return self._ran(job, outcome, outcome.summary or job.instruction)

    def _not_done(
        self, job: ScheduleJob, tasks: list[dict[str, Any]], message: str
    ) -> str | None:
        """Why the instruction's work was not done (None: it was), in the user's words."""
        if not tasks:
            nobody = self._said(job, "没有应用接下这条指令", "No app took this instruction")
            return f"{nobody}{self._said(job, '：', ': ')}{message}" if message else nobody
        for task in tasks:
            reply = task.get("result") or {}
            said = str(reply.get("message") or message)
            if reply.get("view_type") == "confirm":
                return self._said(
                    job, "在等你确认，还没有运行", "Waiting for your yes; nothing ran yet"
                )
            if reply.get("status") != "ok" or reply.get("notice") in ("warning", "error"):
                return self._said(job, f"没有完成：{said}", f"Not done: {said}")
        return None

    def _cancel(self, worker: threading.Thread, session_id: str) -> bool:
        """Cancel the session's work until `worker` ends; True when it did in time."""
        deadline = time.monotonic() + _CANCEL_WAIT
        while worker.is_alive() and time.monotonic() < deadline:
            self._cancel_session(session_id)
            worker.join(_CANCEL_EVERY)
        return not worker.is_alive()
