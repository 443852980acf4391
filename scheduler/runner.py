"""Running one job inside the user's boundary, bounded by the job's timeout.

A `command` job is one `shell_exec` step sent to the executor's `/run` with the
job's `app_id`, so that app's workdir, sandbox and whitelists apply (and the
programs the user approved for this job go along as `approved_commands`); the
step's own `timeout` makes the executor kill the command when the job's time is up.
An `agent` job sends its instruction through the pipeline as if the user had typed
it (session `sess_sched<job>`): its `task_done` event opens the view on the desktop
and its message is spoken; the runner then publishes a `notify` event naming the
job (the desktop shows it as a toast). A pipeline that outlives the timeout is
cancelled (`cancel_session`: the pipeline's `TaskCancels`, which abandons its app
call or step round and starts no further one) and the run is a `timeout`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aios_protocol.errors import AiosError
from aios_protocol.messages import RunRequest, ScheduleJob, ScheduleJobState, Step
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


class JobRunner:
    """Runs jobs: `run_steps(body, timeout)` is the executor's `/run`,
    `instruct(text, session_id)` the pipeline, `notify(title, body, level, app_id)`
    the toast, `cancel_session(session_id)` stops that session's pipeline work (how
    many works it told to stop); `language()` is the toasts' language."""

    def __init__(
        self,
        run_steps: Callable[[dict[str, Any], float], dict[str, Any]],
        instruct: Callable[[str, str], dict[str, Any]],
        notify: Callable[[str, str, str, str], None] = lambda *a: None,
        cancel_session: Callable[[str], int] = lambda session_id: 0,
        *,
        language: Callable[[], str] = lambda: "zh-CN",
    ):
        self._run_steps = run_steps
        self._instruct = instruct
        self._notify = notify
        self._cancel_session = cancel_session
        self._language = language

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

    def _command(self, job: ScheduleJob, state: ScheduleJobState) -> RunOutcome:
        step = Step(
            step_id=1, tool="shell_exec", args={"cmd": job.command, "timeout": job.timeout}
        )
        body = RunRequest(
            steps=[step],
            app_id=job.app_id,
            approved_commands=state.approved_commands or None,
        ).dump()
        answer = self._run_steps(body, job.timeout + _GRACE)
        result = (answer.get("tool_results") or {}).get("step_1") or {}
        value = result.get("result")
        value = value if isinstance(value, dict) else {}
        output = _tail(f"{value.get('stdout') or ''}{value.get('stderr') or ''}")
        if result.get("status") == "ok":
            code = value.get("returncode")
            if code == 0:
                return RunOutcome("ok", "exit code 0", output)
            return RunOutcome("error", f"exit code {code}", output)
        if result.get("code") == "tool_timeout":
            return RunOutcome("timeout", f"killed after {job.timeout:g}s", output)
        return RunOutcome("error", f"{result.get('code')}: {result.get('error')}", output)

    def _agent(self, job: ScheduleJob) -> RunOutcome:
        assert job.id and job.instruction
        answer: dict[str, Any] = {}
        failure: list[BaseException] = []

        def work() -> None:
            try:
                answer.update(
                    self._instruct(job.instruction or "", job_session_id(job.id or ""))
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
                    self._language(),
                    f"定时任务「{job.name}」超时，已取消",
                    f"The scheduled job “{job.name}” timed out and was cancelled",
                ),
                job.instruction,
                "warning",
                job.app_id,
            )
            how = "cancelled" if stopped else "cancel requested, still winding down"
            return RunOutcome("timeout", f"no answer within {job.timeout:g}s; {how}")
        if failure:
            raise failure[0]
        tasks = answer.get("tasks") or []
        message = str(answer.get("message") or "")
        failed = [t for t in tasks if (t.get("result") or {}).get("status") != "ok"]
        status = "error" if failed or not tasks else "ok"
        summary = message or ("no app took the instruction" if not tasks else "")
        self._notify(
            tr(
                self._language(),
                f"定时任务「{job.name}」已运行",
                f"The scheduled job “{job.name}” ran",
            ),
            summary or job.instruction,
            "info" if status == "ok" else "error",
            job.app_id,
        )
        return RunOutcome(status, summary, _tail(message))

    def _cancel(self, worker: threading.Thread, session_id: str) -> bool:
        """Cancel the session's work until `worker` ends; True when it did in time."""
        deadline = time.monotonic() + _CANCEL_WAIT
        while worker.is_alive() and time.monotonic() < deadline:
            self._cancel_session(session_id)
            worker.join(_CANCEL_EVERY)
        return not worker.is_alive()
