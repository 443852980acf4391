"""The controller's scheduler: jobs that run an instruction or a command
later, or again, inside the user's boundary.

`store` keeps the files (`jobs.json`, `jobs-state.json`, `runs/<job>/<run>.json`),
`timing` asks APScheduler's triggers when a job runs next, `runner` runs one job
(a command through the executor in its app's sandbox, an instruction through the
pipeline), and `scheduler` drives them from a background tick with an injectable
clock.
"""

from scheduler.runner import JobRunner, RunOutcome
from scheduler.scheduler import Scheduler
from scheduler.store import JobStore
from scheduler.timing import now_local

__all__ = ["JobRunner", "JobStore", "RunOutcome", "Scheduler", "now_local"]
