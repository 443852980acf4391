"""The scheduler as one launch wires it: the executor, the pipeline, the event bus and
the permission policy it runs jobs through (`build_scheduler`).

A command job's risk is the permission policy's verdict on the same `shell_exec`
step a plan would carry; a risky job's question is a confirmation of kind
`schedule` (`GateConfirmations`: the desktop's confirm dialog, persisted like a
paused plan's); a reminder's or a run's toast is a `notify` event (the desktop
shows it), spoken replies come from the pipeline itself. An agent job that outlives
its timeout is cancelled through the pipeline's `TaskCancels` (its session's work).
What the user reads is in `language()`: a job has no desktop session, so the launch
passes the settings' `ui_language` (`controller.pipeline.context.language_of`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aios_protocol.errors import AiosError
from aios_protocol.messages import AppReply, Language, ScheduleJob
from aios_runtime.users import OWNER
from controller.events import EventBus
from controller.permissions.confirmations import ConfirmationGate, PendingConfirmation
from controller.permissions.policy import PermissionPolicy
from controller.pipeline.context import tr
from scheduler.runner import JobRunner, job_session_id
from scheduler.scheduler import CommandReview, Review, Scheduler
from scheduler.store import JobStore

__all__ = ["KIND", "GateConfirmations", "build_scheduler", "policy_review"]

KIND = "schedule"  # the confirmations of scheduled jobs


def command_plan(job: ScheduleJob) -> list[dict[str, Any]]:
    """The one step a command job runs, as a plan would carry it."""
    return [{"step_id": 1, "tool": "shell_exec", "args": {"cmd": job.command}}]


def policy_review(
    policy: PermissionPolicy,
    workdir_of: Callable[[str], Path | None],
    language: Callable[[], str] = lambda: "zh-CN",
) -> Review:
    """What a command job needs the user's yes for (None: nothing), the programs
    outside the whitelist to approve with it, and those the executor would refuse
    (outside the whitelist while asking is off)."""

    def review(job: ScheduleJob) -> CommandReview:
        said = job.language or language()
        verdict = policy.review(
            job.app_id, workdir_of(job.app_id), command_plan(job), language=said
        )
        outside = list(verdict.outside_whitelist)
        refused = list(verdict.not_allowed)
        if not verdict.needs_confirmation:
            return CommandReview(None, outside, not_allowed=refused)
        question = tr(said, "；", "; ").join(step.sentence for step in verdict.risky)
        return CommandReview(question, outside, list(verdict.risky), refused)

    return review


class GateConfirmations:
    """A risky job's question as a `schedule` confirmation on the desktop's gate;
    `bind(scheduler)` routes the answers (allow → enabled, deny → dropped)."""

    def __init__(
        self,
        gate: ConfirmationGate,
        app_name: Callable[[str, str], str],  # (app_id, language) → the app's name
        language: Callable[[], str] = lambda: "zh-CN",
    ):
        self._gate = gate
        self._app_name = app_name
        self._language = language

    def ask(self, job: ScheduleJob, review: CommandReview) -> None:
        said = job.language or self._language()
        name = self._app_name(job.app_id, said)
        self._gate.ask(
            kind=KIND,
            app_id=job.app_id,
            app_name=name,
            session_id=job_session_id(job.id or ""),
            summary=tr(
                said,
                f"定时任务「{job.name}」（应用「{name}」）将要{review.question}",
                f'The scheduled job "{job.name}" (app "{name}") wants to {review.question}',
            ),
            plan=command_plan(job),
            risky=review.risky,
            job_id=job.id,
            user_id=job.user_id or OWNER,
        )

    def withdraw(self, job_id: str) -> None:
        self._gate.withdraw(KIND, job_id)

    def bind(self, scheduler: Scheduler) -> None:
        def decide(pending: PendingConfirmation, decision: str) -> AppReply:
            allow = decision in ("allow_once", "allow_always")
            sentence = scheduler.settle(pending.job_id or "", allow)
            return AppReply(
                status="ok", view_type="text", data={"content": sentence}, message=sentence
            )

        self._gate.on_decision(KIND, decide)


def build_scheduler(
    state_dir: Path,
    *,
    run_steps: Callable[[dict[str, Any], float], dict[str, Any]],
    instruct: Callable[[str, str, Language | None], dict[str, Any]],
    events: EventBus,
    policy: PermissionPolicy,
    spec_of: Callable[[str], Any],
    confirmations: ConfirmationGate | None = None,
    cancel_session: Callable[[str], int] = lambda session_id: 0,
    language: Callable[[], str] = lambda: "zh-CN",
    claim_session: Callable[[str, str | None], None] = lambda sid, user: None,
) -> Scheduler:
    """A scheduler over `<state_dir>/jobs.json` … (not started: call `start()`).

    Without `confirmations` (config `permissions.confirm` off) a risky job still
    waits disabled, announced by a toast; `cancel_session(session_id)` stops the
    pipeline work of an agent job that timed out; `language()` is the one its
    toasts and questions are written in when a job does not say its own;
    `claim_session(session_id, user_id)` marks an agent job's session as its user's."""

    def notify(title: str, body: str, level: str, app_id: str) -> None:
        events.publish(
            "notify", {"title": title, "body": body, "level": level}, app_id=app_id
        )

    def app_exists(app_id: str) -> bool:
        try:
            spec_of(app_id)
        except AiosError:
            return False
        return True

    def workdir_of(app_id: str) -> Path | None:
        try:
            return spec_of(app_id).workdir
        except AiosError:
            return None

    def app_name(app_id: str, language: str) -> str:
        """The app's name for a reader of `language` (its manifest's `names`)."""
        try:
            manifest = spec_of(app_id).manifest
        except AiosError:
            return app_id
        return manifest.name_in(language) if manifest is not None else app_id

    def manages_all(app_id: str) -> bool:
        try:
            manifest = spec_of(app_id).manifest
        except AiosError:
            return False
        return getattr(manifest, "system_role", None) == "scheduler"

    asking = GateConfirmations(confirmations, app_name, language) if confirmations else None
    scheduler = Scheduler(
        JobStore(state_dir),
        JobRunner(
            run_steps,
            instruct,
            notify,
            cancel_session,
            language=language,
            claim_session=claim_session,
        ),
        review=policy_review(policy, workdir_of, language),
        notify=notify,
        app_exists=app_exists,
        manages_all=manages_all,
        confirmations=asking,
        language=language,
    )
    if asking is not None:
        asking.bind(scheduler)
    return scheduler
