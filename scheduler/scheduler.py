"""The scheduler: jobs, their run state, and the background tick that starts them.

`Scheduler.tick()` reads the clock (injected: tests move time without sleeping),
starts every enabled job whose `next_run_at` has come, and moves `next_run_at` on
at once (coalesced: after downtime a job runs once, never in a burst). A job that
is still running when it is due again is not started twice (the running marker
`running_run_id`, kept in `jobs-state.json`); its missed fire is counted in
`skipped`. A marker left by a controller that stopped mid-run becomes an `error`
run at the next start. `start()` runs `tick()` every `tick_interval` seconds on a
daemon thread, the first time at once (the catch-up).

Who may do what: `caller=None` is the user (the desktop's token) and sees every
job; an app (through the `schedule` tool) sees, changes and cancels only its own
jobs and creates jobs for itself only; the app whose manifest gives it the
`scheduler` role (`manages_all`) sees and manages every job but still creates only its own. A
command the permission policy finds risky leaves the job disabled, waiting for the
user's yes: the question goes to `confirmations` (the desktop's confirm dialog) and
its answer comes back as `settle` — allowed, the job is enabled; denied, it is
dropped. Only the user can say yes (the dialog, or `PATCH … {"enabled": true}`),
and the programs outside the whitelist are then approved for this job's runs. A
program outside the whitelist while asking is off would be refused at every run:
the job is refused when it is made or changed (`CommandNotAllowed`).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from aios_protocol.errors import AiosError, CommandNotAllowed, NotFound
from aios_protocol.messages import (
    ScheduleJob,
    ScheduleJobPatch,
    ScheduleJobState,
    ScheduleRun,
    parse,
)
from aios_runtime.users import OWNER
from controller.pipeline.context import tr
from scheduler.runner import JobRunner
from scheduler.store import JobStore
from scheduler.timing import as_local, check_schedule, next_fire, now_local

__all__ = [
    "CommandReview",
    "JobConfirmations",
    "JobRunning",
    "NeedsUserConfirmation",
    "Review",
    "Scheduler",
]

log = logging.getLogger("aios.scheduler")

_SCHEDULE_FIELDS = ("run_at", "interval_s", "cron")


@dataclass(frozen=True)
class CommandReview:
    """The permission policy's verdict on a command job."""

    question: str | None = None  # what needs the user's yes; None: nothing
    outside_whitelist: list[str] = field(default_factory=list)  # programs to approve
    risky: list[Any] = field(default_factory=list)  # the policy's RiskyStep entries
    not_allowed: list[str] = field(default_factory=list)  # programs refused outright


Review = Callable[[ScheduleJob], CommandReview]


class JobConfirmations(Protocol):
    """Where a risky job's question goes (the desktop's confirmation flow)."""

    def ask(self, job: ScheduleJob, review: CommandReview) -> None: ...

    def withdraw(self, job_id: str) -> None: ...


class JobRunning(AiosError):
    code = "job_running"
    http_status = 409


class NeedsUserConfirmation(AiosError):
    code = "needs_user_confirmation"
    http_status = 403


def _no_review(job: ScheduleJob) -> CommandReview:
    return CommandReview()


