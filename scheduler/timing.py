"""When a job runs next, in the user's local time zone, from APScheduler's triggers.

We never do our own calendar arithmetic: `once` is a `DateTrigger`, `interval` an
`IntervalTrigger` anchored at the job's creation, `cron` a `CronTrigger` from a
five-field crontab line; `get_next_fire_time` answers. Missed fire times (downtime,
a run that lasted longer than the interval) are coalesced: the next fire time after
a run is always later than now, so a catch-up is one run, never a burst.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger
from tzlocal import get_localzone

from aios_protocol.errors import InvalidRequest
from aios_protocol.messages import ScheduleJob

__all__ = ["as_local", "check_schedule", "local_zone", "next_fire", "now_local"]


def local_zone() -> tzinfo:
    """The user's time zone (the system's, via tzlocal)."""
    return get_localzone()


def now_local() -> datetime:
    """The current time, aware, in the user's time zone (the scheduler's default clock)."""
    return datetime.now(local_zone())


def as_local(moment: datetime) -> datetime:
    """`moment` in the user's zone; a naive time is read as local wall-clock time."""
    zone = local_zone()
    if moment.tzinfo is None:
        return moment.replace(tzinfo=zone)
    return moment.astimezone(zone)


def _trigger(job: ScheduleJob, anchor: datetime) -> BaseTrigger:
    zone = local_zone()
    if job.schedule_type == "once":
        assert job.run_at is not None
        return DateTrigger(run_date=as_local(job.run_at), timezone=zone)
    if job.schedule_type == "interval":
        assert job.interval_s is not None
        return IntervalTrigger(seconds=job.interval_s, start_date=anchor, timezone=zone)
    try:
        return CronTrigger.from_crontab(job.cron or "", timezone=zone)
    except ValueError as exc:
        raise InvalidRequest(f"cron: {exc}") from exc


def check_schedule(job: ScheduleJob) -> None:
    """`InvalidRequest` naming the field when the trigger cannot be built (a bad cron)."""
    _trigger(job, now_local())


def next_fire(
    job: ScheduleJob, anchor: datetime, now: datetime, previous: datetime | None
) -> datetime | None:
    """The next fire time of `job` after `previous` (None: the first one at or after
    `now`, for an interval one interval after `anchor`); later than `now` whenever
    `previous` is given; None when it never fires again. `anchor` is where an interval starts counting (the job's creation)."""
    trigger = _trigger(job, as_local(anchor))
    now = as_local(now)
    upcoming = trigger.get_next_fire_time(previous, now)
    if upcoming is not None and previous is None and job.schedule_type == "interval":
        if upcoming <= now:  # an interval's first run is one interval after its anchor
            upcoming = trigger.get_next_fire_time(upcoming, now)
    elif upcoming is not None and previous is not None and upcoming <= now:
        upcoming = trigger.get_next_fire_time(None, now)  # coalesce the missed ones
        if upcoming is not None and upcoming <= now:
            upcoming = trigger.get_next_fire_time(upcoming, now)
    return upcoming
