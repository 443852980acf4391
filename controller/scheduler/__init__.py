"""The controller's scheduler: jobs that run an instruction or a command
later, or again, inside the user's boundary.

`store` keeps the files (`jobs.json`, `jobs-state.json`, `runs/<job>/<run>.json`),
`timing` asks APScheduler's triggers when a job runs next, `runner` runs one job
(a command through the executor in its app's sandbox, an instruction through the
pipeline), and `scheduler` drives them from a background tick with an injectable
clock.
"""

from controller.scheduler.runner import JobRunner, RunOutcome
from controller.scheduler.scheduler import Scheduler
from controller.scheduler.store import JobStore
from controller.scheduler.timing import now_local

__all__ = ["JobRunner", "JobStore", "RunOutcome", "Scheduler", "now_local"]