class Scheduler:
    """Jobs, their states and their runs; thread-safe."""

    def __init__(
        self,
        store: JobStore,
        runner: JobRunner,
        *,
        clock: Callable[[], datetime] = now_local,
        review: Review = _no_review,
        notify: Callable[[str, str, str, str], None] = lambda *a: None,
        app_exists: Callable[[str], bool] = lambda app_id: True,
        tick_interval: float = 1.0,
        manages_all: Callable[[str], bool] = lambda app_id: False,
        confirmations: JobConfirmations | None = None,
        language: Callable[[], str] = lambda: "zh-CN",
    ):
        self.store = store
        self._runner = runner
        self._clock = clock
        self._review = review
        self._notify = notify
        self._app_exists = app_exists
        self.tick_interval = tick_interval
        self._manages_all = manages_all
        self._confirmations = confirmations
        self._language = language  # of the toasts and answers the user reads
        self._lock = threading.RLock()
        self._workers: dict[str, threading.Thread] = {}
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._jobs, self._states = store.load()
        self._recover()

    # -------------------------------------------------------------- startup

    def _now(self) -> datetime:
        return as_local(self._clock())

    def _language_of(self, job: ScheduleJob) -> str:
        """What the user who made `job` reads (else the settings' language)."""
        return job.language or self._language()

    def _recover(self) -> None:
        """States for jobs without one; runs a stopped controller left open are errors."""
        now = self._now()
        for job_id, job in self._jobs.items():
            state = self._states.get(job_id)
            if state is None:
                state = self._states[job_id] = ScheduleJobState(
                    job_id=job_id, created_at=now
                )
                state.next_run_at = self._first_fire(job, state, now)
            if state.running_run_id:
                self.store.write_run(
                    ScheduleRun(
                        run_id=state.running_run_id,
                        job_id=job_id,
                        started=state.running_since or now,
                        finished=now,
                        status="error",
                        summary=tr(
                            self._language_of(job),
                            "中断了：运行时主控停止了",
                            "Interrupted: the controller stopped during this run",
                        ),
                    )
                )
                state.last_status = "error"
                state.running_run_id = state.running_since = None
        if self._jobs or self._states:
            self.store.save(self._jobs, self._states)

    # ------------------------------------------------------------- time math

    def _first_fire(
        self, job: ScheduleJob, state: ScheduleJobState, now: datetime
    ) -> datetime | None:
        if not job.enabled or state.awaiting_confirmation or self._used_up(job, state):
            return None
        return next_fire(job, state.created_at, now, None)

    @staticmethod
    def _used_up(job: ScheduleJob, state: ScheduleJobState) -> bool:
        return job.max_runs is not None and state.run_count >= job.max_runs

    # ------------------------------------------------------------------ tick

    def tick(self) -> list[str]:
        """Start every due job; the run ids started."""
        now = self._now()
        started: list[str] = []
        with self._lock:
            changed = False
            for job_id, job in list(self._jobs.items()):
                state = self._states[job_id]
                due = state.next_run_at
                if due is None or not job.enabled or state.awaiting_confirmation:
                    continue
                if as_local(due) > now:
                    continue
                changed = True
                late = (now - as_local(due)).total_seconds()
                if state.running_run_id:
                    state.skipped += 1
                    state.next_run_at = next_fire(job, state.created_at, now, due)
                    continue
                trigger = (
                    "catch_up" if late > max(2 * self.tick_interval, 2.0) else "schedule"
                )
                started.append(self._start(job, state, now, trigger))
                state.next_run_at = (
                    None
                    if self._used_up(job, state)
                    else next_fire(job, state.created_at, now, due)
                )
            if changed:
                self.store.save_states(self._states)
        return started

    def _start(
        self, job: ScheduleJob, state: ScheduleJobState, now: datetime, trigger: str
    ) -> str:
        run_id = f"run_{now:%Y%m%dT%H%M%S%f}_{secrets.token_hex(3)}"
        state.running_run_id = run_id
        state.running_since = now
        state.run_count += 1
        state.last_run_at = now
        snapshot = state.model_copy()
        worker = threading.Thread(
            target=self._execute,
            args=(job, snapshot, run_id, now, trigger),
            name=f"sched-run-{job.id}",
            daemon=True,
        )
        self._workers[run_id] = worker
        worker.start()
        return run_id

    def _execute(
        self,
        job: ScheduleJob,
        state: ScheduleJobState,
        run_id: str,
        started: datetime,
        trigger: str,
    ) -> None:
        began = time.monotonic()
        outcome = self._runner.run(job, state)
        duration = round(time.monotonic() - began, 3)
        run = ScheduleRun(
            run_id=run_id,
            job_id=job.id or "",
            trigger=trigger,  # type: ignore[arg-type]
            started=started,
            finished=self._now(),
            duration_s=duration,
            status=outcome.status,  # type: ignore[arg-type]
            summary=outcome.summary,
            output_tail=outcome.output_tail,
        )
        with self._lock:
            self._workers.pop(run_id, None)
            current = self._states.get(job.id or "")
            if current is None:  # cancelled while it ran
                return
            self.store.write_run(run)
            if current.running_run_id == run_id:
                current.running_run_id = current.running_since = None
            current.last_status = run.status
            self.store.save_states(self._states)
        log.info("scheduler: job %s run %s: %s", job.id, run_id, outcome.status)

    # ------------------------------------------------------ background loop

    def start(self) -> None:
        """Tick now (catch-up), then every `tick_interval` seconds on a daemon thread."""
        if self._ticker is not None:
            return
        self._stop.clear()

        def loop() -> None:
            while True:
                try:
                    self.tick()
                except Exception:
                    log.exception("scheduler: tick failed")
                if self._stop.wait(self.tick_interval):
                    return

        self._ticker = threading.Thread(target=loop, name="scheduler-tick", daemon=True)
        self._ticker.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout)
            self._ticker = None

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no run is going on (tests); True when idle."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                workers = list(self._workers.values())
            if not workers:
                return True
            workers[0].join(max(0.0, deadline - time.monotonic()))
        return False

    # ------------------------------------------------------------- the jobs

    def _visible(self, job: ScheduleJob, caller: str | None, user: str | None) -> bool:
        """Whether `caller` (an app; None: the desktop) acting for `user` (None: any)
        sees `job`: a user sees only their own jobs, an app only its own."""
        if user is not None and (job.user_id or OWNER) != user:
            return False
        return caller is None or job.app_id == caller or self._manages_all(caller)

    def _job(self, job_id: str, caller: str | None, user: str | None = None) -> ScheduleJob:
        job = self._jobs.get(job_id)
        if job is None or not self._visible(job, caller, user):
            raise NotFound(f"no scheduled job {job_id!r}")
        return job

    def _entry(self, job: ScheduleJob) -> dict[str, Any]:
        state = self._states[job.id or ""]
        extra = state.model_dump(mode="json", exclude={"job_id"})
        return {**job.dump(), **extra, "running": state.running_run_id is not None}

    def jobs(
        self, caller: str | None = None, user: str | None = None
    ) -> list[dict[str, Any]]:
        with self._lock:
            return [
                self._entry(j)
                for j in self._jobs.values()
                if self._visible(j, caller, user)
            ]

    def get(
        self, job_id: str, caller: str | None = None, user: str | None = None
    ) -> dict[str, Any]:
        with self._lock:
            return self._entry(self._job(job_id, caller, user))

    def _risk(
        self, job: ScheduleJob, state: ScheduleJobState
    ) -> tuple[ScheduleJob, CommandReview | None]:
        """The job as it may be stored (disabled while risky) and the review to ask;
        `CommandNotAllowed` (nothing changed) for a program the executor would
        refuse at every run."""
        if job.execution_type != "command":
            return job, None
        review = self._review(job)
        if review.not_allowed:
            program = review.not_allowed[0]
            raise CommandNotAllowed(
                f"{program!r} is outside the command whitelist and asking is off",
                placeholders={"command": program},
            )
        state.awaiting_confirmation = review.question
        if review.question is None:
            return job, None
        return job.model_copy(update={"enabled": False}), review

    def _ask(self, job: ScheduleJob, review: CommandReview | None) -> None:
        """Put the stored job's question to the user (a toast when nothing can ask)."""
        if review is None:
            return
        if self._confirmations is not None:
            self._confirmations.withdraw(job.id or "")
            self._confirmations.ask(job, review)
            return
        question = review.question or ""
        title = tr(
            self._language_of(job),
            f"定时任务「{job.name}」需要你的确认",
            f'The scheduled job "{job.name}" needs your confirmation',
        )
        self._notify(title, question, "warning", job.app_id)

    def _withdraw(self, job_id: str) -> None:
        if self._confirmations is not None:
            self._confirmations.withdraw(job_id)

    def settle(self, job_id: str, allow: bool) -> str:
        """The user's answer to a job's question: allowed, the job is enabled (its
        programs approved); denied, it is dropped. A sentence saying what happened."""
        with self._lock:
            job = self._jobs.get(job_id)
            state = self._states.get(job_id)
            language = self._language_of(job) if job else self._language()
            if job is None or state is None:
                return tr(
                    language,
                    "这个定时任务已经不存在了",
                    "This scheduled job no longer exists",
                )
            name = job.name
            if not state.awaiting_confirmation:
                return tr(
                    language,
                    f"定时任务「{name}」不再等待确认",
                    f'The scheduled job "{name}" no longer waits for confirmation',
                )
            if not allow:
                self._delete(job_id)
                return tr(
                    language,
                    f"已拒绝，定时任务「{name}」没有创建",
                    f'Refused: the scheduled job "{name}" was not created',
                )
            self._approve(job_id, job, state)
            self.store.save(self._jobs, self._states)
            return tr(
                language,
                f"已允许，定时任务「{name}」已启用",
                f'Allowed: the scheduled job "{name}" is enabled',
            )

    def _approve(
        self, job_id: str, job: ScheduleJob, state: ScheduleJobState
    ) -> ScheduleJob:
        state.approved_commands = self._review(job).outside_whitelist
        state.awaiting_confirmation = None
        enabled = job.model_copy(update={"enabled": True})
        now = self._now()
        state.created_at = now
        state.next_run_at = self._first_fire(enabled, state, now)
        self._jobs[job_id] = enabled
        return enabled

    def create(
        self, job: ScheduleJob, caller: str | None = None, user: str | None = None
    ) -> dict[str, Any]:
        """Add `job` (an app's job is always its own, a user's theirs: it runs in
        their sandbox); its entry with `next_run_at`."""
        if caller is not None:
            job = job.model_copy(update={"app_id": caller})
        if user is not None:
            job = job.model_copy(update={"user_id": None if user == OWNER else user})
        if not self._app_exists(job.app_id):
            raise NotFound(f"app {job.app_id!r} is not installed")
        check_schedule(job)
        now = self._now()
        job = job.model_copy(update={"id": f"job_{secrets.token_hex(6)}"})
        state = ScheduleJobState(job_id=job.id or "", created_at=now)
        job, review = self._risk(job, state)
        state.next_run_at = self._first_fire(job, state, now)
        with self._lock:
            self._jobs[job.id or ""] = job
            self._states[job.id or ""] = state
            try:
                self.store.save(self._jobs, self._states)
            except Exception:  # not saved (a full disk): the job was not created
                del self._jobs[job.id or ""], self._states[job.id or ""]
                raise
            self._ask(job, review)
            return self._entry(job)

    def update(
        self,
        job_id: str,
        patch: ScheduleJobPatch,
        caller: str | None = None,
        user: str | None = None,
    ) -> dict[str, Any]:
        """Change the given fields; a new schedule (or enabling) counts again from now."""
        changes = patch.model_dump(exclude_unset=True)
        with self._lock:
            job = self._job(job_id, caller, user)
            state = self._states[job_id]
            merged = job.model_dump(exclude_none=True)
            if "schedule_type" in changes or any(f in changes for f in _SCHEDULE_FIELDS):
                for name in _SCHEDULE_FIELDS:
                    merged.pop(name, None)
            merged.update({k: v for k, v in changes.items() if v is not None})
            updated = parse(ScheduleJob, merged)
            check_schedule(updated)
            now = self._now()
            review: CommandReview | None = None
            if "command" in changes and updated.command != job.command:
                updated, review = self._risk(updated, state)  # may refuse: nothing changed
                self._withdraw(job_id)
            if changes.get("enabled") and state.awaiting_confirmation:
                if caller is not None:
                    raise NeedsUserConfirmation(
                        f"job {job_id} waits for the user's yes: {state.awaiting_confirmation}",
                        placeholders={"job": job.name},
                    )
                self._withdraw(job_id)  # the user said yes here, not in the dialog
                review = None
                state.approved_commands = self._review(updated).outside_whitelist
                state.awaiting_confirmation = None
                updated = updated.model_copy(update={"enabled": True})
            rescheduled = any(f in changes for f in ("schedule_type", *_SCHEDULE_FIELDS))
            if (
                rescheduled
                or (updated.enabled and not job.enabled)
                or "max_runs" in changes
            ):
                state.created_at = now
                state.next_run_at = self._first_fire(updated, state, now)
            if not updated.enabled:
                state.next_run_at = None
            self._jobs[job_id] = updated
            self.store.save(self._jobs, self._states)
            self._ask(updated, review)
            return self._entry(updated)

    def delete(
        self, job_id: str, caller: str | None = None, user: str | None = None
    ) -> None:
        with self._lock:
            self._job(job_id, caller, user)
            self._delete(job_id)

    def _delete(self, job_id: str) -> None:
        del self._jobs[job_id]
        del self._states[job_id]
        self.store.save(self._jobs, self._states)
        self.store.delete_runs(job_id)
        self._withdraw(job_id)

    def run_now(
        self, job_id: str, caller: str | None = None, user: str | None = None
    ) -> dict[str, Any]:
        """Start the job at once (its schedule stays); 409 while it is running."""
        with self._lock:
            job = self._job(job_id, caller, user)
            state = self._states[job_id]
            if state.awaiting_confirmation:
                raise NeedsUserConfirmation(
                    f"job {job_id} waits for the user's yes: {state.awaiting_confirmation}",
                    placeholders={"job": job.name},
                )
            if state.running_run_id:
                raise JobRunning(
                    f"job {job_id} is already running ({state.running_run_id})",
                    placeholders={"job": job.name},
                )
            run_id = self._start(job, state, self._now(), "manual")
            self.store.save_states(self._states)
            return {"run_id": run_id, "job": self._entry(job)}

    def runs(
        self,
        job_id: str,
        caller: str | None = None,
        limit: int = 50,
        user: str | None = None,
    ) -> list[dict[str, Any]]:
        with self._lock:
            self._job(job_id, caller, user)
        return [run.model_dump(mode="json") for run in self.store.runs(job_id, limit)]

    @property
    def problems(self) -> list[str]:
        return list(self.store.problems)
